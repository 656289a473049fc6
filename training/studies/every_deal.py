"""Agents against a target on every deal of a rule set small enough to enumerate, in both seats.

A match samples its deals, and on ``mini`` the luck of the deal is most of a bound's interval: at
300 duplicate pairs a bound of 1.5 points per deal holds ±0.7. Here every deal of the pack
(``mini``: 630) is played in both seats
(:func:`~piquet_training.evaluation.every_deal.play_every_deal`), so the deal's luck is gone.
Each agent after the first is also reported as its difference from the first, deal by deal; its
95% interval counts the deals as if sampled, which overstates the search's own noise (the deals
are all there), so it is a conservative one.

Command (the results page's): ``python -m piquet_training.studies.every_deal TARGET AGENT
[AGENT ...] --rules mini [--exact BR_SEAT] [--json F]``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piquet_env.rules import make_rules
from piquet_training.evaluation.every_deal import play_every_deal

__all__ = ["main"]


def _interval(xs: Sequence[float]) -> tuple[float, float]:
    """The mean and the half width of its 95% interval, the entries taken as a sample."""
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return mean, 1.96 * sd / math.sqrt(n)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m piquet_training.studies.every_deal")
    ap.add_argument("target")
    ap.add_argument("agents", nargs="+")
    ap.add_argument("--rules", default="mini")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exact", type=float, default=None, help="the exact best response's value")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rules = make_rules(args.rules)
    found: dict[str, Any] = {"target": args.target, "rules": rules.name, "agents": {}}
    first: list[float] = []
    for spec in args.agents:
        t0 = time.perf_counter()
        points = play_every_deal(spec, args.target, rules, args.seed)
        row: dict[str, Any] = {"value": sum(points) / len(points), "deals": len(points)}
        if first:
            mean, half = _interval([a - b for a, b in zip(points, first)])
            row["minus_first"] = {"mean": mean, "ci_low": mean - half, "ci_high": mean + half}
            row["deals_differing"] = sum(a != b for a, b in zip(points, first))
        else:
            first = points
        if args.exact:
            row["fraction"] = row["value"] / args.exact
        row["minutes"] = round((time.perf_counter() - t0) / 60, 2)
        print(json.dumps({spec: row}), flush=True)
        row["points"] = points  # deal by deal, for pairing with another run
        found["agents"][spec] = row
    if args.json:
        args.json.write_text(json.dumps(found, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
