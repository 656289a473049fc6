"""Checkpoints: one safetensors file of tensors plus JSON metadata, written atomically.

A checkpoint holds the network's weights and architecture, and, for a training checkpoint, the
optimizer state, the opponent pool's snapshots, every RNG state and the counters needed by
``piquet train --resume``. Its metadata (JSON inside the safetensors header, key ``"piquet"``)
records the format version, the rules, the observation-format version (``OBS_VERSION``), the
training config and a SHA-256 of the metadata and the tensors.

Nothing is ever unpickled. The file is written to a temporary name in the same directory, flushed
to disk, then renamed over the target, so a crash leaves the previous checkpoint or the new one,
never half of one. A file is trusted only after checks: its header (tensor table and metadata) is
read alone first and checked against hard bounds, the declared architecture against the
observation size and action count of its rules and against the shapes of the tensors, all before a
tensor is read or a network built; then the checksum. Reading a missing, corrupt, foreign,
tampered or mismatched file raises :class:`CheckpointError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

try:
    import torch
except ModuleNotFoundError as err:  # the train extra is not installed
    raise ImportError('piquet_agents\' networks need torch: pip install -e ".[train]"') from err
from piquet_agents.network import ACTIVATIONS, ActorCritic, param_shapes

try:
    from safetensors import SafetensorError
    from safetensors.torch import load_file
    from safetensors.torch import save as safetensors_bytes
except ModuleNotFoundError as err:  # the train extra is not installed
    raise ImportError('safetensors is missing: pip install -e ".[train]"') from err

from piquet_env.files import whole_file
from piquet_env.observation import encoder_for
from piquet_env.rules import Rules
from piquet_env.untrusted import canonical_json

_DTYPE_NAMES = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}

FORMAT = "piquet-checkpoint"
FORMAT_VERSION = 2
"""Version written. Version 2's SHA-256 covers the metadata as well as the tensors."""
READABLE_VERSIONS = (1, 2)
"""Versions read. A version 1 file (checksum over the tensors only) is still read, with every
structural check of version 2; only its metadata is not covered by its checksum."""
POLICY_FILE = "policy.safetensors"
"""Name of the final policy in a run directory."""
LATEST_FILE = "checkpoints/latest.safetensors"
"""Name of the newest training checkpoint in a run directory."""

