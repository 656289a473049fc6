"""Hypothesis properties of the batched engine over random presets, seeds, batch sizes and play:
every card is in exactly one place, rewards are zero-sum, the player to act always has a legal
action, and observations stay within the observation space's bounds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from piquet_env.rewards import REWARDS
from piquet_env.rules import all_presets
from piquet_env.vector import BatchGame, sample_legal

PRESETS = all_presets()


def _places(b: BatchGame) -> list[np.ndarray]:
    s = b.state
    cols = np.arange(b.rules.talon_size)
    talon = np.where(cols[None, :] >= s.talon_pos[:, None], s.talon, -1).astype(np.int64)
    talon_mask = np.bitwise_or.reduce(
        np.where(talon >= 0, np.uint64(1) << talon.clip(0).astype(np.uint64), np.uint64(0)), axis=1
    )
    return [
        s.hands[:, 0],
        s.hands[:, 1],
        s.discards[:, 0],
        s.discards[:, 1],
        s.played[:, 0],
        s.played[:, 1],
        talon_mask,
    ]


@settings(max_examples=25, deadline=None)
@given(
    preset=st.sampled_from(PRESETS),
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 48),
    steps=st.integers(1, 400),
    mode=st.sampled_from(["partie", "deal"]),
    reward=st.sampled_from(REWARDS),
)
def test_batch_invariants(preset, seed, n, steps, mode, reward):
    b = BatchGame(preset, n=n, mode=mode, reward=reward, seed=seed)
    out = b.reset()
    rng = np.random.default_rng(seed)
    pack = np.uint64(preset.pack_mask)
    high = b.encoder.high
    for _ in range(steps):
        assert ((out.seat == 0) | (out.seat == 1)).all()
        assert out.mask.any(axis=1).all()  # the player to act always has a legal action
        assert ((out.obs >= 0) & (out.obs <= high)).all()
        places = _places(b)
        union = np.bitwise_or.reduce(places)
        assert (union == pack).all()  # every card is somewhere ...
        total = sum(np.bitwise_count(p).astype(np.int64) for p in places)
        assert (total == preset.pack_size).all()  # ... and in one place only
        out = b.step(sample_legal(out.mask, rng))
        assert (out.rewards.sum(axis=1) == 0).all()  # zero-sum
        assert (out.results.sum(axis=1) == 0).all()
        assert (b.state.tricks_won.sum(axis=1) <= 12).all()
