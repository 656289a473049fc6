"""The piquet PettingZoo environment, registered with RLlib through its PettingZoo wrapper.

RLlib's current API stack runs multi-agent environments as
:class:`~ray.rllib.env.multi_agent_env.MultiAgentEnv`; :func:`make_env` wraps
:func:`piquet_env.piquet_v0.env` (the AEC environment with PettingZoo's standard wrappers) in
RLlib's :class:`~ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`, which turns the turn-based
AEC loop into RLlib's dict-per-agent steps: after each move only the agent to act next gets an
observation, and each agent's rewards reach it with its next observation (or at the end).

The env config is passed straight to :func:`piquet_env.piquet_v0.env` as keyword options
(``rules``, ``variants``, ``mode`` or its alias ``episode``, ``reward``, ``reward_scale``), so any
option of the environment works unchanged. Observations stay the environment's dict
``{"observation", "action_mask"}``; :class:`piquet_training.rllib.module.MaskedActorCriticModule`
reads both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

ENV_NAME = "piquet"
"""Name under which :func:`register` registers the environment with RLlib."""
ENV_OPTIONS = ("rules", "variants", "mode", "episode", "reward", "reward_scale")
"""Keys an env config may hold (the options of :func:`piquet_env.piquet_v0.env`)."""


def env_options(env_config: Mapping[str, Any]) -> dict[str, Any]:
    """The environment options of an RLlib env config, checked: unknown keys raise ``ValueError``
    (RLlib's ``EnvContext`` extras such as ``worker_index`` are attributes, not keys)."""
    options = dict(env_config)
    unknown = sorted(set(options) - set(ENV_OPTIONS))
    if unknown:
        raise ValueError(f"unknown piquet env option(s) {unknown}; expected some of {ENV_OPTIONS}")
    return options


def make_env(env_config: Mapping[str, Any] | None = None) -> PettingZooEnv:
    """A piquet environment as an RLlib multi-agent env (agents ``player_0``, ``player_1``)."""
    from piquet_env.piquet_v0 import env as piquet_aec_env

    return PettingZooEnv(piquet_aec_env(**env_options(env_config or {})))


def register(name: str = ENV_NAME) -> str:
    """Register :func:`make_env` with RLlib (and Tune) under ``name``; return the name."""
    register_env(name, make_env)
    return name
