"""A ladder's result as plain data: its matches, ratings and neighbours, their look-ups, and JSON.

:class:`LadderData` holds what :func:`~piquet_training.evaluation.ladder.run.run_ladder` found and
answers questions about it (the match between two agents, the head-to-head matrices, the
standings, the neighbours' verdicts, by :mod:`~piquet_training.evaluation.ladder.stats`);
:meth:`LadderData.to_dict` is the content of ``ladder.json``. The public result,
:class:`~piquet_training.evaluation.ladder.run.LadderResult`, adds the text and the figure to it.

``ladder.json`` holds each match's summary but not its games, so a result is not read back from
it: the ladder's record (``matches.jsonl``) is what a ladder is rebuilt from (``--resume``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from piquet_training.evaluation.duplicate import MatchReport
from piquet_training.evaluation.ladder.stats import (
    ALPHA,
    look_level,
    separates,
    standings,
    verdict,
)


@dataclass
class LadderData:
    """The matches of a round robin and the ratings they give (see
    :mod:`piquet_training.evaluation.ladder.run`)."""

    agents: list[str]
    rules: str
    mode: str
    n_pairs: int
    seed: int
    matches: list[MatchReport] = field(default_factory=list)
    ratings: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """Agent name -> openskill (mu, sigma, ordinal)."""
    points: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Agent name -> (points rating, its standard error): see
    :func:`~piquet_training.evaluation.ladder.stats.points_ratings`."""
    neighbour_pairs: int = 0
    """Pairs each match between neighbours of the round robin's ranking was extended to (0:
    none was)."""
    neighbours: list[tuple[str, str]] = field(default_factory=list)
    """The neighbours of the final ranking, best agent first; each was judged."""
    judged: list[tuple[str, str]] = field(default_factory=list)
    """Every pairing judged as neighbours (extended to :attr:`neighbour_pairs` or more), in the
    order judged: the final neighbours, and any that were neighbours of an earlier ranking."""
    neighbour_looks: list[int] = field(default_factory=list)
    """The pair counts at which a neighbours' match is judged
    (:func:`~piquet_training.evaluation.ladder.stats.looks`): ``[M]`` for a plain extension to M
    pairs, ``[M, 2M, 4M, ..., MAX]`` when doubling up to MAX."""
    exact: dict | None = None
    """Where computed (``piquet ladder --exact``, rules small enough): the exact head-to-head
    ``matrix`` and ``ratings`` (:func:`~piquet_training.exact.exact_ratings`) and, per agent,
    whether the ladder's 95% interval ``holds`` its exact rating."""

    @property
    def neighbour_alpha(self) -> float:
        """The level a neighbours' match must reach to count as separated: 0.05 shared out over
        the looks (Bonferroni), so that judging at every look keeps the chance of a false
        separation under 5%."""
        return look_level(len(self.neighbour_looks))

    def _level(self, a: str, b: str) -> float:
        """The level the match of ``a`` and ``b`` is judged at."""
        judged = (a, b) in self.judged or (b, a) in self.judged
        return self.neighbour_alpha if judged else ALPHA

    def separated(self, a: str, b: str) -> bool:
        """Whether the match between ``a`` and ``b`` separates them: ``p`` under
        :attr:`neighbour_alpha` for pairings judged as neighbours, under 0.05 otherwise."""
        m, _ = self.match(a, b)
        return separates(m, self._level(a, b))

    def verdict(self, better: str, worse: str) -> str:
        """``"separated"``, ``"not separated"``, or ``"separated, against the ranking"`` when
        the match separates them the other way round (the ranking weighs every match)."""
        m, sign = self.match(better, worse)
        return verdict(m, sign, self._level(better, worse))

    def table(self) -> list[dict]:
        """One row per agent, best points rating first: the points rating and its standard
        error, the openskill rating, mean points per deal over its opponents, win rate."""
        return standings(self.agents, self.matches, self.ratings, self.points)

    def match(self, a: str, b: str) -> tuple[MatchReport, float]:
        """The match between agents ``a`` and ``b`` and the sign that turns its numbers into
        ``a``'s side (+1 when ``a`` was agent A of the match, -1 otherwise)."""
        for m in self.matches:
            if (m.agent_a, m.agent_b) == (a, b):
                return m, 1.0
            if (m.agent_a, m.agent_b) == (b, a):
                return m, -1.0
        raise KeyError(f"no match between {a!r} and {b!r}")

    def matrix(self) -> list[list[float | None]]:
        """Mean points per deal of row agent against column agent (``None`` on the diagonal)."""
        out: list[list[float | None]] = []
        for a in self.agents:
            row: list[float | None] = []
            for b in self.agents:
                if a == b:
                    row.append(None)
                else:
                    m, sign = self.match(a, b)
                    row.append(sign * m.points.mean)
            out.append(row)
        return out

    def interval_matrix(self) -> list[list[tuple[float, float] | None]]:
        """The 95% interval ``(low, high)`` of each cell of :meth:`matrix`."""
        out: list[list[tuple[float, float] | None]] = []
        for a in self.agents:
            row: list[tuple[float, float] | None] = []
            for b in self.agents:
                if a == b:
                    row.append(None)
                    continue
                m, sign = self.match(a, b)
                lo, hi = sign * m.points.low, sign * m.points.high
                row.append((min(lo, hi), max(lo, hi)))
            out.append(row)
        return out

    def to_dict(self) -> dict:
        """JSON-serializable form: the table, the matrices and every match report (and
        ``exact``, where computed)."""
        return {
            "agents": self.agents,
            "rules": self.rules,
            "mode": self.mode,
            "n_pairs": self.n_pairs,
            "neighbour_pairs": self.neighbour_pairs,
            "neighbours": [list(p) for p in self.neighbours],
            "neighbour_looks": self.neighbour_looks,
            "neighbour_alpha": self.neighbour_alpha,
            "neighbours_separated": [self.separated(a, b) for a, b in self.neighbours],
            "neighbours_verdicts": [self.verdict(a, b) for a, b in self.neighbours],
            "judged": [list(p) for p in self.judged],
            "seed": self.seed,
            "ranked_by": "rating: points per deal against an average agent of the ladder",
            "table": self.table(),
            "points_matrix": self.matrix(),
            "points_interval_matrix": [
                [None if c is None else list(c) for c in row] for row in self.interval_matrix()
            ],
            "matches": [m.to_dict() for m in self.matches],
        } | ({"exact": self.exact} if self.exact is not None else {})

    def write_json(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_dict` as JSON to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2)
