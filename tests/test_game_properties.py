"""Property tests over many random games under every preset: invariants the rules guarantee."""

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from piquet_env import combinations as combos
from piquet_env.cards import JOKER, SUIT_MASKS, parse_card
from piquet_env.game import (
    Game,
    Phase,
    determinize,
    determinize_hand,
    opponent_known,
    replay,
    to_json,
)
from piquet_env.game import scoring as sc
from piquet_env.rules import all_presets

PRESETS = all_presets()
presets = st.sampled_from(PRESETS)
seeds = st.integers(0, 2**32 - 1)
SETTINGS = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_play(game: Game, rng: random.Random, check=None) -> Game:
    while not game.is_over:
        legal = game.legal_actions()
        assert legal, "the acting player must always have a legal action"
        if check:
            check(game)
        game.apply(rng.choice(legal))
    return game


def random_moves(game: Game, rng: random.Random, steps: int) -> bool:
    """Apply up to ``steps`` random legal actions; False if the game ended before all were made."""
    for _ in range(steps):
        if game.is_over:
            return False
        game.apply(rng.choice(game.legal_actions()))
    return True


def check_cards_accounted(g: Game) -> None:
    places = [
        g.hands[0],
        g.hands[1],
        g.discards[0],
        g.discards[1],
        g.played[0],
        g.played[1],
        sum(1 << c for c in g.talon),
    ]
    union = 0
    for m in places:
        assert union & m == 0, "a card is in two places"
        union |= m
    assert union == g.rules.pack_mask, "a card is missing"
    assert len(set(g.talon)) == len(g.talon)
    if g.phase == Phase.PLAY:
        for p in (0, 1):
            n_played = g.played[p].bit_count()
            assert g.hands[p].bit_count() == g.rules.hand_size - n_played
        assert abs(g.played[0].bit_count() - g.played[1].bit_count()) <= 1


@SETTINGS
@given(presets, seeds)
def test_random_games_keep_every_invariant(rules, seed):
    g = random_play(Game(rules, seed=seed), random.Random(seed), check_cards_accounted)
    assert sum(g.result) == 0
    n_deals = len(g.deal_scores)
    assert n_deals in (rules.deals, rules.deals + 2 * rules.tie_break_deals)
    assert g.totals == [sum(d[p].total for d in g.deal_scores) for p in (0, 1)]
    if n_deals == rules.deals:
        assert g.result == sc.settle(g.totals, rules)


def recount_deal(events: list[dict], rules) -> list[list[int]]:
    """Independently recompute both players' deal scores from one deal's events."""
    totals = [0, 0]
    tricks = [0, 0]
    trick_pts = [0, 0]
    last = rules.hand_size
    for e in events:
        if e["type"] == "score":
            totals[e["player"]] += e["points"]
        elif e["type"] == "trick":
            n = e["number"]
            totals[e["leader"]] += 1  # a point for leading
            w = e["winner"]
            tricks[w] += 1
            if rules.trick_scoring == "standard":
                trick_pts[w] += 2 if n == last else 1
            else:
                trick_pts[w] += (w != e["leader"]) + (n == last)
    for p in (0, 1):
        if tricks[p] == last:
            totals[p] += 40 + (0 if rules.trick_scoring == "standard" else trick_pts[p])
        else:
            totals[p] += trick_pts[p]
            if rules.trick_scoring == "classic" and 2 * tricks[p] > last:
                totals[p] += 10
    return totals


@SETTINGS
@given(presets, seeds)
def test_scores_consistent_with_the_log(rules, seed):
    g = random_play(Game(rules, seed=seed), random.Random(seed + 1))
    deal_events: list[dict] = []
    n = 0
    for e in g.events:
        if e["type"] == "deal":
            deal_events = []
        deal_events.append(e)
        if e["type"] == "deal_end":
            assert recount_deal(deal_events, rules) == [s["total"] for s in e["scores"]]
            n += 1
    assert n == len(g.deal_scores)
    json.loads(to_json(g))  # serializable


@settings(max_examples=300, deadline=None)
@given(presets, seeds)
def test_same_seed_same_game_and_replay(rules, seed):
    a = random_play(Game(rules, seed=seed), random.Random(seed))
    b = random_play(Game(rules, seed=seed), random.Random(seed))
    assert a.events == b.events
    c = replay(to_json(a, agents=["x", "y"]))
    assert c.events[1:] == a.events[1:] or [e for e in c.events if e["type"] != "cut"] == [
        e for e in a.events if e["type"] != "cut"
    ]
    assert c.result == a.result and c.totals == a.totals


def test_replay_detects_a_tampered_log():
    g = random_play(Game(all_presets()[0], seed=1), random.Random(1))
    doc = json.loads(to_json(g))
    for e in doc["events"]:
        if e["type"] == "deal_end":
            e["scores"][0]["total"] += 1
            break
    try:
        replay(doc)
    except ValueError as err:
        assert "replay differs" in str(err)
    else:
        raise AssertionError("a tampered log replayed without complaint")


