"""``piquet solve``: an equilibrium of one deal of a small rule set, by CFR+ on the whole tree
(:func:`piquet_training.exact.solve`).

.. code-block:: bash

    piquet solve --rules mini --until 0.001               # to NashConv <= 0.1% of the points range
    piquet solve --rules mini --iterations 200 --out runs/cfr
    piquet eval runs/solve-standard+mini/policy.npz heuristic --rules mini --mode deal

The solution is a tabular policy (``policy.npz``, itself an agent spec: it plays by sampling its
probabilities), with ``nashconv.csv`` (NashConv by iteration and time) and ``solve.json``.

Every ``--checkpoint-every`` iterations (and at the end) the solver's state is saved in
``solve-checkpoint.npz``; ``--resume`` continues from it (a killed run, or a finished one to more
``--iterations``), bit for bit the strategy of a run never stopped. A folder that holds a solve
already is refused unless ``--resume`` or ``--overwrite``.

.. code-block:: bash

    piquet solve --rules mini --iterations 2000 --resume   # continue runs/solve-standard+mini
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from piquet_cli.common import (
    CLIError,
    add_rules_arguments,
    check_output_path,
    cli_error,
    positive,
    require,
    rules_from_args,
)
from piquet_env.exact import TreeError
from piquet_env.exact.tree import check_size
from piquet_env.files import write_text
from piquet_env.rules import Rules


def run_solve(args: argparse.Namespace) -> int:
    """Run ``piquet solve`` with parsed ``args``; return the exit status."""
    from piquet_env.exact.policy import ExactPolicyError
    from piquet_training.exact import solve

    rules = rules_from_args(args)
    positive("--iterations", args.iterations)
    positive("--check-every", args.check_every)
    if args.checkpoint_every < 0:
        raise CLIError(f"--checkpoint-every must be 0 (never) or more, got {args.checkpoint_every}")
    if not 0 <= args.until < 1:
        raise CLIError(f"--until must be a fraction in [0, 1), got {args.until}")
    try:
        check_size(rules)
    except TreeError as exc:
        raise cli_error(exc) from None
    out = _out_dir(args, rules)
    check_output_path(out, "--out", directory=True)
    if args.json:
        check_output_path(args.json, "--json")
    bar = _IterationBar(args.iterations, show=not args.no_progress)

    def report(it: int, nash_conv: float, seconds: float) -> None:
        line = f"iteration {it:5d}  NashConv {nash_conv:.6f}  ({seconds:.0f}s)"
        bar.write(line)

    try:
        result = solve(
            rules,
            out,
            iterations=args.iterations,
            check_every=args.check_every,
            until=args.until,
            progress=report,
            checkpoint_every=args.checkpoint_every,
            resume=args.resume is not None,
            overwrite=args.overwrite,
            on_iteration=bar.update,
        )
    except ExactPolicyError as exc:
        raise cli_error(exc) from None
    finally:
        bar.close()
    f = result.figures
    print(
        f"CFR+ under {rules.name}: {result.iterations} iterations in {result.seconds:.0f}s (the "
        f"tree {result.tree_seconds:.0f}s): NashConv {f.nash_conv:.6f} "
        f"({100 * f.nash_conv / result.points_range:.4f}% of the {result.points_range:g}-point "
        f"range); the deal is worth {f.value:+.4f} points to elder"
    )
    print(
        f"outputs in {out}: policy.npz (an agent spec), nashconv.csv, solve.json, "
        "solve-checkpoint.npz (to --resume)"
    )
    if args.json:
        write_text(args.json, json.dumps(result.to_dict(), indent=2) + "\n")
    return 0


def _out_dir(args: argparse.Namespace, rules: Rules) -> Path:
    """The solve folder: ``--resume DIR``, else ``--out``, else ``runs/solve-RULES``."""
    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise CLIError(f"--resume {args.resume} and --out {args.out} name two folders")
        return Path(args.resume)
    return Path(args.out) if args.out else Path("runs") / f"solve-{rules.name}"


class _IterationBar:
    """A tqdm bar over the iterations, opened at the first iteration (a refused resume shows
    none; a resumed run's starts where it left off); ``show=False`` (``--no-progress``): none,
    the NashConv lines printed plainly."""

    def __init__(self, total: int, show: bool) -> None:
        if show:
            require(["tqdm"])
        self.total, self.show = total, show
        self._bar: Any = None

    def update(self, iteration: int) -> None:
        """The solver has done ``iteration`` iterations."""
        if not self.show:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.total, initial=iteration - 1, desc="CFR+", unit="it", dynamic_ncols=True
            )
        self._bar.update(iteration - self._bar.n)

    def write(self, line: str) -> None:
        """Print ``line`` (above the bar when there is one)."""
        if self._bar is not None:
            self._bar.write(line)
        else:
            print(line, flush=True)

    def close(self) -> None:
        """Close the bar, if one was opened."""
        if self._bar is not None:
            self._bar.close()


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
    p.add_argument(
        "--checkpoint-every",
        type=int,
        default=100,
        metavar="K",
        help="iterations between checkpoints of the solver's state (default 100; 0: only at "
        "the end)",
    )
    p.add_argument("--out", metavar="DIR", help="output folder (default runs/solve-RULES)")
    p.add_argument(
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="continue the solve in DIR (default: --out) from its checkpoint, bit for bit",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace a solve already in the output folder"
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON to FILE")
    p.set_defaults(func=run_solve)
