"""A ladder's result as a figure: the ranking beside the head-to-head matrix (``ladder.png``).

matplotlib is imported when a figure is drawn, not with this module.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from piquet_training.evaluation.ladder.data import LadderData
from piquet_training.evaluation.ladder.stats import Z95
from piquet_training.evaluation.ladder.text import pairs_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def figure(res: LadderData) -> Figure:
    """The ladder's figure (matplotlib, Agg backend): the ratings as ranked, each with its 95%
    interval, and the head-to-head matrix with each cell's interval and significance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = res.table()
    names = [r["agent"] for r in rows]
    k = len(names)
    fig, (ax1, ax2) = plt.subplots(
        1, 2, figsize=(7 + 1.3 * k, 1.8 + 0.9 * k), gridspec_kw={"width_ratios": [1, 1.2]}
    )
    ys = list(range(k))[::-1]  # best at the top
    for y, r in zip(ys, rows):
        half = Z95 * r["rating_stderr"]
        ax1.plot(
            [r["rating"] - half, r["rating"] + half],
            [y, y],
            color="tab:gray",
            lw=2,
            solid_capstyle="butt",
        )
    ax1.scatter(
        [r["rating"] for r in rows],
        ys,
        marker="D",
        s=60,
        color="tab:blue",
        zorder=4,
        label="rating (ranked by), 95% interval",
    )
    for y, r in zip(ys, rows):
        ax1.annotate(
            f"{r['rating']:+.1f}",
            (r["rating"], y),
            textcoords="offset points",
            xytext=(0, 7),
            ha="center",
            fontsize=8,
            color="tab:blue",
        )
    ax1.set_yticks(ys, [f"{i}. {n}" for i, n in enumerate(names, 1)])
    ax1.set_ylim(-0.7, k - 0.3)
    ax1.set_xlabel("points per deal against an average agent of the ladder")
    ax1.set_title("ranking (by points rating)")
    ax1.legend(loc="lower right", fontsize=7)
    ax1.grid(axis="x", alpha=0.3)

    order = [res.agents.index(n) for n in names]
    mat, ci = res.matrix(), res.interval_matrix()
    grid = np.full((k, k), np.nan)
    for a, i in enumerate(order):
        for b, j in enumerate(order):
            if mat[i][j] is not None:
                grid[a, b] = mat[i][j]
    bound = max(1.0, float(np.nanmax(np.abs(grid))) if k > 1 else 1.0)
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="0.85")
    im = ax2.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=-bound, vmax=bound)
    for a, i in enumerate(order):
        for b, j in enumerate(order):
            if a == b:
                ax2.text(b, a, "—", ha="center", va="center", color="0.4")
                continue
            lo, hi = ci[i][j]
            m, _ = res.match(names[a], names[b])
            mark = "?" if m.too_small else ("*" if lo > 0 or hi < 0 else "")
            ax2.text(
                b,
                a,
                f"{grid[a, b]:+.1f}{mark}\n[{lo:+.1f}, {hi:+.1f}]",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if abs(grid[a, b]) > bound / 2 else "black",
            )
    ax2.set_xticks(range(k), [str(i) for i in range(1, k + 1)])
    ax2.set_yticks(range(k), [f"{i}. {n}" for i, n in enumerate(names, 1)])
    ax2.set_xlabel("column agent (number as in the ranking)")
    ax2.set_title("head to head: row − column\n(* 95% interval excludes 0; ? too few pairs)")
    bar = fig.colorbar(im, ax=ax2, shrink=0.85)
    bar.set_label("mean points per deal, row − column")
    fig.suptitle(f"piquet ladder: {res.rules}, {res.mode} mode, {pairs_text(res)}")
    fig.tight_layout()
    return fig


def plot(res: LadderData, path: str | os.PathLike) -> None:
    """Draw :func:`figure` to a PNG file at ``path``."""
    import matplotlib.pyplot as plt

    fig = figure(res)
    try:
        fig.savefig(path, dpi=100)
    finally:
        plt.close(fig)
