"""``piquet eval`` and ``piquet ladder``: duplicate-deal matches and round-robin ladders.

An agent spec is ``random``, ``heuristic``, ``mcts:ITERATIONS`` (options:
``mcts:200:c=0.7:time=0.5``) or the path of a policy checkpoint.

.. code-block:: bash

    piquet eval heuristic random --deals 2000 --workers 2
    piquet eval mcts:200 heuristic --deals 500 --mode partie --json out.json
    piquet ladder random heuristic mcts:100 --deals 200 --out ladder/
"""

from __future__ import annotations

import argparse
import json
import sys

from piquet_training.evaluation.duplicate import MODES, evaluate
from piquet_training.evaluation.ladder import run_ladder

from piquet_env.rules import make_rules


def _common(p: argparse.ArgumentParser, deals_help: str) -> None:
    p.add_argument("--deals", type=int, default=200, metavar="N", help=deals_help)
    p.add_argument(
        "--mode",
        choices=MODES,
        default="deal",
        help="deal: each game is one deal; partie: a whole partie (default: deal)",
    )
    p.add_argument("--rules", default="standard", help="rule set: standard or classic")
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="orbis, saison or normand (repeatable)",
    )
    p.add_argument("--workers", type=int, default=1, help="processes to play in (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the cards and agents (default 0)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _rules(args: argparse.Namespace):
    try:
        return make_rules(args.rules, args.variant)
    except ValueError as e:
        raise SystemExit(f"piquet: {e}") from None


def _check(args: argparse.Namespace) -> None:
    if args.deals < 1:
        raise SystemExit(f"piquet: --deals must be at least 1, got {args.deals}")
    if args.workers < 1:
        raise SystemExit(f"piquet: --workers must be at least 1, got {args.workers}")


def _build_check(specs: list[str], rules) -> None:
    """Build each agent once in this process so a bad spec fails before any game is played."""
    from piquet_agents.registry import make_agent

    for s in specs:
        try:
            make_agent(s, rules)
        except ValueError as e:
            raise SystemExit(f"piquet: {e}") from None


def run_eval(args: argparse.Namespace) -> int:
    """Run ``piquet eval``: print the match summary, optionally write JSON and game logs."""
    _check(args)
    rules = _rules(args)
    _build_check([args.agent_a, args.agent_b], rules)
    rep = evaluate(
        args.agent_a,
        args.agent_b,
        rules,
        args.deals,
        args.mode,
        args.seed,
        args.workers,
        progress=not args.no_progress,
        save_dir=args.save_games,
    )
    print(rep.summary())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rep.to_dict(games=True), f, indent=2)
        print(f"report written to {args.json}")
    return 0


def run_ladder_cmd(args: argparse.Namespace) -> int:
    """Run ``piquet ladder``: play the round robin, print the ranking, write JSON and PNG."""
    _check(args)
    rules = _rules(args)
    if len(args.agents) < 2:
        raise SystemExit("piquet: a ladder needs at least two agents")
    if len(set(args.agents)) != len(args.agents):
        raise SystemExit(f"piquet: ladder agents must be distinct, got {args.agents}")
    _build_check(args.agents, rules)
    res = run_ladder(
        args.agents,
        rules,
        args.deals,
        args.mode,
        args.seed,
        args.workers,
        progress=not args.no_progress,
    )
    print(res.summary())
    json_path, png_path = res.save(args.out)
    print(f"ladder written to {json_path} and {png_path}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet eval`` and ``piquet ladder``."""
    p = sub.add_parser(
        "eval",
        help="duplicate-deal match of agent A against agent B",
        description="Play N duplicate pairs (each deal twice, seats swapped) and "
        "report points per deal, win rate and (partie mode) the "
        "settled score, with 95%% confidence intervals.",
    )
    p.add_argument(
        "agent_a", metavar="A", help="random, heuristic, mcts:ITERATIONS or a checkpoint"
    )
    p.add_argument("agent_b", metavar="B", help="the opponent, same forms as A")
    _common(p, "duplicate pairs to play (each pair is 2 games; default 200)")
    p.add_argument("--save-games", metavar="DIR", help="write each game's JSON log into DIR")
    p.add_argument("--json", metavar="FILE", help="write the report (with every game) as JSON")
    p.set_defaults(func=run_eval)

    q = sub.add_parser(
        "ladder",
        help="round-robin ladder with openskill ratings",
        description="Every pair of agents plays a duplicate-deal match; the "
        "ratings, table and points matrix go to DIR/ladder.json and "
        "DIR/ladder.png.",
    )
    q.add_argument("agents", nargs="+", metavar="AGENT", help="two or more agent specs")
    _common(q, "duplicate pairs per pairing (default 200)")
    q.add_argument("--out", default="ladder", metavar="DIR", help="output folder (default ladder)")
    q.set_defaults(func=run_ladder_cmd)


if __name__ == "__main__":
    from piquet_training.cli import main

    sys.exit(main(["eval", *sys.argv[1:]]))
