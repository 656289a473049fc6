"""Checkpoints: round trip, atomic writes, and clear errors for corrupt or mismatched files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from piquet_agents import checkpoint as ck
from piquet_agents.policy import ActorCritic, PolicyAgent
from piquet_env.observation import OBS_VERSION, encoder_for
from piquet_env.rules import STANDARD, make_rules
from piquet_training.ppo import resume as run_state

ENC = encoder_for(STANDARD)


def model(seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    return ActorCritic(ENC.size, ENC.n_actions, hidden=(16, 8), activation="tanh")


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, ActorCritic]:
    m = model()
    return ck.save_policy(tmp_path / "p.safetensors", m, STANDARD, {"seed": 7}), m


def test_policy_round_trip_gives_identical_outputs(saved: tuple[Path, ActorCritic]) -> None:
    path, m = saved
    loaded, rules = ck.load_policy(path)
    assert rules == STANDARD
    assert (
        loaded.arch()
        == m.arch()
        == {
            "obs_size": ENC.size,
            "n_actions": ENC.n_actions,
            "hidden": [16, 8],
            "activation": "tanh",
            "state_size": 0,
        }
    )
    obs, mask = torch.randn(5, ENC.size), torch.ones(5, ENC.n_actions, dtype=torch.int8)
    for a, b in zip(m(obs, mask), loaded(obs, mask)):
        assert torch.equal(a, b)
    meta = ck.read_checkpoint(path).meta
    assert meta["obs_version"] == OBS_VERSION and meta["config"] == {"seed": 7}


def test_a_checkpoint_of_another_network_is_refused_where_one_is_expected(
    saved: tuple[Path, ActorCritic],
) -> None:
    path, m = saved
    assert ck.read_checkpoint(path, arch=m.arch()).meta["arch"] == m.arch()
    wider = ActorCritic(ENC.size, ENC.n_actions, hidden=(32, 8), activation="tanh").arch()
    with pytest.raises(ck.CheckpointError) as info:
        ck.read_checkpoint(path, arch=wider)
    assert info.value.field == "metadata.arch" and str(info.value).startswith(
        f"{path}: metadata.arch: network {{'obs_size': {ENC.size}, "
    )
    assert "'hidden': [16, 8]" in str(info.value) and "'hidden': [32, 8]" in str(info.value)


def test_policy_agent_loads_a_file_or_a_run_directory(saved: tuple[Path, ActorCritic]) -> None:
    path, _ = saved
    agent = PolicyAgent.load(path)
    assert agent.rules == STANDARD and agent.greedy
    run = path.parent / "run"
    ck.save_policy(run / ck.POLICY_FILE, model(), STANDARD)
    assert PolicyAgent.load(run).rules == STANDARD
    with pytest.raises(ck.CheckpointError, match="directory without"):
        PolicyAgent.load(path.parent / "run" / "..")


def test_write_is_atomic_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "c.safetensors"
    ck.save_policy(path, model(0), STANDARD)
    ck.save_policy(path, model(1), STANDARD)  # overwrite in place
    assert [p.name for p in tmp_path.iterdir()] == ["c.safetensors"]
    assert torch.equal(ck.load_policy(path)[0].policy_head.weight, model(1).policy_head.weight)


def test_a_failed_write_keeps_the_previous_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "c.safetensors"
    ck.save_policy(path, model(0), STANDARD)
    with pytest.raises(TypeError):
        ck.save_checkpoint(path, {"x": torch.zeros(2)}, {"not json": object()})
    assert [p.name for p in tmp_path.iterdir()] == ["c.safetensors"]
    assert torch.equal(ck.load_policy(path)[0].policy_head.weight, model(0).policy_head.weight)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ck.CheckpointError, match="no checkpoint at"):
        PolicyAgent.load(tmp_path / "nope.safetensors")


def test_truncated_file_is_reported_corrupt(saved: tuple[Path, ActorCritic]) -> None:
    path, _ = saved
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ck.CheckpointError, match="corrupt"):
        ck.load_policy(path)


def test_garbage_file_is_reported_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "g.safetensors"
    path.write_bytes(b"\x00\x01 definitely not a checkpoint" * 10)
    with pytest.raises(ck.CheckpointError, match="corrupt or not a safetensors file"):
        PolicyAgent.load(path)


def test_flipped_weight_byte_fails_the_checksum(saved: tuple[Path, ActorCritic]) -> None:
    path, _ = saved
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # inside the last tensor's bytes, past the JSON header
    path.write_bytes(bytes(data))
    with pytest.raises(ck.CheckpointError, match="checksum"):
        ck.load_policy(path)


def test_foreign_safetensors_file_is_not_a_piquet_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "other.safetensors"
    save_file({"w": torch.zeros(3)}, str(path))
    with pytest.raises(ck.CheckpointError, match="not a piquet checkpoint"):
        ck.load_policy(path)


def test_other_observation_version_is_refused(
    saved: tuple[Path, ActorCritic], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = saved
    monkeypatch.setattr(ck, "current_obs_version", lambda: OBS_VERSION + 1)
    with pytest.raises(ck.CheckpointError, match=f"observation format {OBS_VERSION}"):
        ck.load_policy(path)


def test_other_rules_are_refused(saved: tuple[Path, ActorCritic]) -> None:
    path, _ = saved
    with pytest.raises(ck.CheckpointError, match="trained for rules 'standard', not 'classic'"):
        PolicyAgent.load(path, rules=make_rules("classic"))


def test_other_rules_are_named_by_the_fields_that_differ(saved: tuple[Path, ActorCritic]) -> None:
    path, _ = saved
    with pytest.raises(ck.CheckpointError) as info:
        PolicyAgent.load(path, rules=make_rules("standard+saison"))
    # the one field saison changes, not the whole rules dict
    assert str(info.value).endswith(
        "trained for rules 'standard', not 'standard+saison' (deals: 6, not 12)"
    )
    assert "trick_scoring" not in str(info.value)


def test_tampered_metadata_is_refused(saved: tuple[Path, ActorCritic], tmp_path: Path) -> None:
    _, m = saved
    tensors = {f"model.{k}": v for k, v in m.state_dict().items()}
    meta = ck.policy_meta(m, STANDARD)
    meta.update(format="piquet-checkpoint", format_version=ck.FORMAT_VERSION, sha256="0" * 64)
    bad = tmp_path / "bad.safetensors"
    save_file(tensors, str(bad), metadata={"piquet": json.dumps(meta)})
    with pytest.raises(ck.CheckpointError, match="checksum"):
        ck.load_policy(bad)


def test_optimizer_state_round_trip() -> None:
    m = model()
    opt = torch.optim.Adam(m.parameters(), lr=3e-4, eps=1e-5)
    for _ in range(2):
        loss = m(torch.randn(4, ENC.size), torch.ones(4, ENC.n_actions, dtype=torch.int8))[1].sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    tensors, meta = run_state.optimizer_to_tensors(opt)
    meta = json.loads(json.dumps(meta))
    m2 = model()
    m2.load_state_dict(m.state_dict())
    opt2 = torch.optim.Adam(m2.parameters(), lr=1.0)
    run_state.optimizer_from_tensors(
        opt2, {k.split(".", 1)[1]: v for k, v in tensors.items()}, meta
    )
    a, b = opt.state_dict(), opt2.state_dict()
    assert a["param_groups"] == b["param_groups"]
    for idx in a["state"]:
        for key, value in a["state"][idx].items():
            assert torch.equal(value, b["state"][idx][key])


def test_a_checkpoint_is_as_readable_as_any_new_file(tmp_path: Path) -> None:
    import os
    import stat

    path = ck.save_policy(tmp_path / "c.safetensors", model(0), STANDARD)
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0o600
    old = os.umask(0o077)
    try:
        private = ck.save_policy(tmp_path / "p.safetensors", model(0), STANDARD)
    finally:
        os.umask(old)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600  # the user's umask is respected
