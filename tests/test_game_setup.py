"""Setting a game up: bad arguments and bad deals get a clear error; clone() copies every slot;
the engine's vocabulary (phase and score-field names) and its totals bound."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from piquet_env.game import PHASE_NAMES, SCORE_FIELD_NAMES, Game, Phase, check_deal, max_start_total
from piquet_env.game import scoring as sc
from piquet_env.observation import encoder_for
from piquet_env.rules import CLASSIC, STANDARD, all_presets, make_rules

ELDER = "AS KS QS JS TS 9S 8S 7S AH KH QH JH"
YOUNGER = "AD KD QD JD AC KC QC JC 7H 8H 9H TH"
TALON = "7D 8D 9D TD 7C 8C 9C TC"
IDS = (list(range(12)), list(range(12, 24)), list(range(24, 32)))


def _with(part: int, value: object) -> tuple:
    """The id deal with ``IDS[part][0]`` replaced by ``value``."""
    parts = [list(p) for p in IDS]
    parts[part][0] = value
    return tuple(parts)


# ---------------------------------------------------------------------------- check_deal


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        (_with(0, 0.5), r"elder hand: card id 0\.5 \(float\) is not an integer"),
        (_with(0, 1.0), r"elder hand: card id 1\.0 \(float\) is not an integer"),
        (_with(1, "12"), r"younger hand: card id '12' \(str\) is not an integer"),
        (_with(2, True), r"talon: card id True is a bool"),
        (_with(2, None), r"talon: card id None \(NoneType\) is not an integer"),
        (_with(0, [0]), r"elder hand: card id \[0\] \(list\) is not an integer"),
        (_with(0, -1), r"elder hand: card -1 is not in the 32-card pack"),
        (_with(0, 32), r"elder hand: card 32 is not in the 32-card pack"),
        ((5, YOUNGER, TALON), r"elder hand must be a string of card names .* got 5 \(int\)"),
        ((ELDER, b"AD KD", TALON), r"younger hand must be a string .* \(bytes\)"),
        ((ELDER, YOUNGER, {"7D": 1}), r"talon must be a string .* \(dict\)"),
        ((ELDER, YOUNGER), r"a deal is three parts .* got \("),
        ((ELDER, YOUNGER, TALON, TALON), r"a deal is three parts"),
        (ELDER, r"a deal is three parts .* \(str\)"),
        (5, r"a deal is three parts .* got 5 \(int\)"),
        ((ELDER, YOUNGER, "7D 8D 9D TD 7C 8C 9C ZZ"), r"talon: malformed card 'ZZ'"),
    ],
)
def test_check_deal_names_the_bad_part_and_value(cards, message):
    with pytest.raises(ValueError, match=message):
        check_deal(cards, STANDARD)


def test_check_deal_accepts_names_ids_and_numpy_ids():
    by_name = check_deal((ELDER, YOUNGER, TALON), STANDARD)
    by_ids = check_deal(tuple(list(p) for p in by_name), STANDARD)
    by_numpy = check_deal(tuple(np.array(p, dtype=np.int64) for p in by_name), STANDARD)
    assert by_name == by_ids == by_numpy
    assert all(type(c) is int for part in by_numpy for c in part)


def test_a_deal_option_with_an_int_for_a_hand_is_a_clear_error():
    # `reset(options={"deal": {"elder": 5, ...}})` reached "'int' object is not iterable"
    with pytest.raises(ValueError, match=r"deals\[0\]: elder hand must be a string"):
        Game(STANDARD, deals=[(5, YOUNGER, TALON)])


# ---------------------------------------------------------------------------- Game arguments


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seed": 1.5}, r"seed must be an int, got 1\.5 \(float\)"),
        ({"seed": "7"}, r"seed must be an int, got '7' \(str\)"),
        ({"seed": True}, r"seed must be an int, got True"),
        ({"mode": "tournament"}, r"mode must be one of \('partie', 'deal'\), got 'tournament'"),
        ({"mode": ["deal"]}, r"mode must be one of .* \(list\)"),
        ({"first_elder": 2}, r"first_elder must be 0, 1 or None, got 2"),
        ({"first_elder": True}, r"first_elder must be an int, got True"),
        ({"first_elder": 0.0}, r"first_elder must be an int, got 0\.0"),
        ({"deal_number": 6}, r"deal_number must be in 0\.\.5, got 6"),
        ({"deal_number": -1}, r"deal_number must be in 0\.\.5, got -1"),
        ({"deal_number": 0.5}, r"deal_number must be an int, got 0\.5"),
        ({"totals": (70000, 0)}, r"totals\[0\] must be in 0\.\.3500 .* got 70000"),
        ({"totals": (0, 3501)}, r"totals\[1\] must be in 0\.\.3500 .* got 3501"),
        ({"totals": (-1, 0)}, r"totals\[0\] must be in 0\.\.3500 .* got -1"),
        ({"totals": (1.5, 0)}, r"totals\[0\] must be an int, got 1\.5 \(float\)"),
        ({"totals": ("80", 0)}, r"totals\[0\] must be an int, got '80' \(str\)"),
        ({"totals": (0, None)}, r"totals\[1\] must be an int, got None"),
        ({"totals": (1, 2, 3)}, r"totals must be two ints .* got \(1, 2, 3\)"),
        ({"totals": "ab"}, r"totals must be two ints .* \(str\)"),
        ({"totals": 100}, r"totals must be two ints .* got 100 \(int\)"),
        ({"deals": 5}, r"deals must be a sequence of deals, got 5 \(int\)"),
        ({"deals": "AS KS"}, r"deals must be a sequence of deals, got 'AS KS' \(str\)"),
        ({"record": 1}, r"record must be True or False, got 1 \(int\)"),
        ({"record": "no"}, r"record must be True or False, got 'no'"),
    ],
)
def test_bad_game_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Game(STANDARD, **kwargs)


def test_rules_that_are_not_rules_are_a_type_error():
    with pytest.raises(TypeError, match="rules must be a Rules object"):
        Game("standard")  # type: ignore[arg-type]


def test_start_total_limit_by_hand():
    # 5000 less 250 a deal for each deal left: 6 deals (standard), 6 + 2 tie-break (classic),
    # 12 + 2 (classic+saison); from deal 5 of 6 only 1 (+2) deals are left.
    assert max_start_total(STANDARD) == 5000 - 6 * 250 == 3500
    assert max_start_total(CLASSIC) == 5000 - 8 * 250 == 3000
    assert max_start_total(make_rules("classic+saison")) == 5000 - 14 * 250 == 1500
    assert max_start_total(STANDARD, 5) == 5000 - 250 == 4750
    assert max_start_total(CLASSIC, 5) == 5000 - 3 * 250 == 4250
    Game(STANDARD, deal_number=5, totals=(4750, 4750))
    with pytest.raises(ValueError, match=r"totals\[0\] must be in 0\.\.4250"):
        Game(CLASSIC, deal_number=5, totals=(4251, 0))


def test_numpy_ints_are_accepted_as_ints():
    g = Game(STANDARD, seed=np.int64(3), first_elder=np.int8(1), totals=np.array([10, 20]))
    assert g.elder == 1 and g.totals == [10, 20] and type(g.totals[0]) is int


def test_the_observation_can_show_the_largest_total():
    # The encoder's Box bound on partie totals must hold every total the engine allows.
    enc = encoder_for(STANDARD)
    g = Game(STANDARD, seed=0, totals=(1000, 0))
    obs = enc.encode(g, 0)
    cols = enc.field("partie_totals")
    per_point = obs[cols][0] / 1000
    assert per_point > 0
    assert enc.high[cols][0] / per_point >= sc.MAX_TOTAL - 1e-3


@pytest.mark.parametrize("rules", all_presets(), ids=lambda r: r.name)
def test_games_started_at_the_largest_totals_stay_inside_the_box(rules):
    enc = encoder_for(rules)
    top = max_start_total(rules)
    rng = random.Random(rules.name)
    g = Game(rules, seed=1, totals=(top, top))
    while not g.is_over:
        for p in (0, 1):
            obs = enc.encode(g, p)
            assert (obs >= 0).all() and (obs <= enc.high).all()
        g.apply(rng.choice(g.legal_actions()))
    assert max(g.totals) <= sc.MAX_TOTAL


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(all_presets()), st.integers(0, 2**32 - 1))
def test_no_deal_scores_more_than_the_deal_bound(rules, seed):
    rng = random.Random(seed)
    g = Game(rules, seed=seed, mode="deal")
    while not g.is_over:
        g.apply(rng.choice(g.legal_actions()))
    assert all(ds[p].total <= sc.MAX_DEAL_POINTS for ds in g.deal_scores for p in (0, 1))


# ---------------------------------------------------------------------------- vocabulary


def test_phase_and_score_field_names():
    assert [PHASE_NAMES[p] for p in Phase] == ["exchange", "declarations", "play", "over"]
    assert SCORE_FIELD_NAMES[sc.CARTE_BLANCHE] == "carte blanche"
    assert SCORE_FIELD_NAMES[sc.PIQUE] == "pique" and SCORE_FIELD_NAMES[sc.CARDS] == "cards"
    assert len(SCORE_FIELD_NAMES) == sc.N_SCORE_FIELDS == 10
    assert sc.DEAL_SCORE_FIELDS == (
        "carte_blanche",
        "point",
        "sequence",
        "set",
        "play",
        "repique",
        "pique",
        "capot",
        "cards",
    )
    assert list(sc.DealScore(point=4, play=7).to_dict()) == [*sc.DEAL_SCORE_FIELDS, "total"]


def test_score_events_use_the_score_field_names():
    g = Game(CLASSIC, seed=3)
    rng = random.Random(3)
    while not g.is_over:
        g.apply(rng.choice(g.legal_actions()))
    labels = {e["category"] for e in g.events if e["type"] == "score"}
    assert labels and labels <= set(SCORE_FIELD_NAMES)


# ---------------------------------------------------------------------------- clone


_MUTABLE = (list, dict, set, bytearray)


def _shared(a: object, b: object, depth: int = 2) -> bool:
    """Whether ``a`` and ``b`` share a mutable object within ``depth`` levels."""
    if isinstance(a, _MUTABLE) and a is b:
        return True
    if depth <= 1 or not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)):
        return False
    return any(_shared(x, y, depth - 1) for x, y in zip(a, b))


def _slot_names() -> list[str]:
    names: list[str] = []
    for klass in Game.__mro__:
        names.extend(getattr(klass, "__slots__", ()))
    return names


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(all_presets()), st.integers(0, 2**32 - 1), st.integers(0, 120))
def test_clone_copies_every_slot(rules, seed, steps):
    rng = random.Random(seed)
    g = Game(rules, seed=seed)
    for _ in range(steps):
        if g.is_over:
            break
        g.apply(rng.choice(g.legal_actions()))
    c = g.clone()
    assert not hasattr(g, "__dict__"), "Game must keep __slots__ (clone copies slots)"
    for name in _slot_names():
        assert hasattr(c, name), f"clone() does not set slot {name!r}"
        mine, theirs = getattr(g, name), getattr(c, name)
        if name in ("_rng", "_rng_state"):
            continue  # compared through the random stream below
        assert mine == theirs, f"clone() changed slot {name!r}"
        if name != "events":  # logged events are never changed once appended
            assert not _shared(mine, theirs), f"clone() shares the mutable slot {name!r}"
        else:
            assert mine is not theirs
    assert g._random().getstate() == c._random().getstate()
    assert g._random().random() == c._random().random()


def test_a_deep_copy_of_a_game_is_its_clone_and_shares_only_the_rules():
    """``copy.deepcopy`` (as OpenSpiel's ``child`` copies a state holding a game) is
    :meth:`Game.clone`: equal, independent, the same future; the frozen rules are shared."""
    import copy

    g = Game(STANDARD, seed=5)
    rng = random.Random(5)
    for _ in range(30):
        g.apply(rng.choice(g.legal_actions()))
    c = copy.deepcopy({"game": g})["game"]
    assert c.rules is g.rules and copy.copy(g.rules) is g.rules
    for name in _slot_names():
        if name not in ("_rng", "_rng_state"):
            assert getattr(c, name) == getattr(g, name), name
    c.apply(c.legal_actions()[0])
    assert c.deal_moves != g.deal_moves  # independent
    assert g._random().random() == c._random().random()


# ---------------------------------------------------------------------------- fuzzing

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=40)
    | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=14) | st.tuples(inner, inner, inner),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_check_deal_answers_anything_with_a_deal_or_a_value_error(cards):
    try:
        parts = check_deal(cards, STANDARD)
    except ValueError:
        return
    assert [len(p) for p in parts] == [12, 12, 8]
    assert sorted(c for p in parts for c in p) == list(range(32))


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["seed", "mode", "first_elder", "deal_number", "totals", "deals", "record"]),
    _values,
)
def test_game_answers_any_argument_with_a_game_or_a_value_error(name, value):
    try:
        g = Game(STANDARD, **{name: value})
    except ValueError:
        return
    assert g.legal_actions() and 0 <= max(g.totals) <= max_start_total(STANDARD)
