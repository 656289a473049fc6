"""The batched engine against ``Game``: a differential test over all 32 presets (every step of
every game: player to act, mask, observation, rewards, full state; every deal's score and every
result), plus seeds, autoreset, extraction to ``Game``, given deals and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from piquet_env.cards import parse_card, parse_cards
from piquet_env.game import Game
from piquet_env.observation import encoder_for
from piquet_env.piquet_v0 import raw_env
from piquet_env.rewards import REWARDS
from piquet_env.rules import all_presets, make_rules
from piquet_env.testing.difftest import compare
from piquet_env.vector import (
    NO_ACTION,
    BatchActionError,
    BatchGame,
    deal_score,
    game_seed,
    make_game,
    sample_legal,
)
from piquet_env.vector.deal import game_deals

PRESETS = all_presets()
IDS = [r.name for r in PRESETS]


def _random_steps(batch: BatchGame, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    out = None
    for _ in range(k):
        out = batch.step(sample_legal(batch.action_mask(), rng))
    return out


# ---------------------------------------------------------------------- identity with Game


@pytest.mark.parametrize("preset", PRESETS, ids=IDS)
def test_single_deals_match_game(preset):
    """1,000 deals of each base preset, 300 of each combination with variants (the variants'
    own rules are compared on their deals, and again in the parties and dense rewards below)."""
    games = 1000 if not preset.variants else 300
    rep = compare(
        preset,
        games=games,
        batch=256,
        mode="deal",
        reward=REWARDS[PRESETS.index(preset) % 3],
        reward_scale=(1.0, 0.01)[PRESETS.index(preset) % 3 == 0],
        seed=1,
    )
    assert rep.differences == []
    assert rep.games == games and rep.deals == games


@pytest.mark.parametrize("preset", PRESETS, ids=IDS)
def test_parties_match_game(preset):
    rep = compare(
        preset,
        games=50,
        batch=50,
        mode="partie",
        reward=REWARDS[(PRESETS.index(preset) + 1) % 3],
        seed=2,
    )
    assert rep.differences == []
    assert rep.games == 50 and rep.deals >= 50 * preset.deals


SPECIAL_DEALS = {
    # RULES.md example 9: repique and capot for elder whatever the play (classic maximum)
    "hoyle": (
        "AS AH AD AC KS KH KD KC QS QH QD 7C",
        "JS TS 9S JH TH 9H JD TD 9D JC TC 9C",
        "QC 8S 7S 8H 7H 8D 7D 8C",
    ),
    # RULES.md example 2: elder's repique (point 8 and a huitieme)
    "repique": (
        "AS KS QS JS TS 9S 8S 7S AH KH QH JH",
        "AD KD QD JD AC KC QC JC 7H 8H 9H TH",
        "7D 8D 9D TD 7C 8C 9C TC",
    ),
    # carte blanche for elder (no K, Q or J), then for younger (closes the pique)
    "blanche elder": (
        "AS TS 9S 8S 7S AH TH 9H 8H 7H AD TD",
        "KS QS JS KH QH JH KD QD JD KC QC JC",
        "9D 8D 7D AC TC 9C 8C 7C",
    ),
    "blanche younger": (
        "KS QS JS KH QH JH KD QD JD KC QC JC",
        "AS TS 9S 8S 7S AH TH 9H 8H 7H AD TD",
        "9D 8D 7D AC TC 9C 8C 7C",
    ),
    # RULES.md example 3: equal points and sequences, younger's three trios
    "ties": (
        "AS KS QS JS 7H 8H 9H 7C 8C 9C 7D 8D",
        "AD KD QD JD TH JH QH TC JC QC TS 9S",
        "AH KH AC KC 9D TD 8S 7S",
    ),
}


@pytest.mark.parametrize("name", list(SPECIAL_DEALS))
@pytest.mark.parametrize("preset", ["standard", "classic", "classic+orbis", "standard+orbis"])
def test_special_deals_match_game(preset, name):
    """Rare paths (repique, pique, capot, carte blanche, ties) from given cards, random play."""
    rep = compare(
        preset,
        games=60,
        batch=30,
        mode="deal",
        reward="deal_points",
        dense=True,
        seed=3,
        deal=SPECIAL_DEALS[name],
        first_elder=1,
        state_every=3,
    )
    assert rep.differences == [] and rep.games == 60


@pytest.mark.parametrize("preset", PRESETS, ids=IDS)
def test_dense_deal_points_match_game(preset):
    """The trainer's reward: deal points after every move, the settlement weighed, scaled."""
    rep = compare(
        preset,
        games=40,
        batch=40,
        mode=("partie", "deal")[PRESETS.index(preset) % 2],
        reward="deal_points",
        reward_scale=0.02,
        settle_weight=0.25,
        dense=True,
        seed=4,
    )
    assert rep.differences == []
    assert rep.games == 40


