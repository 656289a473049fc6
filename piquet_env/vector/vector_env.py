"""A Gymnasium ``VectorEnv``: one learner seat in every game against a batch policy.

>>> import numpy as np
>>> env = PiquetVectorEnv(num_envs=4, mode="deal", seed=0)
>>> obs, infos = env.reset(seed=0)
>>> obs.shape, env.action_masks().shape
((4, 433), (4, 35))
>>> rng = np.random.default_rng(0)
>>> obs, rewards, terminations, truncations, infos = env.step(
...     sample_legal(env.action_masks(), rng))
>>> rewards.shape, terminations.dtype.name
((4,), 'bool')

The learner's seat is fixed (``seat=0`` or ``1``, or ``"player_0"``/``"player_1"`` as for the
single env) or drawn for every episode (``"random"``). The opponent is any
:class:`~piquet_env.vector.batch_policy.BatchPolicy` (default: uniform random, reseeded by every
seeded reset); it moves inside :meth:`~PiquetVectorEnv.step`, in batch, until the learner is to act
again in every game. ``gymnasium.make_vec("Piquet-v0", num_envs=N)`` (or ``"PiquetDeal-v0"``)
builds this env (the ids' vector entry point).

Gymnasium conventions followed: ``single_observation_space`` is the float32 ``Box`` of the
observation, ``observation_space`` its batch; ``single_action_space`` ``Discrete(n_actions)``,
``action_space`` ``MultiDiscrete``. ``reset(seed=s)`` takes one seed or a list of one per game
(game ``i`` then plays what slot 0 of a batch seeded ``seed[i]`` plays; see
:meth:`~piquet_env.vector.BatchGame.reset`), and ``options={"reset_mask": mask}`` resets the games
of a bool mask only. ``autoreset_mode`` (``metadata["autoreset_mode"]``) is any of Gymnasium's:

- ``SAME_STEP`` (the default): a game that ends is dealt afresh in the same step; the step's
  ``infos["final_obs"]`` (an object array) holds the learner's final observation and
  ``infos["final_info"]`` the final info as a dict of batched arrays (``"result"``, ``"seat"``),
  each with its ``"_key"`` mask, as Gymnasium's own ``SyncVectorEnv`` gives them;
- ``NEXT_STEP``: the step that ends a game returns the learner's final observation (its mask is
  empty) and ``infos["result"]``; the next step ignores that game's action and deals it afresh;
- ``DISABLED``: a game that ends stays over until ``reset(options={"reset_mask": mask})``; a step
  while one is over is refused.

``infos["seat"]`` is the learner's seat per game and ``infos["action_mask"]`` the learner's legal
actions (as :meth:`~PiquetVectorEnv.action_masks`).

A step or reset is all or nothing: bad learner actions raise
:class:`~piquet_env.vector.engine.BatchActionError` before anything moves; what the opponent
returns is checked before it is played, and when the opponent fails (it raises, or returns
``None``, the wrong shape, non-integers or an illegal action) the call raises
:class:`OpponentError` and the env refuses every call but a full :meth:`~PiquetVectorEnv.reset`
with an error saying why (some games were left waiting for the opponent).

Where it departs from Gymnasium: an illegal action raises instead of being left to the
environment (the AEC env ends the game instead); truncations are always false (a partie always
ends); ``render`` is not offered (take a game out with ``env.batch.to_game(i)`` and render it
with today's tools). Under Gymnasium 1.0, which has no autoreset modes (its vector wrappers all
assume next-step autoreset), :class:`AutoresetMode` is this module's copy of Gymnasium 1.1's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from piquet_env.actions import action_name
from piquet_env.rules import Rules
from piquet_env.settings import EnvSettings
from piquet_env.vector.batch_policy import BatchPolicy, RandomPolicy, sample_legal
from piquet_env.vector.checks import count_arg, fresh_seed, reset_seed_arg, seed_arg
from piquet_env.vector.engine import NO_ACTION, BatchActionError, BatchGame, StepResult

try:
    from gymnasium.vector import AutoresetMode
except ImportError:  # Gymnasium 1.0: no autoreset modes yet

    class AutoresetMode(Enum):  # type: ignore[no-redef]
        """Gymnasium 1.1's ``gymnasium.vector.AutoresetMode`` (same members and values)."""

        NEXT_STEP = "NextStep"
        SAME_STEP = "SameStep"
        DISABLED = "Disabled"


