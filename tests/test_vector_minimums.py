"""The batched engine at the declared minimum versions (numpy 1.24.4, Gymnasium 1.0.0): CI's
minimum-version run imports and steps ``BatchGame``, ``PiquetVectorEnv`` (every autoreset mode,
and through ``gymnasium.make_vec``) and ``SelfPlayEnv``, checks a sample against ``Game``, and
checks the popcount that stands in for numpy 2.0's ``np.bitwise_count``. Runs in any
environment; needs no extra."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import piquet_env
from piquet_env.testing.difftest import compare
from piquet_env.vector import (
    AutoresetMode,
    BatchGame,
    PiquetVectorEnv,
    RandomPolicy,
    SelfPlayEnv,
    sample_legal,
)
from piquet_env.vector.tables import popcount, popcount_fallback


def test_popcount_fallback_counts_bits():
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**64, size=(7, 5), dtype=np.uint64, endpoint=False)
    words[0, :3] = [0, 2**64 - 1, 2**63]
    expected = [[bin(int(w)).count("1") for w in row] for row in words]
    assert popcount_fallback(words).tolist() == expected
    assert popcount_fallback(words).dtype == np.uint8
    assert popcount(words).tolist() == expected
    small = np.arange(256, dtype=np.uint8)
    assert popcount_fallback(small).tolist() == [bin(b).count("1") for b in range(256)]
    assert int(popcount_fallback(np.uint64(2**64 - 1))) == 64
    # numpy 2.0 and later count with np.bitwise_count, earlier ones with the fallback
    assert (popcount is popcount_fallback) == (not hasattr(np, "bitwise_count"))


def test_autoreset_mode_is_gymnasiums_where_it_has_one():
    real = getattr(gymnasium.vector, "AutoresetMode", None)
    assert AutoresetMode is (real or AutoresetMode)
    assert [m.value for m in AutoresetMode] == ["NextStep", "SameStep", "Disabled"]


def test_batch_game_steps_and_matches_game():
    batch = BatchGame("classic+normand", n=32, seed=0)
    out = batch.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(600):
        out = batch.step(sample_legal(out.mask, rng))
        ended += int(out.ended.sum())
        assert out.mask.any(axis=1).all()
    assert ended > 0
    for preset, episode, games in (("standard", "deal", 200), ("classic", "partie", 6)):
        rep = compare(preset, games=games, batch=32, mode=episode, seed=2)
        assert rep.differences == [] and rep.games == games


@pytest.mark.parametrize("mode", ["SameStep", "NextStep", "Disabled"])
def test_vector_env_steps_in_every_autoreset_mode(mode):
    env = PiquetVectorEnv(num_envs=8, mode="deal", seed=1, autoreset_mode=mode)
    assert env.metadata["autoreset_mode"] == AutoresetMode(mode)
    obs, _ = env.reset(seed=[1, 2, 3, 4, 5, 6, 7, 8])
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(150):
        obs, rewards, terms, truncs, infos = env.step(sample_legal(env.action_masks(), rng))
        assert obs.shape == (8, 433) and rewards.dtype == np.float32 and not truncs.any()
        ended += int(terms.sum())
        if terms.any() and mode == "SameStep":
            assert infos["final_info"]["_result"].tolist() == terms.tolist()
        elif terms.any():
            assert infos["_result"].tolist() == terms.tolist()
            if mode == "Disabled":
                env.reset(options={"reset_mask": terms})
    assert ended > 5


def test_make_vec_and_self_play():
    gymnasium.register_envs(piquet_env)
    env = gymnasium.make_vec("PiquetDeal-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(env, PiquetVectorEnv) and env.batch.mode == "deal"
    env.reset(seed=0)
    env.step(sample_legal(env.action_masks(), np.random.default_rng(0)))
    sp = SelfPlayEnv(num_envs=8, seed=3, critic_state=True)
    t = sp.reset(seed=3)
    policy = RandomPolicy(3)
    for _ in range(300):
        t = sp.step(policy(t.obs, t.mask))
        assert (t.rewards.sum(axis=1) == 0).all()
    assert t.state is not None and t.state.shape == (8, sp.state_size)
