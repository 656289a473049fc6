"""Agents that play Piquet behind one protocol: random, heuristic, search and PyTorch policies.

``make_agent(spec, rules, seed)`` builds one from a spec (``random``, ``heuristic``,
``mcts:ITERATIONS`` or a checkpoint path); ``play_game(game, agents)`` plays a game to its end.
The PyTorch policy (:mod:`agents.policy`) is not imported here, so that importing the package stays
light.
"""

from agents.base import Agent, Turn
from agents.heuristic import HeuristicAgent
from agents.mcts import MCTSAgent
from agents.play import IllegalAgentActionError, play_game
from agents.random_agent import RandomAgent
from agents.registry import make_agent

__all__ = [
    "Agent",
    "HeuristicAgent",
    "IllegalAgentActionError",
    "MCTSAgent",
    "RandomAgent",
    "Turn",
    "make_agent",
    "play_game",
]