__all__ = ["AutoresetMode", "OpponentError", "PiquetVectorEnv", "sample_legal"]

SEATS: dict[object, int | str] = {0: 0, 1: 1, "player_0": 0, "player_1": 1, "random": "random"}
"""The accepted ``seat`` values and what they mean (a player, or ``"random"``)."""


class OpponentError(RuntimeError):
    """The opponent raised, or returned actions that cannot be played, in the middle of a
    :meth:`PiquetVectorEnv.step` or :meth:`PiquetVectorEnv.reset`; the env refuses every call but
    a full ``reset()`` until then. The opponent's own exception, if any, is the ``__cause__``."""


class PiquetVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games of Piquet, the learner in seat ``seat`` against ``opponent``.

    The family's settings (:mod:`piquet_env.settings`: ``settings=`` or ``rules``, ``variants``,
    ``mode``, ``reward``, ``reward_scale``, ``dense``, ``settle_weight``, by name) as for
    :func:`piquet_env.piquet_v0.env`; ``seat`` (0, 1, ``"player_0"``, ``"player_1"`` or
    ``"random"``), ``opponent`` (a batch policy ``(obs, mask) -> actions``; default uniform
    random), ``seed`` (an int in ``0..2**64 - 1``), ``autoreset_mode`` (an :class:`AutoresetMode`
    or its value, default ``SAME_STEP``) and ``render_mode`` (``None`` only).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

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
        seat: int | str = "random",
        opponent: BatchPolicy | None = None,
        seed: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        render_mode: str | None = None,
        episode: str | None = None,
    ) -> None:
        num_envs = count_arg("num_envs", num_envs)
        seed = seed_arg("seed", seed)
        if isinstance(seat, bool) or not isinstance(seat, (int, str)) or seat not in SEATS:
            raise ValueError(f"seat must be 0, 1, 'player_0', 'player_1' or 'random', got {seat!r}")
        autoreset = _autoreset_mode(autoreset_mode)
        if render_mode is not None:
            raise ValueError(
                f"render_mode must be None, got {render_mode!r}: PiquetVectorEnv does not render "
                "(take a game out with env.batch.to_game(i) and render that)"
            )
        self._own_opponent = opponent is None
        self.opponent: BatchPolicy = _check_opponent(opponent, seed)
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
            autoreset=autoreset == AutoresetMode.SAME_STEP,
            seed=seed,
        )
        self.settings = self.batch.settings
        self.num_envs = num_envs
        self.rules = self.batch.rules
        self.seat_option: int | str = SEATS[seat]
        self.autoreset_mode = autoreset
        self.metadata = {**type(self).metadata, "autoreset_mode": autoreset}
        self.render_mode = None
        enc = self.batch.encoder
        self.single_observation_space = spaces.Box(0.0, enc.high, (enc.size,), np.float32)
        self.single_action_space = spaces.Discrete(enc.n_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.seats = np.zeros(num_envs, dtype=np.int8)
        self._seat_rng = np.random.default_rng(seed)
        self._done = np.zeros(num_envs, dtype=bool)  # ended, not dealt afresh (NEXT_STEP, DISABLED)
        self._final = np.zeros((num_envs, enc.size), dtype=np.float32)  # their final observations
        self._out: StepResult | None = None
        self._refusal: str | None = "reset() has not been called yet"

    # ------------------------------------------------------------------ Gymnasium API

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game afresh (``seed``: one, or one per game, as :meth:`BatchGame.reset`),
        or only the games of ``options["reset_mask"]`` (a bool array ``(num_envs,)``; no seed);
        the opponent moves first where it is elder. Other ``options`` are not used."""
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
        if options is not None and "reset_mask" in options:
            return self._reset_masked(options["reset_mask"], seed)
        seed = reset_seed_arg("seed", seed, self.num_envs)
        if isinstance(seed, list):
            seed = [fresh_seed() if s is None else s for s in seed]
        self._refusal = "reset() stopped before the opponent had moved in every game"
        try:
            out = self.batch.reset(seed)
            if seed is not None:
                self._seat_rng = np.random.default_rng(seed)
                self._np_random_seed = seed if isinstance(seed, int) else -1
                if self._own_opponent:
                    self.opponent = RandomPolicy(seed)  # type: ignore[arg-type]
            self._done[:] = False
            self._draw_seats(np.arange(self.num_envs))
            out = self._play_opponent(out, "reset")
        except BaseException as exc:
            self._refusal = f"reset() failed ({_reason(exc)})"
            raise
        self._refusal = None
        return self._obs(out), self._infos(out, {})

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learner's action in every game, then the opponent's replies until the learner is
        to act again. Returns observations, the learner's rewards, terminations, truncations
        (always false) and infos (see the module docstring)."""
        self._check_ready("step")
        a = self._check_actions(actions)
        n, mode = self.num_envs, self.autoreset_mode
        waiting = np.flatnonzero(self._done)
        if waiting.size and mode == AutoresetMode.DISABLED:
            raise RuntimeError(
                f"games {waiting.tolist()} have ended and autoreset_mode is DISABLED: reset them "
                "with reset(options={'reset_mask': mask}) before the next step"
            )
        rewards = np.zeros(n, dtype=np.float32)
        ended = np.zeros(n, dtype=bool)
        finals: dict[int, tuple[np.ndarray, int, int]] = {}
        out = self._out
        if waiting.size < n:  # NEXT_STEP: a game that ended last step ignores its action
            a[waiting] = NO_ACTION
            out = self.batch.step(a)  # checks the actions; the batch is untouched if they fail
        self._refusal = "step() stopped before the opponent had moved in every game"
        try:
            assert out is not None
            if waiting.size < n:
                rewards += out.rewards[np.arange(n), self.seats]
                ended |= out.ended
                self._collect(out, finals)
            if waiting.size:
                out = self.batch.reset_games(waiting)
                self._done[waiting] = False
                self._draw_seats(waiting)
            out = self._play_opponent(out, "step", rewards, ended, finals)
            result = (self._obs(out), rewards, ended, np.zeros(n, dtype=bool))
            infos = self._infos(out, finals)
        except BaseException as exc:
            self._refusal = f"step() failed while the opponent was to move ({_reason(exc)})"
            raise
        self._refusal = None
        return (*result, infos)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions ``(num_envs, n_actions)`` bool (sb3-contrib's name); a
        game that has ended and waits to be dealt afresh has none."""
        self._check_ready("action_masks")
        return self.batch.action_mask().copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ helpers

    def _reset_masked(self, reset_mask: object, seed: object) -> tuple[np.ndarray, dict[str, Any]]:
        """``reset(options={"reset_mask": mask})``: deal afresh the games of ``mask`` only."""
        mask = np.asarray(reset_mask)
        if mask.dtype != bool or mask.shape != (self.num_envs,):
            raise ValueError(
                f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), got "
                f"dtype {mask.dtype} and shape {mask.shape}"
            )
        if seed is not None:
            raise ValueError(
                "reset() takes no seed with options['reset_mask']: the games reset go on with "
                "their slots' seeds (reset every game to seed them)"
            )
        self._check_ready("reset(options={'reset_mask': ...})")
        games = np.flatnonzero(mask)
        out = self._out
        assert out is not None
        if games.size:
            self._refusal = "reset() stopped before the opponent had moved in every game"
            try:
                out = self.batch.reset_games(games)
                self._done[games] = False
                self._draw_seats(games)
                out = self._play_opponent(out, "reset")
            except BaseException as exc:
                self._refusal = f"reset() failed ({_reason(exc)})"
                raise
            self._refusal = None
        return self._obs(out), self._infos(out, {})

    def _check_ready(self, call: str) -> None:
        if self._refusal is not None:
            raise RuntimeError(f"{call}() refused: {self._refusal}; call reset() first")

    def _check_actions(self, actions: object) -> np.ndarray:
        """The learner's actions as a new int64 array ``(num_envs,)`` (shape and type only: the
        batch checks their legality)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise BatchActionError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise BatchActionError(f"actions must be integers, got dtype {a.dtype}")
        return a.astype(np.int64)

    def _draw_seats(self, games: np.ndarray) -> None:
        if self.seat_option == "random":
            self.seats[games] = self._seat_rng.integers(0, 2, games.size)
        else:
            self.seats[games] = self.seat_option

    def _collect(self, out: StepResult, finals: dict) -> None:
        """Keep the learner's final observation and result of each game that ended; under
        ``SAME_STEP`` give the new game in that slot its learner seat, otherwise keep the game
        over (its final observation is what the env shows until it is dealt afresh)."""
        for k, i in enumerate(out.ended_games.tolist()):
            seat = int(self.seats[i])
            finals[i] = (out.final_obs[k, seat].copy(), int(out.results[k, seat]), seat)
            if self.autoreset_mode != AutoresetMode.SAME_STEP:
                self._done[i] = True
                self._final[i] = out.final_obs[k, seat]
        if out.ended_games.size and self.autoreset_mode == AutoresetMode.SAME_STEP:
            self._draw_seats(out.ended_games)

    def _play_opponent(
        self,
        out: StepResult,
        call: str,
        rewards: np.ndarray | None = None,
        ended: np.ndarray | None = None,
        finals: dict | None = None,
    ) -> StepResult:
        """Let the opponent act wherever it is to act, until the learner is everywhere (or the
        game is over); each of its answers is checked before it is played."""
        n = self.num_envs
        rewards = np.zeros(n, dtype=np.float32) if rewards is None else rewards
        ended = np.zeros(n, dtype=bool) if ended is None else ended
        finals = {} if finals is None else finals
        while True:
            turn = np.flatnonzero(out.seat == 1 - self.seats)
            if not turn.size:
                self._out = out
                return out
            mask = out.mask[turn]
            try:
                chosen = self.opponent(out.obs[turn], mask)
            except Exception as exc:
                raise OpponentError(
                    f"the opponent raised {_reason(exc)} in {call}() for games {_few(turn)}"
                ) from exc
            actions = np.full(n, NO_ACTION, dtype=np.int64)
            actions[turn] = self._check_opponent_actions(chosen, mask, turn, call)
            out = self.batch.step(actions)
            # Rewards of games that ended earlier in this step belong to their next episode's
            # first moves, which pay nothing (a deal needs both players' cards).
            rewards += out.rewards[np.arange(n), self.seats]
            ended |= out.ended
            self._collect(out, finals)

    def _check_opponent_actions(
        self, chosen: object, mask: np.ndarray, turn: np.ndarray, call: str
    ) -> np.ndarray:
        """The opponent's answer as ``int64`` ``(k,)``, one legal action per game it moves in,
        or an :class:`OpponentError` saying what is wrong (nothing is played)."""
        where = f"in {call}(), for the {turn.size} games it is to move in"
        if chosen is None:
            raise OpponentError(
                f"the opponent returned None {where}: a batch policy returns one action per row"
            )
        try:
            a = np.asarray(chosen)
        except Exception as exc:
            raise OpponentError(
                f"the opponent returned {type(chosen).__name__}, not an array of actions, {where}"
            ) from exc
        if a.shape != (turn.size,):
            raise OpponentError(
                f"the opponent returned actions of shape {a.shape} {where}; expected ({turn.size},)"
            )
        if a.dtype.kind not in "iu":
            raise OpponentError(
                f"the opponent returned actions of dtype {a.dtype} {where}; expected integers"
            )
        a = a.astype(np.int64)
        ok = (a >= 0) & (a < mask.shape[1])
        ok[ok] = mask[np.flatnonzero(ok), a[ok]]
        if not ok.all():
            bad = np.flatnonzero(~ok)
            shown = "; ".join(
                f"game {turn[j]}: action {a[j]} (legal: "
                + ", ".join(
                    f"{x}={action_name(x, self.rules)}" for x in np.flatnonzero(mask[j]).tolist()
                )
                + ")"
                for j in bad[:3].tolist()
            )
            more = f" (and {bad.size - 3} more)" if bad.size > 3 else ""
            raise OpponentError(
                f"the opponent returned {bad.size} illegal action(s) {where}: {shown}{more}"
            )
        return a

    def _obs(self, out: StepResult) -> np.ndarray:
        """The learner's observation in every game: a game over shows its final one."""
        obs = out.obs.copy()
        if self._done.any():
            obs[self._done] = self._final[self._done]
        return obs

    def _infos(self, out: StepResult, finals: dict) -> dict[str, Any]:
        n = self.num_envs
        infos: dict[str, Any] = {
            "seat": self.seats.copy(),
            "_seat": np.ones(n, dtype=bool),
            "action_mask": out.mask.copy(),
            "_action_mask": np.ones(n, dtype=bool),
        }
        if not finals:
            return infos
        has = np.zeros(n, dtype=bool)
        result = np.zeros(n, dtype=np.int64)
        seat = np.zeros(n, dtype=np.int64)
        games = list(finals)
        has[games] = True
        result[games] = [finals[i][1] for i in games]
        seat[games] = [finals[i][2] for i in games]
        if self.autoreset_mode != AutoresetMode.SAME_STEP:
            infos.update(result=result, _result=has)
            return infos
        obs = np.full(n, None, dtype=object)
        for i in games:
            obs[i] = finals[i][0]
        # Gymnasium's layout (VectorEnv._add_info): final_info is a dict of batched arrays.
        final_info = {"result": result, "_result": has.copy(), "seat": seat, "_seat": has.copy()}
        infos.update(final_obs=obs, _final_obs=has, final_info=final_info, _final_info=has.copy())
        return infos


def _autoreset_mode(value: object) -> AutoresetMode:
    """``value`` as an :class:`AutoresetMode` (a member or its value, as Gymnasium's vector envs
    take it)."""
    if isinstance(value, AutoresetMode):
        return value
    try:
        return AutoresetMode(value)
    except (ValueError, TypeError):
        names = ", ".join(repr(m.value) for m in AutoresetMode)
        raise ValueError(
            f"autoreset_mode must be an AutoresetMode or one of {names}, got {value!r}"
        ) from None


def _check_opponent(opponent: object, seed: int | None) -> BatchPolicy:
    """The opponent as given, a uniform random policy for ``None``, or a ``TypeError`` saying
    how to pass what was given."""
    if opponent is None:
        return RandomPolicy(seed)
    single = "gymnasium.make('Piquet-v0', opponent=agent)"
    if isinstance(opponent, str):
        raise TypeError(
            f"opponent={opponent!r} is an agent spec, but PiquetVectorEnv's opponent is a batch "
            "policy: a callable (obs, mask) -> actions, such as RandomPolicy(seed) or a torch "
            f"policy converted at its edges. An agent (piquet_agents.make_agent({opponent!r}, "
            f"rules)) plays one game at a time: pass it to the single env, {single}, or to "
            "gymnasium.make_vec(..., vectorization_mode='sync', opponent=agent)"
        )
    if not callable(opponent):
        kind = "an Agent" if callable(getattr(opponent, "act", None)) else "not callable"
        raise TypeError(
            f"opponent must be a batch policy, a callable (obs, mask) -> actions, or None; got "
            f"{type(opponent).__name__} ({kind}). An agent plays one game at a time: pass it to "
            f"the single env, {single}"
        )
    return opponent  # type: ignore[return-value]


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _few(games: np.ndarray) -> str:
    shown = games[:8].tolist()
    return str(shown)[:-1] + (", ...]" if games.size > 8 else "]")
