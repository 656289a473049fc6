"""Exact learning curves: the NashConv of training runs on a small rule set, beside CFR+'s.

Each run of ``piquet train`` with ``exact_every`` writes ``exact.csv`` (the policy's exact
NashConv, sampled and greedy, by update); ``piquet solve`` writes ``nashconv.csv`` (CFR+'s, by
iteration and seconds). This reads them, grouped by label (the seeds of one setting), and draws
one figure of two panels: NashConv against env steps (every group, each seed a thin line, the
mean a thick one) and against training minutes, where CFR+ stands beside them at equal wall
time. It prints each run's final NashConv and each group's mean.

Command: ``python -m piquet_training.studies.exact_curves --group "plain
PPO=runs/mini-1,runs/mini-2" --group "uniform magnet=runs/uniform-1" --cfr
runs/solve-standard+mini/nashconv.csv --out curves.png [--form sample|greedy] [--json F]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piquet_training.run_log import EXACT_CSV


def read_exact(run: str | Path, form: str = "sample") -> list[dict[str, float]]:
    """The rows of a run's ``exact.csv`` for one policy form, in update order, ``minutes`` the
    training's alone (the run's clock, less the exact measurements taken before the row)."""
    path = Path(run) / EXACT_CSV
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no exact.csv (train with exact_every > 0)")
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["form"] == form]
    out, measuring = [], 0.0
    for r in rows:
        row = {k: float(r[k]) for k in ("update", "env_steps", "minutes", "nash_conv")}
        row["minutes"] -= measuring / 60  # the run's clock counts its own exact measurements
        out.append(row)
        if row["update"] > 0:  # the first is taken before the run's clock starts
            measuring += float(r["seconds"])
    return out


def read_cfr(path: str | Path) -> list[dict[str, float]]:
    """CFR+'s convergence log (``piquet solve``'s ``nashconv.csv``)."""
    with Path(path).open(newline="") as f:
        return [
            {k: float(r[k]) for k in ("iteration", "seconds", "nash_conv")}
            for r in csv.DictReader(f)
        ]


def parse_group(text: str) -> tuple[str, list[str]]:
    """``"LABEL=DIR,DIR"`` as ``(label, [dirs])``."""
    label, sep, dirs = text.partition("=")
    runs = [d for d in dirs.split(",") if d]
    if not sep or not label or not runs:
        raise argparse.ArgumentTypeError(f"expected LABEL=DIR[,DIR...], got {text!r}")
    return label, runs


def summarise(groups: dict[str, list[str]], form: str = "sample") -> dict[str, Any]:
    """Each run's final NashConv and budget, and each group's mean and range."""
    out: dict[str, Any] = {}
    for label, runs in groups.items():
        finals = {}
        for run in runs:
            rows = read_exact(run, form)
            finals[str(run)] = {
                "nash_conv": rows[-1]["nash_conv"],
                "env_steps": int(rows[-1]["env_steps"]),
                "update": int(rows[-1]["update"]),
                "minutes": rows[-1]["minutes"],
            }
        values = [f["nash_conv"] for f in finals.values()]
        out[label] = {
            "runs": finals,
            "mean": statistics.fmean(values),
            "min": min(values),
            "max": max(values),
        }
    return out


def plot(
    groups: dict[str, list[str]],
    out: str | Path,
    cfr: str | Path | None = None,
    form: str = "sample",
) -> None:
    """Draw the two panels into ``out`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (by_steps, by_time) = plt.subplots(1, 2, figsize=(12, 4.6), constrained_layout=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, runs) in enumerate(groups.items()):
        colour = colours[i % len(colours)]
        curves = [read_exact(run, form) for run in runs]
        for k, rows in enumerate(curves):
            steps = [r["env_steps"] / 1e6 for r in rows]
            by_steps.plot(steps, [r["nash_conv"] for r in rows], color=colour, lw=0.7, alpha=0.5)
            by_time.plot(
                [r["minutes"] for r in rows],
                [r["nash_conv"] for r in rows],
                color=colour,
                lw=1,
                label=None if k else label,
            )
        n = min(len(c) for c in curves)
        mean = [statistics.fmean(c[k]["nash_conv"] for c in curves) for k in range(n)]
        steps = [curves[0][k]["env_steps"] / 1e6 for k in range(n)]
        by_steps.plot(steps, mean, color=colour, lw=2, label=f"{label} ({len(runs)} seeds)")
    if cfr is not None:
        rows = read_cfr(cfr)
        by_time.plot(
            [r["seconds"] / 60 for r in rows],
            [r["nash_conv"] for r in rows],
            color="black",
            lw=2,
            marker="o",
            ms=3,
            label="CFR+ (the tree's build not counted)",
        )
    by_time.legend()
    for ax, xlabel in ((by_steps, "env steps (millions)"), (by_time, "training minutes")):
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"exact NashConv, points per deal ({form})")
        ax.grid(True, which="both", alpha=0.3)
    by_steps.legend()
    by_steps.set_title("NashConv against env steps")
    by_time.set_title("against wall time, CFR+ beside")
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m piquet_training.studies.exact_curves``: print the finals, draw ``--out``."""
    p = argparse.ArgumentParser(
        prog="python -m piquet_training.studies.exact_curves", description=__doc__
    )
    p.add_argument("--group", type=parse_group, action="append", required=True, metavar="L=D,D")
    p.add_argument("--cfr", help="piquet solve's nashconv.csv, drawn against wall time")
    p.add_argument("--form", choices=("sample", "greedy"), default="sample")
    p.add_argument("--out", help="the figure (PNG)")
    p.add_argument("--json", type=Path, help="write the finals there")
    args = p.parse_args(argv)
    groups = dict(args.group)
    summary = summarise(groups, args.form)
    for label, s in summary.items():
        finals = ", ".join(f"{r['nash_conv']:.3f}" for r in s["runs"].values())
        print(f"{label}: final NashConv {finals} (mean {s['mean']:.3f})")
    if args.out:
        plot(groups, args.out, args.cfr, args.form)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
