"""The observation encoder: layout, hand-worked values, the mask, the full state, and no leaks."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from piquet_env import combinations as combos
from piquet_env.cards import cards_of, parse_card, parse_mask
from piquet_env.game import Game, Phase, determinize
from piquet_env.game.knowledge import opponent_known, opponent_unplaced
from piquet_env.observation import OBS_VERSION, ObservationEncoder, encoder_for, field_table
from piquet_env.rules import STANDARD, all_presets, make_rules

PRESETS = all_presets()

# Example 2 of RULES.md: elder holds a huitième in spades and a quart in hearts.
ELDER = "AS KS QS JS TS 9S 8S 7S AH KH QH JH"
YOUNGER = "AD KD QD JD AC KC QC JC 7H 8H 9H TH"
TALON = "7D 8D 9D TD 7C 8C 9C TC"


def random_states(rules, seed: int, n_games: int = 1):
    """Every decision state of ``n_games`` random games (clones), for checking invariants."""
    rng = random.Random(seed)
    for _ in range(n_games):
        g = Game(rules, seed=rng.getrandbits(32), record=False)
        while not g.is_over:
            yield g
            g.apply(rng.choice(g.legal_actions()))
        yield g


def test_layout_is_contiguous_and_documented():
    for rules in PRESETS:
        enc = encoder_for(rules)
        assert enc is encoder_for(rules)
        stop = 0
        for name, a, b, desc in enc.fields:
            assert a == stop and b > a and desc and name
            stop = b
        assert stop == enc.size
        assert enc.n_actions == rules.n_cards + 3
        stop = 0
        for _, a, b, _ in enc.state_fields:
            assert a == stop
            stop = b
        assert stop == enc.state_size
    assert OBS_VERSION >= 1
    assert encoder_for(STANDARD).size == 433
    assert encoder_for(make_rules("standard", ["normand"])).size == 442
    assert "talon_left" in field_table()


def test_bad_rules_and_field_name():
    with pytest.raises(TypeError, match="Rules"):
        ObservationEncoder("standard")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="no observation field"):
        encoder_for(STANDARD).field("nonsense")


def test_hand_worked_start_of_deal():
    g = Game(STANDARD, deals=[(ELDER, YOUNGER, TALON)], first_elder=1)
    enc = encoder_for(STANDARD)
    obs = enc.encode(g, 1)  # elder, to act in the exchange
    f = enc.field
    assert obs.dtype == np.float32 and obs.shape == (433,)
    assert sorted(np.flatnonzero(obs[f("hand")])) == cards_of(parse_mask(ELDER))
    assert obs[f("elder")].tolist() == [1.0]
    assert obs[f("phase")].tolist() == [1, 0, 0, 0]
    assert obs[f("to_act")].tolist() == [1.0]
    assert obs[f("deals_left")].tolist() == [1.0]  # 6 of 6
    assert obs[f("talon_left")].tolist() == [1.0]  # 8 of 8
    assert obs[f("pique_possible")].tolist() == [1, 0]
    assert obs[f("repique_possible")].tolist() == [1, 1]
    assert obs[f("capot_possible")].tolist() == [1, 1]
    assert not obs[f("opp_known")].any() and not obs[f("talon_seen")].any()
    younger = enc.encode(g, 0)
    assert younger[f("elder")].tolist() == [0.0]
    assert younger[f("to_act")].tolist() == [0.0]
    assert younger[f("pique_possible")].tolist() == [0, 1]
    assert enc.action_mask(g, 0).sum() == 0
    mask = enc.action_mask(g, 1)
    assert mask.dtype == np.int8 and mask.shape == (35,)
    assert np.flatnonzero(mask).tolist() == cards_of(parse_mask(ELDER))


def test_hand_worked_exchange_and_declarations():
    g = Game(STANDARD, deals=[(ELDER, YOUNGER, TALON)], first_elder=0)
    enc = encoder_for(STANDARD)
    f = enc.field
    # Elder discards 7S and 8S only, takes 7D 8D and looks at 9D TD 7C.
    g.apply(parse_card("7S"))
    g.apply(parse_card("8S"))
    obs = enc.encode(g, 0)
    assert obs[f("discarding")].tolist() == [pytest.approx(2 / 5)]
    g.apply(g.rules.n_cards)  # done
    obs = enc.encode(g, 0)
    assert sorted(np.flatnonzero(obs[f("talon_seen")])) == cards_of(parse_mask("9D TD 7C"))
    assert sorted(np.flatnonzero(obs[f("discards")])) == cards_of(parse_mask("7S 8S"))
    assert obs[f("exchanged")].tolist() == [pytest.approx(2 / 5), 0.0]
    assert obs[f("talon_left")].tolist() == [pytest.approx(6 / 8)]
    # Younger discards 7H, takes 9D, which elder saw: elder now knows younger holds it.
    g.apply(parse_card("7H"))
    g.apply(g.rules.n_cards)
    assert g.phase == Phase.DECLARE
    obs = enc.encode(g, 0)
    assert np.flatnonzero(obs[f("opp_known")]).tolist() == [parse_card("9D")]
    assert obs[f("phase")].tolist() == [0, 1, 0, 0]
    assert obs[f("category")].tolist() == [1, 0, 0]
    # Younger's own view does not reveal elder's discards or what elder saw.
    yobs = enc.encode(g, 1)
    assert not yobs[f("talon_seen")].any() and not yobs[f("opp_known")].any()
    # Elder declares point: A K Q J T 9 of spades, six cards worth 60. Younger (five diamonds)
    # cannot match it: his pass is automatic, elder scores 6 and decides the sequence next.
    g.apply(g.rules.n_cards + 1)
    assert g.category == combos.SEQUENCE and g.current_player == 0
    yobs = enc.encode(g, 1)
    # decided, declared, length 6 (bit 2 + 5), suit spades (bit 10 + 3)
    assert np.flatnonzero(yobs[f("decl_point_opp")]).tolist() == [0, 1, 7, 13]
    assert np.flatnonzero(yobs[f("decl_point_me")]).tolist() == [0]  # passed
    assert yobs[f("decl_point_value")].tolist() == [0.0, pytest.approx(60 / 100)]
    assert sorted(np.flatnonzero(yobs[f("opp_shown")])) == cards_of(parse_mask("AS KS QS JS TS 9S"))
    assert yobs[f("to_act")].tolist() == [0.0]
    assert yobs[f("deal_points_opp")][1] == pytest.approx(6 / 100)
    assert yobs[f("repique_possible")].tolist() == [0, 1]  # younger cannot; elder still can
    obs = enc.encode(g, 0)
    assert obs[f("category")].tolist() == [0, 1, 0]
    assert obs[f("deal_total")].tolist() == [pytest.approx(0.06), 0.0]


def test_hand_worked_repique_capot_and_play():
    """RULES.md example 2 under orbis: elder's point (8) and sequences (18 + 4) make a repique."""
    rules = make_rules("standard", ["orbis"])
    g = Game(rules, deals=[(ELDER, YOUNGER, TALON)], first_elder=0)
    enc = encoder_for(rules)
    f = enc.field
    assert g.phase == Phase.DECLARE and g.current_player == 0
    obs = enc.encode(g, 0)
    assert obs[f("talon_left")].tolist() == [len(g.talon) / 8]  # set aside, unseen
    g.apply(rules.n_cards + 1)  # declare point of eight, younger passes automatically
    g.apply(rules.n_cards + 1)  # declare the huitième; the sets are passed automatically
    assert g.phase == Phase.PLAY
    obs = enc.encode(g, 0)
    assert obs[f("phase")].tolist() == [0, 0, 1, 0]
    assert obs[f("repique_possible")].tolist() == [0, 0]
    assert obs[f("pique_possible")].tolist() == [0, 0]  # a repique closes the pique
    assert obs[f("deal_points_me")].tolist()[:4] == [0, pytest.approx(0.08), pytest.approx(0.22), 0]
    assert obs[f("deal_points_me")][6] == pytest.approx(0.60)
    assert obs[f("leader")].tolist() == [1.0]
    seq = np.flatnonzero(enc.encode(g, 1)[f("decl_sequence_opp")]).tolist()
    assert seq == [0, 1, 2 + 5, 8 + 7, 16 + 3]  # huitième (length 8) to the ace of spades
    g.apply(parse_card("AS"))  # elder leads
    yobs = enc.encode(g, 1)
    assert np.flatnonzero(yobs[f("trick")]).tolist() == [parse_card("AS")]
    assert yobs[f("leader")].tolist() == [0.0]
    g.apply(parse_card("TH"))  # younger has no spade
    obs = enc.encode(g, 0)
    assert obs[f("opp_voids")].tolist() == [0, 0, 0, 1]
    assert obs[f("tricks_won")].tolist() == [pytest.approx(1 / 12), 0.0]
    assert obs[f("capot_possible")].tolist() == [1, 0]
    assert not obs[f("trick")].any()
    assert np.flatnonzero(obs[f("opp_played")]).tolist() == [parse_card("TH")]


