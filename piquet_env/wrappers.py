"""PettingZoo's three classic-env wrappers, with the per-step work done directly on the raw env.

:func:`piquet_env.piquet_v0.env` wraps :class:`~piquet_env.piquet_v0.raw_env` in
TerminateIllegalWrapper, AssertOutOfBoundsWrapper and OrderEnforcingWrapper, as PettingZoo's
classic environments do. As shipped, every read of ``agent_selection``, ``terminations``,
``rewards`` ... on a wrapper fails its normal lookup and climbs the stack through ``__getattr__``,
and every ``step``/``observe`` passes through each layer; that costs more than the game itself.
The subclasses here are the same wrappers (``isinstance`` holds, the checks and outcomes are
identical) with those reads going straight to the raw environment, ``observe`` handed down as the
raw env's own method, and the illegal-move check reading the raw env's legal ids (exactly what the
action mask marks) instead of a remembered observation. ``tests/test_env_api.py`` plays the same
episodes, an illegal move included, through these and through PettingZoo's classes and compares
every observation, reward, flag and info.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

HOT_ATTRIBUTES = (
    "agent_selection",
    "rewards",
    "terminations",
    "truncations",
    "infos",
    "agents",
    "_cumulative_rewards",
)
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
    """TerminateIllegalWrapper around :class:`~piquet_env.piquet_v0.raw_env`.

    The parent remembers the last observation to read its ``action_mask`` at the next step; this
    one reads the raw env's legal action ids (``raw._legal``, exactly what that mask marks), so
    ``observe`` is a pure pass-through.
    """

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward)
        self._raw = env.unwrapped
        self.observe = env.observe  # pure pass-through: hand out the inner method itself

    def step(self, action: Any) -> None:
        """Step the raw env, or end the game if ``action`` is not legal (as the parent does)."""
        raw = self._raw
        agent = raw.agent_selection
        done = raw.terminations[agent] or raw.truncations[agent]
        if self._terminated and done:
            raw._was_dead_step(action)
        elif not done and action not in raw._legal:
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
        self.observe = env.observe  # a pure pass-through: hand out the inner method itself
        self._inner_step = env.step

    def step(self, action: Any) -> None:
        """Assert that ``action`` is in the action space (or ``None`` for a finished agent)."""
        raw = self._raw
        agent = raw.agent_selection
        assert (action is None and (raw.terminations[agent] or raw.truncations[agent])) or (
            raw.action_spaces[agent].contains(action)
        ), "action is not in action space"
        self._inner_step(action)


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """OrderEnforcingWrapper reading the raw env directly (still an ``AttributeError`` before
    reset)."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped
        self._inner_step = env.step
        self._inner_observe = env.observe

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset (as the parent); a first reset that fails leaves the env as never reset, so that
        a step is refused as before any reset, not with a missing attribute."""
        try:
            super().reset(seed=seed, options=options)
        except Exception:
            if self._raw.game is None:
                self._has_reset = False
            raise

    def step(self, action: Any) -> None:
        """Step, unless reset has not been called or every agent is done (as the parent)."""
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self._raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self._inner_step(action)

    def observe(self, agent: str) -> Any:
        """Observe through the wrappers (after reset)."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self._inner_observe(agent)

    def last(self, observe: bool = True) -> tuple:
        """As ``AECEnv.last``: observation (through the wrappers), cumulative reward,
        termination, truncation and info of the agent to act."""
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        raw = self._raw
        agent = raw.agent_selection
        observation = self._inner_observe(agent) if observe else None
        return (
            observation,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def agent_iter(self, max_iter: int = 2**63) -> _AgentIterable:
        """Iterate over the agent to act, as the parent's iterable (step or reset between)."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)


class _AgentIterable(AECOrderEnforcingIterable):
    """PettingZoo's order-enforcing iterable over the agent to act, with a faster iterator."""

    def __iter__(self) -> _AgentIterator:
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(AECOrderEnforcingIterator):
    """PettingZoo's order-enforcing agent iterator, reading the raw env directly."""

    def __init__(self, env: OrderEnforcing, max_iter: int) -> None:
        super().__init__(env, max_iter)
        self._raw = env._raw

    def __next__(self) -> str:
        raw = self._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        env = self.env
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return raw.agent_selection


for _name in HOT_ATTRIBUTES:
    setattr(TerminateIllegal, _name, _direct(_name))
    setattr(AssertOutOfBounds, _name, _direct(_name))
    setattr(OrderEnforcing, _name, _direct_after_reset(_name))


def wrap(env: AECEnv, illegal_reward: float) -> AECEnv:
    """``env`` in TerminateIllegal, AssertOutOfBounds and OrderEnforcing, innermost first."""
    return OrderEnforcing(AssertOutOfBounds(TerminateIllegal(env, illegal_reward)))
