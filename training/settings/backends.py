"""Which trainer wrote a run: the built-in PPO (``piquet train``, :mod:`piquet_training.ppo.update`)
or Ray RLlib (``piquet train --backend rllib``, :mod:`piquet_training.rllib`), so that ``--resume``
on the other backend's run says so instead of failing on a config key of the other trainer.

Both write ``DIR/checkpoints/latest.safetensors`` (what ``--resume DIR`` reads) and
``DIR/policy.safetensors``. RLlib marks its files: ``meta["trainer"] == "rllib"`` on its training
checkpoint, ``meta["config"]["trainer"]`` on its exported policy. The built-in trainer marks none;
its training checkpoint holds the training state under ``meta["train"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piquet_env.errors import Message, Setting

if TYPE_CHECKING:  # torch: not imported to build the command line's parsers
    from piquet_agents.checkpoint import Checkpoint

TORCH = "torch"
"""The built-in trainer's ``--backend`` name."""
RLLIB = "rllib"
"""The RLlib backend's ``--backend`` name, and the mark (``meta["trainer"]``) on its files."""
_NAMES = {TORCH: "the built-in trainer", RLLIB: "the RLlib trainer"}


def trainer_of(meta: Mapping[str, Any]) -> str:
    """:data:`RLLIB` for a checkpoint written by the RLlib backend (its training checkpoint or
    its exported policy), else :data:`TORCH` (every other piquet checkpoint, unmarked, is the
    built-in trainer's)."""
    config = meta.get("config")
    marks = (meta.get("trainer"), config.get("trainer") if isinstance(config, Mapping) else None)
    return RLLIB if RLLIB in marks else TORCH


def check_resume(ckpt: Checkpoint, backend: str, resume: str | Path) -> None:
    """Raise :class:`~piquet_agents.checkpoint.CheckpointError` unless ``ckpt`` (read from
    ``--resume RESUME``) is a training checkpoint of ``backend`` (:data:`TORCH` or
    :data:`RLLIB`): a run of the other backend says which command continues it; a policy file
    says it holds no training state.

    >>> from piquet_agents.checkpoint import Checkpoint
    >>> check_resume(Checkpoint({}, {"trainer": "rllib"}), "torch", "r.safetensors")
    Traceback (most recent call last):
    ...
    piquet_agents.checkpoint.CheckpointError: r.safetensors is a training checkpoint of ...
    """
    from piquet_agents.checkpoint import CheckpointError

    if backend not in _NAMES:
        raise ValueError(f"backend must be one of {', '.join(_NAMES)}, got {backend!r}")
    wrote = trainer_of(ckpt.meta)
    if "train" not in ckpt.meta and ckpt.meta.get("trainer") != RLLIB:
        raise CheckpointError(
            Message(
                f"{resume}: a policy of {_NAMES[wrote]}, not a training state (",
                Setting("resume"),
                " takes a run's folder or its checkpoints/latest.safetensors)",
            ),
            path=ckpt.path,
            field="trainer",
        )
    if wrote != backend:
        what = "a run" if Path(resume).is_dir() else "a training checkpoint"
        raise CheckpointError(
            Message(
                f"{resume} is {what} of {_NAMES[wrote]}, not of {_NAMES[backend]}: continue it "
                "with ",
                Setting("backend", wrote),
                " and ",
                Setting("resume", str(resume)),
            ),
            path=ckpt.path,
            field="trainer",
        )