def test_mask_marks_exactly_the_legal_actions():
    for rules in PRESETS:
        enc = encoder_for(rules)
        for g in random_states(rules, seed=3):
            for p in (0, 1):
                mask = enc.action_mask(g, p)
                assert mask.dtype == np.int8
                want = g.legal_actions() if p == g.current_player else []
                assert np.flatnonzero(mask).tolist() == want


def test_values_are_finite_and_bits_binary():
    for rules in PRESETS:
        enc = encoder_for(rules)
        for g in random_states(rules, seed=5):
            for p in (0, 1):
                obs = enc.encode(g, p)
                assert np.isfinite(obs).all()
                assert set(np.unique(obs[: enc.n_bits])) <= {0.0, 1.0}
                assert obs[enc.field("hand")].sum() == g.hands[p].bit_count()
                assert obs[enc.n_bits :].min() >= 0.0


def _shuffle_hidden(game: Game, player: int, rng: random.Random) -> Game:
    """A copy of ``game`` whose cards hidden from ``player`` are permuted uniformly at random among
    the hidden places (the opponent's unknown hand cards, his discards, the unseen talon slots;
    a carte blanche card the player knows to be in the opponent's hand or discards stays out of
    the talon), with the engine's derived fields (best combinations, what the opponent saw)
    remapped."""
    o = 1 - player
    g = game.clone()
    hand_slots = game.hands[o] & ~opponent_known(game, player)
    talon_slots = [i for i, c in enumerate(game.talon) if not game.seen_talon[player] >> c & 1]
    pool = cards_of(hand_slots) + cards_of(game.discards[o]) + [game.talon[i] for i in talon_slots]
    unplaced = opponent_unplaced(game, player)
    new = list(pool)
    while True:
        rng.shuffle(new)
        if not any(unplaced >> c & 1 for c in new[len(pool) - len(talon_slots) :]):
            break
    mapping = dict(zip(pool, new))

    def remap(mask: int) -> int:
        return sum(1 << mapping.get(c, c) for c in cards_of(mask))

    for name in ("hands", "discards", "seen_talon", "dealt"):
        getattr(g, name)[o] = remap(getattr(game, name)[o])
    g.talon = [mapping.get(c, c) for c in game.talon]
    if g.phase != Phase.EXCHANGE:
        post = g.hands[o] | g.played[o]
        g.best[o] = [combos.best(cat, post) for cat in combos.CATEGORIES]
    return g


