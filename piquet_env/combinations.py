"""Point, sequences and sets of a hand; comparing declared bests; their values (RULES.md section 5).

All functions are pure and take a hand as a card bitmask (see :mod:`piquet_env.cards`). The joker is
in no combination.

>>> from piquet_env.cards import parse_mask
>>> hand = parse_mask("AS KS QS JS TS 9S 8S 7S AH KH QH JH")
>>> best(POINT, hand).size, best(POINT, hand).height
(8, 75)
>>> [describe(c) for c in scoring(SEQUENCE, hand)]
['Quart to the ace', 'Huitième to the ace']
"""

from __future__ import annotations

from typing import NamedTuple

from piquet_env.cards import PIPS, RANK_NAMES, TEN, CardMask

POINT, SEQUENCE, SET = 0, 1, 2
CATEGORIES = (POINT, SEQUENCE, SET)
CATEGORY_NAMES = ("point", "sequence", "set")

SEQUENCE_VALUES = {3: 3, 4: 4, 5: 15, 6: 16, 7: 17, 8: 18}
"""Points for a sequence of each length."""
SEQUENCE_NAMES = {3: "Tierce", 4: "Quart", 5: "Quint", 6: "Sixième", 7: "Septième", 8: "Huitième"}
SET_VALUES = {3: 3, 4: 14}
"""Points for a trio and a quatorze."""
SET_RANKS = tuple(range(TEN, 8))
"""Rank indices that can form sets: ten, jack, queen, king, ace."""
RANK_MASKS = tuple(sum(1 << (s * 8 + r) for s in range(4)) for r in range(8))
"""Bitmask of the four cards of each rank."""


class Combo(NamedTuple):
    """One combination held by a player.

    ``size`` is the number of cards (point length, sequence length, 3 or 4 for a set); ``height``
    is the pip total (point), the top rank index (sequence) or the rank index (set). Two combos of
    the same category compare by ``(size, height)``: see :attr:`key`. ``suit`` is the suit index,
    or -1 for a set. ``cards`` is the bitmask of the cards it consists of.
    """

    category: int
    size: int
    height: int
    suit: int
    cards: CardMask

    @property
    def key(self) -> tuple[int, int]:
        """Comparison key: the greater key wins the category; equal keys score nothing."""
        return (self.size, self.height)

    @property
    def value(self) -> int:
        """Points this combination scores when its holder wins the category."""
        if self.category == POINT:
            return self.size
        if self.category == SEQUENCE:
            return SEQUENCE_VALUES[self.size]
        return SET_VALUES[self.size]


def rank_runs(byte: int) -> tuple[tuple[int, int], ...]:
    """Maximal runs of 3+ consecutive set bits in an 8-bit rank mask, as (length, top rank)."""
    out, r = [], 0
    while r < 8:
        if byte >> r & 1:
            start = r
            while r < 8 and byte >> r & 1:
                r += 1
            if r - start >= 3:
                out.append((r - start, r - 1))
        else:
            r += 1
    return tuple(out)


_PIP_SUM = tuple(sum(PIPS[r] for r in range(8) if b >> r & 1) for b in range(256))
_RUNS = tuple(rank_runs(b) for b in range(256))


def point(hand: CardMask) -> Combo | None:
    """The best point: the longest suit, ties broken by the higher pip total (then the higher
    suit)."""
    best_c = None
    for s in range(4):
        byte = hand >> (8 * s) & 0xFF
        if byte:
            c = Combo(POINT, byte.bit_count(), _PIP_SUM[byte], s, byte << (8 * s))
            if best_c is None or c.key >= best_c.key:
                best_c = c
    return best_c


def sequences(hand: CardMask) -> list[Combo]:
    """Every sequence (maximal run of 3+ cards in one suit), each counted once at its full
    length."""
    out = []
    for s in range(4):
        byte = hand >> (8 * s) & 0xFF
        for length, top in _RUNS[byte]:
            run = ((1 << length) - 1) << (top - length + 1)
            out.append(Combo(SEQUENCE, length, top, s, run << (8 * s)))
    out.sort(key=lambda c: (c.key, c.suit))
    return out


def sets(hand: CardMask) -> list[Combo]:
    """Every trio and quatorze of tens or higher (a quatorze is not also a trio)."""
    out = []
    for r in SET_RANKS:
        cards = hand & RANK_MASKS[r]
        n = cards.bit_count()
        if n >= 3:
            out.append(Combo(SET, n, r, -1, cards))
    out.sort(key=lambda c: c.key)
    return out


def scoring(category: int, hand: CardMask) -> list[Combo]:
    """All combinations of a category that the hand's holder scores if he wins it, weakest first.

    For point that is the single best point; for sequences and sets, all of them.
    """
    if category == POINT:
        p = point(hand)
        return [p] if p else []
    return sequences(hand) if category == SEQUENCE else sets(hand)


def best(category: int, hand: CardMask) -> Combo | None:
    """The best combination of a category in a hand, or ``None`` if it holds none."""
    combos = scoring(category, hand)
    return combos[-1] if combos else None


def compare(a: Combo | None, b: Combo | None) -> int:
    """Which declared best wins: 1 if ``a``, -1 if ``b``, 0 if equal or both ``None``."""
    if a is None or b is None:
        return (a is not None) - (b is not None)
    return (a.key > b.key) - (a.key < b.key)


def category_value(category: int, hand: CardMask) -> int:
    """Points a hand scores in a category if it wins it (the sum over :func:`scoring`)."""
    return sum(c.value for c in scoring(category, hand))


_NUMBER_WORDS = {
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
    11: "eleven",
    12: "twelve",
}
_PLURAL = ("sevens", "eights", "nines", "tens", "jacks", "queens", "kings", "aces")


def describe(combo: Combo) -> str:
    """How a player says a combination: ``'Point of five, 48 pips'`` (the pip total that breaks a
    tie of length; the point scores its length), ``'Quint to the king'``, ``'Three aces'``,
    ``'Quatorze of tens'``."""
    if combo.category == POINT:
        return f"Point of {_NUMBER_WORDS[combo.size]}, {combo.height} pips"
    if combo.category == SEQUENCE:
        return f"{SEQUENCE_NAMES[combo.size]} to the {RANK_NAMES[combo.height]}"
    if combo.size == 4:
        return f"Quatorze of {_PLURAL[combo.height]}"
    return f"Three {_PLURAL[combo.height]}"
