"""A round-robin ladder: every pair of agents plays a duplicate-deal match; points ratings.

Each agent is ranked by its *points rating*: the points per deal it would score against an
average agent of the ladder, fitted to every head-to-head match at once by weighted least squares
(each match's mean point difference per deal, weighted by the inverse of its variance, so a match
of 4,000 pairs counts forty times one of 100; the ratings sum to zero). It measures the same thing
as the matches that separate agents, uses every game however the pairs were spread over the
pairings, and does not depend on the order the games were played in. Its standard errors come with
it. The openskill Plackett-Luce rating (won and lost games, updated game by game, the pairings
interleaved pair by pair) is shown beside it.

A round robin spends as many pairs on a pairing whose result is plain after a few dozen pairs
(anything against ``random``) as on two agents a point per deal apart, which need about a thousand
to separate. With ``neighbour_pairs`` the matches between *neighbours*, the agents next to each
other in the ranking, are then extended to that many pairs (pairs are numbered, so an extended
match is the match that many pairs would have played in one go), and the ratings are computed
again from all the games: the pairs go where the ranking is decided. With ``neighbour_max`` a
neighbours' match that does not yet separate them doubles its pairs, up to that many, until it
does (two agents half a point per deal apart need a few thousand pairs, and two policies play them
in a minute where two searches take an hour). Each is judged at every look, so the level is 0.05
shared out over the looks (Bonferroni): the chance that two equal agents are ever called separated
stays under 5%. When the extended games change the ranking, the new neighbours are judged the same
way, until every pair of neighbours in the final ranking has been.

Each match is played by :func:`piquet_training.evaluation.duplicate.play_games` (so every pairing
sees the same cards for the same seed). With a :class:`MatchRecord` every batch of pairs played is
appended to ``matches.jsonl`` as it ends, and a ladder run again with the same record (``piquet
ladder --resume``) takes the pairs recorded there instead of playing them again.

:meth:`LadderResult.save` writes ``ladder.json`` and :meth:`LadderResult.plot` draws
``ladder.png`` (the ranking with each rating's 95% interval, and the head-to-head matrix of mean
points per deal with each cell's 95% interval and significance); :meth:`LadderResult.matrix_text`
is that matrix for a terminal.

One module does each job, and this one runs the ladder and keeps the names they export:
:mod:`.stats` the ratings, the looks and the verdicts; :mod:`.data` the result's
data and its JSON; :mod:`.text` the text; :mod:`.figure` the figure (matplotlib
imported only there, when drawing); :mod:`piquet_training.evaluation.record` the record of played
games.

>>> from piquet_env.rules import STANDARD
>>> res = run_ladder(["random", "heuristic"], STANDARD, n=10, seed=0)
>>> [row["agent"] for row in res.table()]
['heuristic', 'random']
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piquet_env.rules import Rules
from piquet_training.evaluation.duplicate import (
    AgentLike,
    DuplicateMatch,
    GameResult,
    MatchReport,
    agent_name,
    report,
)
from piquet_training.evaluation.executor import Fanout
from piquet_training.evaluation.ladder import figure as ladder_figure
from piquet_training.evaluation.ladder import text as ladder_text
from piquet_training.evaluation.ladder.data import LadderData
from piquet_training.evaluation.ladder.stats import ALPHA, Z95, looks, points_ratings, rate
from piquet_training.evaluation.record import (
    KEY_FIELDS,
    RECORD_FILE,
    LadderRecordError,
    MatchKey,
    MatchRecord,
    agent_id,
    play_recorded,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "ALPHA",
    "KEY_FIELDS",
    "RECORD_FILE",
    "Z95",
    "LadderRecordError",
    "LadderResult",
    "MatchKey",
    "MatchRecord",
    "agent_id",
    "looks",
    "points_ratings",
    "rate",
    "run_ladder",
]


class LadderResult(LadderData):
    """The matches of a round robin and the ratings they give (see the module docstring): the
    data, look-ups and JSON of :class:`~piquet_training.evaluation.ladder.data.LadderData`, with
    its text (:mod:`.text`) and figure (:mod:`.figure`)."""

    def pairs_text(self) -> str:
        """How many pairs each pairing played, in words."""
        return ladder_text.pairs_text(self)

    def neighbours_text(self) -> list[str]:
        """The neighbours' matches, one line each: points per deal of the better-ranked agent,
        the pairs played, ``p`` and whether they separate at :attr:`neighbour_alpha`."""
        return ladder_text.neighbours_text(self)

    def matrix_text(self) -> list[str]:
        """The head-to-head matrix for a terminal: rows and columns in ranking order, each cell
        the row agent's mean points per deal against the column agent with the half-width of its
        95% interval, ``*`` where the interval excludes 0, ``?`` where too few pairs to judge."""
        return ladder_text.matrix_text(self)

    def summary(self) -> str:
        """The ranking and the head-to-head matrix as readable lines."""
        return ladder_text.summary(self)

    def figure(self) -> Figure:
        """The ladder's matplotlib figure (Agg backend): the ratings as ranked, and the
        head-to-head matrix with each cell's interval and significance."""
        return ladder_figure.figure(self)

    def plot(self, path: str | os.PathLike) -> None:
        """Draw :meth:`figure` to a PNG file at ``path``."""
        ladder_figure.plot(self, path)

    def save(self, out_dir: str) -> tuple[str, str]:
        """Write ``ladder.json`` and ``ladder.png`` into ``out_dir``; return their paths."""
        os.makedirs(out_dir, exist_ok=True)
        json_path = os.path.join(out_dir, "ladder.json")
        self.write_json(json_path)
        png_path = os.path.join(out_dir, "ladder.png")
        self.plot(png_path)
        return json_path, png_path


