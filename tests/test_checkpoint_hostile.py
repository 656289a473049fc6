"""Hostile and mismatched checkpoint files, generated here (nothing large is committed): each is
refused with a :class:`CheckpointError` naming the file and the field, before any network is built
or any tensor read when the header alone shows the problem."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_agents.policy import PolicyAgent
from piquet_agents.registry import make_agent
from piquet_env.observation import OBS_VERSION, encoder_for
from piquet_env.rules import STANDARD, make_rules

ENC = encoder_for(STANDARD)
NORMAND = make_rules("standard+normand")


def small(obs_size: int = ENC.size, n_actions: int = ENC.n_actions, hidden=(16, 8)) -> ActorCritic:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return ActorCritic(obs_size, n_actions, hidden)


def tensors_of(model: ActorCritic, prefix: str = "model") -> dict[str, torch.Tensor]:
    return {f"{prefix}.{k}": v.clone() for k, v in model.state_dict().items()}


def good_meta(model: ActorCritic | None = None, rules=STANDARD) -> dict:
    return ck.policy_meta(model or small(), rules, {"seed": 1})


def craft(
    path: Path,
    tensors: dict[str, torch.Tensor],
    meta: dict,
    *,
    version: int = ck.FORMAT_VERSION,
    sha: str | None = None,
) -> Path:
    """A checkpoint written as an attacker would: any metadata, with a valid checksum unless
    ``sha`` is given (version 1: over the tensors only)."""
    full = dict(meta, format=ck.FORMAT, format_version=version)
    full["sha256"] = sha or ck._digest(tensors, full if version >= 2 else None)
    save_file(tensors, str(path), metadata={"piquet": json.dumps(full)})
    return path


def raw(path: Path, header: bytes, data: bytes = b"", length: int | None = None) -> Path:
    """A file of a safetensors length prefix, ``header`` bytes and ``data``."""
    n = len(header) if length is None else length
    path.write_bytes(struct.pack("<Q", n) + header + data)
    return path


def raw_json(path: Path, header: object, data: bytes = b"") -> Path:
    return raw(path, json.dumps(header).encode(), data)


def piquet_header(meta_text: str, tensors: dict | None = None) -> dict:
    return {"__metadata__": {"piquet": meta_text}, **(tensors or {})}


F32_4 = {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}


def _edited(field: str, value: object) -> Callable[[Path], Path]:
    """A good policy file whose metadata entry ``field`` (dotted) is set to ``value``, checksum
    recomputed so that only the structural checks can refuse it."""

    def build(p: Path) -> Path:
        meta = good_meta()
        node = meta
        *head, last = field.split(".")
        for k in head:
            node = node[k]
        node[last] = value
        return craft(p, tensors_of(small()), meta)

    return build


def _arch(hidden: list[int], obs: int = ENC.size, acts: int = ENC.n_actions) -> Callable:
    """A file whose declared architecture differs from its (small) tensors."""

    def build(p: Path) -> Path:
        meta = good_meta()
        meta["arch"] = dict(meta["arch"], hidden=hidden, obs_size=obs, n_actions=acts)
        return craft(p, tensors_of(small()), meta)

    return build


def _consistent(obs: int, acts: int) -> Callable:
    """A file whose architecture matches its tensors but not the observation/actions of its
    rules."""

    def build(p: Path) -> Path:
        m = small(obs, acts)
        return craft(p, tensors_of(m), good_meta(m))

    return build


def _tensors(change: Callable[[dict], None]) -> Callable:
    def build(p: Path) -> Path:
        t = tensors_of(small())
        change(t)
        return craft(p, t, good_meta())

    return build


def _tampered(field: str, value: object) -> Callable:
    """A good file whose metadata is edited after the checksum was computed."""

    def build(p: Path) -> Path:
        t = tensors_of(small())
        meta = dict(good_meta(), format=ck.FORMAT, format_version=ck.FORMAT_VERSION)
        meta["sha256"] = ck._digest(t, meta)
        node = meta
        *head, last = field.split(".")
        for k in head:
            node = node.setdefault(k, {})
        node[last] = value
        save_file(t, str(p), metadata={"piquet": json.dumps(meta)})
        return p

    return build


def _deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


# (id, builder, field named in the error, part of the message)
CORPUS: list[tuple[str, Callable[[Path], Path], str, str]] = [
    ("empty file", lambda p: (p.write_bytes(b""), p)[1], "header length", "corrupt"),
    ("five bytes", lambda p: (p.write_bytes(b"\x01\x02\x03\x04\x05"), p)[1], "header length", ""),
    ("length past the end", lambda p: raw(p, b"{}", length=1 << 40), "header length", ""),
    ("length over the limit", lambda p: raw(p, b" " * 64, length=(4 << 20) + 1), "header len", ""),
    ("zero length", lambda p: raw(p, b"", length=0), "header length", ""),
    ("header not JSON", lambda p: raw(p, b"{not json"), "header", "not valid JSON"),
    ("header not UTF-8", lambda p: raw(p, b'{"\xff\xfe": 1}'), "header", "corrupt"),
    ("header a list", lambda p: raw_json(p, [1, 2]), "header", "not a JSON object"),
    ("header nested 100,000 deep", lambda p: raw(p, _deep(100_000)), "header", "nested"),
    ("tensor entry a string", lambda p: raw_json(p, {"w": "x"}), "tensor 'w'", "not a JSON"),
    (
        "unknown dtype",
        lambda p: raw_json(p, {"w": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 1]}}, b"x"),
        "tensor 'w'",
        "unknown dtype",
    ),
    (
        "negative shape",
        lambda p: raw_json(p, {"w": dict(F32_4, shape=[-4])}, bytes(16)),
        "tensor 'w'",
        "bad shape",
    ),
    (
        "bool in shape",
        lambda p: raw_json(p, {"w": dict(F32_4, shape=[True])}, bytes(16)),
        "tensor 'w'",
        "bad shape",
    ),
    (
        "nine dimensions",
        lambda p: raw_json(p, {"w": dict(F32_4, shape=[1] * 9)}, bytes(16)),
        "tensor 'w'",
        "bad shape",
    ),
    (
        "huge shape, small data",
        lambda p: raw_json(p, {"w": dict(F32_4, shape=[1 << 20, 1 << 20])}, bytes(16)),
        "tensor 'w'",
        "bad shape",
    ),
    (
        "offsets past the data",
        lambda p: raw_json(p, {"w": dict(F32_4, data_offsets=[0, 1 << 30])}, bytes(16)),
        "tensor 'w'",
        "outside the file",
    ),
    (
        "offsets disagree with the shape",
        lambda p: raw_json(p, {"w": dict(F32_4, data_offsets=[0, 8])}, bytes(16)),
        "tensor 'w'",
        "does not match shape",
    ),
    (
        "overlapping tensors",
        lambda p: raw_json(p, {"a": F32_4, "b": F32_4}, bytes(16)),
        "header",
        "overlap",
    ),
    ("trailing bytes", lambda p: raw_json(p, {"a": F32_4}, bytes(20)), "header", "missing"),
    (
        "__metadata__ a list",
        lambda p: raw_json(p, {"__metadata__": [1], "a": F32_4}, bytes(16)),
        "__metadata__",
        "",
    ),
    (
        "piquet entry a number",
        lambda p: raw_json(p, {"__metadata__": {"piquet": 5}, "a": F32_4}, bytes(16)),
        "metadata",
        "not a string",
    ),
    (
        "foreign safetensors file",
        lambda p: (save_file({"w": torch.zeros(3)}, str(p)), p)[1],
        "metadata",
        "not a piquet checkpoint",
    ),
    (
        "metadata not JSON",
        lambda p: raw_json(p, piquet_header("{oops", {"a": F32_4}), bytes(16)),
        "metadata",
        "not valid JSON",
    ),
    (
        "metadata nested 100,000 deep",
        lambda p: raw_json(p, piquet_header(_deep(100_000).decode(), {"a": F32_4}), bytes(16)),
        "metadata",
        "nested",
    ),
    (
        "metadata a list",
        lambda p: raw_json(p, piquet_header("[1]", {"a": F32_4}), bytes(16)),
        "metadata.format",
        "not a piquet checkpoint",
    ),
    ("format version 99", _tampered("format_version", 99), "metadata.format_version", "99"),
    ("format version '2'", _tampered("format_version", "2"), "metadata.format_version", "'2'"),
    ("sha256 not a digest", _tampered("sha256", 12), "metadata.sha256", "not a SHA-256"),
    ("other observation version", _edited("obs_version", 999), "metadata.obs_version", "999"),
    ("rules a string", _edited("rules", "standard"), "metadata.rules", "not a JSON object"),
    ("rules unknown switch", _edited("rules.jokers", 2), "metadata.rules", "unknown rule"),
    ("rules deals a string", _edited("rules.deals", "6"), "metadata.rules.deals", "wrong type"),
    ("rules joker a list", _edited("rules.joker", [1]), "metadata.rules.joker", "wrong type"),
    ("rules odd deals", _edited("rules.deals", 7), "metadata.rules", "even"),
    ("arch missing", _edited("arch", None), "arch", "JSON object"),
    ("arch a list", _edited("arch", [1, 2]), "arch", "JSON object"),
    ("arch unknown key", _edited("arch.dropout", 0.5), "arch", "unknown keys"),
    ("hidden [1000000] (31 KB file)", _arch([1_000_000]), "arch.hidden", "1..16384"),
    ("hidden [20000, 20000]", _arch([20_000, 20_000]), "arch.hidden", "1..16384"),
    ("hidden 17 layers", _arch([8] * 17), "arch.hidden", "1..16"),
    ("hidden empty", _arch([]), "arch.hidden", ""),
    ("hidden zero width", _arch([0]), "arch.hidden", ""),
    ("hidden negative", _arch([-3]), "arch.hidden", ""),
    ("hidden a string", _arch(["16"]), "arch.hidden", ""),
    ("hidden a bool", _arch([True]), "arch.hidden", ""),
    ("hidden a float", _arch([16.0, 8]), "arch.hidden", ""),
    ("hidden an int", _edited("arch.hidden", 16), "arch.hidden", ""),
    ("obs_size 0", _arch([16, 8], obs=0), "arch.obs_size", "1..16384"),
    ("obs_size a string", _edited("arch.obs_size", "10"), "arch.obs_size", "'10'"),
    ("n_actions 10**9", _arch([16, 8], acts=10**9), "arch.n_actions", "1..16384"),
    ("state_size -1", _edited("arch.state_size", -1), "arch.state_size", ""),
    ("activation gelu", _edited("arch.activation", "gelu"), "arch.activation", "gelu"),
    ("hidden [8000, 8000], small tensors", _arch([8000, 8000]), "tensor model.trunk.0", "[8000"),
    ("hidden [8, 16], tensors [16, 8]", _arch([8, 16]), "tensor model.trunk.0.weight", "[8, "),
    (
        "another observation size",
        _consistent(ENC.size + 1, ENC.n_actions),
        "arch.obs_size",
        f"rules 'standard' encode {ENC.size}",
    ),
    (
        "another action count",
        _consistent(ENC.size, ENC.n_actions + 1),
        "arch.n_actions",
        f"rules 'standard' have {ENC.n_actions}",
    ),
    (
        "a tensor missing",
        _tensors(lambda t: t.pop("model.value_head.bias")),
        "tensors model.*",
        "missing ['value_head.bias']",
    ),
    (
        "an extra tensor",
        _tensors(lambda t: t.update({"model.trunk.9.weight": torch.zeros(2)})),
        "tensors model.*",
        "unexpected ['trunk.9.weight']",
    ),
    (
        "integer weights",
        _tensors(lambda t: t.update({"model.value_head.bias": torch.zeros(1, dtype=torch.int64)})),
        "tensor model.value_head.bias",
        "float tensor",
    ),
    (
        "a pool snapshot of another shape",
        _tensors(lambda t: t.update(tensors_of(small(hidden=(4, 8)), prefix="pool0"))),
        "tensor pool0.trunk.0.weight",
        "",
    ),
    ("update counter edited", _tampered("train.counters.update", 999), "metadata.sha256", "meta"),
    ("config edited", _tampered("config.seed", 2), "metadata.sha256", "checksum"),
    ("rules edited", _tampered("rules.carte_blanche", True), "metadata.sha256", "checksum"),
    ("checksum zeroed", _tampered("sha256", "0" * 64), "metadata.sha256", "checksum"),
    ("format downgraded to 1", _tampered("format_version", 1), "metadata.sha256", "checksum"),
]


@pytest.mark.parametrize(("name", "build", "field", "message"), CORPUS, ids=[c[0] for c in CORPUS])
def test_hostile_file_is_refused_naming_file_and_field(
    tmp_path: Path, name: str, build: Callable, field: str, message: str
) -> None:
    path = build(tmp_path / "hostile.safetensors")
    with pytest.raises(ck.CheckpointError) as info:
        ck.load_policy(path)
    text = str(info.value)
    assert text.startswith(f"{path}: "), text
    assert field in text and message in text, text
    assert info.value.path == path and info.value.field
    # the same refusal through every door: PolicyAgent.load and the agent registry
    with pytest.raises(ck.CheckpointError):
        PolicyAgent.load(path)
    with pytest.raises(ValueError, match="hostile.safetensors"):
        make_agent(str(path), STANDARD)


HEADER_ONLY = [c for c in CORPUS if not c[2].startswith("metadata.sha256")]


@pytest.mark.parametrize(
    ("name", "build", "field", "message"), HEADER_ONLY, ids=[c[0] for c in HEADER_ONLY]
)
def test_header_problems_are_refused_before_anything_is_built_or_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name, build, field, message
) -> None:
    path = build(tmp_path / "hostile.safetensors")
    monkeypatch.setattr(ck, "load_file", lambda *a, **k: pytest.fail("read the tensors"))
    monkeypatch.setattr(ck.ActorCritic, "from_arch", lambda *a: pytest.fail("built a network"))
    with pytest.raises(ck.CheckpointError, match=field.replace(".", r"\.").replace("*", r"\*")):
        ck.load_policy(path)


def test_a_file_declaring_a_million_wide_layer_stays_small(tmp_path: Path) -> None:
    path = _arch([1_000_000])(tmp_path / "big.safetensors")
    assert path.stat().st_size < 40_000  # the 31 KB file of the report
    with pytest.raises(ck.CheckpointError, match=r"arch\.hidden"):
        ck.load_policy(path)


def test_a_file_larger_than_the_limit_is_refused(tmp_path, monkeypatch) -> None:
    path = ck.save_policy(tmp_path / "p.safetensors", small(), STANDARD)
    monkeypatch.setattr(ck, "MAX_FILE_BYTES", path.stat().st_size - 1)
    with pytest.raises(ck.CheckpointError, match="file size"):
        ck.load_policy(path)


def test_policy_for_other_rules_is_refused_at_load_not_at_the_first_move(tmp_path) -> None:
    # a normand policy (33 cards, 36 actions) under standard rules: refused by the rules check,
    # and its architecture matches the normand encoder, so it loads under its own rules
    enc = encoder_for(NORMAND)
    m = small(enc.size, enc.n_actions)
    path = ck.save_policy(tmp_path / "n.safetensors", m, NORMAND)
    with pytest.raises(ck.CheckpointError, match=r"metadata\.rules: trained for rules"):
        ck.load_policy(path, rules=STANDARD)
    assert ck.load_policy(path)[1] == NORMAND
    # a standard-sized network claiming normand rules
    bad = craft(tmp_path / "b.safetensors", tensors_of(small()), good_meta(rules=NORMAND))
    with pytest.raises(ck.CheckpointError, match=r"arch\.obs_size: .* rules 'standard\+normand'"):
        ck.load_policy(bad)


def test_policy_agent_refuses_a_network_of_the_wrong_size() -> None:
    with pytest.raises(ValueError, match="encode"):
        PolicyAgent(small(ENC.size + 1), STANDARD)


def test_version_1_files_still_load(tmp_path: Path) -> None:
    m = small()
    path = craft(tmp_path / "v1.safetensors", tensors_of(m), good_meta(m), version=1)
    loaded, rules = ck.load_policy(path)
    assert rules == STANDARD and torch.equal(loaded.policy_head.weight, m.policy_head.weight)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ck.CheckpointError, match="the tensor data does not match its checksum"):
        ck.load_policy(path)


def test_the_checksum_covers_the_metadata(tmp_path: Path) -> None:
    path = ck.save_policy(tmp_path / "p.safetensors", small(), STANDARD, {"seed": 1})
    meta = ck.read_checkpoint(path).meta
    assert meta["format_version"] == 2 and meta["obs_version"] == OBS_VERSION
    data = path.read_bytes()
    edited = data.replace(b'\\"seed\\": 1', b'\\"seed\\": 2')
    assert edited != data and len(edited) == len(data)
    path.write_bytes(edited)
    with pytest.raises(ck.CheckpointError, match="the metadata or the tensor data does not match"):
        ck.read_checkpoint(path)


def test_training_checkpoint_sections_round_trip(tmp_path: Path) -> None:
    m, snap = small(), small(hidden=(16, 8))
    tensors = {**tensors_of(m), **tensors_of(snap, "pool0"), "rng.torch": torch.get_rng_state()}
    tensors["optim.0.step"] = torch.tensor(3.0)
    meta = dict(good_meta(m), train={"counters": {"update": 4}})
    path = ck.save_checkpoint(tmp_path / "t.safetensors", tensors, meta)
    ckpt = ck.read_checkpoint(path, rules=STANDARD)
    assert ckpt.meta["train"]["counters"] == {"update": 4} and ckpt.path == path
    assert torch.equal(ck.model_from(ckpt, "pool0").trunk[0].weight, snap.trunk[0].weight)
    with pytest.raises(ck.CheckpointError, match=r"tensors nope\.\*"):
        ck.model_from(ckpt, "nope")


# ---------------------------------------------------------------------------- fuzzing

_GOOD: dict[str, bytes] = {}


def _good_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    if "policy" not in _GOOD:
        path = tmp_path_factory.mktemp("good") / "p.safetensors"
        _GOOD["policy"] = ck.save_policy(path, small(hidden=(4,)), STANDARD).read_bytes()
    return _GOOD["policy"]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.tuples(st.integers(0, 2**31), st.integers(0, 255)), min_size=1, max_size=4),
    st.one_of(st.none(), st.integers(0, 2**31)),
)
def test_any_damaged_file_is_refused_with_a_checkpoint_error(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[int, int]], cut: int | None
) -> None:
    data = bytearray(_good_bytes(tmp_path_factory))
    n_header = 8 + int.from_bytes(data[:8], "little")
    for where, value in edits:
        # most edits land in the header (JSON), where a parser is most exposed
        i = where % n_header if where % 3 else where % len(data)
        data[i] = value
    if cut is not None:
        del data[cut % len(data) :]
    path = tmp_path_factory.mktemp("fuzz") / "f.safetensors"
    path.write_bytes(bytes(data))
    try:
        model, rules = ck.load_policy(path)
    except ck.CheckpointError as exc:
        assert str(exc).startswith(f"{path}: ")
    else:  # an edit that changed nothing the checksum covers (JSON whitespace, padding)
        assert rules == STANDARD and model.arch()["hidden"] == [4]
