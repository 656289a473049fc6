"""The partie state machine against RULES.md, with hand-worked numbers (section 10 and more)."""

import pytest

from piquet_env.cards import parse_card, parse_mask
from piquet_env.game import Game, IllegalActionError, Phase
from piquet_env.game import scoring as sc
from piquet_env.rules import CLASSIC, STANDARD, make_rules
from tests.scenarios import act, deal, declare_all, exchange, lead_highest, play_tricks

ORBIS = make_rules("standard+orbis")
CLASSIC_ORBIS = make_rules("classic+orbis")

EX2_ELDER = "AS KS QS JS TS 9S 8S 7S AH KH QH JH"
EX2_YOUNGER = "AD KD QD JD AC KC QC JC 7H 8H 9H TH"
EX2_TALON = "7D 8D 9D TD 7C 8C 9C TC"


@pytest.mark.parametrize("rules", [ORBIS, CLASSIC_ORBIS])
def test_example_2_repique_and_example_7_capot(rules):
    g = deal(rules, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    declare_all(g)
    e = g.deal_score(0)
    assert (e.point, e.sequence, e.set, e.repique) == (8, 22, 0, 60)
    assert e.declarations + e.repique == 90
    assert g.deal_score(1).total == 0
    lead_highest(g)  # elder runs his spades then hearts: wins every trick
    assert g.tricks_won == [12, 0]
    e = g.deal_scores[0][0]
    if rules.trick_scoring == "standard":
        assert (e.play, e.capot, e.cards) == (12, 40, 0)  # 12 for leading + 40 instead of 13
    else:
        assert (e.play, e.capot, e.cards) == (13, 40, 0)  # 12 leads + last trick; 40 replaces 10
    assert e.pique == 0  # a repique excludes a pique
    assert g.result == (e.total, -e.total)


def test_example_3_equal_point_and_sequence_score_nothing():
    g = deal(
        ORBIS,
        "AS KS QS JS 7H 8H 9H 7C 8C 9C 7D 8D",
        "AD KD QD JD TH JH QH TC JC QC TS 9S",
        "9D TD AH KH AC KC 8S 7S",
    )
    declare_all(g)
    assert g.deal_score(0).declarations == 0
    y = g.deal_score(1)
    assert (y.point, y.sequence, y.set) == (0, 0, 9)


PIQUE_ELDER = "AS KS QS JS TS 9S AH KH QH JH AD 7C"  # point 6, sixième + quart, trio of aces = 29


def test_example_6_pique():
    g = deal(ORBIS, PIQUE_ELDER, "8C 9C TC 7D 8D 9D 7H 8H 9H 7S 8S JC", "QC KC AC TD JD QD KD TH")
    declare_all(g)
    e = g.deal_score(0)
    assert (e.point, e.sequence, e.set, e.repique) == (6, 20, 3, 0)
    assert g.deal_score(1).total == 0 and g.pique_open
    act(g, "AS")  # elder leads: 29 + 1 = 30 before younger has scored
    assert g.deal_score(0).pique == 30
    assert g.deal_score(0).total == 60
    assert not g.pique_open


def test_no_pique_once_younger_has_scored():
    g = deal(ORBIS, PIQUE_ELDER, "8C 9C TC 7D 8D 9D 7H 8H 9H 7S 8S JC", "QC KC AC TD JD QD KD TH")
    act(g, "declare", "declare", "pass")  # elder sinks his trio of aces: 26
    act(g, "7C", "JC")  # elder leads (27); younger wins the trick and scores: no pique any more
    assert g.deal_score(0).total == 27 and g.deal_score(1).play == 1 and not g.pique_open
    lead_highest(g)
    assert g.deal_scores[0][0].pique == 0 and g.deal_scores[0][0].total > 30


def test_example_9_classic_maximum():
    g = deal(
        CLASSIC,
        "AS AH AD AC KS KH KD KC QS QH QD 7C",
        "JS TS 9S JH TH 9H JD TD 9D JC TC 9C",
        "QC 8S 7S 8H 7H 8D 7D 8C",
    )
    exchange(g, "7C", "9S")
    assert g.hands[0] == parse_mask("AS AH AD AC KS KH KD KC QS QH QD QC")
    assert g.hands[1] == parse_mask("JS TS 8S JH TH 9H JD TD 9D JC TC 9C")
    declare_all(g)
    lead_highest(g)
    e, y = g.deal_scores[0]
    assert (e.point, e.sequence, e.set, e.repique, e.play, e.capot) == (3, 12, 42, 60, 13, 40)
    assert e.total == 170 and y.total == 0


def test_exchange_limits_standard():
    g = deal(STANDARD, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    done = STANDARD.n_cards
    assert done not in g.legal_actions()  # elder must exchange at least one
    act(g, "7S")
    assert done in g.legal_actions()
    act(g, "8S", "9S")
    act(g, "done")  # elder took 3, leaves 2 of his part: he sees them
    assert g.hands[0] & parse_mask("7D 8D 9D") == parse_mask("7D 8D 9D")
    assert g.seen_talon[0] == parse_mask("TD 7C") and g.seen_talon[1] == 0
    assert g.current_player == 1 and done in g.legal_actions()  # younger may take none
    act(g, "7H", "8H", "9H")  # standard: at most 3; the exchange ends by itself
    assert g.phase == Phase.DECLARE
    assert g.hands[1] & parse_mask("TD 7C 8C") == parse_mask("TD 7C 8C")  # elder's leftovers first
    assert g.talon == [parse_card("9C"), parse_card("TC")]  # left face down


def test_elder_exchange_ends_itself_at_five():
    g = deal(STANDARD, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    act(g, "7S", "8S", "9S", "TS", "JS")
    assert g.current_player == 1 and g.seen_talon[0] == 0
    assert g.hands[0] & parse_mask("7D 8D 9D TD 7C") == parse_mask("7D 8D 9D TD 7C")


def test_classic_younger_must_exchange_and_may_take_all():
    g = deal(CLASSIC, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    act(g, "7S", "done")  # elder takes 1: seven cards remain
    assert CLASSIC.n_cards not in g.legal_actions()  # younger must exchange at least one
    for name in ["7H", "8H", "9H", "TH", "JC", "QC", "KC"]:
        act(g, name)
    assert g.phase == Phase.DECLARE and g.talon == []


def test_normand_talon_and_younger_limit():
    r = make_rules("standard", ["normand"])
    cards = [c for c in range(33)]
    g = Game(r, deals=[(cards[:12], cards[12:24], cards[24:])], first_elder=1, mode="deal")
    assert len(g.talon) == 9 and g.elder == 1
    g.apply(g.legal_actions()[0])
    g.apply(r.n_cards)  # elder done after 1
    for _ in range(3):
        g.apply(g.legal_actions()[0])
    assert g.phase == Phase.DECLARE and len(g.talon) == 5  # at least one card always left


def test_orbis_skips_exchange_and_hides_talon():
    g = deal(ORBIS, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    assert g.phase == Phase.DECLARE
    assert g.seen_talon == [0, 0] and len(g.talon) == 8


def test_younger_may_declare_only_at_least_as_good():
    g = deal(ORBIS, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    act(g, "declare")  # elder: point of 8; younger's best point (4) is worse
    assert g.category == 1 and g.current_player == 0  # younger's pass was taken automatically
    auto = [e for e in g.events if e["type"] == "action" and e.get("auto")]
    assert auto == [
        {
            "type": "action",
            "player": 1,
            "action": STANDARD.n_cards + 2,
            "category": "point",
            "auto": True,
        }
    ]


def test_sinking_lets_younger_win():
    g = deal(ORBIS, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    act(g, "pass", "declare")  # elder sinks his point; younger declares his four
    assert g.deal_score(1).point == 4 and g.deal_score(0).point == 0
    # younger's four diamonds (his best point) are now shown to elder
    assert g.shown[1] & parse_mask("AD KD QD JD") == parse_mask("AD KD QD JD")


def test_declared_cards_become_known():
    g = deal(ORBIS, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    act(g, "declare")
    assert g.shown[0] == parse_mask("AS KS QS JS TS 9S 8S 7S")
    act(g, "declare")  # sequences: winner shows every scored sequence
    assert g.shown[0] == parse_mask(EX2_ELDER)


def test_carte_blanche_classic():
    elder = "AS TS 9S 8S AH TH 9H 7H AD TD 9D 8D"  # no K, Q or J
    g = deal(CLASSIC, elder, "KS QS JS 7S KH QH JH 8H KD QD JD 7D", "AC KC QC JC TC 9C 8C 7C")
    assert g.deal_score(0).carte_blanche == 10
    assert g.blanche[0] == parse_mask(elder) and g.shown[0] == 0
    assert g.deal_score(1).carte_blanche == 0
    std = deal(STANDARD, elder, "KS QS JS 7S KH QH JH 8H KD QD JD 7D", "AC KC QC JC TC 9C 8C 7C")
    assert std.deal_score(0).carte_blanche == 0


def test_carte_blanche_reckons_first_for_classic_repique():
    scores = [[10, 0, 0, 3, 0, 0, 0, 0, 0, 0], [0, 6, 18, 14, 0, 0, 0, 0, 0, 0]]
    # player 1 reaches 30 at sets, but player 0's carte blanche reckons earlier: no repique
    assert sc.repique_player(scores, CLASSIC) is None
    scores = [[10, 6, 18, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 14, 0, 0, 0, 0, 0, 0]]
    # player 0 reaches 34 at sequences before player 1 scored anything earlier (sets come after)
    assert sc.repique_player(scores, CLASSIC) == 0
    # standard: the opponent's 14 for sets forbids it
    assert sc.repique_player(scores, STANDARD) is None


def test_follow_suit_and_trick_points_standard():
    g = deal(ORBIS, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    while g.phase == Phase.DECLARE:
        g.apply(STANDARD.n_cards + 2)  # everybody passes
    assert g.deal_score(0).total == g.deal_score(1).total == 0
    act(g, "AH")
    assert g.legal_actions() == [parse_card(c) for c in ("7H", "8H", "9H", "TH")]
    with pytest.raises(IllegalActionError, match="illegal action 6 \\(KC\\)"):
        act(g, "KC")
    act(g, "7H")
    assert g.deal_score(0).play == 2 and g.leader == 0  # 1 for the lead + 1 for the trick
    act(g, "7S")  # younger has no spade: any card
    assert len(g.legal_actions()) == 11
    act(g, "AD")
    assert g.deal_score(0).play == 4 and g.voids[1] == 1 << 3  # lead 1 + trick 1


def test_trick_points_classic():
    rules = CLASSIC
    assert sc.trick_points(rules, leader=0, winner=0, last=False) == 0
    assert sc.trick_points(rules, leader=0, winner=1, last=False) == 1
    assert sc.trick_points(rules, leader=0, winner=0, last=True) == 1
    assert sc.trick_points(rules, leader=0, winner=1, last=True) == 2
    assert (
        sc.trick_points(STANDARD, 0, 0, False) == 1 and sc.trick_points(STANDARD, 0, 1, True) == 2
    )


def test_classic_ten_for_the_cards():
    scores = [[0] * 10, [0] * 10]
    sc.finish_deal(scores, (7, 5), CLASSIC)
    assert scores[0][sc.CARDS] == 10 and scores[1][sc.CARDS] == 0
    scores = [[0] * 10, [0] * 10]
    sc.finish_deal(scores, (6, 6), CLASSIC)
    assert scores[0][sc.CARDS] == scores[1][sc.CARDS] == 0
    scores = [[0] * 10, [0] * 10]
    sc.finish_deal(scores, (7, 5), STANDARD)
    assert scores[0][sc.CARDS] == 0


def test_joker_play():
    r = make_rules("standard", ["orbis", "normand"])
    g = deal(
        r,
        "JK AS KS QS JS TS 9S 8S 7S AH KH QH",
        "AD KD QD JD AC KC QC JC 7H 8H 9H TH",
        "7D 8D 9D TD 7C 8C 9C TC JH",
    )
    for _ in range(6):
        if g.phase == Phase.DECLARE:
            g.apply(r.n_cards + 2)
    act(g, "JK")  # the joker may be led; the follower may then play any card
    assert len(g.legal_actions()) == 12
    act(g, "AD")
    assert g.tricks_won == [1, 0]
    act(g, "AH")  # younger can follow hearts: he must, the joker is not a heart (he has none)
    assert g.legal_actions() == [parse_card(c) for c in ("7H", "8H", "9H", "TH")]


def test_joker_wins_when_follower_cannot_follow():
    r = make_rules("standard", ["orbis", "normand"])
    g = deal(
        r,
        "AS KS QS JS TS 9S 8S 7S AH KH QH 7D",
        "JK AD KD QD JD AC KC QC JC 7H 8H 9H",
        "TH 8D 9D TD 7C 8C 9C TC JH",
    )
    while g.phase == Phase.DECLARE:
        g.apply(r.n_cards + 2)
    act(g, "AS")
    assert parse_card("JK") in g.legal_actions()
    act(g, "JK")
    assert g.tricks_won == [0, 1] and g.leader == 1
    act(g, "7H", "AH")  # with hearts in hand, the joker is no longer... gone anyway
    play_tricks(g)


def test_illegal_action_leaves_state_untouched():
    g = Game(STANDARD, seed=3)
    before = (list(g.events), list(g.hands), g.current_player, g.phase)
    for bad in (99, -1, "AS", 2.5, None, STANDARD.n_cards + 1):
        with pytest.raises(IllegalActionError):
            g.apply(bad)
    assert (g.events, g.hands, g.current_player, g.phase) == before


def test_game_over_rejects_actions():
    g = deal(ORBIS, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    declare_all(g)
    lead_highest(g)
    assert g.is_over and g.legal_actions() == [] and g.current_player == -1
    with pytest.raises(IllegalActionError, match="game is over"):
        g.apply(0)


@pytest.mark.parametrize(
    ("hands", "message"),
    [
        ((EX2_ELDER, EX2_YOUNGER, "7D 8D 9D TD 7C 8C 9C"), "talon has 7 cards, expected 8"),
        ((EX2_ELDER, EX2_YOUNGER, "7D 8D 9D TD 7C 8C 9C AS"), "AS is both in the elder hand"),
        ((EX2_ELDER, EX2_YOUNGER, "7D 8D 9D TD 7C 8C 9C XX"), "malformed card 'XX'"),
        ((EX2_ELDER, EX2_YOUNGER, "7D 8D 9D TD 7C 8C 9C JK"), "not in the 32-card pack"),
        ((EX2_ELDER + " TC", EX2_YOUNGER, "7D 8D 9D TD 7C 8C 9C"), "elder hand has 13 cards"),
    ],
)
def test_inconsistent_deal_setup(hands, message):
    with pytest.raises(ValueError, match=message):
        Game(STANDARD, deals=[hands])


def test_bad_game_options():
    with pytest.raises(ValueError, match="mode must be one of"):
        Game(STANDARD, mode="tournament")
    with pytest.raises(ValueError, match="deal_number must be in 0..5"):
        Game(STANDARD, deal_number=6)
    with pytest.raises(ValueError, match="first_elder"):
        Game(STANDARD, first_elder=2)
    with pytest.raises(TypeError, match="rules must be a Rules"):
        Game("standard")


def test_dealer_alternates_and_partie_settles():
    g = Game(STANDARD, seed=11)
    elders = []
    while not g.is_over:
        if not elders or g.deal_number != len(elders) - 1:
            elders.append(g.elder)
        g.apply(g.legal_actions()[-1])
    assert len(g.deal_scores) == 6
    assert elders == [elders[0], 1 - elders[0]] * 3
    assert g.totals == [sum(d[p].total for d in g.deal_scores) for p in (0, 1)]
    assert g.result == sc.settle(g.totals, STANDARD)


def test_setup_mid_partie():
    g = Game(
        STANDARD,
        deals=[(EX2_ELDER, EX2_YOUNGER, EX2_TALON)],
        first_elder=1,
        deal_number=5,
        totals=(80, 95),
    )
    assert g.elder == 1 and g.hands[1] == parse_mask(EX2_ELDER)
    while not g.is_over:
        g.apply(g.legal_actions()[0])
    assert len(g.deal_scores) == 1
    d = g.deal_scores[0]
    assert g.totals == [80 + d[0].total, 95 + d[1].total]


def test_classic_tie_break_deals():
    # find the scores of one deal, then start it from totals that make the partie end level
    for rules, extra in ((CLASSIC, 2), (STANDARD, 0)):
        probe = Game(rules, seed=5, mode="deal", first_elder=0)
        cards = [
            (ev["elder_hand"], ev["younger_hand"], ev["talon"])
            for ev in probe.events
            if ev["type"] == "deal"
        ]
        while not probe.is_over:
            probe.apply(probe.legal_actions()[0])
        s0, s1 = (probe.deal_scores[0][p].total for p in (0, 1))
        totals = (max(s1 - s0, 0) + 50, max(s0 - s1, 0) + 50)
        g = Game(rules, seed=1, deals=cards, first_elder=0, deal_number=5, totals=totals)
        while g.deal_number == 5:
            g.apply(g.legal_actions()[0])
        if rules is STANDARD:
            assert g.is_over and g.result == (0, 0)  # a draw
            continue
        assert g.totals[0] == g.totals[1] and g.planned_deals == 6 + extra and not g.is_over
        assert g.elder == 1  # the dealer alternates into the tie-break deals
        while not g.is_over:
            g.apply(g.legal_actions()[0])
        assert len(g.deal_scores) == 3


SETTLEMENTS = [
    ((105, 101), 104, 104),
    ((97, 89), 108, 286),
    ((120, 99), 319, 319),
    ((120, 100), 120, 120),
    ((60, 40), 120, 200),
    ((164, 114), 150, 150),
    ((224, 92), 416, 416),
]


@pytest.mark.parametrize(("totals", "standard", "classic"), SETTLEMENTS)
def test_example_8_settlement(totals, standard, classic):
    assert sc.settle(totals, STANDARD) == (standard, -standard)
    assert sc.settle(totals, CLASSIC) == (classic, -classic)
    assert sc.settle(totals[::-1], STANDARD) == (-standard, standard)
    assert sc.settle((100, 100), STANDARD) == (0, 0)


def test_deal_mode_result_is_point_difference():
    g = Game(STANDARD, seed=2, mode="deal")
    while not g.is_over:
        g.apply(g.legal_actions()[0])
    d = g.deal_scores[0]
    assert g.result == (d[0].total - d[1].total, d[1].total - d[0].total)


def test_action_names():
    g = deal(STANDARD, EX2_ELDER, EX2_YOUNGER, EX2_TALON)
    assert g.action_name(parse_card("QS")) == "discard QS"
    assert g.action_name(STANDARD.n_cards) == "done"
    exchange(g, "7S", "")
    assert g.action_name(STANDARD.n_cards + 1) == "declare point"


@pytest.mark.parametrize(("rules", "elder", "younger"), [("mini", 13, 2), ("classic+mini", 20, 2)])
def test_example_10_mini(rules, elder, younger):
    """RULES.md example 10 (section 11): the mini pack, four tricks, for the cards in classic."""
    r = make_rules(rules)
    assert (r.pack_size, r.hand_size, r.talon_size, r.elder_part, r.younger_part) == (9, 4, 1, 1, 0)
    g = Game(r, mode="deal", deals=[("AC KC QC AD", "KD QD AH KH", "QH")], first_elder=0)
    assert g.exchange_limits(0) == (1, 1)
    g.apply(parse_card("AD"))  # elder's exchange ends at its maximum; younger has none
    assert g.phase == Phase.DECLARE and g.hands[0] == parse_mask("AC KC QC QH")
    assert g.taken == [1, 0] and g.exchanged == [True, True]
    while g.phase == Phase.DECLARE:  # younger's passes are forced: his point and sequence lose
        assert g.current_player == 0
        g.apply(r.n_cards + 1)
    for card in ["AC", "QD", "KC", "KD", "QC", "KH", "QH", "AH"]:
        g.apply(parse_card(card))
    e, y = g.deal_scores[0]
    assert (e.point, e.sequence, e.set, y.declarations) == (3, 3, 0, 0)
    assert (e.total, y.total) == (elder, younger)
    assert g.result == (elder - younger, younger - elder)
    assert e.capot == 0 and e.cards == (10 if rules.startswith("classic") else 0)


def test_mini_capot_is_every_trick():
    r = make_rules("mini")
    g = Game(r, mode="deal", deals=[("AC KC AD AH", "QD QC KD KH", "QH")], first_elder=0)
    g.apply(parse_card("KC"))  # takes QH: three aces and the queen of hearts
    while g.phase == Phase.DECLARE:
        g.apply(g.legal_actions()[0])
    while not g.is_over:
        g.apply(max(g.legal_actions()) if g.current_player == 0 else min(g.legal_actions()))
    e, _y = g.deal_scores[0]
    assert g.tricks_won == [4, 0]
    assert (e.capot, e.play) == (40, 4)  # 4 leads; the 40 replaces the 5 for the tricks
