"""What a training run reports about itself: one ``train.csv`` row per update
(:func:`update_row`), where its time went (:func:`time_split`) and the closing ``summary.md``
(:func:`write_summary`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from piquet_training.evaluation.stats import verdict_word
from piquet_training.memory import ProcessMemory, resident_mib
from piquet_training.ppo.collector import Rollout
from piquet_training.settings.train import TrainConfig


def update_row(
    counters: dict[str, Any],
    lr: float,
    batch: Rollout,
    stats: dict[str, float],
    seconds: float,
    collect_s: float,
) -> dict[str, Any]:
    """The ``train.csv`` row of the update just done (``counters`` already counting it, at
    learning rate ``lr``, in ``seconds`` of which ``collect_s`` collecting)."""
    c = counters
    n_traj = int(batch.dones.sum())
    row: dict[str, Any] = {
        "update": c["update"],
        "env_steps": c["env_steps"],
        "minutes": c["train_seconds"] / 60,
        "steps_per_s": batch.env_steps / seconds,
        "collect_steps_per_s": batch.env_steps / collect_s,
        "samples": len(batch),
        "lr": lr,
        "train_return": float(batch.rewards.sum()) / n_traj if n_traj else "",
        **stats,
    }
    for label in ("heuristic", "random", "snapshot"):
        pts = batch.points.get(label)
        row[f"train_vs_{label}"] = float(np.mean(pts)) if pts else ""
    row["rss_mib"], row["peak_rss_mib"] = resident_mib()  # where the memory peak is reached
    return row


def time_split(counters: dict[str, Any]) -> str:
    """Where the PPO time went: self-play collection, the update (advantages included), and the
    rest (evaluations, checkpoints, snapshots, logging), as shares of ``train_seconds``.

    >>> time_split({"train_seconds": 10.0, "collect_seconds": 4.0, "update_seconds": 5.0})
    'PPO time: collection 40%, update 50%, evaluations and checkpoints 10%'
    """
    total = counters.get("train_seconds", 0.0)
    if not total:
        return "PPO time: none"
    collect = counters.get("collect_seconds", 0.0)
    update = counters.get("update_seconds", 0.0)
    gather = counters.get("gather_seconds", 0.0)
    rest = max(0.0, total - collect - update)
    gathered = f" (gathering the chunks {100 * gather / total:.0f}%)" if gather else ""
    return (
        f"PPO time: collection {100 * collect / total:.0f}%{gathered}, "
        f"update {100 * update / total:.0f}%, evaluations and checkpoints {100 * rest / total:.0f}%"
    )


def write_summary(
    out_dir: Path,
    cfg: TrainConfig,
    counters: dict[str, Any],
    *,
    precision: str,
    finals: list[dict[str, Any]],
    seconds: float,
    steps_per_s: float,
    peak: float,
    memory: ProcessMemory | None = None,
    worker_memory: ProcessMemory | None = None,
    stopped_early: str = "",
) -> list[str]:
    """Write ``summary.md`` in ``out_dir``; return the lines to print (the title left out).
    ``stopped_early`` says why the run made fewer updates than configured (empty if it made
    them all)."""
    c = counters
    lines = [
        f"# piquet train: {out_dir}",
        "",
        f"- rules {cfg.rules}, mode {cfg.mode}, seed {cfg.seed}; device {cfg.device}, "
        f"precision {precision}",
        (
            f"- {c['update']} PPO updates, {c['env_steps']:,} of {cfg.env_steps:,} env steps in "
            if cfg.env_steps
            else f"- {c['update']} of {cfg.updates} PPO updates, {c['env_steps']:,} env steps in "
        )
        + f"{c['train_seconds'] / 60:.1f} min of PPO ({steps_per_s:,.0f} env steps/s)",
    ]
    if stopped_early:
        lines.append(f"- **stopped early**: {stopped_early}")
    worker = (
        [f"- the final evaluation's largest worker process, its own memory: {worker_memory.text()}"]
        if worker_memory
        else []
    )
    lines += [
        f"- wall time {seconds / 60:.1f} min, peak resident set of the training process "
        f"{peak:,.0f} MiB" + (f"; at the end its {memory.text(peak=False)}" if memory else ""),
        *worker,
        f"- {time_split(c)}",
        "",
    ]
    if finals:
        lines += [
            f"Final evaluation (greedy policy, duplicate deals, {cfg.eval_mode} mode; "
            f"points per deal):",
            "",
            summary_table(finals),
            "",
        ]
    (out_dir / "summary.md").write_text("\n".join(lines))
    return [*lines[2:], *(r["summary"] for r in finals)]


def summary_table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of final evaluations (dicts with ``opponent`` and report fields)."""
    lines = [
        "| opponent | pairs | deals | points per deal | 95% CI | win rate | beats it? |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = verdict_word(r["ci_low"], r["ci_high"], r["n_pairs"])
        lines.append(
            f"| {r['opponent']} | {r['n_pairs']} | {r.get('n_deals', '')} | "
            f"{r['mean_diff']:+.2f} | "
            f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] | {100 * r['win_rate']:.1f}% | "
            f"{verdict} |"
        )
    return "\n".join(lines)
