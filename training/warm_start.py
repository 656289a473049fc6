"""The exploiter's start where it has no weights to start from: the built-in trainer's warm
start (behaviour cloning of the heuristic), for any trainer.

The built-in trainer makes its warm start itself, before its first update
(:func:`~piquet_training.ppo.trainer.warm_start`); another trainer (RLlib's exploiter) asks
:func:`warm_start_policy`, which runs that trainer on the same settings with no update, so both
start from the same weights, weight for weight, for the same seed and widths. Trainers meet
here rather than one reaching into the other's package.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from piquet_training.settings.train import TrainConfig

WARM_START_DIR = "warm_start"
"""Where in a run's folder :func:`warm_start_policy` leaves the built-in trainer's run."""


def warm_start_policy(
    cfg: TrainConfig, run_dir: Path, *, hidden: Sequence[int], activation: str, echo: bool = True
) -> Path:
    """The built-in trainer's warm start of ``cfg`` at the widths ``hidden`` and ``activation``:
    that trainer run with no update in ``run_dir/``:data:`WARM_START_DIR`; the path of the
    policy it imitated (its :data:`~piquet_training.ppo.trainer.WARM_START_FILE`)."""
    from piquet_training.ppo.trainer import WARM_START_FILE, train

    out = run_dir / WARM_START_DIR
    warm = dataclasses.replace(
        cfg,
        out_dir=str(out),
        hidden=list(hidden),
        activation=activation,
        env_steps=0,
        updates=0,
        time_budget_minutes=0.0,
        eval_every=0,
        final_eval_deals=0,
        exact_every=0,
        tensorboard=False,
    ).validate()
    train(warm, overwrite=True, echo=echo)  # the run's own sub-folder, made again
    return out / WARM_START_FILE
