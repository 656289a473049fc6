"""A Gymnasium ``VectorEnv``: one learner seat in every game against a batch policy.

>>> import numpy as np
>>> env = PiquetVectorEnv(num_envs=4, episode="deal", seed=0)
>>> obs, infos = env.reset(seed=0)
>>> obs.shape, env.action_masks().shape
((4, 433), (4, 35))
>>> rng = np.random.default_rng(0)
>>> obs, rewards, terminations, truncations, infos = env.step(
...     sample_legal(env.action_masks(), rng))
>>> rewards.shape, terminations.dtype.name
((4,), 'bool')

The learner's seat is fixed (``seat=0`` or ``1``) or drawn for every episode (``"random"``). The
opponent is any :class:`~piquet_env.vector.batch_policy.BatchPolicy` (default: uniform random);
it moves inside :meth:`~PiquetVectorEnv.step`, in batch, until the learner is to act again in
every game.

Gymnasium conventions followed: ``single_observation_space`` is the float32 ``Box`` of the
observation, ``observation_space`` its batch; ``single_action_space`` ``Discrete(n_actions)``,
``action_space`` ``MultiDiscrete``; ``metadata["autoreset_mode"]`` is ``SAME_STEP``: a game that
ends is dealt afresh in the same step, and ``infos["final_obs"]`` / ``infos["final_info"]``
(object arrays, with the ``"_final_obs"`` / ``"_final_info"`` masks) hold the learner's final
observation and ``{"result", "seat"}``. ``infos["seat"]`` is the learner's seat per game and
``infos["action_mask"]`` the learner's legal actions (as
:meth:`~PiquetVectorEnv.action_masks`).

Where it departs from Gymnasium: an illegal action raises
:class:`~piquet_env.vector.engine.BatchActionError` and leaves the batch untouched (Gymnasium
leaves illegal actions to the environment; the AEC env ends the game instead); truncations are
always false (a partie always ends); ``render`` is not offered (take a game out with
``env.batch.to_game(i)`` and render it with today's tools).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from piquet_env.rules import Rules
from piquet_env.vector.batch_policy import BatchPolicy, RandomPolicy, sample_legal
from piquet_env.vector.engine import NO_ACTION, BatchGame, StepResult

__all__ = ["PiquetVectorEnv", "sample_legal"]


class PiquetVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games of Piquet, the learner in seat ``seat`` against ``opponent``.

    Options ``rules``, ``variants``, ``episode``, ``reward``, ``reward_scale`` as for
    :func:`piquet_env.piquet_v0.env`; ``seat`` (0, 1 or ``"random"``), ``opponent`` (a batch
    policy ``(obs, mask) -> actions``; default uniform random) and ``seed``.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int = 1024,
        rules: str | Rules = "standard",
        variants: Sequence[str] = (),
        episode: str = "partie",
        reward: str = "result",
        reward_scale: float = 1.0,
        seat: int | str = "random",
        opponent: BatchPolicy | None = None,
        seed: int | None = None,
    ) -> None:
        if seat not in (0, 1, "random") or isinstance(seat, bool):
            raise ValueError(f"seat must be 0, 1 or 'random', got {seat!r}")
        self.batch = BatchGame(
            rules,
            num_envs,
            variants=variants,
            episode=episode,
            reward=reward,
            reward_scale=reward_scale,
            seed=seed,
        )
        self.num_envs = num_envs
        self.rules = self.batch.rules
        self.seat_option = seat
        self.opponent: BatchPolicy = opponent if opponent is not None else RandomPolicy(seed)
        enc = self.batch.encoder
        self.single_observation_space = spaces.Box(0.0, enc.high, (enc.size,), np.float32)
        self.single_action_space = spaces.Discrete(enc.n_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.seats = np.zeros(num_envs, dtype=np.int8)
        self._seat_rng = np.random.default_rng(seed)
        self._out: StepResult | None = None

    # ------------------------------------------------------------------ Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game afresh (``seed`` as :meth:`BatchGame.reset`); the opponent moves
        first where it is elder. ``options`` is not used."""
        if seed is not None:
            self._seat_rng = np.random.default_rng(seed)
            self._np_random_seed = seed
        out = self.batch.reset(seed)
        self._draw_seats(np.arange(self.num_envs))
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        ended = np.zeros(self.num_envs, dtype=bool)
        out = self._opponent_moves(out, rewards, ended, {})
        self._out = out
        return out.obs.copy(), self._infos(out, {})

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learner's action in every game, then the opponent's replies until the learner is
        to act again. Returns observations, the learner's rewards, terminations, truncations
        (always false) and infos (see the module docstring)."""
        out = self.batch.step(actions)
        rewards = out.rewards[np.arange(self.num_envs), self.seats].astype(np.float32)
        ended = out.ended.copy()
        finals: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
        self._collect(out, finals)
        out = self._opponent_moves(out, rewards, ended, finals)
        self._out = out
        return (
            out.obs.copy(),
            rewards,
            ended,
            np.zeros(self.num_envs, dtype=bool),
            self._infos(out, finals),
        )

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions ``(num_envs, n_actions)`` bool (sb3-contrib's name)."""
        return self.batch.action_mask().copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ helpers

    def _draw_seats(self, games: np.ndarray) -> None:
        if self.seat_option == "random":
            self.seats[games] = self._seat_rng.integers(0, 2, games.size)
        else:
            self.seats[games] = self.seat_option

    def _collect(self, out: StepResult, finals: dict) -> None:
        """Keep the learner's final observation and result of each game that ended, then give
        the new game in that slot its learner seat."""
        for k, i in enumerate(out.ended_games.tolist()):
            seat = int(self.seats[i])
            finals[i] = (out.final_obs[k, seat].copy(), out.results[k, seat], seat)
        if out.ended_games.size:
            self._draw_seats(out.ended_games)

    def _opponent_moves(
        self, out: StepResult, rewards: np.ndarray, ended: np.ndarray, finals: dict
    ) -> StepResult:
        """Let the opponent act wherever it is to act, until the learner is everywhere."""
        while True:
            turn = np.flatnonzero(out.seat == 1 - self.seats)
            if not turn.size:
                return out
            actions = np.full(self.num_envs, NO_ACTION, dtype=np.int64)
            chosen = np.asarray(self.opponent(out.obs[turn], out.mask[turn]))
            actions[turn] = chosen
            out = self.batch.step(actions)
            # Rewards of games that ended earlier in this step belong to their next episode's
            # first moves, which pay nothing (a deal needs both players' cards).
            rewards += out.rewards[np.arange(self.num_envs), self.seats]
            ended |= out.ended
            self._collect(out, finals)

    def _infos(self, out: StepResult, finals: dict) -> dict[str, Any]:
        infos: dict[str, Any] = {
            "seat": self.seats.copy(),
            "_seat": np.ones(self.num_envs, dtype=bool),
            "action_mask": out.mask.copy(),
            "_action_mask": np.ones(self.num_envs, dtype=bool),
        }
        if finals:
            has = np.zeros(self.num_envs, dtype=bool)
            obs = np.full(self.num_envs, None, dtype=object)
            info = np.full(self.num_envs, None, dtype=object)
            for i, (final, result, seat) in finals.items():
                has[i] = True
                obs[i] = final
                info[i] = {"result": int(result), "seat": seat}
            infos.update(final_obs=obs, _final_obs=has, final_info=info, _final_info=has.copy())
        return infos
