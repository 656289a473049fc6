"""``piquet bench engine|env|vector|agents``: speed, printed (the measurements live in
:mod:`piquet_env.testing.env_speed`, :mod:`piquet_env.testing.batch_speed` and
:mod:`piquet_cli.agent_speed`).

``engine`` plays random legal parties through the pure engine and prints decisions/s and deals/s;
``env`` plays through the PettingZoo env and prints agent-steps/s and the memory of 1,000 envs;
``vector`` plays the batched engine at batch sizes 256 to 16,384 on one and two threads and two
processes, beside the engine and ``env()`` in the same run; ``agents`` times each agent playing
itself, beside the engine in the same run. Each target is one entry of
:data:`TARGETS`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from piquet_cli.common import (
    CLIError,
    add_rules_arguments,
    add_seed_argument,
    positive,
    resolve_seed,
    rules_from_args,
    seed_text,
)
from piquet_env.testing.env_speed import bench_engine, bench_env, print_env_report

AGENTS = ("random", "heuristic", "mcts:100")
"""``--agents``' default: :data:`piquet_cli.agent_speed.AGENTS` (named here, as :data:`SIZES`)."""
SIZES = (256, 1024, 4096, 16384)
"""``--sizes``' default: :data:`piquet_env.testing.batch_speed.SIZES` (named here so that the
command starts without importing the batched engine)."""

DESCRIPTION = """\
Measure speed: the engines with random legal play, and the agents.

  engine  the pure engine on one core: decisions/s and deals/s
  env     the PettingZoo env on one core: agent-steps/s, and the memory of 1,000 live envs
  vector  the batched engine: agent-steps/s at batch sizes 256 to 16,384 on one and two
          threads and two processes, beside the engine and env() in the same run, and the
          memory of 100,000 parallel games
  agents  the agents on one core, each playing itself: decisions/s and deals/s, beside the
          engine in the same run

examples:
  piquet bench engine --seconds 5
  piquet bench env --rules classic --variant normand --seconds 8
  piquet bench vector --seconds 3
  piquet bench vector --sizes 4096 16384 --seconds 2
  piquet bench agents --agents heuristic mcts:100 --seconds 10
"""


def _engine(args: argparse.Namespace) -> None:
    res = bench_engine(
        args.rules, tuple(args.variant), args.seconds, args.seed, record=not args.no_log
    )
    label = f"{args.rules}{''.join('+' + v for v in args.variant)}"
    print(
        f"engine ({label}, {'no log' if args.no_log else 'event log on'}): "
        f"{res['decisions_per_s']:,.0f} decisions/s, {res['deals_per_s']:,.0f} deals/s "
        f"({res['decisions']:,} decisions, {res['parties']:,} parties "
        f"in {res['seconds']:.1f} s; seed {args.seed})"
    )


def _env(args: argparse.Namespace) -> None:
    print_env_report(
        bench_env(
            args.rules,
            tuple(args.variant),
            args.seconds,
            args.seed,
            pettingzoo=not args.no_pettingzoo,
        )
    )
    print(f"  {seed_text(args.seed)}")


def _vector(args: argparse.Namespace) -> None:
    from piquet_env.testing.batch_speed import bench_vector, print_vector_report

    print_vector_report(
        bench_vector(
            args.rules,
            tuple(args.variant),
            sizes=tuple(args.sizes),
            seconds=args.seconds,
            seed=args.seed,
            processes=(2,),
        )
    )
    print(f"  {seed_text(args.seed)}")


def _agents(args: argparse.Namespace) -> None:
    from piquet_agents.registry import AgentSpecError
    from piquet_cli.agent_speed import bench_agents, print_agents_report

    try:
        res = bench_agents(rules_from_args(args), args.agents, args.seconds, args.seed)
    except AgentSpecError as exc:
        raise CLIError(f"--agents: {exc}") from None
    print_agents_report(res)
    print(f"  {seed_text(args.seed)}")


TARGETS: dict[str, tuple[Callable[[argparse.Namespace], None], str]] = {
    "engine": (_engine, "the pure engine"),
    "env": (_env, "the PettingZoo env"),
    "vector": (_vector, "the batched engine"),
    "agents": (_agents, "the agents"),
}
"""Bench target name -> (function printing its report, one-line description)."""


def run(args: argparse.Namespace) -> int:
    """Run ``piquet bench TARGET``: check the flags, then measure and print."""
    positive("--seconds", args.seconds)
    for size in args.sizes:
        positive("--sizes", size)
    rules_from_args(args)  # an unknown rule set or variant fails here, before any timing
    resolve_seed(args)
    TARGETS[args.target][0](args)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet bench``."""
    p = sub.add_parser(
        "bench",
        help="measure the speed of the engine, the environment, the batched engine or the agents",
        description=DESCRIPTION,
    )
    p.add_argument(
        "target",
        choices=list(TARGETS),
        metavar="TARGET",
        help="what to measure: " + ", ".join(f"{k} ({v[1]})" for k, v in TARGETS.items()),
    )
    add_rules_arguments(p)
    p.add_argument(
        "--seconds",
        type=float,
        default=5.0,
        metavar="S",
        help="how long to measure, in seconds (default: 5)",
    )
    add_seed_argument(p, "the random play")
    p.add_argument(
        "--no-log", action="store_true", help="engine: skip the event log (as search does)"
    )
    p.add_argument(
        "--no-pettingzoo",
        action="store_true",
        help="env: skip PettingZoo's own five-second performance_benchmark",
    )
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(SIZES),
        metavar="N",
        help="vector: the batch sizes to measure (default: " + " ".join(map(str, SIZES)) + ")",
    )
    p.add_argument(
        "--agents",
        nargs="+",
        default=list(AGENTS),
        metavar="SPEC",
        help="agents: the agent specs to measure (default: " + " ".join(AGENTS) + ")",
    )
    p.set_defaults(func=run)
