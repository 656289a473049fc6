"""Regularised self-play (``piquet_training.ppo.magnet``): the schedules, the KL to each magnet, the
EMA magnet following the learner, and a run with a magnet that logs it and resumes bit for bit."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_cli import main
from piquet_training.ppo.magnet import Magnet, kl_to_magnet, scheduled
from piquet_training.settings.train import ConfigError, TrainConfig, apply_overrides
from tests.train_helpers import TINY, train_cli


def test_the_schedules():
    assert [scheduled("constant", 0.3, 9.0, 2.0, u, 10) for u in (0, 9)] == [0.3, 0.3]
    assert scheduled("linear", 1.0, 0.2, 0.0, 0, 10) == 1.0
    assert scheduled("linear", 1.0, 0.2, 0.0, 5, 10) == pytest.approx(0.6)
    assert scheduled("linear", 1.0, 0.2, 0.0, 10, 10) == pytest.approx(0.2)
    assert scheduled("power", 0.8, 0.0, 0.5, 3, 10) == pytest.approx(0.4)  # 0.8 / sqrt(4)
    with pytest.raises(ValueError, match="schedule must be one of"):
        scheduled("cosine", 1.0, 0.0, 0.0, 0, 10)


def _net(seed: int) -> ActorCritic:
    torch.manual_seed(seed)
    return ActorCritic(6, 4, (8,))


def test_the_kl_to_each_magnet():
    obs = torch.randn(5, 6)
    mask = torch.tensor([[1, 1, 0, 1]] * 4 + [[0, 1, 0, 0]], dtype=torch.int8)
    learner = _net(0)
    logp = torch.log_softmax(learner.logits(obs, mask), dim=-1)
    # uniform: KL = log(number of legal actions) - entropy; 0 where one action is legal
    uniform = Magnet("uniform", learner)
    kl = kl_to_magnet(logp, uniform.log_probs(obs, mask), mask)
    entropy = -(logp.exp() * logp).sum(-1)
    n_legal = mask.sum(-1).float()
    torch.testing.assert_close(kl, torch.log(n_legal) - entropy, atol=1e-6, rtol=0)
    assert kl[-1].item() == pytest.approx(0.0, abs=1e-7) and (kl[:-1] > 0).all()
    # ema: a copy of the learner, so no pull at first; it follows the learner afterwards
    ema = Magnet("ema", learner, decay=0.75)
    assert kl_to_magnet(logp, ema.log_probs(obs, mask), mask).abs().max() < 1e-6
    moved = _net(1)
    before = [p.clone() for p in ema.network.parameters()]
    ema.follow(moved)
    for b, e, t in zip(before, ema.network.parameters(), moved.parameters()):
        torch.testing.assert_close(e, 0.75 * b + 0.25 * t)
    assert set(ema.state_tensors()) == {f"magnet.{k}" for k in moved.state_dict()}
    assert Magnet("uniform", learner).state_tensors() == {}


def test_a_frozen_magnet_file(tmp_path: Path):
    from piquet_env.observation import encoder_for
    from piquet_env.rules import STANDARD

    enc = encoder_for(STANDARD)
    other = ActorCritic(enc.size, enc.n_actions, (16,))
    ck.save_policy(tmp_path / "m.safetensors", other, STANDARD, {})
    learner = ActorCritic(enc.size, enc.n_actions, (32,))  # any architecture may be the magnet
    magnet = Magnet(str(tmp_path / "m.safetensors"), learner)
    obs, mask = torch.zeros(2, enc.size), torch.ones(2, enc.n_actions, dtype=torch.int8)
    want = torch.log_softmax(other.logits(obs, mask), dim=-1)
    torch.testing.assert_close(magnet.log_probs(obs, mask), want)
    magnet.follow(learner)  # a frozen magnet stays
    torch.testing.assert_close(magnet.log_probs(obs, mask), want)


def test_the_settings_are_checked(tmp_path: Path):
    with pytest.raises(ConfigError, match="magnet"):
        apply_overrides(TrainConfig(), ["magnet=somewhere/else.safetensors"])
    with pytest.raises(ConfigError, match="magnet_schedule"):
        apply_overrides(TrainConfig(), ["magnet_schedule=cosine"])
    with pytest.raises(ConfigError, match="magnet_coef > 0 needs a magnet"):
        apply_overrides(TrainConfig(), ["magnet_coef=0.1"]).validate()
    with pytest.raises(ConfigError, match="magnet_ema"):
        apply_overrides(TrainConfig(), ["magnet_ema=1.5"])


MAGNET = (
    "magnet=ema",
    "magnet_coef=0.5",
    "magnet_schedule=power",
    "magnet_ema=0.9",
    "ent_schedule=linear",
    "ent_coef=0.02",
    "final_eval_deals=0",
    "eval_every=0",
)


def _latest(out: Path) -> dict[str, torch.Tensor]:
    return ck.read_checkpoint(out / ck.LATEST_FILE).tensors


def test_a_run_with_a_magnet_logs_it_and_resumes_bit_for_bit(tmp_path: Path):
    full, part, plain = tmp_path / "full", tmp_path / "part", tmp_path / "plain"
    assert train_cli(full, TINY, *MAGNET, "updates=3") == 0
    rows = list(csv.DictReader((full / "train.csv").open()))
    assert [float(r["magnet_coef"]) for r in rows] == pytest.approx(
        [0.5 / math.sqrt(1 + u) for u in range(3)],
        abs=1e-5,  # the CSV holds 6 digits
    )
    assert [float(r["ent_coef"]) for r in rows] == pytest.approx(
        [0.02, 0.02 * 2 / 3, 0.02 / 3], abs=1e-5
    )
    assert all(float(r["magnet_kl"]) >= 0 for r in rows)
    assert any(k.startswith("magnet.") for k in _latest(full))
    # the pull changes what is learned
    assert train_cli(plain, TINY, "final_eval_deals=0", "eval_every=0", "updates=3") == 0
    a, b = _latest(full), _latest(plain)
    assert not all(torch.equal(a[k], b[k]) for k in b if k.startswith("model."))
    # killed after one update, resumed: the same weights, the EMA magnet's too
    assert train_cli(part, TINY, *MAGNET, "updates=1") == 0
    assert main(["train", "--resume", str(part), "--set", "updates=3"]) == 0
    resumed = _latest(part)
    for key in a:
        if key.startswith(("model.", "magnet.")):
            assert torch.equal(resumed[key], a[key]), key
