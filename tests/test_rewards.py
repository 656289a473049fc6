"""The one definition of rewards: hand-worked payments, sums over whole episodes, the env and the
trainer's collector agreeing with it."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from piquet_agents.network import ActorCritic
from piquet_env.game import Game
from piquet_env.observation import encoder_for
from piquet_env.piquet_v0 import raw_env
from piquet_env.rewards import REWARDS, BatchRewards, RewardError, check_reward, reward_due
from piquet_env.rules import STANDARD, all_presets
from piquet_training.ppo.collector import Collection, Collector, Seat
from tests.train_helpers import finished_results, trajectory_sums


def _deal(total_0: int, total_1: int) -> tuple[SimpleNamespace, SimpleNamespace]:
    return SimpleNamespace(total=total_0), SimpleNamespace(total=total_1)


def test_hand_worked_partie_payments() -> None:
    """Two deals, 40-12 then 8-30 (the deals' difference for player 0: 28 - 22 = 6), then a
    settled result of +128 for player 0: the settlement's remainder is 128 - 6 = 122."""
    g = SimpleNamespace(deal_scores=[_deal(40, 12)], scores=[[0] * 10, [0] * 10], result=None)
    # The first deal ends: each player is paid the deal's difference, nothing else.
    assert reward_due("deal_points", g, 0, deal_ended=True) == (28.0, 0)
    assert reward_due("deal_points", g, 1, deal_ended=True) == (-28.0, 0)
    for mode in ("result", "win"):
        assert reward_due(mode, g, 0, deal_ended=True) == (0.0, 0)
    # Mid-deal, player 1 has 17 points to player 0's 5: dense payment of the change since the
    # last payment (he was credited 10 already).
    g.scores = [[5] + [0] * 9, [0, 10, 7] + [0] * 7]
    assert reward_due("deal_points", g, 1, deal_ended=False, credited=10) == (2.0, 12)
    assert reward_due("deal_points", g, 0, deal_ended=False, credited=-10) == (-2.0, -12)
    # The second (last) deal ends 8-30 and the partie settles at +128 / -128.
    g.deal_scores.append(_deal(8, 30))
    g.result = (128, -128)
    # player 0: deal difference -22 (credited -12 already: -10 more), and the settlement's
    # remainder 128 - (28 - 22) = 122, weighted.
    assert reward_due("deal_points", g, 0, deal_ended=True, credited=-12) == (-10.0 + 122.0, 0)
    assert reward_due("deal_points", g, 0, deal_ended=True, settle_weight=0.25) == (
        -22.0 + 30.5,
        0,
    )
    assert reward_due("deal_points", g, 1, deal_ended=True) == (22.0 - 122.0, 0)
    assert reward_due("result", g, 0, deal_ended=True) == (128.0, 0)
    assert reward_due("result", g, 1, deal_ended=True) == (-128.0, 0)
    assert reward_due("win", g, 0, deal_ended=True) == (1.0, 0)
    assert reward_due("win", g, 1, deal_ended=True) == (-1.0, 0)
    g.result = (0, 0)
    assert reward_due("win", g, 1, deal_ended=True) == (0.0, 0)


@pytest.mark.parametrize(
    "mode, scale, weight, message",
    [
        ("points", 1.0, 1.0, "reward must be one of"),
        ("result", float("nan"), 1.0, "reward_scale"),
        ("result", 0.0, 1.0, "reward_scale"),
        ("result", "1", 1.0, "reward_scale"),
        ("deal_points", 1.0, -1.0, "settle_weight"),
        ("deal_points", 1.0, float("inf"), "settle_weight"),
    ],
)
def test_bad_reward_settings(mode, scale, weight, message) -> None:
    with pytest.raises(RewardError, match=message):
        check_reward(mode, scale=scale, settle_weight=weight)
    if mode == "points":
        with pytest.raises(RewardError):
            reward_due(mode, Game(), 0, deal_ended=False)


def _episode_sums(game: Game, rng: random.Random, dense: bool) -> dict[str, list[float]]:
    """Play ``game`` out at random, paying every mode as a caller would; return the sums."""
    sums = {mode: [0.0, 0.0] for mode in REWARDS}
    credited = [0, 0]
    n_deals = 0
    while not game.is_over:
        game.apply(rng.choice(game.legal_actions()))
        ended = len(game.deal_scores) > n_deals
        n_deals = len(game.deal_scores)
        for p in (0, 1):
            if ended or dense:
                points, credited[p] = reward_due(
                    "deal_points", game, p, deal_ended=ended, credited=credited[p]
                )
                sums["deal_points"][p] += points
            if ended:
                for mode in ("result", "win"):
                    sums[mode][p] += reward_due(mode, game, p, deal_ended=True)[0]
    return sums


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    preset=st.sampled_from(all_presets()),
    mode=st.sampled_from(["partie", "deal"]),
    dense=st.booleans(),
)
def test_every_mode_pays_the_settled_result_over_an_episode(seed, preset, mode, dense) -> None:
    game = Game(preset, seed=seed, mode=mode, record=False)
    sums = _episode_sums(game, random.Random(seed), dense)
    for p in (0, 1):
        assert sums["deal_points"][p] == game.result[p]
        assert sums["result"][p] == game.result[p]
        assert sums["win"][p] == np.sign(game.result[p])


