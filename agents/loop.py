"""Drive a game with two agents: the loop every tool (evaluation, replay, human play) shares.

>>> from piquet_env.game import Game
>>> from piquet_env.agent import RandomAgent
>>> g = play_game(Game(seed=3, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
>>> g.is_over and sum(g.result) == 0
True
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from piquet_env.agent import Agent, Turn
from piquet_env.game import Game


class IllegalAgentActionError(ValueError):
    """An agent returned an action that is not legal; the message names the agent and the state."""


def play_turn(game: Game, agents: Sequence[Agent]) -> int:
    """Ask the agent of the player to act for one action, check it, apply it and return it."""
    p = game.current_player
    if p < 0:
        raise ValueError("the game is over: no player to act")
    agent = agents[p]
    action = agent.act(Turn(game, p))
    try:
        action = operator.index(action)
    except TypeError:
        raise IllegalAgentActionError(
            f"agent {getattr(agent, 'name', agent)!r} (player {p}) returned {action!r}, "
            f"not an action id"
        ) from None
    if not game.is_legal(action):
        legal = ", ".join(f"{a}={game.action_name(a)}" for a in game.legal_actions())
        raise IllegalAgentActionError(
            f"agent {getattr(agent, 'name', agent)!r} (player {p}) chose illegal action {action} "
            f"in {game.phase.name}; legal: {legal}"
        )
    game.apply(action)
    return action


def play_game(game: Game, agents: Sequence[Agent]) -> Game:
    """Play ``game`` to its end, ``agents[p]`` acting for player ``p``; return the same game.

    Raises :class:`IllegalAgentActionError` naming the agent if one returns an illegal action.
    Agents are not reset here: call ``agent.reset(seed)`` beforehand for reproducible play.
    """
    if len(agents) != 2:
        raise ValueError(f"play_game needs two agents, got {len(agents)}")
    while game.current_player >= 0:
        play_turn(game, agents)
    return game
