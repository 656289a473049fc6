"""Static value of a Piquet hand, shared by the heuristic's exchange and the search's rollouts.

:func:`hand_value` estimates, in deal points, what a 12-card hand is worth before the declarations:
the expected points of its point, sequences and sets (each weighted by how often such a combination
wins its category), plus the tricks it should take. :func:`greedy_discards` removes, one at a time,
the card whose loss costs the least value; the heuristic's exchange then chooses how many to take by
sampling the talon (see :mod:`piquet_agents.heuristic`).

>>> from piquet_env.cards import parse_mask, cards_str, to_mask
>>> hand = parse_mask("AS KS QS JS 9S AH KH 8H 7D 8D 7C 9C")
>>> cards_str(to_mask(greedy_discards(hand, 5)))
'7C 9C 7D 8D 8H'
"""

from __future__ import annotations

from functools import lru_cache

from piquet_env.cards import JOKER
from piquet_env.combinations import RANK_MASKS, SET_RANKS, sequences

POINT_WORTH = (0.0, 0.0, 0.0, 0.3, 1.5, 4.0, 6.0, 7.0, 8.0)
"""Expected points of a point of each length (the length times a rough chance of winning)."""
SEQUENCE_WORTH = {3: 1.2, 4: 2.8, 5: 14.0, 6: 16.0, 7: 17.0, 8: 18.0}
"""Expected points of a sequence of each length (a quint or longer nearly always wins)."""
TRIO_WORTH = (0.0, 0.0, 0.0, 1.2, 1.6, 2.0, 2.4, 2.8)
"""Expected points of a trio by rank index (only tens and above count)."""
QUATORZE_WORTH = 13.5
TRICK_WORTH = 2.0
"""Deal points a trick brings on average (the win, and often the next lead)."""
LENGTH_WORTH = 0.8
"""Tricks a long suit's fifth and later cards bring once it is established."""


def suit_tricks(byte: int) -> float:
    """Rough number of tricks an 8-bit rank mask of one suit takes against a random opponent."""
    n = byte.bit_count()
    if not n:
        return 0.0
    tricks = 0.0
    if byte >> 7 & 1:  # ace
        tricks += 1.0
        if byte >> 6 & 1:
            tricks += 1.0
            if byte >> 5 & 1:
                tricks += 1.0
            elif byte >> 4 & 1 and n >= 4:
                tricks += 0.5
        elif byte >> 5 & 1 and n >= 3:
            tricks += 0.5
    elif byte >> 6 & 1:  # king without the ace
        tricks += 0.7 if n >= 2 else 0.35
        if byte >> 5 & 1:
            tricks += 0.6
    elif byte >> 5 & 1 and n >= 3:  # guarded queen
        tricks += 0.4
    if n > 4:
        tricks += LENGTH_WORTH * (n - 4)
    return tricks


_LENGTHS = tuple(b.bit_count() for b in range(256))
_RUN_WORTHS = tuple(tuple(SEQUENCE_WORTH[c.size] for c in sequences(b)) for b in range(256))
"""The worths of each 8-bit suit mask's sequences, in the order :func:`sequences` gives them."""
_SUIT_TRICKS = tuple(suit_tricks(b) for b in range(256))


def declaration_value(hand: int) -> float:
    """Expected declaration points of a hand (point, sequences, sets), ignoring the opponent."""
    v = 0.0
    best_len = 0
    for s in range(4):
        byte = hand >> (8 * s) & 0xFF
        best_len = max(best_len, _LENGTHS[byte])
        for worth in _RUN_WORTHS[byte]:
            v += worth
    v += POINT_WORTH[best_len]
    for r in SET_RANKS:
        k = (hand & RANK_MASKS[r]).bit_count()
        if k == 4:
            v += QUATORZE_WORTH
        elif k == 3:
            v += TRIO_WORTH[r]
    return v


def trick_value(hand: int) -> float:
    """Expected trick points of a hand (the joker counts as one sure trick)."""
    t = (
        _SUIT_TRICKS[hand & 0xFF]
        + _SUIT_TRICKS[hand >> 8 & 0xFF]
        + _SUIT_TRICKS[hand >> 16 & 0xFF]
        + _SUIT_TRICKS[hand >> 24 & 0xFF]
    )
    if hand >> JOKER & 1:
        t += 1.0
    return TRICK_WORTH * t


@lru_cache(maxsize=1 << 17)
def hand_value(hand: int) -> float:
    """Declarations plus tricks, in expected deal points (see the module docstring).

    Cached: the heuristic's exchange values the same hands at each of its steps.
    """
    return declaration_value(hand) + trick_value(hand)


def greedy_discards(hand: int, k: int, keep: int = 0) -> list[int]:
    """``k`` cards to discard from ``hand``, dropping one at a time the card whose loss lowers
    :func:`hand_value` least (ties: the lower card); cards in ``keep`` are never chosen."""
    out: list[int] = []
    h = hand
    for _ in range(k):
        best_c, best_v = -1, -1e9
        c_mask = h & ~keep
        while c_mask:
            low = c_mask & -c_mask
            c = low.bit_length() - 1
            c_mask ^= low
            v = hand_value(h ^ low) - 0.01 * (c & 7 if c != JOKER else 9)
            if v > best_v:
                best_c, best_v = c, v
        if best_c < 0:
            break
        out.append(best_c)
        h ^= 1 << best_c
    return out
