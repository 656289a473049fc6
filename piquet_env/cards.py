"""Cards as small integers and hands as bitmasks; parsing and formatting.

A card is an ``int``: ``suit * 8 + rank`` with suits ``C D H S`` (0..3) and ranks ``7 8 9 T J Q K
A`` (0..7, low to high), so card ids 0..31 cover the 32-card pack. The joker of the ``normand``
variant is card 32 (:data:`JOKER`). A set of cards (a hand, a discard pile) is an ``int`` bitmask
with bit ``c`` set for card ``c``; all set operations are single integer operations.

>>> parse_card("TS"), parse_card("10s"), card_str(31)
(27, 27, 'AS')
>>> cards_str(parse_mask("ah 7c jk"))
'7C AH JK'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

Card: TypeAlias = int
"""A card id: ``suit * 8 + rank`` (0..31), or :data:`JOKER` (32)."""
CardMask: TypeAlias = int
"""A set of cards as a bitmask: bit ``c`` set for card id ``c``."""

SUITS = "CDHS"
RANKS = "789TJQKA"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANK_NAMES = ("seven", "eight", "nine", "ten", "jack", "queen", "king", "ace")

N_SUITED = 32
JOKER = 32
"""Card id of the joker (variant ``normand`` only)."""

TEN, JACK, QUEEN, KING, ACE = 3, 4, 5, 6, 7
"""Rank indices of the ranks that matter to the rules."""

PIPS = (7, 8, 9, 10, 10, 10, 10, 11)
"""Pip value of each rank index (used only to break ties in point)."""

SUIT_MASKS = tuple(0xFF << (8 * s) for s in range(4))
"""Bitmask of the eight cards of each suit."""

COURT_MASK = sum(1 << (s * 8 + r) for s in range(4) for r in (JACK, QUEEN, KING))
"""Bitmask of all kings, queens and jacks (for carte blanche)."""


def rank(card: Card) -> int:
    """Rank index 0..7 (7 up to A) of a suited card."""
    return card & 7


def suit(card: Card) -> int:
    """Suit index 0..3 (C D H S) of a suited card."""
    return card >> 3


def card_str(card: Card) -> str:
    """Two-letter name of a card id: ``'TS'``, ``'AH'``, ``'JK'`` for the joker."""
    if card == JOKER:
        return "JK"
    if not 0 <= card < N_SUITED:
        raise ValueError(f"not a card id: {card!r}")
    return RANKS[card & 7] + SUITS[card >> 3]


def card_symbol(card: Card) -> str:
    """Name of a card with a Unicode suit symbol and a ``10``: ``'10♠'``, ``'A♥'``; the joker stays
    ``'JK'``."""
    if card == JOKER:
        return "JK"
    r = RANKS[card & 7]
    return ("10" if r == "T" else r) + SUIT_SYMBOLS[card >> 3]


def parse_card(token: str) -> Card:
    """Parse one card name (``'TS'``, ``'10s'``, ``'ah'``, ``'JK'``) into a card id.

    Raises ``ValueError`` naming the token when it is not a card.
    """
    t = token.strip().upper()
    if t == "JK":
        return JOKER
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise ValueError(
            f"malformed card {token!r}: expected rank 7 8 9 T(10) J Q K A and suit C D H S, or JK"
        )
    return SUITS.index(t[1]) * 8 + RANKS.index(t[0])


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse cards separated by spaces or commas (or an iterable of names) into card ids, in order.

    Raises ``ValueError`` naming the first bad token, or a card given twice.
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    cards = [parse_card(t) for t in tokens]
    if len(set(cards)) != len(cards):
        dup = next(card_str(c) for c in cards if cards.count(c) > 1)
        raise ValueError(f"card {dup} given twice in {text!r}")
    return cards


def parse_mask(text: str | Iterable[str]) -> CardMask:
    """Parse cards (as :func:`parse_cards`) into a bitmask."""
    return to_mask(parse_cards(text))


def to_mask(cards: Iterable[Card]) -> CardMask:
    """Bitmask of an iterable of card ids."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


_BYTE_CARDS = tuple(
    tuple(tuple(8 * k + i for i in range(8) if b >> i & 1) for b in range(256)) for k in range(5)
)


def cards_of(mask: CardMask) -> list[Card]:
    """Card ids of a bitmask, lowest id first (clubs 7 ... spades A, then the joker)."""
    t = _BYTE_CARDS
    out = [
        *t[0][mask & 255],
        *t[1][mask >> 8 & 255],
        *t[2][mask >> 16 & 255],
        *t[3][mask >> 24 & 255],
    ]
    if mask >> 32:
        out.extend(t[4][mask >> 32 & 255])
    return out


def count(mask: CardMask) -> int:
    """Number of cards in a bitmask."""
    return mask.bit_count()


def sort_key(card: Card) -> tuple[int, int]:
    """Key that sorts cards by suit then rank, high rank first (the way a hand is held)."""
    return (card >> 3, -(card & 7)) if card != JOKER else (-1, 0)


def cards_str(cards: CardMask | Iterable[Card], symbols: bool = False) -> str:
    """Space-separated names of a bitmask (or iterable of ids), in id order for masks."""
    ids = cards_of(cards) if isinstance(cards, int) else list(cards)
    fmt = card_symbol if symbols else card_str
    return " ".join(fmt(c) for c in ids)


def pack(with_joker: bool = False) -> list[Card]:
    """All card ids of the pack in id order: 32 cards, or 33 with the joker."""
    return list(range(N_SUITED + (1 if with_joker else 0)))