def test_no_leak_under_shuffles_of_hidden_cards():
    """The acting player's observation and mask do not change when the cards he cannot see are
    permuted among the hidden places (and the opponent's observation does change sometimes, so the
    shuffle is not a no-op)."""
    rng = random.Random(11)
    changed = 0
    for rules in PRESETS:
        enc = encoder_for(rules)
        for g in random_states(rules, seed=rng.getrandbits(32)):
            if g.is_over:
                continue
            p = g.current_player
            other = _shuffle_hidden(g, p, rng)
            np.testing.assert_array_equal(enc.encode(g, p), enc.encode(other, p))
            np.testing.assert_array_equal(enc.action_mask(g, p), enc.action_mask(other, p))
            if not np.array_equal(enc.state(g), enc.state(other)):
                changed += 1
    assert changed > 100


def test_no_leak_under_engine_determinize():
    rng = random.Random(12)
    for rules in (STANDARD, make_rules("standard", ["normand"]), make_rules("classic")):
        enc = encoder_for(rules)
        for g in random_states(rules, seed=rng.getrandbits(32)):
            if g.is_over:
                continue
            p = g.current_player
            other = determinize(g, p, rng)
            np.testing.assert_array_equal(enc.encode(g, p), enc.encode(other, p))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), preset=st.sampled_from(PRESETS))
