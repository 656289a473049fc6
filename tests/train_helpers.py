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

KILLER = '''\
"""A heuristic agent that kills its own process at its first move, once (a marker file)."""
import os
import signal
from pathlib import Path

from piquet_agents.heuristic import HeuristicAgent

MARK = Path(__file__).with_suffix(".killed")


class Killer(HeuristicAgent):
    def act(self, turn):
        if not MARK.exists():
            MARK.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return super().act(turn)


def make(rules, seed):
    return Killer(seed, name="killer")
'''
"""An external agent (``py:FILE:make``) that kills its own process at its first move, once: a
real kill of whichever worker plays it (a marker file beside it says it happened)."""


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
