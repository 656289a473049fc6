"""Who acts at a turn, as the environment sees it: a :class:`Turn` and an :class:`Agent`.

This is the small protocol through which the environment layer hands a decision to someone else
(the Gymnasium adapter's opponent, the batched engine's opponents, the agents of
:mod:`piquet_agents`): a :class:`Turn` is the acting player's view (the game, his observation vector
and action mask, his legal actions), and an :class:`Agent` answers it with one legal action id.
The agents of :mod:`piquet_agents` implement :class:`Agent` (``piquet_agents.Agent`` is this
protocol); the environment itself never imports them.

>>> from piquet_env.game import Game
>>> g = Game(seed=1)
>>> RandomAgent(seed=0).act(Turn(g, g.current_player)) in g.legal_actions()
True
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from piquet_env.game import Game

__all__ = ["Agent", "Player", "RandomAgent", "RandomPlayer", "Turn"]


class Turn:
    """One decision to make: the game seen from ``player``, with its observation and mask.

    ``observation`` and ``action_mask`` are encoded on first access, so agents that do not need them
    (random, heuristic, search) cost nothing extra. ``legal_actions`` are the engine's ids.
    """

    __slots__ = ("_mask", "_obs", "game", "player")

    def __init__(
        self,
        game: Game,
        player: int,
        observation: np.ndarray | None = None,
        action_mask: np.ndarray | None = None,
    ) -> None:
        self.game = game
        self.player = player
        self._obs = observation
        self._mask = action_mask

    @property
    def legal_actions(self) -> list[int]:
        """Legal action ids for the acting player (ascending)."""
        return self.game.legal_actions()

    @property
    def observation(self) -> np.ndarray:
        """The acting player's observation vector (see :mod:`piquet_env.observation`)."""
        if self._obs is None:
            from piquet_env.observation import encoder_for

            self._obs = encoder_for(self.game.rules).encode(self.game, self.player)
        return self._obs

    @property
    def action_mask(self) -> np.ndarray:
        """int8 mask over the action space, 1 for legal actions."""
        if self._mask is None:
            from piquet_env.observation import encoder_for

            self._mask = encoder_for(self.game.rules).action_mask(self.game, self.player)
        return self._mask


@runtime_checkable
class Agent(Protocol):
    """Anything that picks a legal action for a :class:`Turn` (an agent, a person, a policy).

    ``name`` identifies it in reports and ladders; ``reset(seed)`` reseeds its randomness (call it
    once per game or match for reproducible play); ``act`` must return one of
    ``turn.legal_actions``.
    """

    name: str

    def reset(self, seed: int | None = None) -> None:
        """Reseed the agent's randomness and forget per-game state."""
        ...

    def act(self, turn: Turn) -> int:
        """Choose an action id for the turn."""
        ...


class RandomAgent:
    """Picks uniformly among ``turn.legal_actions``; reproducible for a given seed."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        self.name = name
        self.seed = seed
        self._rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed (``None`` keeps the current stream)."""
        if seed is not None:
            self.seed = seed
            self._rng = random.Random(seed)

    def action_probabilities(self, turn: Turn) -> dict[int, float]:
        """Every legal action alike: the policy this agent plays (for exact figures)."""
        legal = turn.legal_actions
        return {a: 1.0 / len(legal) for a in legal}

    def act(self, turn: Turn) -> int:
        """A legal action drawn uniformly at random."""
        legal = turn.legal_actions
        if not legal:
            raise ValueError("RandomAgent asked to act with no legal action (the game is over)")
        return legal[int(self._rng.random() * len(legal))]

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed!r})"


Player = Agent
"""The protocol's former name (kept as an alias)."""
RandomPlayer = RandomAgent
"""The random agent's former name (kept as an alias)."""
