"""Helpers for training tests: a tiny run of ``piquet train`` (seconds) through the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from piquet_cli import main
from piquet_training.ppo.collector import Collector, Rollout

TINY = [
    "updates=2",
    "bc_games=6",
    "bc_epochs=1",
    "num_envs=4",
    "games_per_update=4",
    "mode=deal",
    "eval_every=1",
    "eval_deals=2",
    "final_eval_deals=3",
    "progress=false",
    "tensorboard=false",
    "hidden=16",
    "eval_opponents=random",
    "eval_mode=deal",
    "eval_workers=1",
]
"""The settings of a tiny single-deal run: two updates, a few games, evaluation against random."""


def train_cli(out: Path, settings: list[str], *extra: str) -> int:
    """Run ``piquet train --set ...`` with ``settings``, ``out_dir=out`` and then ``extra``
    (later settings override earlier ones); return its exit status."""
    args = ["train"]
    for item in [*settings, f"out_dir={out}", *extra]:
        args += ["--set", item]
    return main(args)


def finished_results(col: Collector) -> list[tuple[int, int]]:
    """A list that ``col`` fills with each game's result as it ends (a spy on its ``_apply``)."""
    results: list[tuple[int, int]] = []
    orig = col._apply

    def spy(slot, action, rewards, stats):
        orig(slot, action, rewards, stats)
        if slot.game.is_over:
            results.append(slot.game.result)

    col._apply = spy  # type: ignore[method-assign]
    return results


def trajectory_sums(roll: Rollout) -> list[float]:
    """Each recorded trajectory's summed rewards, in the rollout's order."""
    ends = np.flatnonzero(roll.dones)
    starts = np.r_[0, ends[:-1] + 1]
    return [float(roll.rewards[a : b + 1].sum()) for a, b in zip(starts, ends)]
