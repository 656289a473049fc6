"""Expert iteration against a fixed target on a rule set small enough to enumerate, each round
valued on every deal: the study behind issue 56's table (docs: Results, exact).

The method is :mod:`piquet_training.exploit.expert`'s (``piquet exploit --expert-rounds K``
runs it after training the exploiter); here it starts from a trained exploiter's network, every
round plays every deal of the rules in both seats (so the search's points, and the fitted
network's greedy points, are exact expectations over the deals:
:func:`~piquet_training.evaluation.every_deal.play_every_deal`), and ``--exact`` (the exact best
response's value, ``piquet exploit TARGET --rules mini --exact``) turns each figure into a
fraction of the truth.

Command (the results page's): ``python -m piquet_training.studies.expert_iteration TARGET
EXPLOITER --rules mini --rounds 8 --leaves 40 --floor 0 --exact BR_SEAT --out DIR``:
``DIR/round-K.safetensors`` each round's fitted network (a policy checkpoint, an agent spec),
``DIR/rounds.jsonl`` a line a round.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from piquet_agents.guided_search import FLAT_PRIOR
from piquet_env.rules import make_rules
from piquet_training.evaluation.every_deal import play_every_deal
from piquet_training.exploit.expert import ExpertIteration, expert_iteration

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m piquet_training.studies.expert_iteration")
    ap.add_argument("target", help="the target's agent spec")
    ap.add_argument("exploiter", help="the learned exploiter's policy checkpoint (round 0)")
    ap.add_argument("--rules", default="mini")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--leaves", type=int, default=20, help="the search's leaves a decision")
    ap.add_argument("--epochs", type=int, default=20, help="passes over the labels a round")
    ap.add_argument(
        "--floor", type=float, default=FLAT_PRIOR,
        help="the prior a move needs to be searched (0: every legal move; a fitted network is "
        "sharp, and the search's default then weighs its two likeliest moves only)",
    )  # fmt: skip
    ap.add_argument("--exact", type=float, default=None, help="the exact best response's value")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    rules = make_rules(args.rules)
    settings = ExpertIteration(args.rounds, args.leaves, args.floor, 0, args.epochs).check(rules)
    start = play_every_deal(args.exploiter, args.target, rules, args.seed)
    print(json.dumps({"round": 0, "network": sum(start) / len(start), "policy": args.exploiter}))
    expert_iteration(
        args.target, args.exploiter, rules, args.out, settings, exact=args.exact, seed=args.seed
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
