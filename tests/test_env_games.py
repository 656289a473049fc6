"""Thousands of random games through env() under every preset, episode and reward mode; rewards
sum to the documented outcome; a hand-worked deal (RULES.md example 9) pays exactly."""

from __future__ import annotations

import random

import numpy as np
import pytest

from piquet_env.cards import parse_card
from piquet_env.piquet_v0 import env
from piquet_env.rules import all_presets

PRESETS = all_presets()


def play_out(e, rng: random.Random) -> tuple[dict[str, float], list[dict[str, float]], int]:
    """Play random legal actions to the end, checking every observation and mask; return the
    summed rewards per agent, the rewards paid at each step, and the number of decisions."""
    raw = e.unwrapped
    high = raw.encoder.high
    totals = {"player_0": 0.0, "player_1": 0.0}
    paid = []
    steps = 0
    for _agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            continue
        x, mask = obs["observation"], obs["action_mask"]
        legal = np.flatnonzero(mask)
        assert legal.tolist() == raw.game.legal_actions()
        assert len(info["legal_actions"]) == len(legal)
        assert x.dtype == np.float32 and (x >= 0).all() and (x <= high).all()
        e.step(int(legal[rng.randrange(len(legal))]))
        steps += 1
        step = dict(raw.rewards)
        paid.append(step)
        for a, r in step.items():
            totals[a] += r
    return totals, paid, steps


@pytest.mark.parametrize("preset", PRESETS, ids=[r.name for r in PRESETS])
def test_random_games_to_the_end(preset):
    rng = random.Random(preset.name)
    games = 0
    for episode, n_games in (("partie", 40), ("deal", 100)):
        for i in range(n_games):
            reward = ("result", "deal_points")[i % 2]
            scale = (1.0, 0.01)[i % 3 == 0]
            e = env(rules=preset, mode=episode, reward=reward, reward_scale=scale)
            e.reset(seed=rng.getrandbits(32))
            game_before = e.unwrapped
            totals, paid, steps = play_out(e, rng)
            game = game_before.game
            assert game.is_over and steps > 0
            result = game.result
            assert totals["player_0"] == pytest.approx(scale * result[0])
            assert totals["player_1"] == pytest.approx(scale * result[1])
            assert totals["player_0"] == pytest.approx(-totals["player_1"])
            if episode == "partie":
                assert len(game.deal_scores) >= preset.deals
            nonzero = [r for r in paid if r["player_0"] or r["player_1"]]
            if reward == "result":
                assert len(nonzero) <= 1
            games += 1
    assert games == 140


def test_deal_point_rewards_are_paid_at_each_deal_end():
    rng = random.Random(1)
    e = env(reward="deal_points")
    e.reset(seed=2)
    raw = e.unwrapped
    game = raw.game
    seen_diffs = []
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        n = len(game.deal_scores)
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
        if len(game.deal_scores) > n and not game.is_over:
            d0, d1 = game.deal_scores[-1]
            assert raw.rewards == {"player_0": d0.total - d1.total, "player_1": d1.total - d0.total}
            seen_diffs.append(d0.total - d1.total)
        elif not game.is_over:
            assert raw.rewards == {"player_0": 0, "player_1": 0}
        else:
            # the last step pays the last deal's difference plus the settlement adjustment
            assert raw.rewards["player_0"] == game.result[0] - sum(seen_diffs)
    assert len(seen_diffs) == 5
    assert raw.returns == (game.result[0], game.result[1])


# RULES.md example 9: the classic maximum, 170 for elder and 0 for younger.
HOYLE = {
    "elder": "AS AH AD AC KS KH KD KC QS QH QD 7C",
    "younger": "JS TS 9S JH TH 9H JD TD 9D JC TC 9C",
    "talon": "QC 8S 7S 8H 7H 8D 7D 8C",
    "first_elder": "player_1",
}


@pytest.mark.parametrize("reward", ["result", "deal_points"])
def test_hand_worked_classic_maximum_pays_170(reward):
    e = env(rules="classic", mode="deal", reward=reward, reward_scale=0.01)
    e.reset(options={"deal": HOYLE})
    raw = e.unwrapped
    done = raw.rules.n_cards
    script = [
        ("player_1", parse_card("7C")),
        ("player_1", done),
        ("player_0", parse_card("9S")),
        ("player_0", done),
    ]
    for agent, action in script:
        assert e.agent_selection == agent
        e.step(action)
    info = e.infos["player_1"]
    assert info["phase"] == "declarations" and info["legal_actions"] == [
        "declare point",
        "pass point",
    ]
    for _ in range(3):  # elder declares point, sequence and set; younger's passes are forced
        assert e.agent_selection == "player_1"
        e.step(raw.rules.n_cards + 1)
    rewards = {"player_0": 0.0, "player_1": 0.0}
    rng = random.Random(0)
    final_infos = {}
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            final_infos[agent] = info
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
        for a, r in raw.rewards.items():
            rewards[a] += r
    assert rewards == {"player_0": pytest.approx(-1.70), "player_1": pytest.approx(1.70)}
    for agent in ("player_0", "player_1"):
        score = final_infos[agent]["deal_score"]
        assert score["player_1"] == {
            "carte_blanche": 0,
            "point": 3,
            "sequence": 12,
            "set": 42,
            "play": 13,
            "repique": 60,
            "pique": 0,
            "capot": 40,
            "cards": 0,
            "total": 170,
        }
        assert score["player_0"]["total"] == 0
