"""The one Agent protocol used everywhere: env loops, evaluation, training opponents, human play.

An agent is asked for an action with a :class:`Turn`: the acting player's observation vector and
action mask (computed lazily, from :mod:`piquet_env.observation`), and, for agents that reason about
the rules (heuristic, search), the engine's game seen from that player. Such agents must read only
what that player knows: his own hand and discards, public information, and
:mod:`piquet_env.game.knowledge` (``opponent_known``, ``determinize``), never the opponent's hand or
the talon directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from piquet_env.game import Game


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
    """Anything that picks a legal action for a :class:`Turn`.

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
