"""piquet_v1: array infos, readable infos on demand, vector observations, the win reward, and
agreement with v0 move for move."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from piquet_env import piquet_v0, piquet_v1

ELDER = "AS KS QS JS TS 9S 8S 7S AH KH QH JH"
YOUNGER = "AD KD QD JD AC KC QC JC 7H 8H 9H TH"
TALON = "7D 8D 9D TD 7C 8C 9C TC"
DEAL = {"elder": ELDER, "younger": YOUNGER, "talon": TALON, "first_elder": "player_0"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"rules": "classic+normand", "reward": "win"},
        {"mode": "deal", "observation_format": "vector"},
        {"info_names": True, "reward": "deal_points"},
    ],
)
def test_pettingzoo_api_and_seed_tests(kwargs):
    api_test(piquet_v1.env(**kwargs), num_cycles=500)
    seed_test(lambda **kw: piquet_v1.env(**kwargs, **kw), num_cycles=200)


def test_metadata_and_version():
    assert piquet_v1.raw_env.metadata["name"] == "piquet_v1"
    assert piquet_v0.raw_env.metadata["name"] == "piquet_v0"
    assert piquet_v1.raw_env.version == 1 and piquet_v0.raw_env.version == 0
    assert issubclass(piquet_v1.raw_env, piquet_v0.raw_env)  # one class, not a copy
    assert "Version history" in piquet_v1.__doc__ and "- v1:" in piquet_v0.__doc__


def test_v1_infos_are_one_fixed_shape_mask_per_agent():
    e = piquet_v1.env()
    e.reset(options={"deal": DEAL})
    rng = random.Random(0)
    steps = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        for a in e.agents:
            inf = e.unwrapped.infos[a]
            assert set(inf) == {"action_mask"}
            assert inf["action_mask"].shape == (35,) and inf["action_mask"].dtype == np.int8
        if term or trunc:
            e.step(None)
            continue
        np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])
        other = "player_1" if agent == "player_0" else "player_0"
        assert not e.unwrapped.infos[other]["action_mask"].any()  # mid-game: both agents live
        e.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
    assert steps > 50


def test_readable_info_and_info_names():
    raw = piquet_v1.raw_env()
    raw.reset(options={"deal": DEAL})
    info = raw.readable_info("player_0")
    assert info["phase"] == "exchange" and info["to_act"] is True
    assert "discard AS" in info["legal_actions"] and "done" not in info["legal_actions"]
    assert raw.readable_info("player_1") == {
        "phase": "exchange",
        "to_act": False,
        "legal_actions": [],
    }
    with pytest.raises(ValueError, match="agent must be one of"):
        raw.readable_info("player_2")
    named = piquet_v1.raw_env(info_names=True)
    named.reset(options={"deal": DEAL})
    assert set(named.infos["player_0"]) == {"phase", "to_act", "legal_actions", "action_mask"}
    plain_v0 = piquet_v0.raw_env(info_names=False)
    plain_v0.reset(options={"deal": DEAL})
    assert plain_v0.infos["player_0"] == {}  # v0 without names: nothing (its mask is in obs)


def test_vector_observations():
    for module in (piquet_v0, piquet_v1):
        raw = module.raw_env(observation_format="vector")
        raw.reset(options={"deal": DEAL})
        space = raw.observation_space("player_0")
        assert space.shape == (433,) and space.dtype == np.float32
        obs = raw.observe("player_0")
        assert isinstance(obs, np.ndarray) and space.contains(obs)
        mask = raw.infos["player_0"]["action_mask"]  # v0 too: the mask would be nowhere else
        assert sorted(np.flatnonzero(mask)) == sorted(raw._legal)


def test_turn_based_parallel_conversion_carries_masks():
    par = turn_based_aec_to_parallel(piquet_v1.env(observation_format="vector", mode="deal"))
    _obs, infos = par.reset(seed=0)
    rng = np.random.default_rng(0)
    rounds = 0
    while par.agents:
        actions = {}
        for a in par.agents:
            legal = np.flatnonzero(infos[a]["action_mask"])
            actions[a] = int(rng.choice(legal)) if len(legal) else 0
        _obs, rewards, _terms, _truncs, infos = par.step(actions)
        rounds += 1
    assert rounds > 20 and rewards["player_0"] == -rewards["player_1"]


@pytest.mark.parametrize("episode", ["deal", "partie"])
def test_win_reward_pays_the_sign_of_the_result(episode):
    for seed in range(3):
        e = piquet_v1.env(reward="win", mode=episode, reward_scale=2.0)
        e.reset(seed=seed)
        rng = random.Random(seed)
        total = {"player_0": 0.0, "player_1": 0.0}
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            total[agent] += reward
            e.step(None if term or trunc else rng.choice(list(np.flatnonzero(obs["action_mask"]))))
        r0 = e.unwrapped.game.result[0]
        sign = (r0 > 0) - (r0 < 0)
        assert e.unwrapped.returns == (2.0 * sign, -2.0 * sign)
        assert total == {"player_0": 2.0 * sign, "player_1": -2.0 * sign}


def test_reward_option_is_validated():
    with pytest.raises(
        ValueError, match=r"reward must be one of \('result', 'deal_points', 'win'\)"
    ):
        piquet_v1.env(reward="wins")


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    moves=st.integers(0, 200),
    rules=st.sampled_from(["standard", "classic+normand", "standard+orbis"]),
)
def test_v0_and_v1_agree_move_for_move(seed, moves, rules):
    """Same seed, same moves: same observations and rewards; v1's info mask is v0's observation
    mask, and v1's readable_info is v0's info (without the mask)."""
    e0, e1 = piquet_v0.raw_env(rules=rules), piquet_v1.raw_env(rules=rules)
    e0.reset(seed=seed)
    e1.reset(seed=seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if e0.game.is_over:
            break
        agent = e0.agent_selection
        assert e1.agent_selection == agent
        o0, o1 = e0.observe(agent), e1.observe(agent)
        np.testing.assert_array_equal(o0["observation"], o1["observation"])
        np.testing.assert_array_equal(o0["action_mask"], e1.infos[agent]["action_mask"])
        for a in ("player_0", "player_1"):
            assert e1.readable_info(a) == e0.infos[a]
        action = rng.choice(e0._legal)
        e0.step(action)
        e1.step(action)
        assert e0.rewards == e1.rewards