MAX_FILE_BYTES = 2 << 30
"""Largest checkpoint file read (2 GiB)."""
MAX_HEADER_BYTES = 4 << 20
"""Largest safetensors header (tensor table and metadata JSON) read (4 MiB)."""
MAX_TENSORS = 4096
"""Most tensors a checkpoint may hold."""
MAX_WIDTH = 16384
"""Largest observation size, action count, state size or layer width an architecture may
declare."""
MAX_LAYERS = 16
"""Most hidden layers an architecture may declare."""
_DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
}
_FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")
_ARCH_KEYS = ("obs_size", "n_actions", "hidden", "activation", "state_size")


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, not a piquet checkpoint, or made for other rules or
    another observation format. ``path`` and ``field`` say which file and which part of it, when
    known."""

    def __init__(
        self, message: str, *, path: str | Path | None = None, field: str | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.field = field


def _fail(path: str | Path | None, field: str, problem: str) -> CheckpointError:
    """A :class:`CheckpointError` saying ``'<path>: <field>: <problem>'``."""
    where = f"{path}: " if path is not None else "checkpoint: "
    return CheckpointError(f"{where}{field}: {problem}", path=path, field=field)


@dataclass
class Checkpoint:
    """The contents of a checkpoint file: named tensors, the metadata dict and the file it came
    from (``None`` for one built in memory)."""

    tensors: dict[str, torch.Tensor]
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def section(self, prefix: str) -> dict[str, torch.Tensor]:
        """Tensors whose names start with ``prefix + '.'``, with the prefix removed."""
        n = len(prefix) + 1
        return {k[n:]: v for k, v in self.tensors.items() if k.startswith(prefix + ".")}


def current_obs_version() -> int | str:
    """The observation-format version this install encodes (``piquet_env.observation``)."""
    from piquet_env.observation import OBS_VERSION

    return OBS_VERSION


def _canonical(meta: dict[str, Any]) -> bytes:
    """The metadata (less its checksum) as canonical JSON: the bytes the checksum covers."""
    return canonical_json({k: v for k, v in meta.items() if k != "sha256"})


def _digest(tensors: dict[str, torch.Tensor], meta: dict[str, Any] | None = None) -> str:
    """SHA-256 of the metadata (version 2; ``None`` for version 1) and of every tensor's name,
    dtype, shape and bytes."""
    h = hashlib.sha256()
    if meta is not None:
        h.update(_canonical(meta) + b"\n")
    for name in sorted(tensors):
        t = tensors[name]
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def save_checkpoint(
    path: str | Path, tensors: dict[str, torch.Tensor], meta: dict[str, Any]
) -> Path:
    """Write ``tensors`` and JSON-serializable ``meta`` to ``path`` atomically; return the path.

    ``meta`` gets the format tag, version and checksum (of the metadata and the tensors) added.
    Tensors are copied to contiguous CPU memory first (safetensors refuses shared storage).
    """
    path = Path(path)
    clean = {k: v.detach().cpu().contiguous().clone() for k, v in tensors.items()}
    header = dict(meta, format=FORMAT, format_version=FORMAT_VERSION)
    header["sha256"] = _digest(clean, header)  # raises TypeError for metadata that is not JSON
    path.parent.mkdir(parents=True, exist_ok=True)
    data = safetensors_bytes(clean, metadata={"piquet": json.dumps(header)})
    # the temporary named as resume's cleanup expects; synced: a checkpoint survives a crash
    with whole_file(path, prefix=path.name + ".", durable=True) as f:
        f.write(data)
    return path


def resolve(path: str | Path) -> Path:
    """The checkpoint file meant by ``path``: the file itself, or in a run directory its final
    policy (``policy.safetensors``) if present, else its latest training checkpoint."""
    path = Path(path)
    if path.is_dir():
        for name in (POLICY_FILE, LATEST_FILE):
            if (path / name).is_file():
                return path / name
        raise CheckpointError(
            f"{path} is a directory without {POLICY_FILE} or {LATEST_FILE}", path=path, field="path"
        )
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}", path=path, field="path")
    return path


# ---------------------------------------------------------------------------- the header


def _show(value: object, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters (crafted files may hold huge values)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _load_json(text: str | bytes, path: Path, what: str) -> Any:
    try:
        return json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(path, what, f"is corrupt: not valid JSON ({exc})") from None
    except RecursionError:
        raise _fail(path, what, "is corrupt: JSON nested too deeply") from None


_Table = dict[str, tuple[str, tuple[int, ...]]]
"""A safetensors header's tensors: name -> (dtype, shape)."""


def _read_header(path: Path) -> tuple[_Table, str | None]:
    """The tensor table (name -> (dtype, shape)) and the raw piquet metadata of a safetensors
    file, read from its header alone and checked (sizes, offsets, dtypes) before any tensor is."""
    raw, size, n = _header_bytes(path)
    header = _load_json(raw, path, "header")
    if not isinstance(header, dict):
        raise _fail(path, "header", "is corrupt or not a safetensors file (not a JSON object)")
    data_len = size - 8 - n
    table: _Table = {}
    spans = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if len(table) >= MAX_TENSORS:
            raise _fail(path, "header", f"is corrupt: more than {MAX_TENSORS} tensors")
        dtype, shape, span = _tensor_entry(path, name, entry, data_len)
        table[name] = (dtype, shape)
        spans.append(span)
    _check_spans(path, spans, data_len)
    return table, _piquet_metadata(path, header)


