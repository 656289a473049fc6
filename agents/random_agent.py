"""The uniform random agent: every legal action equally likely.

It is the environment layer's :class:`piquet_env.players.RandomPlayer` (the Gymnasium adapter's
default opponent), under its agent name.

>>> from piquet_env.game import Game
>>> from piquet_agents.base import Turn
>>> g = Game(seed=1)
>>> RandomAgent(seed=0).act(Turn(g, g.current_player)) in g.legal_actions()
True
"""

from __future__ import annotations

from piquet_env.players import RandomPlayer as RandomAgent

__all__ = ["RandomAgent"]