def test_state_holds_both_hands_and_the_talon(seed, preset):
    enc = encoder_for(preset)
    rng = random.Random(seed)
    g = Game(preset, seed=seed, record=False)
    for _ in range(rng.randrange(60)):
        if g.is_over:
            break
        g.apply(rng.choice(g.legal_actions()))
    s = enc.state(g)
    assert s.shape == (enc.state_size,) and s.dtype == np.float32
    np.testing.assert_array_equal(s[: enc.size], enc.encode(g, 0))
    np.testing.assert_array_equal(s[enc.size : 2 * enc.size], enc.encode(g, 1))
    fields = {name: slice(a, b) for name, a, b, _ in enc.state_fields}
    for p in (0, 1):
        assert np.flatnonzero(s[fields[f"hand_{p}"]]).tolist() == cards_of(g.hands[p])
        assert np.flatnonzero(s[fields[f"discards_{p}"]]).tolist() == cards_of(g.discards[p])
    assert np.flatnonzero(s[fields["talon"]]).tolist() == sorted(g.talon)
    order = s[fields["talon_order"]]
    assert [c for _, c in sorted((order[c], c) for c in g.talon)] == g.talon
    cp = s[fields["current_player"]].tolist()
    assert cp == (
        [0.0, 0.0] if g.is_over else [float(g.current_player == 0), float(g.current_player == 1)]
    )


def _repique_reference(g: Game, x: int) -> bool:
    """The definition of the repique flag, written plainly: credit ``x`` with 30 in every
    unsettled category he has not passed, then ask the engine's repique rule."""
    from piquet_env.game import scoring as sc

    step = g.decl_step if g.phase == Phase.DECLARE else 0
    hypo = [list(g.scores[0]), list(g.scores[1])]
    for cat in range(step >> 1, 3):
        if g.decided[cat][x] and g.declared[cat][x] is None:
            continue
        hypo[x][(sc.POINT, sc.SEQUENCE, sc.SET)[cat]] += sc.THRESHOLD
    return sc.repique_player(hypo, g.rules) == x