def _header_bytes(path: Path) -> tuple[bytes, int, int]:
    """The header's JSON bytes, the file's size and the header's declared length, that length
    checked against the file and :data:`MAX_HEADER_BYTES` (the file against
    :data:`MAX_FILE_BYTES`) first."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise _fail(path, "file size", f"{size} bytes is over the limit {MAX_FILE_BYTES}")
            head = f.read(8)
            n = int.from_bytes(head, "little") if len(head) == 8 else -1
            if not 0 < n <= min(MAX_HEADER_BYTES, size - 8):
                raise _fail(
                    path,
                    "header length",
                    f"is corrupt or not a safetensors file (header length {n}, file {size} bytes)",
                )
            return f.read(n), size, n
    except OSError as exc:
        raise _fail(path, "file", f"cannot be read ({exc})") from None


def _tensor_entry(
    path: Path, name: str, entry: object, data_len: int
) -> tuple[str, tuple[int, ...], tuple[int, int]]:
    """One tensor's header entry checked: its dtype, its shape and the span of its data (which
    must lie in the ``data_len`` bytes after the header and hold exactly the shape's elements)."""
    where = f"tensor {name[:80]!r}"
    if not isinstance(entry, dict):
        raise _fail(path, where, "is corrupt: its entry is not a JSON object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in _DTYPE_BYTES:
        raise _fail(path, where, f"is corrupt: unknown dtype {_show(dtype)}")
    if (
        not isinstance(shape, list)
        or len(shape) > 8
        or not all(_is_int(d) and 0 <= d <= data_len for d in shape)
    ):
        raise _fail(path, where, f"is corrupt: bad shape {_show(shape)}")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(_is_int(o) for o in offsets)
        or not 0 <= offsets[0] <= offsets[1] <= data_len
    ):
        raise _fail(path, where, f"is corrupt: data offsets {_show(offsets)} outside the file")
    numel = 1
    for d in shape:
        numel *= d
    if offsets[1] - offsets[0] != numel * _DTYPE_BYTES[dtype]:
        raise _fail(path, where, f"is corrupt: its data does not match shape {shape}")
    return dtype, tuple(shape), (offsets[0], offsets[1])


def _check_spans(path: Path, spans: list[tuple[int, int]], data_len: int) -> None:
    """The tensors' data spans tile the ``data_len`` bytes after the header exactly: no overlap,
    no gap, nothing missing at the end."""
    at = 0
    for a, b in sorted(spans):
        if a != at:
            raise _fail(path, "header", "is corrupt: tensor data overlap or leave gaps")
        at = b
    if at != data_len:
        raise _fail(path, "header", f"is corrupt: {data_len - at} bytes of tensor data missing")


def _piquet_metadata(path: Path, header: dict[str, Any]) -> str | None:
    """The raw piquet metadata string of a header's ``__metadata__`` (None when absent)."""
    extra = header.get("__metadata__") or {}
    if not isinstance(extra, dict):
        raise _fail(path, "__metadata__", "is corrupt: not a JSON object")
    raw_meta = extra.get("piquet")
    if raw_meta is not None and not isinstance(raw_meta, str):
        raise _fail(path, "metadata", "is corrupt: not a string")
    return raw_meta


# ---------------------------------------------------------------------------- the architecture


def check_arch(arch: object, path: str | Path | None = None) -> dict[str, Any]:
    """``arch`` (from :meth:`ActorCritic.arch`) checked field by field and bounded (widths at most
    :data:`MAX_WIDTH`, at most :data:`MAX_LAYERS` layers); raises :class:`CheckpointError` naming
    the field."""
    if not isinstance(arch, dict):
        raise _fail(path, "arch", f"must be a JSON object, got {type(arch).__name__}")
    unknown = sorted(set(arch) - set(_ARCH_KEYS))
    if unknown:
        raise _fail(path, "arch", f"unknown keys {unknown[:5]}")
    out: dict[str, Any] = {}
    for key, lo in (("obs_size", 1), ("n_actions", 1), ("state_size", 0)):
        if key not in arch and key == "state_size":
            out[key] = 0
            continue
        value = arch.get(key)
        if not _is_int(value) or not lo <= value <= MAX_WIDTH:
            raise _fail(
                path, f"arch.{key}", f"must be an int in {lo}..{MAX_WIDTH}, got {_show(value)}"
            )
        out[key] = value
    hidden = arch.get("hidden")
    if (
        not isinstance(hidden, list)
        or not 1 <= len(hidden) <= MAX_LAYERS
        or not all(_is_int(h) and 1 <= h <= MAX_WIDTH for h in hidden)
    ):
        raise _fail(
            path,
            "arch.hidden",
            f"must be 1..{MAX_LAYERS} widths in 1..{MAX_WIDTH}, got {_show(hidden)}",
        )
    out["hidden"] = list(hidden)
    if arch.get("activation") not in ACTIVATIONS:
        raise _fail(
            path,
            "arch.activation",
            f"must be one of {ACTIVATIONS}, got {_show(arch.get('activation'))}",
        )
    out["activation"] = arch["activation"]
    return out


