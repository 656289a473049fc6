"""The uniform random agent: every legal action equally likely.

>>> from piquet_env.game import Game
>>> from agents.base import Turn
>>> g = Game(seed=1)
>>> RandomAgent(seed=0).act(Turn(g, g.current_player)) in g.legal_actions()
True
"""

from __future__ import annotations

import random

from agents.base import Turn


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

    def act(self, turn: Turn) -> int:
        """A legal action drawn uniformly at random."""
        legal = turn.legal_actions
        if not legal:
            raise ValueError("RandomAgent asked to act with no legal action (the game is over)")
        return legal[int(self._rng.random() * len(legal))]

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed!r})"
