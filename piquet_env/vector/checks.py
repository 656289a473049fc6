"""The argument rules of the batched engine and its envs: counts, seeds, slots and flags.

One rule each for :class:`~piquet_env.vector.BatchGame`,
:class:`~piquet_env.vector.PiquetVectorEnv` and :class:`~piquet_env.vector.SelfPlayEnv`; each
error is a ``ValueError`` naming the argument. As :class:`~piquet_env.game.Game` takes its
``seed``, an int is anything with ``__index__`` (numpy integers included) but not a bool; floats,
strings and ``None`` are refused, never rounded or parsed.

- a player: 0 or 1 (``first_elder``: one for all slots, or one per slot);
- a count (``n``, ``num_envs``): an int, at least 1;
- a seed: an int in ``0..2**64 - 1`` (the batch's generator is 64-bit, and Gymnasium's seeding
  refuses negative seeds); a reset also takes one seed per game (``None`` entries draw a fresh
  one);
- slots (``games``): a flat sequence or 1-D integer array of distinct indices in ``0..n - 1``;
  one slot (``i``): an int in ``0..n - 1`` (no negative indexing);
- a flag: ``True`` or ``False``.

>>> count_arg("n", 8), seed_arg("seed", 2**64 - 1), slots_arg("games", [2, 0], 4).tolist()
(8, 18446744073709551615, [2, 0])
>>> count_arg("n", 1.5)
Traceback (most recent call last):
...
ValueError: n must be an int, got 1.5 (float)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from piquet_env.game.state import short_repr

SEED_LIMIT = 2**64
"""Seeds are ints in ``0..SEED_LIMIT - 1``."""

__all__ = [
    "SEED_LIMIT",
    "count_arg",
    "flag_arg",
    "fresh_seed",
    "int_arg",
    "players_arg",
    "reset_seed_arg",
    "seed_arg",
    "slot_arg",
    "slots_arg",
]


def int_arg(name: str, value: object) -> int:
    """``value`` as an int (``__index__``), or a ``ValueError`` naming ``name`` (bools, floats,
    strings and ``None`` refused)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an int, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{name} must be an int, got {short_repr(value)}") from None


def count_arg(name: str, value: object) -> int:
    """A number of games: an int of at least 1."""
    n = int_arg(name, value)
    if n < 1:
        raise ValueError(f"{name} must be at least 1, got {n}")
    return n


def seed_arg(name: str, value: object) -> int | None:
    """``None`` or a seed: an int in ``0..2**64 - 1``."""
    if value is None:
        return None
    seed = int_arg(name, value)
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{name} must be in 0..2**64 - 1, got {seed}")
    return seed


def fresh_seed() -> int:
    """A seed drawn from the operating system's entropy."""
    return int(np.random.SeedSequence().entropy) % SEED_LIMIT


def reset_seed_arg(name: str, value: object, n: int) -> int | list[int | None] | None:
    """A reset's seed: ``None``, one seed (:func:`seed_arg`) for the batch, or a sequence of
    ``n`` seeds or ``None`` (Gymnasium's ``int | list[int | None]``), one per game."""
    one = not isinstance(value, (Sequence, np.ndarray)) or isinstance(value, (str, bytes))
    if value is None or one or (isinstance(value, np.ndarray) and value.ndim == 0):
        return seed_arg(name, value)
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise ValueError(f"{name} must be one seed or one per game, got an array of {value.shape}")
    if len(value) != n:
        raise ValueError(f"{name} must be one seed or {n} seeds (one per game), got {len(value)}")
    return [seed_arg(f"{name}[{i}]", s) for i, s in enumerate(value)]


def slots_arg(name: str, value: object, n: int) -> np.ndarray:
    """Distinct slot indices in ``0..n - 1`` from a flat sequence or 1-D integer array, as an
    ``int64`` array in the order given."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or not (value.dtype.kind in "iu" or value.size == 0):
            raise ValueError(
                f"{name} must be a flat sequence of slot indices, got an array of shape "
                f"{value.shape} and dtype {value.dtype}"
            )
        g = value.astype(np.int64)
    elif isinstance(value, (Sequence, range)) and not isinstance(value, (str, bytes)):
        g = np.array([int_arg(f"{name}[{j}]", x) for j, x in enumerate(value)], dtype=np.int64)
    else:
        raise ValueError(f"{name} must be a sequence of slot indices, got {short_repr(value)}")
    bad = g[(g < 0) | (g >= n)]
    if bad.size:
        raise ValueError(f"{name} must be slot indices in 0..{n - 1}, got {bad.tolist()}")
    if np.unique(g).size != g.size:
        raise ValueError(f"{name} names a slot twice: {g.tolist()}")
    return g


def slot_arg(name: str, value: object, n: int) -> int:
    """One slot index: an int in ``0..n - 1``."""
    i = int_arg(name, value)
    if not 0 <= i < n:
        raise ValueError(f"{name} must be a slot index in 0..{n - 1}, got {i}")
    return i


def players_arg(name: str, value: object, k: int) -> np.ndarray:
    """A player (0 or 1) for each of ``k`` slots: one for all, or a sequence of ``k``."""
    if isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, (str, bytes)):
        if len(value) != k:
            raise ValueError(
                f"{name} must be 0 or 1, or one of them for each of {k} games, got "
                f"{len(value)} values"
            )
        values = [int_arg(f"{name}[{j}]", x) for j, x in enumerate(value)]
    else:
        values = [int_arg(name, value)] * k
    if not set(values) <= {0, 1}:
        raise ValueError(f"{name} must be 0 or 1, got {short_repr(value)}")
    return np.array(values, dtype=np.int8)


def flag_arg(name: str, value: object) -> bool:
    """``True`` or ``False`` (numpy's bools too); anything else is a ``ValueError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {short_repr(value)}")
    return bool(value)