@pytest.mark.parametrize("reward", ["result", "deal_points"])
def test_the_env_pays_what_reward_due_says(reward: str) -> None:
    env = raw_env(mode="partie", reward=reward, reward_scale=0.5)
    env.reset(seed=7)
    rng = random.Random(7)
    paid = {a: 0.0 for a in env.possible_agents}
    while not all(env.terminations.values()):
        env.step(rng.choice(env.game.legal_actions()))
        for a in env.possible_agents:
            paid[a] += env.rewards[a]
    assert [paid["player_0"], paid["player_1"]] == [0.5 * r for r in env.game.result]


@pytest.mark.parametrize("reward", ["win", "result"])
def test_the_collector_pays_terminal_modes_once(reward: str) -> None:
    enc = encoder_for(STANDARD)
    torch.manual_seed(0)
    model = ActorCritic(enc.size, enc.n_actions, hidden=(8,))
    collection = Collection(STANDARD, "deal", 2, reward=reward, reward_scale=2.0)
    col = Collector(collection, np.random.default_rng(3))
    results = finished_results(col)
    roll = col.collect(3, lambda rng: (Seat(model=model, record=True), Seat(model=model), "x"))
    assert roll.dones.sum() == 3 and np.count_nonzero(roll.rewards) <= 3
    sums = sorted(trajectory_sums(roll))
    value = (lambda r: np.sign(r)) if reward == "win" else (lambda r: r)
    assert sums == pytest.approx(sorted(2.0 * value(r[0]) for r in results))


def _two_deals(rewards: BatchRewards) -> list[list[float]]:
    """Player 0's dues in a hand-worked two-deal partie of game 0 (game 1 idle throughout)."""
    idle = np.array([[3, 3]])
    steps = [
        rewards.pay(np.array([[5, 0], *idle])),  # a point of five
        rewards.pay(np.array([[5, 3], *idle])),  # opponent's tierce
        rewards.pay(  # deal 1 ends 12 to 3; deal 2 opens with 10 to the opponent (blanche)
            np.array([[0, 10], *idle]),
            deal_games=np.array([0]),
            deal_totals=np.array([[12, 3]]),
        ),
        rewards.pay(np.array([[0, 10], *idle])),  # the blanche is paid after the deal's end
        rewards.pay(  # deal 2 ends 4 to 20; the partie settles at -140 for player 0
            np.array([[4, 20], *idle]),
            deal_games=np.array([0]),
            deal_totals=np.array([[4, 20]]),
            ended_games=np.array([0]),
            results=np.array([[-140, 140]]),
        ),
        rewards.pay(np.array([[4, 20], *idle])),  # over: nothing more
    ]
    for due in steps:
        assert due[:, 0].tolist() == (-due[:, 1]).tolist()  # zero-sum
        assert due[1].tolist() == [0.0, 0.0]
    return [float(d[0, 0]) for d in steps]


def test_batch_rewards_by_hand():
    dense = BatchRewards(2, "deal_points", settle_weight=0.5, dense=True)
    # 5, -3, the deal's last 7 (9 - 2 credited), -10 blanche, -6 (-16 + 10 credited) then half
    # the remainder -140 - (9 - 16) = -133
    assert _two_deals(dense) == [5.0, -3.0, 7.0, -10.0, -6.0 - 66.5, 0.0]
    at_deal_end = BatchRewards(2, "deal_points", settle_weight=0.5)
    assert _two_deals(at_deal_end) == [0.0, 0.0, 9.0, 0.0, -16.0 - 66.5, 0.0]
    whole = BatchRewards(2, "deal_points", dense=True)
    assert sum(_two_deals(whole)) == -140.0
    assert _two_deals(BatchRewards(2, "result", dense=True)) == [0, 0, 0, 0, -140.0, 0]
    assert _two_deals(BatchRewards(2, "win")) == [0, 0, 0, 0, -1.0, 0]


def test_batch_rewards_start_clears_what_is_owed():
    r = BatchRewards(1, "deal_points", dense=True)
    r.pay(np.array([[7, 0]]))
    r.start(np.array([0]))  # a new episode in the slot
    assert r.pay(np.array([[2, 0]]))[0].tolist() == [2.0, -2.0]


def test_batch_rewards_check_their_settings():
    with pytest.raises(RewardError, match="dense"):
        BatchRewards(1, "deal_points", dense="yes")
    with pytest.raises(RewardError, match="settle_weight"):
        BatchRewards(1, "deal_points", settle_weight=-1)
