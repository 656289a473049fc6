"""The one Agent protocol used everywhere: env loops, evaluation, training opponents, human play.

An agent is asked for an action with a :class:`Turn`: the acting player's observation vector and
action mask (computed lazily, from :mod:`piquet_env.observation`), and, for agents that reason about
the rules (heuristic, search), the engine's game seen from that player. Such agents must read only
what that player knows: his own hand and discards, public information, and
:mod:`piquet_env.game.knowledge` (``opponent_known``, ``determinize``), never the opponent's hand or
the talon directly.
"""

from __future__ import annotations

from piquet_env.players import Player, Turn

Agent = Player
"""The agent protocol: ``name``, ``reset(seed)`` and ``act(turn) -> action id`` (see
:class:`piquet_env.players.Player`, which it is: the environment layer defines the protocol, so that
it can hand turns to agents without importing them)."""

__all__ = ["Agent", "Turn"]
