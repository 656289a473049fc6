"""PettingZoo's three classic-env wrappers, with the per-step work done directly on the raw env.

:func:`piquet_env.env.env` wraps :class:`~piquet_env.env.raw_env` in TerminateIllegalWrapper,
AssertOutOfBoundsWrapper and OrderEnforcingWrapper, as PettingZoo's classic environments do. As
shipped, every read of ``agent_selection``, ``terminations``, ``rewards`` ... on a wrapper fails
its normal lookup and climbs the stack through ``__getattr__``, and every ``step``/``observe``
passes through each layer; that costs more than the game itself. The subclasses here are the same
wrappers (``isinstance`` holds, the checks and outcomes are identical) with those reads and
pass-throughs going straight to the raw environment. ``tests/test_env_api.py`` plays the same
episodes, an illegal move included, through these and through PettingZoo's classes and compares
every observation, reward, flag and info.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

HOT_ATTRIBUTES = ("agent_selection", "rewards", "terminations", "truncations", "infos", "agents",
                  "_cumulative_rewards")
"""Attributes read at every step; the wrappers below read them from the raw env directly."""


def _direct(name: str) -> property:
    def get(self: wrappers.BaseWrapper) -> Any:
        return getattr(self._raw, name)

    return property(get, doc=f"The raw environment's ``{name}``.")


def _direct_after_reset(name: str) -> property:
    def get(self: wrappers.OrderEnforcingWrapper) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    return property(get, doc=f"The raw environment's ``{name}`` (after reset).")


class TerminateIllegal(wrappers.TerminateIllegalWrapper):
    """TerminateIllegalWrapper for an env whose observation is a dict with ``action_mask``."""

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward)
        self._raw = env.unwrapped

    def observe(self, agent: str) -> Any:
        """The raw observation; remembered (with the info) when ``agent`` is the one to act."""
        raw = self._raw
        obs = raw.observe(agent)
        if agent == raw.agent_selection:
            self._prev_obs = obs
            self._prev_info = raw.infos.get(agent, {})
        return obs

    def step(self, action: Any) -> None:
        """Step the raw env, or end the game if ``action`` is masked out (as the parent does)."""
        raw = self._raw
        agent = raw.agent_selection
        if self._prev_obs is None:
            self.observe(agent)
        mask = self._prev_obs["action_mask"]
        self._prev_obs = self._prev_info = None
        done = raw.terminations[agent] or raw.truncations[agent]
        if self._terminated and done:
            raw._was_dead_step(action)
        elif not done and not mask[action]:
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.truncations, 0)
            raw.rewards[agent] = float(self._illegal_value)
            raw._accumulate_rewards()
            raw._deads_step_first()
            self._terminated = True
        else:
            raw.step(action)


class AssertOutOfBounds(wrappers.AssertOutOfBoundsWrapper):
    """AssertOutOfBoundsWrapper reading the raw env directly."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def observe(self, agent: str) -> Any:
        """Pass-through."""
        return self.env.observe(agent)

    def step(self, action: Any) -> None:
        """Assert that ``action`` is in the action space (or ``None`` for a finished agent)."""
        raw = self._raw
        agent = raw.agent_selection
        assert (action is None and (raw.terminations[agent] or raw.truncations[agent])) or (
            raw.action_space(agent).contains(action)
        ), "action is not in action space"
        self.env.step(action)


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """OrderEnforcingWrapper reading the raw env directly (still an ``AttributeError`` before
    reset)."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def step(self, action: Any) -> None:
        """Step, unless reset has not been called or every agent is done (as the parent)."""
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self._raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def observe(self, agent: str) -> Any:
        """Observe through the wrappers (after reset)."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def last(self, observe: bool = True) -> tuple:
        """As ``AECEnv.last``: observation (through the wrappers), cumulative reward,
        termination, truncation and info of the agent to act."""
        raw = self._raw
        agent = self.agent_selection
        observation = self.observe(agent) if observe else None
        return (observation, raw._cumulative_rewards[agent], raw.terminations[agent],
                raw.truncations[agent], raw.infos[agent])


for _name in HOT_ATTRIBUTES:
    setattr(TerminateIllegal, _name, _direct(_name))
    setattr(AssertOutOfBounds, _name, _direct(_name))
    setattr(OrderEnforcing, _name, _direct_after_reset(_name))


def wrap(env: AECEnv, illegal_reward: float) -> AECEnv:
    """``env`` in TerminateIllegal, AssertOutOfBounds and OrderEnforcing, innermost first."""
    return OrderEnforcing(AssertOutOfBounds(TerminateIllegal(env, illegal_reward)))