def test_rewards_match_the_env():
    """The reference pays as the env does: drive ``raw_env`` itself with the batch's deals."""
    rules = make_rules("classic")
    for reward in REWARDS:
        batch = BatchGame(rules, n=4, reward=reward, reward_scale=0.5, seed=3)
        out = batch.reset(seed=3)
        envs = []
        for i in range(4):
            e = raw_env(rules=rules, reward=reward, reward_scale=0.5)
            deals = game_deals(rules, batch.game_seed(i))
            e.reset(options={"deals": deals, "first_elder": int(batch.first_elder[i])})
            envs.append(e)
        rng = np.random.default_rng(3)
        live = np.ones(4, dtype=bool)
        while live.any():
            for i in np.flatnonzero(live):
                e = envs[i]
                agent = e.agent_selection
                obs = e.observe(agent)
                assert out.seat[i] == int(agent[-1])
                assert np.array_equal(obs["observation"], out.obs[i])
                assert np.array_equal(obs["action_mask"].astype(bool), out.mask[i])
                assert np.array_equal(e.state(), batch.full_state()[i])
            actions = sample_legal(out.mask, rng)
            actions[~live] = NO_ACTION
            out = batch.step(actions)
            for i in np.flatnonzero(live):
                envs[i].step(int(actions[i]))
                got = out.rewards[i].tolist()
                want = [envs[i].rewards["player_0"], envs[i].rewards["player_1"]]
                assert got == pytest.approx(want)
                if out.ended[i]:
                    assert all(envs[i].terminations.values())
                    live[i] = False


# ---------------------------------------------------------------------- seeds and autoreset


def test_seeded_runs_reproduce():
    def run(seed):
        b = BatchGame("standard+normand", n=32, seed=seed)
        out = b.reset()
        rng = np.random.default_rng(0)
        trace = []
        for _ in range(120):
            out = b.step(sample_legal(out.mask, rng))
            trace.append((out.obs.copy(), out.mask.copy(), out.rewards.copy()))
        return trace

    a, b, c = run(5), run(5), run(6)
    assert all(np.array_equal(x, y) for s, t in zip(a, b) for x, y in zip(s, t))
    assert not all(np.array_equal(s[0], t[0]) for s, t in zip(a, c))


def test_each_game_is_its_seed():
    b = BatchGame("classic", n=8)
    out = b.reset(seed=11)
    enc = encoder_for(b.rules)
    for i in range(8):
        assert b.game_seed(i) == int(game_seed(11, i, 0))
        g = make_game(b.rules, b.game_seed(i))
        assert g.current_player == out.seat[i]
        assert np.array_equal(enc.encode(g, g.current_player), out.obs[i])


