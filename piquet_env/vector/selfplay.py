"""Both seats of N games for a self-play trainer: one decision per game per step, whoever acts.

>>> import numpy as np
>>> env = SelfPlayEnv(num_envs=4, seed=0, critic_state=True)
>>> t = env.reset(seed=0)
>>> t.obs.shape, t.mask.shape, t.seat.shape, t.state.shape
((4, 433), (4, 35), (4,), (4, 1060))
>>> t = env.step(sample_legal(t.mask, np.random.default_rng(0)))
>>> t.rewards.shape
(4, 2)

At each step the trainer reads, for every game, the seat to act, that seat's observation and legal
mask (and, with ``critic_state=True``, the full-information state for an asymmetric critic),
chooses one action per game, and gets both seats' rewards for that step. A seat's return is the
sum of its rewards over the episode; ``done`` marks the step that ended a game (the game in that
slot has already restarted: same-step autoreset, see :mod:`piquet_env.vector.engine`) and
``final_obs`` ``(k, 2, size)`` holds both seats' final observations of the games that ended.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from piquet_env.rules import Rules
from piquet_env.settings import EnvSettings
from piquet_env.vector.batch_policy import sample_legal
from piquet_env.vector.checks import count_arg, flag_arg, seed_arg
from piquet_env.vector.engine import BatchGame, StepResult

__all__ = ["SelfPlayEnv", "SelfPlayStep", "sample_legal"]


class SelfPlayStep(NamedTuple):
    """One self-play step: ``seat`` ``(N,)``, ``obs`` ``(N, size)``, ``mask`` ``(N, n_actions)``,
    ``rewards`` ``(N, 2)`` per seat, ``done`` ``(N,)``, ``ended_games``, ``results`` ``(k, 2)``,
    ``final_obs`` ``(k, 2, size)`` and ``state`` ``(N, state_size)`` or ``None``. ``obs`` and
    ``mask`` are copies the trainer may keep."""

    seat: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    rewards: np.ndarray
    done: np.ndarray
    ended_games: np.ndarray
    results: np.ndarray
    final_obs: np.ndarray
    state: np.ndarray | None


class SelfPlayEnv:
    """N games, both seats driven by the caller. The family's settings (by name) as for
    :class:`~piquet_env.vector.BatchGame` (``num_envs`` is its ``n``); ``critic_state`` adds the
    full state to every step; ``copy=False`` returns the batch's own buffers (overwritten by the
    next step)."""

    def __init__(
        self,
        num_envs: int = 1024,
        *,
        rules: str | Rules | None = None,
        variants: str | Sequence[str] | None = None,
        mode: str | None = None,
        reward: str | None = None,
        reward_scale: float | None = None,
        dense: bool | None = None,
        settle_weight: float | None = None,
        settings: EnvSettings | None = None,
        seed: int | None = None,
        critic_state: bool = False,
        copy: bool = True,
        episode: str | None = None,
    ) -> None:
        num_envs = count_arg("num_envs", num_envs)
        seed = seed_arg("seed", seed)
        critic_state, copy = flag_arg("critic_state", critic_state), flag_arg("copy", copy)
        self.batch = BatchGame(
            rules,
            n=num_envs,
            settings=settings,
            variants=variants,
            mode=mode,
            episode=episode,
            reward=reward,
            reward_scale=reward_scale,
            dense=dense,
            settle_weight=settle_weight,
            seed=seed,
        )
        self.settings = self.batch.settings
        self.num_envs = num_envs
        self.critic_state = critic_state
        self.copy = copy
        self.obs_size = self.batch.size
        self.n_actions = self.batch.n_actions
        self.state_size = self.batch.encoder.state_size

    def reset(self, seed: int | Sequence[int | None] | None = None) -> SelfPlayStep:
        """Deal every game afresh (``seed``: one, or one per game, as :meth:`BatchGame.reset`)."""
        return self._wrap(self.batch.reset(seed))

    def step(self, actions: np.ndarray) -> SelfPlayStep:
        """One action per game for its seat to act."""
        return self._wrap(self.batch.step(actions))

    def _wrap(self, out: StepResult) -> SelfPlayStep:
        obs, mask = (out.obs.copy(), out.mask.copy()) if self.copy else (out.obs, out.mask)
        state = self.batch.full_state() if self.critic_state else None
        return SelfPlayStep(
            out.seat,
            obs,
            mask,
            out.rewards,
            out.ended,
            out.ended_games,
            out.results,
            out.final_obs,
            state,
        )
