"""``piquet solve``: an equilibrium of one deal of a small rule set, by CFR+ on the whole tree
(:func:`piquet_training.exact.solve`).

.. code-block:: bash

    piquet solve --rules mini --until 0.001               # to NashConv <= 0.1% of the points range
    piquet solve --rules mini --iterations 200 --out runs/cfr
    piquet eval runs/solve-mini/policy.npz heuristic --rules mini --mode deal

The solution is a tabular policy (``policy.npz``, itself an agent spec: it plays by sampling its
probabilities), with ``nashconv.csv`` (NashConv by iteration and time) and ``solve.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from piquet_cli.common import (
    CLIError,
    add_rules_arguments,
    check_output_path,
    positive,
    rules_from_args,
)
from piquet_env.exact import TreeError
from piquet_env.exact.tree import check_size


def run_solve(args: argparse.Namespace) -> int:
    """Run ``piquet solve`` with parsed ``args``; return the exit status."""
    from piquet_training.exact import solve

    rules = rules_from_args(args)
    positive("--iterations", args.iterations)
    positive("--check-every", args.check_every)
    if not 0 <= args.until < 1:
        raise CLIError(f"--until must be a fraction in [0, 1), got {args.until}")
    try:
        check_size(rules)
    except TreeError as exc:
        raise CLIError(str(exc)) from None
    out = Path(args.out) if args.out else Path("runs") / f"solve-{rules.name}"
    check_output_path(out, "--out", directory=True)

    def report(it: int, nash_conv: float, seconds: float) -> None:
        print(f"iteration {it:5d}  NashConv {nash_conv:.6f}  ({seconds:.0f}s)", flush=True)

    result = solve(
        rules,
        out,
        iterations=args.iterations,
        check_every=args.check_every,
        until=args.until,
        progress=report,
    )
    f = result.figures
    print(
        f"CFR+ under {rules.name}: {result.iterations} iterations in {result.seconds:.0f}s (the "
        f"tree {result.tree_seconds:.0f}s): NashConv {f.nash_conv:.6f} "
        f"({100 * f.nash_conv / result.points_range:.4f}% of the {result.points_range:g}-point "
        f"range); the deal is worth {f.value:+.4f} points to elder"
    )
    print(f"outputs in {out}: policy.npz (an agent spec), nashconv.csv, solve.json")
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet solve``."""
    p = sub.add_parser(
        "solve",
        help="an equilibrium of one deal of a small rule set (CFR+ on the whole tree)",
        description=__doc__,
    )
    add_rules_arguments(p)
    p.add_argument(
        "--iterations",
        type=int,
        default=2000,
        metavar="N",
        help="at most N CFR+ iterations (default 2000)",
    )
    p.add_argument(
        "--until",
        type=float,
        default=0.0,
        metavar="F",
        help="stop once NashConv is at most F times the points range (e.g. 0.001; default: "
        "run every iteration)",
    )
    p.add_argument(
        "--check-every",
        type=int,
        default=25,
        metavar="K",
        help="iterations between NashConv checks (default 25)",
    )
    p.add_argument("--out", metavar="DIR", help="output folder (default runs/solve-RULES)")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON to FILE")
    p.set_defaults(func=run_solve)
