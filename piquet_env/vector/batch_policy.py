"""The opponent protocol of the vector envs, and a uniform random batch policy.

A batch policy is any callable ``(obs, mask) -> actions``: ``obs`` ``(k, size)`` float32
observations, ``mask`` ``(k, n_actions)`` bool legal actions, ``actions`` ``(k,)`` integer action
ids, one legal action per row. A torch policy fits by converting at its edges (``torch.from_numpy``
in, ``.numpy()`` out); the env layer itself never imports torch, agents or training.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from piquet_env.vector.tables import popcount


@runtime_checkable
class BatchPolicy(Protocol):
    """Chooses one legal action per row: ``policy(obs, mask) -> actions``."""

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray: ...


_SELECT = np.array(
    [[([i for i in range(8) if b >> i & 1] + [0] * 8)[k] for k in range(8)] for b in range(256)],
    dtype=np.int64,
)
"""``_SELECT[byte, k]``: the position of the ``k``-th set bit of ``byte``."""
_SELECT_FLAT = _SELECT.reshape(-1)


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a bool ``mask`` ``(k, n_actions)``
    (``-1`` for a row with no legal action)."""
    packed = np.ascontiguousarray(np.packbits(mask, axis=1, bitorder="little").T)  # (bytes, k)
    counts = popcount(packed).astype(np.int16)
    total = counts.sum(axis=0, dtype=np.int16)
    pick = (rng.random(mask.shape[0]) * total).astype(np.int16)
    byte = np.zeros(mask.shape[0], dtype=np.int64)
    left = pick.copy()
    chosen = packed[0].copy()
    walking = np.ones(mask.shape[0], dtype=bool)
    for b in range(1, packed.shape[0]):  # walk the bytes until the pick falls in one
        past = walking & (left >= counts[b - 1])
        walking = past
        left -= np.where(past, counts[b - 1], 0).astype(np.int16)
        byte += past
        chosen = np.where(past, packed[b], chosen)
    actions = byte * 8 + _SELECT_FLAT[chosen.astype(np.int64) * 8 + left.clip(0, 7)]
    return np.where(total > 0, actions, -1)


class RandomPolicy:
    """Uniform random legal actions from its own generator (seeded by ``seed``: an int, a
    sequence of ints, or ``None``, as ``np.random.default_rng`` takes them)."""

    def __init__(self, seed: int | Sequence[int] | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One random legal action per row of ``mask``."""
        return sample_legal(mask, self.rng)
