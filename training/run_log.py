"""Run logs of ``piquet train``: CSV files, TensorBoard, the learning-curve PNG and the summary.

A run directory gets ``train.csv`` (one row per PPO update: losses, entropy, KL, env steps/s...),
``eval.csv`` (one row per evaluation and opponent: mean points per deal with its 95% interval),
TensorBoard event files under ``tb/`` (optional), ``learning_curve.png`` and ``summary.md``.
On ``--resume`` the CSV files are appended to.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TRAIN_CSV = "train.csv"
EVAL_CSV = "eval.csv"
EVAL_COLUMNS = (
    "update",
    "env_steps",
    "minutes",
    "opponent",
    "n_pairs",
    "mean_diff",
    "ci_low",
    "ci_high",
    "win_rate",
    "significant",
)


class RunLogger:
    """Writes scalars to CSV (and TensorBoard when ``tensorboard``) under ``out_dir``."""

    def __init__(self, out_dir: str | Path, *, tensorboard: bool = True) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(self.out_dir / "tb"))
        self._train_columns: list[str] | None = None

    def log_update(self, row: dict[str, Any]) -> None:
        """Append one update's row to ``train.csv`` (and TensorBoard at ``env_steps``)."""
        path = self.out_dir / TRAIN_CSV
        if self._train_columns is None:
            if path.exists() and path.stat().st_size:
                with path.open() as f:
                    self._train_columns = next(csv.reader(f))
            else:
                self._train_columns = list(row)
                with path.open("w", newline="") as f:
                    csv.writer(f).writerow(self._train_columns)
        with path.open("a", newline="") as f:
            csv.writer(f).writerow([_fmt(row.get(c, "")) for c in self._train_columns])
        if self._writer is not None:
            step = int(row.get("env_steps", row.get("update", 0)))
            for key, value in row.items():
                if isinstance(value, (int, float)) and key not in ("update", "env_steps"):
                    self._writer.add_scalar(key if "/" in key else f"train/{key}", value, step)

    def log_eval(self, row: dict[str, Any]) -> None:
        """Append one evaluation (one opponent) to ``eval.csv`` (and TensorBoard)."""
        path = self.out_dir / EVAL_CSV
        new = not path.exists() or not path.stat().st_size
        with path.open("a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(EVAL_COLUMNS)
            w.writerow([_fmt(row[c]) for c in EVAL_COLUMNS])
        if self._writer is not None:
            step, opp = int(row["env_steps"]), row["opponent"]
            for key in ("mean_diff", "ci_low", "ci_high", "win_rate"):
                self._writer.add_scalar(f"eval_{opp}/{key}", float(row[key]), step)

    def close(self) -> None:
        """Flush and close TensorBoard."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def _fmt(value: Any) -> Any:
    return f"{value:.6g}" if isinstance(value, float) else value


def read_csv(path: str | Path) -> list[dict[str, str]]:
    """Rows of a CSV file as dicts (empty if the file is missing)."""
    path = Path(path)
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def plot_learning_curve(out_dir: str | Path, path: str | Path | None = None) -> Path | None:
    """Draw ``learning_curve.png``: evaluation points per deal (95% bands) against env steps,
    one line per opponent, above the PPO losses. Returns the path, or None without evaluations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    evals = read_csv(out_dir / EVAL_CSV)
    train = read_csv(out_dir / TRAIN_CSV)
    if not evals and not train:
        return None
    fig, (ax, ax2) = plt.subplots(
        2, 1, figsize=(8, 7), sharex=True, gridspec_kw={"height_ratios": [2, 1]}
    )
    for opp in sorted({r["opponent"] for r in evals}):
        rows = [r for r in evals if r["opponent"] == opp]
        x = [float(r["env_steps"]) for r in rows]
        ax.plot(x, [float(r["mean_diff"]) for r in rows], marker="o", label=f"vs {opp}")
        ax.fill_between(
            x, [float(r["ci_low"]) for r in rows], [float(r["ci_high"]) for r in rows], alpha=0.2
        )
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_ylabel("points per deal (95% CI)")
    ax.set_title("Duplicate-deal evaluation of the greedy policy")
    if evals:
        ax.legend()
    if train:
        x = [float(r["env_steps"]) for r in train]
        for key, label in (
            ("policy_loss", "policy loss"),
            ("entropy", "entropy"),
            ("approx_kl", "approx KL x100"),
        ):
            if key in train[0]:
                scale = 100.0 if key == "approx_kl" else 1.0
                ax2.plot(x, [float(r[key]) * scale for r in train], label=label)
        ax2.legend()
    ax2.set_xlabel("env steps (decisions, both seats)")
    fig.tight_layout()
    path = Path(path) if path else out_dir / "learning_curve.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def summary_table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of final evaluations (dicts with ``opponent`` and report fields)."""
    lines = [
        "| opponent | pairs | deals | points per deal | 95% CI | win rate | beats it? |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = "yes" if r["ci_low"] > 0 else ("no (worse)" if r["ci_high"] < 0 else "not shown")
        lines.append(
            f"| {r['opponent']} | {r['n_pairs']} | {r.get('n_deals', '')} | "
            f"{r['mean_diff']:+.2f} | "
            f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] | {100 * r['win_rate']:.1f}% | "
            f"{verdict} |"
        )
    return "\n".join(lines)
