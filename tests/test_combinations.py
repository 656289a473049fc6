"""Combinations: point, sequences, sets, comparison, values (RULES.md section 5 and 10)."""

from piquet_env.cards import parse_mask
from piquet_env.combinations import (
    POINT,
    SEQUENCE,
    SET,
    best,
    category_value,
    compare,
    describe,
    point,
    scoring,
    sequences,
    sets,
)


def h(text):
    return parse_mask(text)


def test_example_1():
    hand = h("AS KS QS JS TS 9S 8S 7S AH KH QH JH")
    p = point(hand)
    assert (p.size, p.height, p.value) == (8, 75, 8)
    seqs = sequences(hand)
    assert [(c.size, c.value) for c in seqs] == [(4, 4), (8, 18)]
    assert category_value(SEQUENCE, hand) == 22
    assert sets(hand) == []


def test_example_3_point_tie_and_trios():
    elder = h("AS KS QS JS 7H 8H 9H 7C 8C 9C 7D 8D")
    younger = h("AD KD QD JD TH JH QH TC JC QC TS 9S")
    assert best(POINT, elder).key == best(POINT, younger).key == (4, 41)
    assert compare(best(POINT, elder), best(POINT, younger)) == 0
    assert compare(best(SEQUENCE, elder), best(SEQUENCE, younger)) == 0
    assert best(SET, elder) is None
    assert category_value(SET, younger) == 9
    assert [describe(c) for c in sets(younger)] == ["Three tens", "Three jacks", "Three queens"]


def test_example_4_runs_split_by_gap():
    hand = h("7S 8S 9S JS QS KS AS")
    assert [(c.size, c.value, c.height) for c in sequences(hand)] == [(3, 3, 2), (4, 4, 7)]


def test_example_5_quatorze_and_trio():
    hand = h("AS AH AD AC KS KH KD 7C 8C 9C TD JD")
    assert category_value(SET, hand) == 17
    assert compare(best(SET, h("TS TH TD TC")), best(SET, h("AS AH AD"))) == 1


def test_run_counts_once_at_full_length():
    hand = h("7H 8H 9H TH JH QH KH")
    assert [(c.size, c.value) for c in sequences(hand)] == [(7, 17)]
    assert describe(best(SEQUENCE, hand)) == "Septième to the king"


def test_sequence_values_and_comparison():
    for n, value in [(3, 3), (4, 4), (5, 15), (6, 16), (7, 17), (8, 18)]:
        hand = sum(1 << (8 + r) for r in range(n))  # diamonds from the 7 up
        assert category_value(SEQUENCE, hand) == value
    # equal length: the higher top card wins
    assert compare(best(SEQUENCE, h("9C TC JC")), best(SEQUENCE, h("8S 9S TS"))) == 1
    # longer beats higher
    assert compare(best(SEQUENCE, h("7C 8C 9C TC")), best(SEQUENCE, h("QS KS AS"))) == 1


def test_point_ties_broken_by_pips_then_nobody():
    # two five-card suits: the one with more pips is the best point
    hand = h("AC KC QC JC TC 7D 8D 9D TD JD")
    assert best(POINT, hand).key == (5, 51)
    assert describe(best(POINT, hand)) == "Point of five, 51 pips"
    assert compare(best(POINT, h("AC KC QC JC TC")), best(POINT, h("AS KS QS JS 9S"))) == 1
    assert compare(best(POINT, h("7C 8C")), best(POINT, h("7H 8H"))) == 0


def test_joker_in_no_combination_and_empty_hand():
    joker_only = 1 << 32
    assert best(POINT, joker_only) is None
    assert scoring(SEQUENCE, joker_only) == [] and scoring(SET, joker_only) == []
    assert compare(None, None) == 0 and compare(best(POINT, h("7C")), None) == 1


def test_sets_only_tens_and_up():
    assert sets(h("9S 9H 9D 9C 8S 8H 8D")) == []
    assert describe(best(SET, h("KS KH KD KC"))) == "Quatorze of kings"