def _check_for_rules(arch: dict[str, Any], rules: Rules, path: str | Path | None) -> None:
    """The network's input and output sizes against the observation and actions of ``rules``."""
    enc = encoder_for(rules)
    if arch["obs_size"] != enc.size:
        raise _fail(
            path,
            "arch.obs_size",
            f"the network reads {arch['obs_size']} observation entries, but rules "
            f"{rules.name!r} encode {enc.size}",
        )
    if arch["n_actions"] != enc.n_actions:
        raise _fail(
            path,
            "arch.n_actions",
            f"the network has {arch['n_actions']} actions, but rules {rules.name!r} have "
            f"{enc.n_actions}",
        )


def _check_section(
    table: _Table,
    prefix: str,
    arch: dict[str, Any],
    path: str | Path | None,
) -> None:
    """The tensors under ``prefix`` against the shapes ``arch`` implies (nothing is built)."""
    want = param_shapes(arch["obs_size"], arch["n_actions"], arch["hidden"], arch["state_size"])
    n = len(prefix) + 1
    have = {k[n:]: v for k, v in table.items() if k.startswith(prefix + ".")}
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    if missing or extra:
        raise _fail(
            path,
            f"tensors {prefix}.*",
            f"do not match the architecture (missing {missing[:4]}, unexpected {extra[:4]})",
        )
    for name, shape in want.items():
        dtype, got = have[name]
        if got != shape or dtype not in _FLOAT_DTYPES:
            raise _fail(
                path,
                f"tensor {prefix}.{name}",
                f"is {dtype}{list(got)}, the architecture needs a float tensor of shape "
                f"{list(shape)}",
            )


def _network_prefixes(names: Any) -> list[str]:
    """Prefixes of the networks stored in a checkpoint (``model``, ``pool0``, ``snapshot.x``)."""
    tail = ".trunk.0.weight"
    return sorted(k[: -len(tail)] for k in names if k.endswith(tail))


# ---------------------------------------------------------------------------- reading


def read_checkpoint(
    path: str | Path,
    *,
    rules: Rules | None = None,
    check_obs_version: bool = True,
    arch: dict[str, Any] | None = None,
) -> Checkpoint:
    """Read and verify a checkpoint.

    Everything in the header is checked before any tensor is read or any network built: the
    safetensors tensor table (dtypes, shapes, offsets within the file), the piquet metadata (format
    and version), the observation version (when ``check_obs_version``), the rules (against
    ``rules`` when given), the declared architecture (bounded, against the observation size and
    action count of the checkpoint's rules, against the shapes of every network's tensors, and
    against ``arch`` when given: the network the caller will load the weights into).
    Then the tensors are read and the SHA-256 of the metadata and the tensors is compared.
    Every refusal is a :class:`CheckpointError` naming the file and the field.
    """
    path = resolve(path)
    table, raw = _read_header(path)
    if raw is None:
        raise _fail(
            path,
            "metadata",
            "a safetensors file, but not a piquet checkpoint (no 'piquet' entry)",
        )
    meta = _load_json(raw, path, "metadata")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise _fail(path, "metadata.format", "not a piquet checkpoint")
    version = meta.get("format_version")
    if not _is_int(version) or version not in READABLE_VERSIONS:
        raise _fail(
            path,
            "metadata.format_version",
            f"checkpoint format version {_show(version)}, this install reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}",
        )
    sha = meta.get("sha256")
    if not isinstance(sha, str) or len(sha) != 64:
        raise _fail(path, "metadata.sha256", "is corrupt: not a SHA-256 hex digest")
    if check_obs_version:
        ours = current_obs_version()
        if meta.get("obs_version") != ours:
            raise _fail(
                path,
                "metadata.obs_version",
                f"made for observation format {_show(meta.get('obs_version'))}, but this "
                f"install encodes format {ours!r}; retrain or use a matching version",
            )
    ckpt_rules = None
    if "rules" in meta:
        ckpt_rules = _rules_of(meta, path)
        if rules is not None and ckpt_rules != rules:
            raise _fail(
                path,
                "metadata.rules",
                f"trained for rules {ckpt_rules.name!r}, not {rules.name!r} "
                f"({_rules_difference(ckpt_rules, rules)})",
            )
    elif rules is not None:
        raise _fail(path, "metadata.rules", "missing: the checkpoint does not say its rules")
    prefixes = _network_prefixes(table)
    if "arch" in meta or prefixes:
        declared = check_arch(meta.get("arch"), path)
        if ckpt_rules is not None and check_obs_version:
            _check_for_rules(declared, ckpt_rules, path)
        for prefix in prefixes:
            _check_section(table, prefix, declared, path)
    if arch is not None and meta.get("arch") != arch:
        raise _fail(
            path,
            "metadata.arch",
            f"network {_show(meta.get('arch'), 200)} differs from the one expected, {arch}",
        )
    try:
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise _fail(path, "tensors", f"is corrupt or not a safetensors file ({exc})") from None
    expected = _digest(tensors, meta if version >= 2 else None)
    if sha != expected:
        what = "the metadata or the tensor data" if version >= 2 else "the tensor data"
        raise _fail(path, "metadata.sha256", f"is corrupt: {what} does not match its checksum")
    return Checkpoint(tensors, meta, path)


