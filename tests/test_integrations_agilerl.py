"""AgileRL (the ``agilerl`` extra, in its own environment: it pins pettingzoo<1.27 and
tensordict 0.13): its multi-agent PettingZoo path with action masks, no user wrapper.

AgileRL's multi-agent algorithms take PettingZoo's parallel API and read action masks from
``infos[agent]["action_mask"]``; ``turn_based_aec_to_parallel`` (PettingZoo's own) turns the AEC
env into a parallel one, and ``observation_format="vector"`` gives the Box observations its
networks take. ``AsyncPettingZooVecEnv`` vectorises it; MADDPG's masked actions are legal and
AgileRL's own ``train_multi_agent_off_policy`` runs a short training.

AgileRL 2.58's IPPO cannot take action masks at all (``extract_action_masks`` tests
``None in group_masks`` on numpy arrays: "truth value of an array ... is ambiguous"), and
``import agilerl.algorithms`` needs ``peft`` although only AgileRL's ``llm`` extra lists it.
"""

from __future__ import annotations

import numpy as np
import pytest

agilerl = pytest.importorskip(
    "agilerl", reason='AgileRL is not installed: pip install -e ".[agilerl]" (own venv)'
)
from agilerl.algorithms import MADDPG  # noqa: E402
from agilerl.components.replay_buffer import ReplayBuffer  # noqa: E402
from agilerl.training.train_multi_agent_off_policy import (  # noqa: E402
    train_multi_agent_off_policy,
)
from agilerl.vector.pz_async_vec_env import AsyncPettingZooVecEnv  # noqa: E402
from pettingzoo.utils.conversions import turn_based_aec_to_parallel  # noqa: E402

from piquet_env import piquet_v1  # noqa: E402


# --8<-- [start:env]
def make_env():
    env = piquet_v1.env(observation_format="vector", mode="deal", reward_scale=0.01)
    return turn_based_aec_to_parallel(env)


def make_maddpg(env) -> MADDPG:
    agents = env.possible_agents
    return MADDPG(
        observation_spaces=[env.single_observation_space(a) for a in agents],
        action_spaces=[env.single_action_space(a) for a in agents],
        agent_ids=agents,
        batch_size=16,
        vect_noise_dim=env.num_envs,  # exploration noise per sub-environment
    )


# --8<-- [end:env]


def test_masked_actions_in_an_async_vector_env():
    env = AsyncPettingZooVecEnv([make_env for _ in range(2)])
    try:
        agent = make_maddpg(env)
        obs, info = env.reset(seed=0)
        acted = 0
        for _ in range(80):
            action, _raw = agent.get_action(obs=obs, infos=info)
            for a in env.possible_agents:
                masks = info[a]["action_mask"]
                for e in range(2):
                    if masks[e].any():  # this agent is to act in env e
                        assert masks[e][int(action[a][e])] == 1
                        acted += 1
            obs, _reward, _term, _trunc, info = env.step(action)
        assert acted >= 80 * 2 - 4  # one agent acts per env and step (bar resets)
    finally:
        env.close()


# --8<-- [start:train]
def test_agilerls_own_multi_agent_training_loop():
    env = AsyncPettingZooVecEnv([make_env for _ in range(2)])
    try:
        population = [make_maddpg(env)]
        memory = ReplayBuffer(max_size=2000)
        trained, fitnesses = train_multi_agent_off_policy(
            env,
            "piquet_v1",
            "MADDPG",
            population,
            memory,
            max_steps=200,
            evo_steps=100,
            eval_steps=None,
            eval_loop=1,
            verbose=False,
        )
        assert len(trained) == 1 and len(fitnesses) >= 1
        assert all(np.isfinite(np.asarray(f, dtype=float)).all() for f in fitnesses)
    finally:
        env.close()


# --8<-- [end:train]
