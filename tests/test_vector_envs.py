"""The vector envs: the Gymnasium ``VectorEnv`` (one learner seat against a batch policy), the
two-seat self-play interface, and the vector benchmark's entry point."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from piquet_env.observation import encoder_for
from piquet_env.testing.batch_speed import bench_vector, main, print_vector_report
from piquet_env.vector import (
    BatchActionError,
    BatchPolicy,
    PiquetVectorEnv,
    RandomPolicy,
    SelfPlayEnv,
    sample_legal,
)


class Recording:
    """A batch policy that checks what it is given and plays the first legal action."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        assert obs.dtype == np.float32 and mask.dtype == bool and len(obs) == len(mask)
        assert mask.any(axis=1).all()
        self.calls += 1
        return mask.argmax(axis=1)


def test_spaces_and_metadata():
    env = PiquetVectorEnv(num_envs=8, rules="classic+normand", seed=0)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (442,)
    assert env.observation_space.shape == (8, 442)
    assert env.single_action_space.n == 36
    assert env.action_space.shape == (8,)
    obs, infos = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert env.action_masks().shape == (8, 36)
    assert (infos["seat"] == env.seats).all()
    assert env.action_space.contains(sample_legal(env.action_masks(), np.random.default_rng(0)))


def test_learner_always_acts_and_returns_sum_to_results():
    opponent = Recording()
    assert isinstance(opponent, BatchPolicy)
    env = PiquetVectorEnv(
        num_envs=16, episode="deal", reward="deal_points", opponent=opponent, seed=3
    )
    obs, infos = env.reset(seed=3)
    rng = np.random.default_rng(3)
    returns = np.zeros(16)
    finished = 0
    for _ in range(400):
        batch = env.batch
        assert (batch.current_player == env.seats).all()  # the learner is to act everywhere
        enc = encoder_for(env.rules)
        for i in (0, 7):
            g = batch.to_game(i)
            assert np.array_equal(obs[i], enc.encode(g, int(env.seats[i])))
        obs, rewards, terms, truncs, infos = env.step(sample_legal(env.action_masks(), rng))
        assert env.observation_space.contains(obs) and not truncs.any()
        returns += rewards
        if terms.any():
            assert infos["_final_obs"].tolist() == terms.tolist()
            for i in np.flatnonzero(terms):
                info = infos["final_info"][i]
                assert returns[i] == info["result"]
                assert infos["final_obs"][i].shape == (433,)
                returns[i] = 0
                finished += 1
    assert finished > 20 and opponent.calls > 0


def test_reset_is_deterministic_and_seats():
    a = PiquetVectorEnv(num_envs=6, seed=1, opponent=RandomPolicy(1))
    b = PiquetVectorEnv(num_envs=6, seed=1, opponent=RandomPolicy(1))
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    assert np.array_equal(oa, ob) and np.array_equal(a.seats, b.seats)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    for _ in range(30):
        ra = a.step(sample_legal(a.action_masks(), rng_a))
        rb = b.step(sample_legal(b.action_masks(), rng_b))
        assert np.array_equal(ra[0], rb[0]) and np.array_equal(ra[1], rb[1])
    fixed = PiquetVectorEnv(num_envs=4, seat=1, seed=0)
    fixed.reset(seed=0)
    assert (fixed.seats == 1).all()
    with pytest.raises(ValueError, match="seat"):
        PiquetVectorEnv(num_envs=2, seat=2)


def test_gymnasium_vector_wrappers_accept_it():
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(
        PiquetVectorEnv(num_envs=8, episode="deal", seed=2)
    )
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    episodes = 0
    for _ in range(200):
        *_, infos = env.step(sample_legal(env.unwrapped.action_masks(), rng))
        if "episode" in infos:
            episodes += int(infos["_episode"].sum())
    assert episodes > 0


def test_illegal_learner_action_raises_untouched():
    env = PiquetVectorEnv(num_envs=3, seed=0)
    env.reset(seed=0)
    mask = env.action_masks()
    actions = sample_legal(mask, np.random.default_rng(0))
    actions[1] = np.flatnonzero(~mask[1])[0]
    with pytest.raises(BatchActionError, match="game 1"):
        env.step(actions)
    assert np.array_equal(env.action_masks(), mask)


def test_self_play_both_seats_and_critic_state():
    env = SelfPlayEnv(
        num_envs=8, rules="standard+saison", seed=5, critic_state=True, reward="deal_points"
    )
    t = env.reset(seed=5)
    enc = encoder_for(env.batch.rules)
    rng = np.random.default_rng(5)
    totals = np.zeros((8, 2))
    ended = 0
    for step in range(1500):
        if step % 97 == 0:
            for i in (0, 5):
                g = env.batch.to_game(i)
                assert np.array_equal(t.state[i], enc.state(g))
                assert np.array_equal(t.obs[i], enc.encode(g, int(t.seat[i])))
        t = env.step(sample_legal(t.mask, rng))
        totals += t.rewards
        assert (t.rewards.sum(axis=1) == 0).all()
        for k, i in enumerate(t.ended_games.tolist()):
            assert totals[i].tolist() == t.results[k].tolist()
            totals[i] = 0
            ended += 1
    assert ended > 0


def test_benchmark_runs_and_prints(capsys):
    res = bench_vector(
        "standard", sizes=(64,), threads=(1, 2), seconds=0.2, memory_games=500, processes=(2,)
    )
    assert [r["threads"] for r in res["rows"]] == [1, 2, "2 proc"]
    assert all(r["steps_per_s"] > 0 for r in res["rows"])
    print_vector_report(res)
    text = capsys.readouterr().out
    assert "agent-steps/s" in text and "env()" in text and "500 parallel games" in text
    assert main(["--sizes", "32", "--threads", "1", "--seconds", "0.1", "--memory-games", "0"]) == 0


def test_a_torch_policy_is_an_opponent():
    torch = pytest.importorskip("torch")
    net = torch.nn.Linear(433, 35)

    def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = net(torch.from_numpy(obs))
            logits[~torch.from_numpy(mask)] = -torch.inf
            return logits.argmax(dim=1).numpy()

    env = PiquetVectorEnv(num_envs=16, episode="deal", opponent=policy, seed=1)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(60):
        *_, terms, _, _ = env.step(sample_legal(env.action_masks(), rng))
        ended += int(terms.sum())
    assert ended > 0
