"""A single-agent Gymnasium view of Piquet: the learner holds one seat, an agent plays the other.

:class:`PiquetGymEnv` wraps the AEC environment (:class:`piquet_env.piquet_v0.raw_env`, same
options and rewards). The learner's seat is fixed (``seat="player_0"`` or ``"player_1"``) or drawn
at every reset (``seat="random"``, the default). The opponent is any
:class:`piquet_env.agent.Agent` (every agent of :mod:`piquet_agents` is one:
``opponent=make_agent("heuristic", rules)``); by default a uniform random player. The adapter
imports no agent: spec strings are resolved by :func:`piquet_agents.make_agent`. Its moves are
played inside :meth:`~PiquetGymEnv.step` until the learner is to act again or the episode ends.

- Observation: the learner's float32 observation vector (``Box``, see :mod:`piquet_env.piquet_v0`).
- Action: ``Discrete(n_actions)``, the engine's action ids; :meth:`~PiquetGymEnv.action_masks`
  returns the legal ones as a boolean array (sb3-contrib's MaskablePPO calls it). An illegal action
  ends the episode with reward ``illegal_reward`` (default -1, as PettingZoo's
  TerminateIllegalWrapper does) and ``info["illegal_action"] = True``.
- Reward: the learner's share of the AEC rewards paid during the step (his own move and the
  opponent's replies), so an episode sums to ``reward_scale`` times his result.
- ``info``: the learner's AEC info (v0's: phase, legal action names, deal scores) plus ``seat``
  and ``action_mask`` (the learner's legal actions as an int8 array).
- ``render_mode``: ``"human"``, ``"ansi"`` or ``"rgb_array"`` (an image, for ``RecordVideo``; the
  ``render`` extra); ``render_view="player"`` shows the learner's view (his seat is fixed for the
  episode), ``"player_0"``/``"player_1"`` a fixed seat's, ``"spectator"`` everything.

>>> env = PiquetGymEnv(mode="deal", seat="player_0")
>>> obs, info = env.reset(seed=0)
>>> obs.shape, bool(env.action_masks().any())
((433,), True)
"""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Real
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from piquet_env.agent import Agent, RandomAgent, Turn
from piquet_env.piquet_v0 import (
    AGENTS,
    RENDER_MODES,
    check_render_mode,
    raw_env,
    render_frame,
    render_view_player,
)
from piquet_env.rules import Rules
from piquet_env.settings import EnvSettings

SEATS = ("random", "player_0", "player_1")