def test_bonus_flags_are_sound_and_match_their_definition():
    """repique/pique/capot "possible" flags: equal to their plain definitions, and never 0 at a
    point of a deal before that bonus is in fact made."""
    made = {"repique": 0, "pique": 0, "capot": 0}
    for rules in PRESETS:
        enc = encoder_for(rules)
        rng = random.Random(rules.name)
        for _ in range(6):
            g = Game(rules, seed=rng.getrandbits(32), record=False)
            history: list[tuple[int, np.ndarray, np.ndarray]] = []
            while not g.is_over:
                n_deals = len(g.deal_scores)
                if g.phase != Phase.OVER:
                    views = [enc.encode(g, p) for p in (0, 1)]
                    history.append((g.elder, views[0], views[1]))
                    for p in (0, 1):
                        rep = views[p][enc.field("repique_possible")].tolist()
                        if g.phase in (Phase.EXCHANGE, Phase.DECLARE):
                            assert rep == [
                                float(_repique_reference(g, p)),
                                float(_repique_reference(g, 1 - p)),
                            ]
                        else:
                            assert rep == [0.0, 0.0]
                g.apply(rng.choice(g.legal_actions()))
                if len(g.deal_scores) > n_deals:
                    scores = g.deal_scores[-1]
                    for p in (0, 1):
                        for bonus, field in (
                            ("repique", "repique_possible"),
                            ("pique", "pique_possible"),
                            ("capot", "capot_possible"),
                        ):
                            if getattr(scores[p], bonus):
                                made[bonus] += 1
                                for _, *views in history:
                                    before = views[p][enc.field(field)]
                                    if bonus == "repique" and views[p][enc.field("phase")][2]:
                                        continue  # decided at the start of play
                                    if (
                                        bonus == "pique"
                                        and views[p][enc.field("deal_points_me")][7]
                                    ):
                                        continue  # already made
                                    assert before[0] == 1.0, (bonus, rules.name)
                    history = []
    assert made["repique"] and made["capot"] and made["pique"]


def test_observations_stay_within_the_declared_bounds():
    for rules in PRESETS:
        enc = encoder_for(rules)
        assert enc.high.shape == (enc.size,)
        for g in random_states(rules, seed=8):
            for p in (0, 1):
                obs = enc.encode(g, p)
                assert (obs <= enc.high).all() and (obs >= 0).all()


def test_packed_planes_equal_the_generic_bit_layout():
    """The 32-card fast path (struct-packed planes) writes exactly what the generic path does."""
    for rules in (STANDARD, make_rules("classic", ["orbis", "saison"])):
        fast = ObservationEncoder(rules)
        generic = ObservationEncoder(rules)
        generic._pack_planes = None
        assert fast._pack_planes is not None
        for g in random_states(rules, seed=21):
            for p in (0, 1):
                assert fast._bit_bytes(g, p) == generic._bit_bytes(g, p)
                np.testing.assert_array_equal(fast.encode(g, p), generic.encode(g, p))


def test_no_leak_of_which_carte_blanche_cards_were_discarded():
    """Elder saw younger's carte blanche; younger then exchanged face down. Elder's observation must
    not tell whether the AS went to the discards or stayed in hand."""
    from piquet_env.cards import parse_card
    from piquet_env.rules import CLASSIC

    def after_exchange(younger_discard: str) -> Game:
        g = Game(
            CLASSIC,
            first_elder=0,
            deals=[
                (
                    "KS QS JS KH QH JH KD QD JD KC QC JC",
                    "AS TS 9S 8S 7S AH TH 9H 8H 7H AD TD",
                    "AC TC 9C 8C 7C 9D 8D 7D",
                )
            ],
        )
        for name in ("KS", "QS", "JS", "KH", "QH", younger_discard):
            g.apply(parse_card(name))
        g.apply(CLASSIC.n_cards)
        return g

    enc = encoder_for(CLASSIC)
    a, b = after_exchange("AS"), after_exchange("7S")
    assert a.hands[1] != b.hands[1]
    np.testing.assert_array_equal(enc.encode(a, 0), enc.encode(b, 0))


# ---------------------------------------------------------------------------- one encoder


def test_the_layout_is_data_and_every_field_has_its_one_writer():
    """Field names are unique; each card plane and each scaled field has exactly one value
    expression, and the flags' bits come from the field positions (moving a field moves its
    bits)."""
    from piquet_env import observation as ob

    for rules in (STANDARD, make_rules("classic", ["normand"])):
        layout = ob.observation_layout(rules)
        names = [f.name for f in layout]
        assert len(names) == len(set(names))
        planes = [f.name for f in layout if not f.scale and f.width == rules.n_cards]
        assert planes == list(ob._PLANE_VALUES)
        assert [f.name for f in layout if f.scale] == list(ob._SCALAR_VALUES)
        enc = encoder_for(rules)
        assert [(name, b - a) for name, a, b, _ in enc.fields] == [
            (f.name, f.width) for f in layout
        ]
        flag0 = enc.field("own_voids").start
        assert enc._flag.elder == 1 << (enc.field("elder").start - flag0)
        assert enc._flag.last_deal == 1 << (enc.field("last_deal").start - flag0)
        assert enc._flag.phase[2] == 1 << (enc.field("phase").start - flag0 + 2)


