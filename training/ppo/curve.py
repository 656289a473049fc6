"""The learning curve of a ``piquet train`` run: ``learning_curve.png``, drawn from the run's
files (:mod:`.run_log`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piquet_training.run_log import EVAL_CSV, EVENTS_CSV, TRAIN_CSV, read_csv

_METRIC_PANELS = (
    ("policy_loss", "policy loss"),
    ("value_loss", "value loss"),
    ("entropy", "entropy (nats)"),
    ("approx_kl", "approximate KL"),
    ("explained_variance", "explained variance"),
    ("train_return", "training return (per trajectory)"),
)


def _floats(rows: Sequence[dict[str, str]], key: str) -> list[float]:
    out = []
    for r in rows:
        try:
            out.append(float(r.get(key) or "nan"))
        except ValueError:
            out.append(math.nan)
    return out


def plot_learning_curve(out_dir: str | Path, path: str | Path | None = None) -> Path | None:
    """Draw ``learning_curve.png`` (:func:`learning_curve_figure`) and return its path (None
    without any logs)."""
    out_dir = Path(out_dir)
    fig = learning_curve_figure(out_dir)
    if fig is None:
        return None
    import matplotlib.pyplot as plt

    path = Path(path) if path else out_dir / "learning_curve.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def learning_curve_figure(out_dir: str | Path) -> Any:
    """The learning curve of a run directory as a matplotlib figure (None without any logs).

    The top panel shows the duplicate-deal evaluations against env steps: one line per opponent
    through the starting and periodic evaluations (points per deal, 95% bands), the final
    evaluation as a separate, labelled marker with its interval (never joined to the line), and
    dotted vertical marks at the warm start and at each resume. Below, one labelled panel per
    training statistic: policy loss, value loss, entropy, approximate KL, explained variance and
    the training return.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    evals = read_csv(out_dir / EVAL_CSV)
    train = read_csv(out_dir / TRAIN_CSV)
    events = read_csv(out_dir / EVENTS_CSV)
    if not evals and not train:
        return None
    fig = plt.figure(figsize=(10, 11))
    grid = fig.add_gridspec(4, 2, height_ratios=[1.6, 1, 1, 1])
    ax = fig.add_subplot(grid[0, :])
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, opp in enumerate(sorted({r["opponent"] for r in evals})):
        colour = colours[i % len(colours)]
        rows = [r for r in evals if r["opponent"] == opp and r.get("kind") != "final"]
        if rows:
            x = _floats(rows, "env_steps")
            ax.plot(x, _floats(rows, "mean_diff"), marker="o", color=colour, label=f"vs {opp}")
            ax.fill_between(
                x, _floats(rows, "ci_low"), _floats(rows, "ci_high"), color=colour, alpha=0.2
            )
        finals = [r for r in evals if r["opponent"] == opp and r.get("kind") == "final"]
        for j, r in enumerate(finals):
            y, lo, hi = (float(r[k]) for k in ("mean_diff", "ci_low", "ci_high"))
            ax.errorbar(
                float(r["env_steps"]),
                y,
                yerr=[[y - lo], [hi - y]],
                fmt="*",
                markersize=14,
                capsize=5,
                color=colour,
                label=f"final vs {opp} ({r['n_pairs']} pairs)" if j == len(finals) - 1 else None,
            )
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_ylabel("points per deal (95% CI)")
    ax.set_title("Duplicate-deal evaluation of the greedy policy")
    panels = [fig.add_subplot(grid[1 + k // 2, k % 2], sharex=ax) for k in range(6)]
    marks = [(float(e["env_steps"]), e["event"]) for e in events]
    for a in [ax, *panels]:
        for x, _event in marks:
            a.axvline(x, color="black", ls=":", lw=1.0)
    for x, event in marks:
        label = {"warm_start": "warm start", "resume": "resumed"}.get(event, event)
        ax.annotate(
            label,
            (x, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -12),
            textcoords="offset points",
            fontsize=8,
        )
    if evals:
        ax.legend(fontsize=8, loc="best")
    x = _floats(train, "env_steps")
    for a, (key, label) in zip(panels, _METRIC_PANELS):
        a.set_title(label, fontsize=10)
        if train and key in train[0]:
            a.plot(x, _floats(train, key), lw=1.2)
        else:
            a.text(0.5, 0.5, "not logged", ha="center", va="center", transform=a.transAxes)
        a.grid(alpha=0.3)
    for a in panels[-2:]:
        a.set_xlabel("env steps (decisions, both seats)")
    fig.tight_layout()
    return fig
