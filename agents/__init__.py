"""Agents that play Piquet behind one protocol: random, heuristic, search and PyTorch policies.

``make_agent(spec, rules, seed)`` builds one from a spec (``random``, ``heuristic``,
``mcts:ITERATIONS`` or a checkpoint path); ``play_game(game, agents)`` plays a game to its end.
The PyTorch policy (:mod:`piquet_agents.policy`) is not imported here, so that importing the
package stays light.
"""

from piquet_agents.heuristic import HeuristicAgent
from piquet_agents.loop import IllegalAgentActionError, play_game
from piquet_agents.mcts import MCTSAgent
from piquet_agents.registry import make_agent
from piquet_env.agent import Agent, RandomAgent, Turn

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
