"""TorchRL (the ``integrations`` extra): its own PettingZoo path with no user wrapper.

``PettingZooWrapper(env=piquet_v1.env(), use_mask=True)`` passes ``check_env_specs``, plays a whole
deal with a masked policy (``MaskedCategorical`` over each group's ``action_mask``) and runs in a
``ParallelEnv``. Version 0's infos (strings, lists, dicts) made the wrapper fail building its
specs (``new(): invalid data type 'str'``); v1's are one fixed-shape array.
"""

from __future__ import annotations

import pytest

torchrl = pytest.importorskip(
    "torchrl", reason='TorchRL is not installed: pip install -e ".[integrations]"'
)
import torch  # noqa: E402
from tensordict import TensorDictBase  # noqa: E402
from torchrl.envs import ParallelEnv  # noqa: E402
from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402
from torchrl.modules import MaskedCategorical  # noqa: E402

from piquet_env import piquet_v1  # noqa: E402

GROUPS = ("player_0", "player_1")


def make_env() -> PettingZooWrapper:
    return PettingZooWrapper(env=piquet_v1.env(mode="deal"), use_mask=True, seed=0)


def masked_random_policy(td: TensorDictBase) -> TensorDictBase:
    """Each group samples uniformly among its legal actions (the acting agent's mask is the
    engine's legal actions; TorchRL marks every action for the agent not to act, and ignores it)."""
    for group in GROUPS:
        mask = td[group, "action_mask"]
        dist = MaskedCategorical(logits=torch.zeros(mask.shape), mask=mask)
        td[group, "action"] = dist.sample()
    return td


def test_check_env_specs_and_a_masked_rollout_to_the_end_of_a_deal():
    env = make_env()
    check_env_specs(env)
    assert env.group_map == {"player_0": ["player_0"], "player_1": ["player_1"]}
    torch.manual_seed(0)
    rollout = env.rollout(500, policy=masked_random_policy, break_when_any_done=True)
    assert rollout["next", "done"][-1].all()
    assert not rollout["next", "done"][:-1].any()
    for group in GROUPS:
        acting = rollout[group, "mask"][:, 0]  # this agent was the one to act
        mask = rollout[group, "action_mask"][:, 0]
        action = rollout[group, "action"][:, 0]
        assert acting.any()
        assert mask[acting].gather(-1, action[acting].unsqueeze(-1)).all()  # every move legal
    # a deal is zero-sum: the deal point difference, to each side with opposite signs
    r0 = rollout["next", "player_0", "reward"].sum()
    r1 = rollout["next", "player_1", "reward"].sum()
    assert r0 == -r1
    assert len(rollout) > 20  # exchange, declarations and twelve tricks each


def test_parallel_env():
    penv = ParallelEnv(2, make_env)
    try:
        td = penv.rollout(30, policy=masked_random_policy)
        assert td.batch_size == torch.Size([2, 30])
        assert td["player_0", "observation", "observation"].shape == (2, 30, 1, 433)
    finally:
        penv.close()
