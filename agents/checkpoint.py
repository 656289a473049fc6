"""Checkpoints: one safetensors file of tensors plus JSON metadata, written atomically.

A checkpoint holds the network's weights and architecture, and, for a training checkpoint, the
optimizer state, the opponent pool's snapshots, every RNG state and the counters needed by
``piquet train --resume``. Its metadata (JSON inside the safetensors header, key ``"piquet"``)
records the format version, the rules, the observation-format version (``OBS_VERSION``), the
training config and a SHA-256 of the tensor bytes.

Nothing is ever unpickled. The file is written to a temporary name in the same directory, flushed
to disk, then renamed over the target, so a crash leaves the previous checkpoint or the new one,
never half of one. Reading a missing, corrupt, foreign or mismatched file raises
:class:`CheckpointError` with a message that says which.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from piquet_agents.network import ActorCritic
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from piquet_env.rules import Rules

FORMAT = "piquet-checkpoint"
FORMAT_VERSION = 1
POLICY_FILE = "policy.safetensors"
"""Name of the final policy in a run directory."""
LATEST_FILE = "checkpoints/latest.safetensors"
"""Name of the newest training checkpoint in a run directory."""


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, not a piquet checkpoint, or made for other rules or
    another observation format."""


@dataclass
class Checkpoint:
    """The contents of a checkpoint file: named tensors and the metadata dict."""

    tensors: dict[str, torch.Tensor]
    meta: dict[str, Any] = field(default_factory=dict)

    def section(self, prefix: str) -> dict[str, torch.Tensor]:
        """Tensors whose names start with ``prefix + '.'``, with the prefix removed."""
        n = len(prefix) + 1
        return {k[n:]: v for k, v in self.tensors.items() if k.startswith(prefix + ".")}


def current_obs_version() -> int | str:
    """The observation-format version this install encodes (``piquet_env.observation``)."""
    from piquet_env.observation import OBS_VERSION

    return OBS_VERSION


def _digest(tensors: dict[str, torch.Tensor]) -> str:
    h = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name]
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def save_checkpoint(
    path: str | Path, tensors: dict[str, torch.Tensor], meta: dict[str, Any]
) -> Path:
    """Write ``tensors`` and JSON-serializable ``meta`` to ``path`` atomically; return the path.

    ``meta`` gets the format tag, version and checksum added. Tensors are copied to contiguous CPU
    memory first (safetensors refuses shared storage).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean = {k: v.detach().cpu().contiguous().clone() for k, v in tensors.items()}
    header = dict(meta, format=FORMAT, format_version=FORMAT_VERSION, sha256=_digest(clean))
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        save_file(clean, tmp, metadata={"piquet": json.dumps(header)})
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:  # pragma: no cover - platforms without directory fsync
        pass
    return path


def resolve(path: str | Path) -> Path:
    """The checkpoint file meant by ``path``: the file itself, or in a run directory its final
    policy (``policy.safetensors``) if present, else its latest training checkpoint."""
    path = Path(path)
    if path.is_dir():
        for name in (POLICY_FILE, LATEST_FILE):
            if (path / name).is_file():
                return path / name
        raise CheckpointError(f"{path} is a directory without {POLICY_FILE} or {LATEST_FILE}")
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    return path


def read_checkpoint(
    path: str | Path, *, rules: Rules | None = None, check_obs_version: bool = True
) -> Checkpoint:
    """Read and verify a checkpoint.

    Raises :class:`CheckpointError` if the file is missing, unreadable as safetensors, lacks
    piquet metadata, fails its checksum, was written for another observation format (when
    ``check_obs_version``) or, if ``rules`` is given, for other rules.
    """
    path = resolve(path)
    try:
        with safe_open(str(path), framework="pt") as f:
            raw = (f.metadata() or {}).get("piquet")
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path} is corrupt or not a safetensors file ({exc})") from None
    if raw is None:
        raise CheckpointError(
            f"{path} is a safetensors file but not a piquet checkpoint (no 'piquet' metadata)"
        )
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CheckpointError(
            f"{path} is corrupt: its metadata is not valid JSON ({exc})"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a piquet checkpoint")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has checkpoint format version {meta.get('format_version')}, "
            f"this install reads version {FORMAT_VERSION}"
        )
    if meta.get("sha256") != _digest(tensors):
        raise CheckpointError(f"{path} is corrupt: the tensor data does not match its checksum")
    if check_obs_version:
        ours = current_obs_version()
        if meta.get("obs_version") != ours:
            raise CheckpointError(
                f"{path} was made for observation format {meta.get('obs_version')!r}, but this "
                f"install encodes format {ours!r}; retrain or use a matching version"
            )
    if rules is not None and meta.get("rules") != rules.to_dict():
        theirs = meta.get("rules", {})
        name = Rules.from_dict(theirs).name if isinstance(theirs, dict) else theirs
        raise CheckpointError(
            f"{path} was trained for rules {name!r}, not {rules.name!r} (rules: {theirs})"
        )
    return Checkpoint(tensors, meta)


def policy_meta(
    model: ActorCritic, rules: Rules, config: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Metadata describing a policy: architecture, rules, observation version and config."""
    return {
        "arch": model.arch(),
        "rules": rules.to_dict(),
        "obs_version": current_obs_version(),
        "config": config or {},
    }


def save_policy(
    path: str | Path, model: ActorCritic, rules: Rules, config: dict[str, Any] | None = None
) -> Path:
    """Write a play-only checkpoint (weights, architecture, rules, observation version)."""
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    return save_checkpoint(path, tensors, policy_meta(model, rules, config))


def model_from(ckpt: Checkpoint, prefix: str = "model") -> ActorCritic:
    """Rebuild the network stored under ``prefix`` (architecture from ``meta['arch']``)."""
    try:
        model = ActorCritic.from_arch(ckpt.meta["arch"])
        model.load_state_dict(ckpt.section(prefix))
    except (KeyError, TypeError, RuntimeError, ValueError) as exc:
        raise CheckpointError(
            f"checkpoint network does not match its architecture ({exc})"
        ) from None
    return model


def load_policy(path: str | Path, rules: Rules | None = None) -> tuple[ActorCritic, Rules]:
    """The network and rules of a checkpoint file or run directory (see :func:`resolve`)."""
    ckpt = read_checkpoint(path, rules=rules)
    try:
        ckpt_rules = Rules.from_dict(ckpt.meta["rules"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{path}: bad rules in metadata ({exc})") from None
    return model_from(ckpt).eval(), ckpt_rules