def test_autoreset_starts_the_next_episode_in_the_same_step():
    b = BatchGame("standard", n=16, mode="deal", seed=4)
    out = b.reset()
    enc = encoder_for(b.rules)
    rng = np.random.default_rng(4)
    seen_end = 0
    for _ in range(200):
        before = [b.to_game(i) for i in range(16)]
        actions = sample_legal(out.mask, rng)
        out = b.step(actions)
        for k, i in enumerate(out.ended_games.tolist()):
            seen_end += 1
            old = before[i]
            old.apply(int(actions[i]))
            assert old.is_over and tuple(out.results[k]) == old.result
            assert out.ended_seeds[k] == old_seed(old, b, i)
            for p in (0, 1):
                assert np.array_equal(out.final_obs[k, p], enc.encode(old, p))
            assert b.game_seed(i) == int(game_seed(4, i, b.state.episode[i]))
            new = make_game(b.rules, b.game_seed(i), "deal")
            assert np.array_equal(out.obs[i], enc.encode(new, new.current_player))
        if seen_end >= 10:
            break
    assert seen_end >= 10


def old_seed(game: Game, batch: BatchGame, i: int) -> int:
    return int(game_seed(batch.batch_seed, i, batch.state.episode[i] - 1))


def test_without_autoreset_finished_games_wait():
    b = BatchGame("standard+orbis", n=4, mode="deal", autoreset=False, seed=9)
    out = b.reset()
    rng = np.random.default_rng(9)
    while not b.state.over.all():
        actions = sample_legal(out.mask, rng)  # -1 (NO_ACTION) where a game is over
        assert ((actions == NO_ACTION) == b.state.over).all()
        out = b.step(actions)
        assert not out.mask[b.state.over].any() and (out.seat[b.state.over] == -1).all()
    with pytest.raises(BatchActionError, match="over"):
        b.step(np.full(4, NO_ACTION))
    out = b.reset_games([2])
    assert not b.state.over[2] and b.state.over[[0, 1, 3]].all()
    bad = np.full(4, NO_ACTION)
    bad[0] = 0
    with pytest.raises(BatchActionError, match="game 0: action 0 but the game is over"):
        b.step(bad)


# ---------------------------------------------------------------------- one game out, given deals


@pytest.mark.parametrize("preset", ["standard", "classic+normand"])
def test_to_game_replays_the_slot(preset):
    b = BatchGame(preset, n=6, seed=21)
    b.reset()
    out = _random_steps(b, 150, seed=21)
    enc = encoder_for(b.rules)
    for i in range(6):
        g = b.to_game(i)
        assert g.current_player == out.seat[i]
        assert g.legal_actions() == np.flatnonzero(out.mask[i]).tolist()
        assert np.array_equal(enc.encode(g, g.current_player), out.obs[i])
        assert np.array_equal(enc.state(g), b.full_state()[i])
        assert np.array_equal(enc.state(g, 1), b.full_state(seat=1)[i])
        assert b.events(i)[0]["type"] == "partie"
    seats = np.arange(6) % 2
    mixed = b.full_state(np.empty((6, enc.state_size), np.float32), seat=seats)
    for i in range(6):
        assert np.array_equal(enc.state(b.to_game(i), int(seats[i])), mixed[i])
    for bad in (2, -1, True, [0, 1], [[0] * 6]):
        with pytest.raises(ValueError, match="seat must be 0 or 1, or one of them for each of"):
            b.full_state(seat=bad)
        with pytest.raises(ValueError, match="seat must be 0 or 1, or one of them for each of"):
            b.observation(bad)


HOYLE = (
    "AS AH AD AC KS KH KD KC QS QH QD 7C",
    "JS TS 9S JH TH 9H JD TD 9D JC TC 9C",
    "QC 8S 7S 8H 7H 8D 7D 8C",
)


