"""Tianshou (the ``integrations`` extra): its own PettingZoo path with no user wrapper.

``PettingZooEnv(piquet_v1.env())`` in ``DummyVectorEnv``, a ``MultiAgentOffPolicyAlgorithm`` of a
masked DQN learner and Tianshou's masked random opponent, a ``Collector`` into a
``VectorReplayBuffer`` and a short ``run_training`` (Tianshou's tic-tac-toe recipe). Version 0's
infos (strings and lists of varying length) made the replay buffer fail; v1's are fixed-shape.
"""

from __future__ import annotations

import numpy as np
import pytest

tianshou = pytest.importorskip(
    "tianshou", reason='Tianshou is not installed: pip install -e ".[integrations]"'
)
torch = pytest.importorskip("torch")

from tianshou.algorithm import (  # noqa: E402
    DQN,
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Collector, CollectStats, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402
from tianshou.env.pettingzoo_env import PettingZooEnv  # noqa: E402
from tianshou.trainer import OffPolicyTrainerParams  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402

from piquet_env import piquet_v1  # noqa: E402


def make_env() -> PettingZooEnv:
    return PettingZooEnv(piquet_v1.env(mode="deal", reward_scale=0.01))


def make_algorithm(env: PettingZooEnv) -> MultiAgentOffPolicyAlgorithm:
    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=env.action_space.n, hidden_sizes=[64])
    learner = DQN(
        policy=DiscreteQLearningPolicy(
            model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0
        ),
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=0.99,
        target_update_freq=50,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    return MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)


def test_collector_and_training_with_masked_policies():
    torch.manual_seed(0)
    np.random.seed(0)
    envs = DummyVectorEnv([make_env for _ in range(2)])
    envs.seed(0)
    algorithm = make_algorithm(make_env())
    buffer = VectorReplayBuffer(2000, len(envs))
    collector = Collector[CollectStats](algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    stats = collector.collect(n_episode=4)
    assert stats.n_collected_episodes >= 4
    # every stored move was legal: the mask Tianshou built from the observation marks the action
    batch, _ = buffer.sample(0)
    assert batch.obs.mask[np.arange(len(batch)), batch.act].all()
    # the v1 infos reach the buffer as fixed-shape arrays
    assert batch.info.action_mask.shape == (len(batch), 35)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            test_collector=Collector[CollectStats](algorithm, DummyVectorEnv([make_env])),
            max_epochs=1,
            epoch_num_steps=64,
            collection_step_num_env_steps=16,
            test_step_num_episodes=1,
            batch_size=16,
            update_step_num_gradient_steps_per_sample=0.25,
            test_in_training=False,
            show_progress=False,
            verbose=False,
            multi_agent_return_reduction=lambda rews: rews[:, 0],
        )
    )
    assert result.timing.total_time > 0
    learner = algorithm.get_algorithm("player_0")
    assert all(torch.isfinite(p).all() for p in learner.parameters())
