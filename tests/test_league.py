"""League exploiters (piquet_training.league): the rounds, the pool's exploiters, the checkpoint."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_cli import main
from piquet_env.observation import encoder_for
from piquet_env.rules import make_rules
from piquet_training.collector import Collector, OpponentPool
from piquet_training.config import ConfigError, TrainConfig, apply_overrides
from piquet_training.league import League
from piquet_training.vector_collector import VectorCollector
from tests.train_helpers import TINY, train_cli

RULES = make_rules("standard")
LEAGUE = [
    *TINY,
    "updates=3",
    "eval_every=0",
    "final_eval_deals=0",
    "checkpoint_every=1",
    "league_every=1",
    "league_updates=2",
    "exploiter_weight=0.5",
    "league_size=2",
]


def model(seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    enc = encoder_for(RULES)
    return ActorCritic(enc.size, enc.n_actions, (16,), "tanh", enc.state_size).eval()


def test_the_pool_plays_its_exploiters_greedily_and_keeps_the_last_few() -> None:
    learner = model(0)
    pool = OpponentPool(learner, {"exploiter": 1.0}, league_size=2)
    rng = np.random.default_rng(0)
    assert pool.matchup(rng)[2] == "self"  # no exploiter yet: a self-play game
    for update in (5, 10, 15):
        pool.add_exploiter(model(update), update)
    assert pool.exploiter_updates == [10, 15] and len(pool.exploiters) == 2
    assert not any(p.requires_grad for x in pool.exploiters for p in x.parameters())
    a, b, label = pool.matchup(rng)
    other = b if a.record else a
    assert label == "exploiter" and other.greedy and not other.record
    assert any(other.model is x for x in pool.exploiters)


@pytest.mark.parametrize("batched", [True, False])
def test_exploiter_games_give_the_learner_one_seat(batched: bool) -> None:
    learner = model(0)
    pool = OpponentPool(learner, {"exploiter": 1.0})
    pool.add_exploiter(model(1), 1)
    rng = np.random.default_rng(3)
    kwargs = dict(record_states=True)
    if batched:
        roll = VectorCollector(RULES, "deal", 6, rng, **kwargs).collect(6, pool)
    else:
        roll = Collector(RULES, "deal", 6, rng, **kwargs).collect(6, pool.matchup)
    assert set(roll.points) == {"exploiter"} and len(roll.points["exploiter"]) == 6
    assert int(roll.dones.sum()) == 6  # one recorded trajectory per game: the learner's seat


def test_a_round_starts_from_the_learner_trains_the_exploiter_alone_and_joins_the_pool() -> None:
    learner = model(0)
    before = {k: v.clone() for k, v in learner.state_dict().items()}
    cfg = TrainConfig(games_per_update=6, num_envs=6, league_updates=2, league_every=1)
    league = League(cfg, learner)
    pool = OpponentPool(learner, {"self": 1.0, "exploiter": 1.0})
    rng = np.random.default_rng(0)
    col = VectorCollector(RULES, "deal", 6, rng, record_states=True)
    r = league.play_round(4, pool, col, rng)
    assert r.update == 4 and r.env_steps > 0 and league.started
    assert all(torch.equal(v, before[k]) for k, v in learner.state_dict().items())
    moved = [not torch.equal(v, before[k]) for k, v in league.exploiter.state_dict().items()]
    assert any(moved)  # the exploiter trained
    frozen = pool.exploiters[0]
    assert pool.exploiter_updates == [4]
    assert all(
        torch.equal(v, league.exploiter.state_dict()[k]) for k, v in frozen.state_dict().items()
    )
    # A tiny step size: the exploiter is still (almost) the learner it started from.
    cfg = TrainConfig(
        games_per_update=6, num_envs=6, league_updates=1, league_every=1, league_learning_rate=1e-12
    )
    league = League(cfg, learner)
    league.play_round(1, pool, col, rng)
    for k, v in league.exploiter.state_dict().items():
        assert torch.allclose(v, before[k], atol=1e-6), k


def test_a_league_run_logs_its_rounds_and_saves_them(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert train_cli(out, LEAGUE) == 0
    rows = list(csv.DictReader((out / "league.csv").open()))
    assert [int(r["update"]) for r in rows] == [1, 2]  # none after the last update
    assert int(rows[-1]["league_env_steps"]) > int(rows[0]["league_env_steps"]) > 0
    train = list(csv.DictReader((out / "train.csv").open()))
    assert train[0]["train_vs_exploiter"] == "" and train[-1]["train_vs_exploiter"] != ""
    ckpt = ck.read_checkpoint(out / ck.LATEST_FILE)
    league = ckpt.meta["train"]["league"]
    assert league["started"] and league["exploiter_updates"] == [1, 2]
    assert ckpt.section("exploiter1") and ckpt.section("league") and ckpt.section("league_optim")
    assert "league:" in (out / "summary.md").read_text()


@pytest.mark.parametrize("collector", ["vector", "game"])
def test_a_resumed_league_run_is_the_uninterrupted_one(tmp_path: Path, collector: str) -> None:
    # A round after update 2 (none after the last): the part stops before it, the resume runs it.
    full, part = tmp_path / "full", tmp_path / "part"
    settings = [*LEAGUE, f"collector={collector}", "league_every=2"]
    assert train_cli(full, settings) == 0
    assert train_cli(part, settings, "updates=1") == 0
    assert main(["train", "--resume", str(part), "--set", "updates=3"]) == 0
    a, b = ck.read_checkpoint(part / ck.LATEST_FILE), ck.read_checkpoint(full / ck.LATEST_FILE)
    assert a.tensors.keys() == b.tensors.keys()
    for key in a.tensors:
        if key != "rng.torch":
            assert torch.equal(a.tensors[key], b.tensors[key]), key
    assert [r["update"] for r in csv.DictReader((part / "league.csv").open())] == ["2"]


def test_a_league_checkpoint_without_its_part_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert train_cli(out, [*LEAGUE, "league_every=0", "updates=1"]) == 0
    # The same run dir resumed as a league run: the checkpoint has no league to restore.
    cfg_path = out / "config.toml"
    cfg_path.write_text(cfg_path.read_text().replace("league_every = 0", "league_every = 1"))
    assert main(["train", "--resume", str(out), "--set", "league_every=1"]) == 2


@pytest.mark.parametrize(
    "settings,message",
    [
        (["league_every=5", "opponent=random"], "league_every needs the opponent pool"),
        (["league_every=5", "exploiter_weight=0"], "needs exploiter_weight > 0"),
    ],
)
def test_inconsistent_league_settings_are_refused(settings: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        apply_overrides(TrainConfig(), settings).validate()
