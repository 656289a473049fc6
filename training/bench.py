"""``piquet bench engine``: random legal play through the pure engine on one core.

Prints decisions per second and deals per second. The environment benchmark (``piquet bench env``)
is added by :mod:`piquet_env.env`'s benchmark function when available.
"""

from __future__ import annotations

import argparse
import random
import time

from piquet_env.game import Game
from piquet_env.rules import make_rules


def bench_engine(
    rules: str = "standard",
    variants: tuple[str, ...] = (),
    seconds: float = 5.0,
    seed: int = 0,
    record: bool = True,
) -> dict[str, float]:
    """Play random parties for about ``seconds``; return decisions/s, deals/s and counts."""
    r = make_rules(rules, variants)
    rng = random.Random(seed)
    decisions = deals = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        g = Game(r, seed=rng.getrandbits(32), record=record)
        while not g.is_over:
            legal = g.legal_actions()
            g.apply(legal[int(rng.random() * len(legal))])
            decisions += 1
        deals += len(g.deal_scores)
        games += 1
    elapsed = time.perf_counter() - start
    return {
        "decisions_per_s": decisions / elapsed,
        "deals_per_s": deals / elapsed,
        "decisions": decisions,
        "deals": deals,
        "parties": games,
        "seconds": elapsed,
    }


def _run(args: argparse.Namespace) -> int:
    if args.target == "engine":
        res = bench_engine(
            args.rules, tuple(args.variant), args.seconds, args.seed, record=not args.no_log
        )
        print(
            f"engine ({args.rules}{''.join('+' + v for v in args.variant)}, "
            f"{'no log' if args.no_log else 'event log on'}): "
            f"{res['decisions_per_s']:,.0f} decisions/s, {res['deals_per_s']:,.0f} deals/s "
            f"({res['decisions']:,} decisions, {res['parties']:,} parties in {res['seconds']:.1f} s)"
        )
        return 0
    from piquet_env.benchmark import bench_env, print_env_report

    print_env_report(bench_env(args.rules, tuple(args.variant), args.seconds, args.seed))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet bench``."""
    p = sub.add_parser("bench", help="measure engine or environment speed on one core")
    p.add_argument("target", choices=["engine", "env"], help="what to measure")
    p.add_argument("--rules", default="standard", help="rule set: standard or classic")
    p.add_argument("--variant", action="append", default=[], help="orbis, saison or normand")
    p.add_argument("--seconds", type=float, default=5.0, help="how long to run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-log", action="store_true", help="skip the event log (as search does)")
    p.set_defaults(func=_run)