def _rules_difference(ours: Rules, wanted: Rules) -> str:
    """The switches in which two rule sets differ (their names already say the rule set and
    variants), each as ``field: ours, not wanted``."""
    changed = [
        f"{f.name}: {_show(getattr(ours, f.name))}, not {_show(getattr(wanted, f.name))}"
        for f in fields(Rules)
        if f.name not in ("base", "variants") and getattr(ours, f.name) != getattr(wanted, f.name)
    ]
    return "; ".join(changed)


def _rules_of(meta: dict[str, Any], path: str | Path | None) -> Rules:
    """The rules recorded in a checkpoint's metadata, each switch of the type :class:`Rules`
    gives it."""
    d = meta.get("rules")
    if not isinstance(d, dict):
        raise _fail(path, "metadata.rules", f"is not a JSON object: {_show(d)}")
    for f in fields(Rules):
        if f.name not in d:
            continue
        value, default = d[f.name], getattr(Rules(), f.name)
        if f.name == "variants":
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif f.name == "younger_max_exchange":
            ok = value is None or _is_int(value)
        else:
            ok = type(value) is type(default)
        if not ok:
            raise _fail(path, f"metadata.rules.{f.name}", f"has the wrong type: {_show(value)}")
    try:
        return Rules.from_dict(d)
    except (TypeError, ValueError) as exc:
        raise _fail(path, "metadata.rules", f"is not a rules object ({exc})") from None


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
    """Rebuild the network stored under ``prefix`` (architecture from ``meta['arch']``).

    The architecture is checked, and the section's tensors against it, before the network is
    built; a mismatch raises :class:`CheckpointError`.
    """
    arch = check_arch(ckpt.meta.get("arch"), ckpt.path)
    table = {
        k: (str(_DTYPE_NAMES.get(v.dtype, v.dtype)), tuple(v.shape))
        for k, v in ckpt.tensors.items()
    }
    _check_section(table, prefix, arch, ckpt.path)
    model = ActorCritic.from_arch(arch)
    try:
        model.load_state_dict(ckpt.section(prefix))
    except (RuntimeError, ValueError) as exc:  # pragma: no cover - shapes were checked above
        raise _fail(ckpt.path, f"tensors {prefix}.*", f"do not load ({exc})") from None
    return model


def load_policy(path: str | Path, rules: Rules | None = None) -> tuple[ActorCritic, Rules]:
    """The network and rules of a checkpoint file or run directory (see :func:`resolve`).

    The network's observation size and action count match the observation and actions of the
    checkpoint's rules (checked before it is built)."""
    ckpt = read_checkpoint(path, rules=rules)
    if "rules" not in ckpt.meta:
        raise _fail(ckpt.path, "metadata.rules", "missing: the checkpoint does not say its rules")
    if "arch" not in ckpt.meta:
        raise _fail(ckpt.path, "metadata.arch", "missing: the checkpoint holds no network")
    return model_from(ckpt).eval(), _rules_of(ckpt.meta, ckpt.path)
