"""Lookup tables and whole-batch combination finding: point, sequence and set of many hands at once.

A hand is a ``uint64`` card bitmask (bit ``c`` for card id ``c``, the joker at bit 32). Each suit is
one byte of it, so per-suit facts (length, pip total, runs) are read from 256-entry tables and the
four suits are compared with a few array operations. Sets are counted per rank with
:func:`popcount` (``np.bitwise_count`` from numpy 2.0, a bit-twiddling fallback before). The
results match :mod:`piquet_env.combinations` exactly, including which suit is the best when two
suits tie (the higher suit), which the observation shows.

Comparison keys (0 means "holds none"; a greater key wins the category, equal keys score nothing):

- point: ``size * 128 + pip total``
- sequence: ``length * 8 + top rank``
- set: ``size * 8 + rank``
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from piquet_env.cards import COURT_MASK, PIPS, TEN
from piquet_env.combinations import RANK_MASKS, SEQUENCE_VALUES, SET_VALUES, rank_runs

U64 = np.uint64
SUIT_BYTE = U64(0xFF)
COURTS = U64(COURT_MASK)
"""Bitmask of every king, queen and jack (for carte blanche)."""
RANK_MASKS_U64 = tuple(U64(m) for m in RANK_MASKS)
_M1, _M2, _M4, _H01 = (
    U64(0x5555555555555555),
    U64(0x3333333333333333),
    U64(0x0F0F0F0F0F0F0F0F),
    U64(0x0101010101010101),
)


def popcount_fallback(x: np.ndarray) -> np.ndarray:
    """The number of set bits of each element of an unsigned integer array (up to 64 bits), as
    ``uint8``: the SWAR popcount, for numpy before 2.0 (which has no ``np.bitwise_count``)."""
    v = np.asarray(x).astype(U64)
    with np.errstate(over="ignore"):
        v = v - ((v >> U64(1)) & _M1)
        v = (v & _M2) + ((v >> U64(2)) & _M2)
        v = (v + (v >> U64(4))) & _M4
        return ((v * _H01) >> U64(56)).astype(np.uint8)


popcount = getattr(np, "bitwise_count", popcount_fallback)
"""The number of set bits of each element of an unsigned integer array, as ``uint8``:
``np.bitwise_count`` where numpy has it (2.0 and later), else :func:`popcount_fallback`."""


def _build() -> dict[str, np.ndarray]:
    point_key = np.zeros(256, np.int64)
    seq_key = np.zeros(256, np.int64)
    seq_value = np.zeros(256, np.int64)
    seq_cards = np.zeros(256, np.uint64)
    for b in range(256):
        n = b.bit_count()
        if n:
            point_key[b] = n * 128 + sum(PIPS[r] for r in range(8) if b >> r & 1)
        runs = rank_runs(b)
        if runs:
            seq_key[b] = max(length * 8 + top for length, top in runs)
            seq_value[b] = sum(SEQUENCE_VALUES[length] for length, _ in runs)
            cards = 0
            for length, top in runs:
                cards |= ((1 << length) - 1) << (top - length + 1)
            seq_cards[b] = cards
    return {
        "point_key": point_key,
        "seq_key": seq_key,
        "seq_value": seq_value,
        "seq_cards": seq_cards,
    }


TABLES = _build()
"""Per-suit-byte tables: ``point_key``, ``seq_key`` (best run), ``seq_value`` (all runs) and
``seq_cards`` (the ranks of all runs)."""


class Combos(NamedTuple):
    """The combinations of a batch of hands in one category, one entry per hand.

    ``key``: comparison key of the best (0: none); ``cards``: the best one's cards (what declaring
    shows); ``value``: points scored on winning the category; ``won_cards``: the cards of every
    combination scored on winning (shown then); ``record``: the observation bits of the best one
    when declared (decided, declared, then the category's one-hot codes; see
    :mod:`piquet_env.observation`).
    """

    key: np.ndarray
    cards: np.ndarray
    value: np.ndarray
    won_cards: np.ndarray
    record: np.ndarray


def suit_bytes(hands: np.ndarray) -> list[np.ndarray]:
    """The four suit bytes (clubs, diamonds, hearts, spades) of each hand, as ``int64`` indices."""
    return [((hands >> U64(8 * s)) & SUIT_BYTE).astype(np.int64) for s in range(4)]


def _best_of_suits(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Best key over the four suits and its suit, ties going to the higher suit."""
    packed = np.maximum.reduce([k * 4 + s for s, k in enumerate(keys)])
    return packed >> 2, packed & 3


def point_combos(byts: list[np.ndarray]) -> Combos:
    """The point of each hand (from :func:`suit_bytes`): the longest suit, then the higher pip
    total, then the higher suit."""
    key, suit = _best_of_suits([TABLES["point_key"][b] for b in byts])
    stack = np.stack(byts)
    byte = np.take_along_axis(stack, suit[None], 0)[0]
    cards = byte.astype(np.uint64) << (suit.astype(np.uint64) * U64(8))
    cards[key == 0] = 0
    size = key >> 7
    record = np.where(key > 0, 3 | (1 << (1 + size)) | (1 << (10 + suit)), 0)
    return Combos(key, cards, size, cards, record.astype(np.uint64))


def sequence_combos(byts: list[np.ndarray]) -> Combos:
    """Every sequence of each hand: the best (longest, then highest top card, then higher suit),
    the value of all of them, and their cards."""
    key, suit = _best_of_suits([TABLES["seq_key"][b] for b in byts])
    length, top = key >> 3, key & 7
    run = ((np.int64(1) << length) - 1) << np.maximum(top - length + 1, 0)
    cards = (run << (suit * 8)).astype(np.uint64)
    cards[key == 0] = 0
    value = sum(TABLES["seq_value"][b] for b in byts)
    won = np.bitwise_or.reduce([TABLES["seq_cards"][b] << U64(8 * s) for s, b in enumerate(byts)])
    record = np.where(
        key > 0, 3 | (1 << np.maximum(length - 1, 0)) | (1 << (8 + top)) | (1 << (16 + suit)), 0
    )
    return Combos(key, cards, value, won, record.astype(np.uint64))


def set_combos(hands: np.ndarray) -> Combos:
    """Every trio and quatorze (tens and above) of each hand: the best (quatorze over trio, then
    the higher rank), the value of all, and their cards."""
    key = np.zeros(hands.shape, np.int64)
    value = np.zeros(hands.shape, np.int64)
    won = np.zeros(hands.shape, np.uint64)
    cards = np.zeros(hands.shape, np.uint64)
    for r in range(TEN, 8):
        of_rank = hands & RANK_MASKS_U64[r]
        n = popcount(of_rank).astype(np.int64)
        held = n >= 3
        k = np.where(held, n * 8 + r, 0)
        better = k > key
        key = np.where(better, k, key)
        cards = np.where(better, of_rank, cards)
        value += np.where(n == 4, SET_VALUES[4], np.where(held, SET_VALUES[3], 0))
        won |= np.where(held, of_rank, U64(0))
    size, rank = key >> 3, key & 7
    record = np.where(key > 0, 3 | (1 << np.maximum(size - 1, 0)) | (1 << (1 + rank)), 0)
    return Combos(key, cards, value, won, record.astype(np.uint64))


def all_combos(hands: np.ndarray) -> tuple[Combos, Combos, Combos]:
    """Point, sequence and set combinations of each hand in a batch."""
    byts = suit_bytes(hands)
    return point_combos(byts), sequence_combos(byts), set_combos(hands)