def test_views_write_through_and_masks_are_built_one_way():
    g = Game(STANDARD, deals=[(ELDER, YOUNGER, TALON)], first_elder=0)
    enc = encoder_for(STANDARD)
    obs = enc.encode(g, 0)
    enc.view(obs, "elder")[:] = 0.0
    assert obs[enc.field("elder")].tolist() == [0.0]
    legal = g.legal_actions()
    np.testing.assert_array_equal(enc.action_mask(g, 0, legal), enc.action_mask(g, 0))
    out = np.full(enc.n_actions, 7, np.int8)
    enc.action_mask_into(g, 0, out)
    np.testing.assert_array_equal(out, enc.action_mask(g, 0))
    enc.action_mask_into(g, 1, out)
    assert not out.any()


def test_the_state_seen_from_player_1_swaps_the_players():
    """Hand-worked: elder (player 0) holds ELDER; seen from player 1, "player 0" is younger."""
    g = Game(STANDARD, deals=[(ELDER, YOUNGER, TALON)], first_elder=0)
    enc = encoder_for(STANDARD)
    fields = {name: slice(a, b) for name, a, b, _ in enc.state_fields}
    s0, s1 = enc.state(g), enc.state(g, 1)
    assert np.flatnonzero(s0[fields["hand_0"]]).tolist() == cards_of(parse_mask(ELDER))
    assert np.flatnonzero(s1[fields["hand_0"]]).tolist() == cards_of(parse_mask(YOUNGER))
    np.testing.assert_array_equal(s1[fields["obs_player_0"]], enc.encode(g, 1))
    np.testing.assert_array_equal(s1[fields["obs_player_1"]], enc.encode(g, 0))
    np.testing.assert_array_equal(s1[fields["talon_order"]], s0[fields["talon_order"]])
    # talon top first: 7D is 1/8, TC (the last) 8/8
    assert s0[fields["talon_order"]][parse_card("7D")] == pytest.approx(1 / 8)
    assert s0[fields["talon_order"]][parse_card("TC")] == pytest.approx(1.0)
    assert s0[fields["current_player"]].tolist() == [1.0, 0.0]  # elder acts
    assert s1[fields["current_player"]].tolist() == [0.0, 1.0]  # ... he is "player 1" here
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        enc.state(g, 2)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), preset=st.sampled_from(PRESETS))
def test_state_from_either_player_is_the_same_facts(seed, preset):
    enc = encoder_for(preset)
    rng = random.Random(seed)
    g = Game(preset, seed=seed, record=False)
    for _ in range(rng.randrange(80)):
        if g.is_over:
            break
        g.apply(rng.choice(g.legal_actions()))
    f = {name: slice(a, b) for name, a, b, _ in enc.state_fields}
    s0, s1 = enc.state(g, 0), enc.state(g, 1)
    for a, b in (
        ("obs_player_0", "obs_player_1"),
        ("hand_0", "hand_1"),
        ("discards_0", "discards_1"),
    ):
        np.testing.assert_array_equal(s0[f[a]], s1[f[b]])
        np.testing.assert_array_equal(s0[f[b]], s1[f[a]])
    for name in ("talon", "talon_order"):
        np.testing.assert_array_equal(s0[f[name]], s1[f[name]])
    np.testing.assert_array_equal(s0[f["current_player"]], s1[f["current_player"]][::-1])
    out = np.full(enc.state_size, 9.0, np.float32)
    enc.state_into(g, 1, out)
    np.testing.assert_array_equal(out, s1)
