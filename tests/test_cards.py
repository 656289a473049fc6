"""Cards: parsing, formatting, bitmasks."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from piquet_env.cards import (
    JOKER,
    card_str,
    card_symbol,
    cards_of,
    cards_str,
    pack,
    parse_card,
    parse_cards,
    parse_mask,
    rank,
    sort_key,
    suit,
    to_mask,
)


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("7C", 0),
        ("AC", 7),
        ("7D", 8),
        ("TS", 27),
        ("10s", 27),
        ("ah", 23),
        ("JK", 32),
        ("jk", 32),
        (" qh ", 21),
        ("10H", 19),
    ],
)
def test_parse_card(text, card):
    assert parse_card(text) == card


@pytest.mark.parametrize("bad", ["", "1S", "TX", "11S", "AHH", "J", "ZZ", "6C", "10", "K♠"])
def test_malformed_card_names_the_token(bad):
    with pytest.raises(ValueError, match="malformed card"):
        parse_card(bad)


def test_parse_cards_reports_bad_token_and_duplicates():
    with pytest.raises(ValueError, match="'XS'"):
        parse_cards("AS XS")
    with pytest.raises(ValueError, match="AS given twice"):
        parse_cards("AS KS as")
    assert parse_cards("AS, 10h ,7c") == [31, 19, 0]


def test_format():
    assert card_str(27) == "TS"
    assert card_str(JOKER) == "JK"
    assert card_symbol(27) == "10♠"
    assert card_symbol(23) == "A♥"
    assert cards_str(parse_mask("AS 7C JK")) == "7C AS JK"
    with pytest.raises(ValueError):
        card_str(33)


def test_rank_suit_and_sorting():
    assert (rank(parse_card("QH")), suit(parse_card("QH"))) == (5, 2)
    hand = parse_cards("7S AS KH JK 9C")
    assert [card_str(c) for c in sorted(hand, key=sort_key)] == ["JK", "9C", "KH", "AS", "7S"]
    assert len(pack()) == 32 and len(pack(with_joker=True)) == 33


@given(st.sets(st.integers(0, 32)))
def test_mask_round_trip(cards):
    m = to_mask(cards)
    assert cards_of(m) == sorted(cards)
    assert parse_mask(cards_str(m)) == m
