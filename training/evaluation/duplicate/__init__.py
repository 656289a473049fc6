"""Duplicate-deal matches between two agents, with 95% confidence intervals and a verdict.

Every *pair* plays the same cards twice with the seats swapped: in the first game agent A sits in
seat 0, in the second agent B does, and seat 0 is elder in the first deal both times, so each agent
holds exactly the cards the other held. Luck of the deal cancels within a pair, and pairs are
independent, so the statistics are computed over pair values (the mean of the pair's two games).

Two modes:

- ``deal``: each game is one deal; A's result is his deal score minus B's.
- ``partie``: each game is a whole partie (6 deals, 12 under ``saison``, with the same cards for
  each deal of both games); A's result is the settled partie score, and the points per deal are the
  difference of the partie totals divided by the number of deals.

:func:`evaluate` reports the mean points per deal, the win rate (a tie counts half) and, in partie
mode, the settled score, each with a 95% interval (Student-t for the points and the score, Wilson
for the win rate); the verdict is *significant* when the interval of :attr:`MatchReport.mean_diff`
excludes 0, and under :data:`~piquet_training.evaluation.stats.MIN_PAIRS` pairs the summary says
the match is too small to judge. Agents may be given as objects or as specs for
:func:`piquet_agents.registry.make_agent`; with ``workers > 1`` pairs are played in separate
processes, each rebuilding the agents (from the spec, or from a pickled copy).

The package does one job a module: :mod:`.match` one pair and the match as a value
(:class:`~piquet_training.evaluation.duplicate.match.DuplicateMatch`), :mod:`.play` playing the
pairs here, in worker processes or on Ray, :mod:`.checks` a chunk's games checked before they are
counted, :mod:`.report` the games reduced to a report.

>>> from piquet_env.rules import STANDARD
>>> rep = evaluate("random", "random", STANDARD, n=20, seed=1)
>>> rep.n_games, rep.significant
(40, False)
"""

from piquet_env.game.state import MODES
from piquet_training.evaluation.duplicate.match import (
    AgentLike,
    DuplicateMatch,
    GameResult,
    agent_name,
    pair_deals,
    pair_rng,
    play_pair,
    save_game_log,
)
from piquet_training.evaluation.duplicate.play import evaluate, evaluate_match, play_games
from piquet_training.evaluation.duplicate.report import (
    MatchReport,
    corrected_pairs,
    games_by_pair,
    pair_points,
    report,
)

__all__ = [
    "MODES",
    "AgentLike",
    "DuplicateMatch",
    "GameResult",
    "MatchReport",
    "agent_name",
    "corrected_pairs",
    "evaluate",
    "evaluate_match",
    "games_by_pair",
    "pair_deals",
    "pair_points",
    "pair_rng",
    "play_games",
    "play_pair",
    "report",
    "save_game_log",
]