class PiquetGymEnv(gymnasium.Env):
    """Single-agent Piquet: the learner against ``opponent`` (see the module docstring).

    Options: the family's settings (``settings=`` or ``rules``, ``variants``, ``mode``,
    ``reward``, ``reward_scale``, ``dense``, ``settle_weight``: :mod:`piquet_env.settings`),
    ``render_mode`` and ``render_view`` as for :class:`piquet_env.piquet_v0.raw_env`; ``seat``
    (``"random"``, ``"player_0"``, ``"player_1"``, or 0/1); ``opponent`` (an
    :class:`~piquet_env.agent.Agent` such as any agent of :mod:`piquet_agents`, or ``None`` for a
    uniform random player);
    ``illegal_reward`` (the learner's reward for an illegal action, which ends the episode).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: str | Rules | None = None,
        variants: str | Iterable[str] | None = None,
        mode: str | None = None,
        reward: str | None = None,
        reward_scale: float | None = None,
        seat: str | int = "random",
        opponent: Agent | None = None,
        render_mode: str | None = None,
        render_view: str = "player",
        illegal_reward: float = -1.0,
        *,
        dense: bool | None = None,
        settle_weight: float | None = None,
        settings: EnvSettings | None = None,
        episode: str | None = None,
    ) -> None:
        check_render_mode(render_mode)
        self.aec = raw_env(
            settings=settings,
            rules=rules,
            variants=variants,
            mode=mode,
            episode=episode,
            reward=reward,
            reward_scale=reward_scale,
            dense=dense,
            settle_weight=settle_weight,
            render_mode=None,
            render_view=render_view,
        )  # the adapter renders itself, from the learner's view
        self.settings = self.aec.settings
        self.rules = self.aec.rules
        if seat in (0, 1) and not isinstance(seat, bool):
            seat = AGENTS[seat]
        if seat not in SEATS:
            raise ValueError(f"seat must be one of {SEATS} or 0/1, got {seat!r}")
        self.seat = seat
        self.opponent = _check_opponent(opponent)
        self.render_mode = render_mode
        enc = self.aec.encoder
        self.observation_space = spaces.Box(
            low=0.0, high=enc.high, shape=(enc.size,), dtype=np.float32
        )
        self.action_space = spaces.Discrete(enc.n_actions)
        if isinstance(illegal_reward, (bool, np.bool_)) or not isinstance(illegal_reward, Real):
            raise ValueError(f"illegal_reward must be a number, got {illegal_reward!r}")
        self.illegal_reward = float(illegal_reward)
        if not np.isfinite(self.illegal_reward):
            raise ValueError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
        self.learner = 0
        self._learner_name = AGENTS[0]
        self._ended = True

    # ------------------------------------------------------------------ Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; ``options`` as for the AEC env's reset (e.g. given cards)."""
        super().reset(seed=seed)
        rng = self.np_random
        if self.seat == "random":
            self.learner = int(rng.integers(2))
        else:
            self.learner = AGENTS.index(self.seat)
        self._learner_name = AGENTS[self.learner]
        self.aec.reset(seed=int(rng.integers(2**63)), options=options)
        self.opponent.reset(int(rng.integers(2**63)))
        self._ended = False
        reward = self._play_opponent()
        info = self._info()
        if reward:
            info["reward_before_first_move"] = reward
        return self._observe(), info

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then the opponent's moves until the learner is to act
        again or the episode ends."""
        aec = self.aec
        if self._ended:
            raise RuntimeError("step() called after the episode ended (or before reset); reset()")
        action = _action_id(action)
        if not aec.game.is_legal(action):
            self._ended = True
            info = self._info()
            info["illegal_action"] = True
            return self._observe(), self.illegal_reward, True, False, info
        aec.step(action)
        reward = aec.rewards[self._learner_name]
        reward += self._play_opponent()
        terminated = self._ended = aec.game.is_over
        if self.render_mode == "human":
            self.render()
        return self._observe(), float(reward), terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions now (all False once the episode is over)."""
        game = self.aec.game
        if game is None:
            raise RuntimeError("action_masks() called before reset(): call reset() first")
        return self.aec.encoder.action_mask(game, self.learner).astype(bool)

    def render(self) -> str | np.ndarray | None:
        """As the AEC env's render: the learner's view by default, or the spectator's."""
        aec = self.aec
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        game = aec._started("render")
        view: int | None = self.learner
        if aec.render_view != "player":
            view = render_view_player(aec.render_view, game)
        return render_frame(self.render_mode, game, view)

    # ------------------------------------------------------------------ helpers

    def _play_opponent(self) -> float:
        """Let the opponent move while it is his turn; the learner's rewards meanwhile."""
        aec, game = self.aec, self.aec.game
        opp = 1 - self.learner
        total = 0.0
        while game.current_player == opp:
            aec.step(self.opponent.act(Turn(game, opp)))
            total += aec.rewards[self._learner_name]
        return total

    def _observe(self) -> np.ndarray:
        return self.aec.encoder.encode(self.aec.game, self.learner)

    def _info(self) -> dict[str, Any]:
        info = dict(self.aec.infos.get(self._learner_name, {}))
        info["seat"] = self._learner_name
        info["action_mask"] = self.action_masks().astype(np.int8)
        return info


def _action_id(action: Any) -> int:
    """The learner's action as an int id: an int, a numpy integer or a 0-d integer array (what
    ``Discrete.contains`` accepts); anything else is a ValueError naming what was given."""
    if isinstance(action, np.ndarray):
        if action.shape == () and action.dtype.kind in "iu":
            return int(action.item())
        raise ValueError(
            f"action must be a scalar integer action id, got an array of shape {action.shape} "
            f"and dtype {action.dtype}"
        )
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(
            f"action must be an integer action id, got {type(action).__name__} {action!r}"
        )
    return int(action)


def _check_opponent(opponent: Agent | None) -> Agent:
    """The opponent as given, or a uniform random player for ``None``."""
    if opponent is None:
        return RandomAgent()
    if isinstance(opponent, str):
        raise TypeError(
            f"opponent={opponent!r} is an agent spec: build the agent with "
            f"piquet_agents.make_agent({opponent!r}, rules) and pass it as opponent="
        )
    if not callable(getattr(opponent, "act", None)) or not callable(
        getattr(opponent, "reset", None)
    ):
        raise TypeError(
            f"opponent must be an Agent (with act and reset) or None, got {type(opponent).__name__}"
        )
    return opponent