def test_load_plays_given_cards_rules_example_9():
    """RULES.md example 9 (classic maximum): elder 170, younger 0, whatever the play."""
    b = BatchGame("classic", n=3, mode="deal", seed=1)
    b.reset()
    out = b.load([1], [HOYLE], first_elder=1)
    assert out.seat[1] == 1 and b.state.elder[1] == 1
    g = Game(make_rules("classic"), mode="deal", deals=[HOYLE], first_elder=1)
    for card in ("7C", "done", "9S", "done"):
        a = 32 if card == "done" else parse_card(card)
        acts = np.full(3, NO_ACTION)
        acts[1] = a
        out = b.step(acts)
        g.apply(a)
    rng = np.random.default_rng(0)
    enc = encoder_for(b.rules)
    while not g.is_over:
        assert np.array_equal(enc.encode(g, g.current_player), out.obs[1])
        acts = np.full(3, NO_ACTION)
        declare = 33  # always declare: the maximum needs every category
        acts[1] = declare if out.mask[1, declare] else sample_legal(out.mask[1:2], rng)[0]
        out = b.step(acts)
        g.apply(int(acts[1]))
    assert out.ended[1] and out.deal_games.tolist() == [1]
    elder, younger = deal_score(out.deal_scores[0, 1]), deal_score(out.deal_scores[0, 0])
    assert elder.total == 170 and younger.total == 0
    assert elder.repique == 60 and elder.capot == 40
    assert (elder, younger) == (g.deal_scores[0][1], g.deal_scores[0][0])
    assert tuple(out.results[0]) == g.result == (-170, 170)


def test_load_bad_cards_leave_the_batch_untouched():
    b = BatchGame("standard", n=2, seed=1)
    b.reset()
    before = {k: v.copy() for k, v in b.state.arrays().items()}
    with pytest.raises(ValueError, match="twice|both"):
        b.load([0], [("AS AS KS QS JS TS 9S 8S 7S AH KH QH", HOYLE[1], HOYLE[2])])
    with pytest.raises(ValueError):
        b.load([5], [HOYLE])
    assert all(np.array_equal(before[k], v) for k, v in b.state.arrays().items())


def test_load_several_deals_and_card_ids():
    rules = make_rules("standard")
    deals = [[parse_cards(h) for h in HOYLE], HOYLE]
    b = BatchGame(rules, n=2, seed=2)
    b.reset()
    b.load([0], [deals], first_elder=0)
    assert b.state.hands[0, 0] == sum(1 << c for c in parse_cards(HOYLE[0]))
    g = b.to_game(0)
    assert g.hands[0] == b.state.hands[0, 0]


# ---------------------------------------------------------------------- bad input


def test_bad_actions_raise_and_leave_the_batch_untouched():
    b = BatchGame("standard", n=5, seed=8)
    b.reset()
    _random_steps(b, 30, seed=8)
    out_mask = b.action_mask().copy()
    before = {k: v.copy() for k, v in b.state.arrays().items()}
    obs_before = b.observe().copy()
    rng = np.random.default_rng(8)
    good = sample_legal(out_mask, rng)
    with pytest.raises(BatchActionError, match="shape"):
        b.step(good[:4])
    with pytest.raises(BatchActionError, match="integers"):
        b.step(good.astype(np.float32))
    bad = good.copy()
    bad[3] = np.flatnonzero(~out_mask[3])[0]
    with pytest.raises(BatchActionError, match="game 3: illegal action") as info:
        b.step(bad)
    assert info.value.games == [3] and info.value.actions == [bad[3]]
    assert isinstance(info.value, ValueError)
    worse = good.copy()
    worse[[0, 4]] = 99
    with pytest.raises(BatchActionError) as info:
        b.step(worse)
    assert info.value.games == [0, 4]
    assert all(np.array_equal(before[k], v) for k, v in b.state.arrays().items())
    assert np.array_equal(b.observe(), obs_before)
    assert np.array_equal(b.action_mask(), out_mask)
    b.step(good)  # still steps


def test_bad_options():
    with pytest.raises(ValueError, match="mode must be one of"):
        BatchGame(mode="match")
    with pytest.raises(ValueError, match="reward"):
        BatchGame(reward="points")
    with pytest.raises(ValueError, match="reward_scale"):
        BatchGame(reward_scale=0)
    with pytest.raises(ValueError, match="variant"):
        BatchGame("standard+piquet")


def test_memory_of_the_state_is_small():
    b = BatchGame("classic+saison+normand", n=1000)
    assert b.state.nbytes / 1000 < 2 * 1024  # bytes per game (2 GiB for 100,000 games: 21 KiB)