def run_ladder(
    agents: Sequence[AgentLike],
    rules: Rules,
    n: int,
    mode: str = "deal",
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    neighbour_pairs: int = 0,
    neighbour_max: int = 0,
    record: MatchRecord | None = None,
    on_match: Callable[[MatchReport], None] | None = None,
    variance_reduction: str | None = None,
    ray: str | None = None,
) -> LadderResult:
    """Play every pairing of ``agents`` (specs or agents) for ``n`` duplicate pairs and rate
    them; with ``neighbour_pairs`` (more than ``n``), extend the matches between neighbours of
    that ranking to that many pairs and rate again (see the module docstring). With
    ``neighbour_max`` too, a neighbours' match that does not separate them doubles its pairs, up to
    ``neighbour_max``, until it does; each is judged at every look (:func:`looks`) at the level
    0.05 shared out over the looks (:attr:`LadderResult.neighbour_alpha`).

    With ``record``, pairs already recorded there are taken instead of played and every batch
    played is recorded (:class:`MatchRecord`); ``on_match`` is called with each match's report
    as it is complete (an extended match again when extended). With ``variance_reduction`` (a
    policy checkpoint spec) every match's points are corrected for the talon's luck by that
    policy's critic (:mod:`~piquet_training.evaluation.variance`), and so are the ratings and the
    neighbours' verdicts; the record keeps such games apart from plain ones. ``workers`` tasks
    play at a time, in processes here or on Ray with ``ray``
    (:class:`~piquet_training.evaluation.executor.Fanout`): the same games either way."""
    names = [agent_name(a) for a in agents]
    _check_ladder(names, n, neighbour_pairs, neighbour_max)
    counts = looks(neighbour_pairs, neighbour_max) if neighbour_pairs else []
    play = _Matches(
        agents,
        names,
        rules,
        mode,
        seed,
        Fanout(workers, ray),
        progress,
        record,
        on_match,
        variance_reduction,
    )
    pairings = list(itertools.combinations(range(len(agents)), 2))
    matches = [play.match(i, j, n, f"{names[i]} vs {names[j]}") for i, j in pairings]
    res = LadderResult(names, rules.name, mode, n, seed, matches)
    ranked = _rerate(res)
    if neighbour_pairs:
        res.neighbour_pairs = neighbour_pairs
        res.neighbour_looks = counts
        _judge_neighbours(res, ranked, counts, play)
    return res


def _check_ladder(names: list[str], n: int, neighbour_pairs: int, neighbour_max: int) -> None:
    """A :class:`ValueError` naming what is wrong with a ladder's agents or extensions."""
    if len(names) < 2:
        raise ValueError("a ladder needs at least two agents")
    if len(set(names)) != len(names):
        raise ValueError(f"ladder agents must have distinct names, got {names}")
    if neighbour_pairs and neighbour_pairs <= n:
        raise ValueError(
            f"neighbour_pairs must exceed the round robin's {n} pairs, got {neighbour_pairs}"
        )
    if neighbour_max and not neighbour_pairs:
        raise ValueError("neighbour_max needs neighbour_pairs (the first look)")


@dataclass(frozen=True)
class _Matches:
    """How a ladder's matches are played: the agents, the deals' settings, where, and the record
    that holds pairs already played."""

    agents: Sequence[AgentLike]
    names: list[str]
    rules: Rules
    mode: str
    seed: int
    fanout: Fanout
    progress: bool
    record: MatchRecord | None
    on_match: Callable[[MatchReport], None] | None
    variance_reduction: str | None

    def match(
        self, i: int, j: int, pairs: int, desc: str, held: Sequence[GameResult] = ()
    ) -> MatchReport:
        """The match of agents i and j over pairs 0 to ``pairs - 1``: the pairs ``held`` or
        recorded are taken, the others played (and recorded)."""
        vr = self.variance_reduction
        a, b = self.agents[i], self.agents[j]
        match = DuplicateMatch(a, b, self.rules, pairs, self.mode, self.seed, 0, vr)
        games = play_recorded(
            match, self.record, fanout=self.fanout, progress=self.progress, desc=desc, held=held
        )
        m = report(games, self.names[i], self.names[j], self.rules, self.mode, self.seed, vr or "")
        if self.on_match is not None:
            self.on_match(m)
        return m


def _rerate(res: LadderResult) -> list[str]:
    """Rate ``res`` from all its games; return the ranking."""
    res.ratings = rate(res.agents, res.matches)
    res.points = points_ratings(res.agents, res.matches)
    return [row["agent"] for row in res.table()]


def _judge_neighbours(
    res: LadderResult, ranked: list[str], counts: list[int], play: _Matches
) -> None:
    """Judge the neighbours of the ranking, extending each match look by look until it separates
    them; the games that adds may reorder the ranking, so judge the new neighbours too, until
    every neighbour of the ranking has been (each pairing once)."""
    names = res.agents
    while todo := [p for p in itertools.pairwise(ranked) if p not in res.judged
                   and p[::-1] not in res.judged]:  # fmt: skip
        for better, worse in todo:
            res.judged.append((better, worse))
            for count in counts:
                m, _ = res.match(better, worse)
                if m.n_pairs < count:
                    i, j = names.index(m.agent_a), names.index(m.agent_b)
                    k = res.matches.index(m)
                    desc = f"{m.agent_a} vs {m.agent_b} (neighbours)"
                    res.matches[k] = play.match(i, j, count, desc, m.games)
                if res.separated(better, worse):
                    break
        ranked = _rerate(res)
    res.neighbours = list(itertools.pairwise(ranked))
