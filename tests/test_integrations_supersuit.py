"""SuperSuit (the ``integrations`` extra): observation wrappers on ``observation_format="vector"``.

SuperSuit's observation wrappers take Box observations, not Dict ones (as for PettingZoo's classic
games); with ``observation_format="vector"`` the observation is the float32 Box and the action
mask moves to ``infos[agent]["action_mask"]``. PettingZoo's own ``api_test`` runs on the wrapped
env, and a random game reads its masks from the infos.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

ss = pytest.importorskip(
    "supersuit", reason='SuperSuit is not installed: pip install -e ".[integrations]"'
)
from pettingzoo.test import api_test  # noqa: E402

from piquet_env import piquet_v0, piquet_v1  # noqa: E402


def wrapped(module=piquet_v1, **kwargs):
    env = module.env(observation_format="vector", mode="deal", **kwargs)
    env = ss.dtype_v0(env, np.float64)
    env = ss.normalize_obs_v0(env, env_min=0.0, env_max=1.0)
    return ss.frame_stack_v1(env, 2)


def test_dict_observations_are_refused_by_supersuit_and_vector_ones_accepted():
    with pytest.raises((AssertionError, AttributeError, TypeError)):
        ss.dtype_v0(piquet_v1.env(), np.float64)  # SuperSuit's transforms need a Box
    env = wrapped()
    assert env.observation_space("player_0").shape == (433 * 2,)
    assert env.observation_space("player_0").dtype == np.float64


def test_pettingzoo_api_test_on_the_wrapped_env():
    api_test(wrapped(), num_cycles=300)


@pytest.mark.parametrize("module", [piquet_v0, piquet_v1])
def test_a_game_through_the_wrappers_reads_masks_from_infos(module):
    env = wrapped(module)
    env.reset(seed=3)
    rng = random.Random(0)
    steps = 0
    for agent in env.agent_iter():
        obs, _reward, term, trunc, info = env.last()
        assert obs.shape == (866,) and obs.min() >= 0.0 and obs.max() <= 1.0
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(info["action_mask"])
        assert len(legal) > 0 and env.unwrapped.agent_selection == agent
        env.step(int(rng.choice(legal)))
        steps += 1
    assert steps > 20
    assert env.unwrapped.game.is_over  # played to the end: no illegal move cut it short
    assert sum(env.unwrapped.returns) == 0
