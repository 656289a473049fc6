"""Seeds and deals of the batch, and the same game rebuilt as a :class:`~piquet_env.game.Game`.

The batch does not run Python's ``random.Random`` per game (that alone would cost more than the
rest of a step); it uses a counter-based generator, SplitMix64, in numpy. Everything random about
one game follows from one 64-bit *game seed*:

- the game seed of slot ``i`` in its ``e``-th episode (0 after :meth:`reset`, then 1, 2, ... as
  the slot restarts) is :func:`game_seed` ``(batch_seed, i, e)``; after a reset with one seed
  per slot, ``game_seed(seed[i], 0, e)``;
- the elder of the first deal (the cut for deal) is the top bit of ``splitmix64(seed ^ CUT)``;
- deal ``d`` (0-based, tie-break deals included) shuffles the pack by sorting its cards on
  ``splitmix64(splitmix64(seed ^ mix(d)) + i * GOLDEN)`` for the ``i``-th card of the pack
  (``rules.pack``, ascending ids: for 32 or 33 cards ``i`` is the card id): the first
  ``rules.hand_size`` (12) cards go to elder, as many to younger, the rest is the talon, top
  first.

:func:`make_game` builds that game as a :class:`~piquet_env.game.Game` by handing it all its
deals up front (``Game(rules, deals=..., first_elder=...)``), so the engine's own code replays any
game of the batch exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from piquet_env.game import Game, check_deal
from piquet_env.rules import Rules

U64 = np.uint64
GOLDEN = U64(0x9E3779B97F4A7C15)
_M1, _M2 = U64(0xBF58476D1CE4E5B9), U64(0x94D049BB133111EB)
CUT = U64(0xC0FFEE0DDBA11CE5)
"""Salt of the cut for deal."""
_DEAL_MIX = U64(0xD1B54A32D192ED03)
_SLOT_MIX = U64(0xA24BAED4963EE407)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function on a ``uint64`` array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = np.asarray(x, dtype=U64) + GOLDEN
        z = (z ^ (z >> U64(30))) * _M1
        z = (z ^ (z >> U64(27))) * _M2
        return z ^ (z >> U64(31))


def game_seed(
    batch_seed: int | np.ndarray, slot: np.ndarray | int, episode: np.ndarray | int
) -> np.ndarray:
    """The game seed of ``slot`` in its ``episode``-th episode of a batch reset with
    ``batch_seed`` (an int, or a ``uint64`` array: one per slot; arrays broadcast)."""
    if isinstance(batch_seed, np.ndarray):
        base = splitmix64(batch_seed.astype(U64))
    else:
        base = splitmix64(np.asarray(batch_seed % 2**64, dtype=U64))
    slot = np.asarray(slot, dtype=U64)
    episode = np.asarray(episode, dtype=U64)
    with np.errstate(over="ignore"):
        return splitmix64(base ^ splitmix64(slot * _SLOT_MIX + episode))


def first_elder(seeds: np.ndarray) -> np.ndarray:
    """The elder (0 or 1) of the first deal of each game seed: the cut for deal."""
    return (splitmix64(np.asarray(seeds, dtype=U64) ^ CUT) >> U64(63)).astype(np.int8)


def deal_cards(
    seeds: np.ndarray, deal: np.ndarray | int, pack: int | Sequence[int] | np.ndarray
) -> np.ndarray:
    """The shuffled pack of deal number ``deal`` of each game seed: an ``int8`` array
    ``(len(seeds), len(pack))``, elder's hand, younger's, then the talon top first (split them
    with :func:`split_deal`). ``pack`` is the pack's card ids (``rules.pack``), or a number of
    cards ``n`` for the ids ``0..n - 1``."""
    ids = np.arange(pack) if isinstance(pack, (int, np.integer)) else np.asarray(pack)
    seeds = np.asarray(seeds, dtype=U64).reshape(-1)
    deal = np.broadcast_to(np.asarray(deal, dtype=U64), seeds.shape)
    with np.errstate(over="ignore"):
        h = splitmix64(seeds ^ (deal * _DEAL_MIX + U64(1)))
        keys = splitmix64(h[:, None] + np.arange(ids.size, dtype=U64) * GOLDEN)
    return ids.astype(np.int8)[np.argsort(keys, axis=1)]


def split_deal(rules: Rules, pack: Sequence[int] | np.ndarray) -> tuple[list, list, list]:
    """One shuffled pack (a row of :func:`deal_cards`) as ``(elder, younger, talon)`` card ids."""
    h = rules.hand_size
    row = [int(c) for c in pack]
    return row[:h], row[h : 2 * h], row[2 * h :]


def max_deals(rules: Rules, mode: str) -> int:
    """Most deals one episode can have: 1 for a single deal, else the partie's deals plus the
    ``classic`` tie-break deals."""
    if mode == "deal":
        return 1
    return rules.deals + (2 if rules.tie_break_deals else 0)


def game_deals(
    rules: Rules, seed: int, mode: str = "partie", given: Sequence[tuple] = ()
) -> list[tuple[list[int], list[int], list[int]]]:
    """Every deal that the game of ``seed`` can play, as ``(elder, younger, talon)`` card ids;
    ``given`` deals (loaded into the slot) replace the first ones."""
    n = max_deals(rules, mode)
    packs = deal_cards(np.full(n, seed, dtype=U64), np.arange(n), rules.pack)
    out = [split_deal(rules, p) for p in packs]
    for i, d in enumerate(given[:n]):
        out[i] = check_deal(d, rules)
    return out


def make_game(
    rules: Rules,
    seed: int,
    mode: str = "partie",
    *,
    given: Sequence[tuple] = (),
    elder: int | None = None,
    record: bool = True,
) -> Game:
    """The game of ``seed`` as a fresh :class:`~piquet_env.game.Game` (same cut, same deals), in
    ``mode`` (``"partie"`` or ``"deal"``); ``given`` deals and ``elder`` override the
    seed's as when they were loaded into the slot."""
    if elder is None:
        elder = int(first_elder(np.array([seed], dtype=U64))[0])
    return Game(
        rules,
        mode=mode,
        deals=game_deals(rules, seed, mode, given),
        first_elder=elder,
        record=record,
    )
