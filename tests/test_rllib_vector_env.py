"""The exploiter's env on the batched engine (:class:`TargetVectorEnv`): its games are the rules'
games, the target plays as its agent does, rewards sum to the exploiter's points, autoreset is
Gymnasium's ``NEXT_STEP``, and RLlib's env runner trains on it."""

from __future__ import annotations

import os

import gymnasium
import numpy as np
import pytest

if not os.environ.get("CI"):  # CI installs the rllib extra: there a missing Ray fails
    pytest.importorskip("ray.rllib", reason="the rllib extra is not installed")

from piquet_agents.registry import make_agent
from piquet_env.agent import Turn
from piquet_env.observation import encoder_for
from piquet_training.rllib.vector_env import ENV_ID, TargetVectorEnv

TINY = "mini[suits=2,ranks=2,hand_size=1]"


def _random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row (0 where a game has none: it is ignored)."""
    out = np.zeros(len(mask), dtype=np.int64)
    for i, row in enumerate(mask):
        legal = np.flatnonzero(row)
        if legal.size:
            out[i] = rng.choice(legal)
    return out


@pytest.mark.parametrize("target", ["baseline", "heuristic", "random"])
def test_returns_are_the_point_differences_and_resets_come_next_step(target) -> None:
    """Every game's rewards sum to its result for the exploiter's seat (scaled), the step that
    ends a game shows an empty mask, the next step deals it afresh (its action ignored), both
    seats are dealt, and the moves counted are the exploiter's and the target's."""
    env = TargetVectorEnv(
        8, target=target, rules="standard", mode="deal", reward_scale=0.01, critic_state=True
    )
    assert env.batched == (target != "heuristic")
    obs, _ = env.reset(seed=5)
    assert obs["state"].shape == (8, env.single_observation_space["state"].shape[0])
    assert obs["state"].dtype == np.float32 and obs["state"].any(axis=1).all()
    assert obs["observation"].shape == (8, env.single_observation_space["observation"].shape[0])
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].any(axis=1).all()
    rng = np.random.default_rng(0)
    returns = np.zeros(8)
    games, mine, waiting = 0, 0, np.zeros(8, dtype=bool)
    while games < 12:
        actions = _random_actions(obs["action_mask"], rng)
        mine += int((~waiting).sum())
        obs, rew, term, trunc, info = env.step(actions)
        assert not trunc.any() and not rew[waiting].any()
        assert obs["action_mask"][~term].any(axis=1).all()  # the exploiter is to act
        assert not obs["action_mask"][term].any()  # a final observation
        returns[~waiting] += rew[~waiting]
        for i in np.flatnonzero(term):
            assert returns[i] == pytest.approx(info["result"][i] * 0.01, abs=1e-5)
            returns[i] = 0.0
            games += 1
        waiting = term
    assert env.moves > mine  # the target moved too


def test_the_target_plays_as_its_agent_on_the_rules_games() -> None:
    """Beside each batched game, the same game replayed on :class:`~piquet_env.game.Game` with
    the exploiter's moves and the greedy baseline agent's answers shows the exploiter the same
    observations, legal actions and full-information states (an asymmetric critic's input),
    step for step, until it ends."""
    env = TargetVectorEnv(4, target="baseline", rules="standard", mode="deal", critic_state=True)
    assert env.single_observation_space["state"].shape == (encoder_for(env.rules).state_size,)
    agent = make_agent("baseline", env.rules, seed=0)
    enc = encoder_for(env.rules)
    obs, _ = env.reset(seed=11)
    inner = env._inner
    games = [inner.batch.to_game(i) for i in range(4)]
    seats = inner.seats.copy()
    rng = np.random.default_rng(1)
    live = np.ones(4, dtype=bool)
    checked = 0
    while live.any():
        for i in np.flatnonzero(live):
            g, seat = games[i], int(seats[i])
            assert g.current_player == seat
            np.testing.assert_array_equal(obs["observation"][i], enc.encode(g, seat))
            np.testing.assert_array_equal(obs["state"][i], enc.state(g, seat))
            legal = np.zeros(enc.n_actions, dtype=np.int8)
            legal[g.legal_actions()] = 1
            np.testing.assert_array_equal(obs["action_mask"][i], legal)
            checked += 1
        actions = _random_actions(obs["action_mask"], rng)
        obs, _, term, _, info = env.step(actions)
        for i in np.flatnonzero(live):
            g, seat = games[i], int(seats[i])
            g.apply(int(actions[i]))
            while not g.is_over and g.current_player != seat:
                g.apply(int(agent.act(Turn(g, g.current_player))))
            assert g.is_over == bool(term[i])
            if term[i]:
                assert g.result[seat] == info["result"][i]
                live[i] = False
    assert checked > 40


def test_gymnasium_builds_it_from_its_id() -> None:
    env = gymnasium.make_vec(ENV_ID, num_envs=3, target="random", rules=TINY)
    obs, _ = env.reset(seed=0)
    assert isinstance(env, TargetVectorEnv) and obs["action_mask"].shape[0] == 3
    with pytest.raises(ValueError, match="unknown piquet env option"):
        TargetVectorEnv(2, target="random", colour="red")


def test_the_self_target_plays_the_weights_it_is_given() -> None:
    """Target ``self`` is a network of the given widths; given weights, its batch policy's
    logits are that network's."""
    import torch

    from piquet_agents.network import ActorCritic

    env = TargetVectorEnv(4, target="self", rules=TINY, hidden=(16,))
    obs, _ = env.reset(seed=0)
    enc = encoder_for(env.rules)
    net = ActorCritic(enc.size, enc.n_actions, (16,), "tanh")
    env.set_target_weights({k: v.numpy() for k, v in net.state_dict().items()})
    o, m = torch.from_numpy(obs["observation"]), torch.from_numpy(obs["action_mask"])
    which = torch.zeros(4, dtype=torch.int64)
    expected = net.policy_head(net.trunk(o)).masked_fill(m == 0, -1e9)
    assert torch.allclose(env.policy.stack.logits(which, o, m), expected, atol=1e-5)
    with pytest.raises(ValueError, match="no network"):
        TargetVectorEnv(2, target="random", rules=TINY).set_target_weights({})


def test_self_play_refreshes_the_opponent_with_the_learner_after_each_iteration() -> None:
    """Through RLlib (local env runner): after an iteration the target ``self`` holds the
    learner's updated actor, weight for weight."""
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from piquet_training.rllib.module import MaskedActorCriticModule
    from piquet_training.rllib.vector_env import learner_actor, register, self_play_callback

    owns = not ray.is_initialized()
    if owns:
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    spec = RLModuleSpec(module_class=MaskedActorCriticModule, model_config={"hidden": [16]})
    config = (
        PPOConfig()
        .environment(register(), env_config={"target": "self", "rules": TINY, "hidden": [16]})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=4)
        .env_runners(gym_env_vectorize_mode="vector_entry_point")
        .rl_module(rl_module_spec=spec)
        .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1)
        .callbacks(self_play_callback())
    )
    algo = config.build_algo()
    try:
        start = learner_actor(algo)
        algo.train()
        actor = learner_actor(algo)
        held = algo.env_runner.env.unwrapped.policy.network.state_dict()
    finally:
        algo.stop()
        if owns:
            ray.shutdown()
    assert any(not np.array_equal(start[k], v) for k, v in actor.items())  # it learned
    for k, v in actor.items():
        assert torch.equal(held[k], torch.as_tensor(v)), k
