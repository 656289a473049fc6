"""What a training run saves to continue exactly where it stopped, and how it is read back.

:func:`save_training_checkpoint` writes the network, the optimizer's state, the opponent pool's
snapshots, the torch, numpy and Python generators' states and the run's counters into one
safetensors checkpoint (:mod:`piquet_agents.checkpoint`: tensors plus JSON, nothing pickled);
:func:`restore_training_checkpoint` puts them back, and refuses, naming the file and the field,
any part that is missing or malformed. A resumed run at the same ``torch_threads`` continues bit
for bit. :data:`RUN_FILES` are what a new run must not replace
(:meth:`~piquet_training.run_folder.RunFolder.check_fresh`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_env.errors import Message, Setting
from piquet_env.rules import make_rules
from piquet_training.ppo.pool import OpponentPool
from piquet_training.run_folder import RunFolderError
from piquet_training.run_log import LOG_COLUMNS, read_run_log
from piquet_training.settings.train import TrainConfig

RUN_FILES = (ck.LATEST_FILE, ck.POLICY_FILE)
"""What a training run leaves in its folder that a new run there must not replace
(:class:`~piquet_training.run_folder.RunFolder`'s ``holds``)."""


def check_resume_files(out_dir: str | Path, *, tensorboard: bool) -> None:
    """Check everything a resumed run in ``out_dir`` reads back or writes into, before any
    training starts: its CSV logs (:func:`~piquet_training.run_log.read_run_log`: UTF-8,
    well-formed, their columns, numbers that are numbers) and, with ``tensorboard``, that ``tb``
    is a folder if it exists. Raises :class:`RunFolderError` naming the file."""
    out = Path(out_dir)
    for name in LOG_COLUMNS:
        path = out / name
        if path.exists() or path.is_symlink():
            try:
                read_run_log(path)
            except ValueError as exc:
                raise RunFolderError(f"cannot resume: {exc}") from None
    check_tensorboard_dir(out, tensorboard=tensorboard)


def check_tensorboard_dir(out_dir: str | Path, *, tensorboard: bool) -> None:
    """With ``tensorboard``, refuse a run folder whose ``tb`` is there but is not a folder
    (TensorBoard's writer could not create its event files): :class:`RunFolderError`."""
    tb = Path(out_dir) / "tb"
    if tensorboard and (tb.exists() or tb.is_symlink()) and not tb.is_dir():
        raise RunFolderError(
            Message(
                f"{tb}: is not a folder, where TensorBoard's event files go: remove it, or run "
                "with ",
                Setting("tensorboard", False),
            ),
            path=tb,
        )


def save_training_checkpoint(
    path: Path,
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    pool: OpponentPool,
    cfg: TrainConfig,
    np_rng: np.random.Generator,
    counters: dict[str, Any],
    extra: dict[str, torch.Tensor] | None = None,
) -> None:
    """Everything :func:`train` needs to continue exactly where it stopped (stale temporary files
    of an earlier, killed save are removed first); ``extra`` tensors (an EMA magnet's weights)
    are saved beside the rest under their own names."""
    remove_stale_temporaries(path.parent)
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    tensors.update(extra or {})
    opt_tensors, opt_meta = optimizer_to_tensors(optimizer)
    tensors.update(opt_tensors)
    for j, snap in enumerate(pool.snapshots):
        tensors.update({f"pool{j}.{k}": v for k, v in snap.state_dict().items()})
    tensors["rng.torch"] = torch.get_rng_state()
    meta = ck.policy_meta(model, make_rules(cfg.rules), cfg.to_dict())
    meta["train"] = {
        "counters": counters,
        "optimizer": opt_meta,
        "pool_updates": pool.snapshot_updates,
        "numpy_rng": np_rng.bit_generator.state,
        "python_rng": json.loads(json.dumps(random.getstate())),
    }
    ck.save_checkpoint(path, tensors, meta)


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Delete the temporary files a killed checkpoint save leaves in ``directory``
    (``<name>.safetensors.<random>.tmp``); return them."""
    stale = sorted(directory.glob("*.safetensors.*.tmp")) if directory.is_dir() else []
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


_COUNTERS = {"update": int, "env_steps": int, "train_seconds": float}
_OPTIONAL_COUNTERS = (
    "bc_seconds",
    "eval_s_per_pair",
    "collect_seconds",
    "gather_seconds",
    "update_seconds",
)


def _bad(ckpt: ck.Checkpoint, field: str, problem: str) -> ck.CheckpointError:
    return ck.CheckpointError(f"{ckpt.path}: {field}: {problem}", path=ckpt.path, field=field)


def _checked_counters(ckpt: ck.Checkpoint, counters: Any) -> dict[str, Any]:
    """The training counters of a checkpoint, each a non-negative number of the right kind."""
    if not isinstance(counters, dict):
        raise _bad(ckpt, "train.counters", "missing or not a table")
    out = dict(counters)
    for name, kind in [*_COUNTERS.items(), *((n, float) for n in _OPTIONAL_COUNTERS)]:
        if name not in counters:
            if name in _COUNTERS:
                raise _bad(ckpt, f"train.counters.{name}", "missing")
            continue
        value = counters[name]
        ok_type = isinstance(value, int) if kind is int else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok_type or not np.isfinite(value) or value < 0:
            raise _bad(ckpt, f"train.counters.{name}", f"expected a count >= 0, got {value!r}")
    return out


def restore_training_checkpoint(
    ckpt: ck.Checkpoint,
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    pool: OpponentPool,
    np_rng: np.random.Generator,
) -> dict[str, Any]:
    """Load what :func:`save_training_checkpoint` wrote; return the counters. Every part that is
    missing or malformed raises :class:`~piquet_agents.checkpoint.CheckpointError` naming the
    file and the field."""
    train = ckpt.meta.get("train")
    if not isinstance(train, dict):
        raise _bad(ckpt, "train", "this checkpoint holds a policy only, not a training state")
    counters = _checked_counters(ckpt, train.get("counters"))
    steps = [
        ("model", lambda: model.load_state_dict(ckpt.section("model"))),
        (
            "train.optimizer",
            lambda: optimizer_from_tensors(optimizer, ckpt.section("optim"), train["optimizer"]),
        ),
        ("train.pool_updates", lambda: _restore_pool(ckpt, pool, train["pool_updates"])),
        ("rng.torch", lambda: torch.set_rng_state(ckpt.tensors["rng.torch"])),
        ("train.numpy_rng", lambda: _set_numpy_state(np_rng, train["numpy_rng"])),
        ("train.python_rng", lambda: _set_python_state(train["python_rng"])),
    ]
    for field_name, restore in steps:
        try:
            restore()
        except ck.CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as exc:
            problem = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise _bad(ckpt, field_name, f"cannot be restored ({problem[:200]})") from None
    return counters


def _restore_pool(ckpt: ck.Checkpoint, pool: OpponentPool, updates: Any) -> None:
    if not isinstance(updates, list) or not all(
        isinstance(u, int) and not isinstance(u, bool) for u in updates
    ):
        raise TypeError(f"expected a list of update numbers, got {str(updates)[:80]}")
    pool.snapshots.clear()
    pool.snapshot_updates.clear()
    for j, update in enumerate(updates):
        pool.add_snapshot(update)
        pool.snapshots[-1].load_state_dict(ckpt.section(f"pool{j}"))


def _set_numpy_state(np_rng: np.random.Generator, state: Any) -> None:
    if (
        not isinstance(state, dict)
        or state.get("bit_generator") != type(np_rng.bit_generator).__name__
    ):
        raise ValueError(f"not a {type(np_rng.bit_generator).__name__} state")
    np_rng.bit_generator.state = state


def _set_python_state(state: Any) -> None:
    version, internal, gauss = state
    if not isinstance(internal, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) for x in internal
    ):
        raise TypeError("the Mersenne Twister state must be a list of integers")
    random.setstate((version, tuple(internal), gauss))


# ---------------------------------------------------------------- the optimizer's state


def optimizer_to_tensors(
    optimizer: torch.optim.Optimizer, prefix: str = "optim"
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer's ``state_dict`` into tensors and JSON (its param groups and any
    non-tensor per-parameter values)."""
    sd = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for idx, state in sd["state"].items():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{prefix}.{idx}.{key}"] = value
            else:
                scalars.setdefault(str(idx), {})[key] = value
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def optimizer_from_tensors(
    optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], meta: dict[str, Any]
) -> None:
    """Restore what :func:`optimizer_to_tensors` saved into ``optimizer``."""
    state: dict[int, dict[str, Any]] = {}
    for name, value in tensors.items():
        idx, key = name.split(".", 1)
        state.setdefault(int(idx), {})[key] = value
    for idx, values in meta.get("scalars", {}).items():
        state.setdefault(int(idx), {}).update(values)
    groups = [dict(g, betas=tuple(g["betas"])) if "betas" in g else g for g in meta["param_groups"]]
    optimizer.load_state_dict({"state": state, "param_groups": groups})