@settings(max_examples=100, deadline=None)
@given(presets, seeds, st.integers(0, 60))
def test_clone_is_independent(rules, seed, steps):
    rng = random.Random(seed)
    g = Game(rules, seed=seed, mode="deal")
    random_moves(g, rng, steps)
    c = g.clone()
    snapshot = (list(g.hands), list(g.talon), [list(s) for s in g.scores], len(g.events))
    random_play(c, random.Random(seed + 7))
    assert (list(g.hands), list(g.talon), [list(s) for s in g.scores], len(g.events)) == snapshot
    random_play(g, random.Random(seed + 7))
    assert g.events == c.events and g.result == c.result


@settings(max_examples=1000, deadline=None)
@given(presets, seeds, st.integers(0, 60), st.integers(0, 1))
def test_determinize_keeps_what_the_player_knows(rules, seed, steps, who):
    rng = random.Random(seed)
    g = Game(rules, seed=seed, mode="deal")
    if not random_moves(g, rng, steps):
        return
    p, o = who, 1 - who
    d = determinize(g, p, random.Random(seed))
    check_cards_accounted(d)
    assert d.hands[p] == g.hands[p] and d.discards[p] == g.discards[p]
    assert d.played == g.played and d.trick == g.trick and d.scores == g.scores
    assert d.hands[o].bit_count() == g.hands[o].bit_count()
    assert d.discards[o].bit_count() == g.discards[o].bit_count()
    assert len(d.talon) == len(g.talon)
    known = opponent_known(g, p)
    assert d.hands[o] & known == known
    for i, c in enumerate(g.talon):
        if g.seen_talon[p] >> c & 1:
            assert d.talon[i] == c
    for s in range(4):
        if g.voids[o] >> s & 1:
            assert d.hands[o] & SUIT_MASKS[s] == 0
    assert d.legal_actions() == g.legal_actions() or d.current_player != p
    if g.current_player == p:
        assert d.legal_actions() == g.legal_actions()
    assert not d.events and d.record is False
    random_play(d, random.Random(seed))  # the sample is a playable game


@settings(max_examples=300, deadline=None)
@given(presets, seeds, st.integers(0, 60), st.integers(0, 1))
def test_determinize_hand_is_the_hand_determinize_deals(rules, seed, steps, who):
    """The hand-only sampler draws as :func:`determinize` does: the same opponent's hand, and
    the generator left in the same state (so a caller may use either)."""
    rng = random.Random(seed)
    g = Game(rules, seed=seed, mode="deal")
    if not random_moves(g, rng, steps):
        return
    a, b = random.Random(seed + 3), random.Random(seed + 3)
    for _ in range(3):
        assert determinize_hand(g, who, a) == determinize(g, who, b).hands[1 - who]
    assert a.getstate() == b.getstate()


def test_determinize_respects_declared_bests():
    # younger declared a point of 8 spades: every sample keeps all eight spades in his hand
    from tests.scenarios import act, deal

    g = deal(
        PRESETS[0],
        "AD KD QD JD AC KC QC JC 7H 8H 9H TH",
        "AS KS QS JS TS 9S 8S 7S AH KH QH JH",
        "7D 8D 9D TD 7C 8C 9C TC",
    )
    act(g, "7H", "done", "done", "declare", "declare")
    rng = random.Random(0)
    for _ in range(20):
        d = determinize(g, 0, rng)
        assert combos.best(combos.POINT, d.hands[1]).key == g.declared[0][1].key
        assert d.hands[1] & SUIT_MASKS[3] == SUIT_MASKS[3]


def test_joker_never_counts_as_void_card():
    assert parse_card("JK") == JOKER


@settings(max_examples=200, deadline=None)
@given(presets, seeds, st.integers(0, 60))
def test_determinize_does_not_depend_on_where_hidden_cards_are(rules, seed, steps):
    """Two games that differ only in cards hidden from the player give the same samples for the
    same random seed: a sample reveals nothing of the true deal."""
    rng = random.Random(seed)
    g = Game(rules, seed=seed, mode="deal")
    if not random_moves(g, rng, steps):
        return
    p = g.current_player if g.current_player >= 0 else 0
    other = determinize(g, p, random.Random(seed + 1))
    a = determinize(g, p, random.Random(5))
    b = determinize(other, p, random.Random(5))
    assert (a.hands, a.discards, a.talon) == (b.hands, b.discards, b.talon)


def test_clone_continues_the_same_future_deals():
    g = Game(all_presets()[0], seed=4)
    c = g.clone()
    random_play(g, random.Random(1))
    random_play(c, random.Random(1))
    assert g.events == c.events


def test_bench_engine_cli_prints_numbers(capsys):
    """`piquet bench engine` runs and prints decisions/s (the figure itself is not judged)."""
    from piquet_cli import main

    assert (
        main(["bench", "engine", "--seconds", "0.2", "--rules", "classic", "--variant", "normand"])
        == 0
    )
    out = capsys.readouterr().out
    assert "engine (classic+normand, event log on):" in out and "decisions/s" in out
