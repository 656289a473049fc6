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

>>> from piquet_env.rules import STANDARD
>>> res = run_ladder(["random", "heuristic"], STANDARD, n=10, seed=0)
>>> [row["agent"] for row in res.table()]
['heuristic', 'random']
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import piquet_env
from piquet_env.rules import Rules
from piquet_training.evaluation.duplicate import (
    AgentLike,
    GameResult,
    MatchReport,
    agent_name,
    play_games,
    report,
)

ALPHA = 0.05
"""The ladder's level: a match separates two agents when its ``p`` is under this (shared out
over the looks for neighbours judged at several pair counts)."""

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval (for the ratings' intervals)."""

_SE_FLOOR = 0.01
"""Smallest standard error a match is weighed by (a match whose games all ended alike has 0)."""

RECORD_FILE = "matches.jsonl"
"""Name of a ladder's record of played games in its output folder (see :class:`MatchRecord`)."""


@dataclass
class LadderResult:
    """The matches of a round robin and the ratings they give (see the module docstring)."""

    agents: list[str]
    rules: str
    mode: str
    n_pairs: int
    seed: int
    matches: list[MatchReport] = field(default_factory=list)
    ratings: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """Agent name -> openskill (mu, sigma, ordinal)."""
    points: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Agent name -> (points rating, its standard error): see :func:`points_ratings`."""
    neighbour_pairs: int = 0
    """Pairs each match between neighbours of the round robin's ranking was extended to (0:
    none was)."""
    neighbours: list[tuple[str, str]] = field(default_factory=list)
    """The neighbours of the final ranking, best agent first; each was judged."""
    judged: list[tuple[str, str]] = field(default_factory=list)
    """Every pairing judged as neighbours (extended to :attr:`neighbour_pairs` or more), in the
    order judged: the final neighbours, and any that were neighbours of an earlier ranking."""
    neighbour_looks: list[int] = field(default_factory=list)
    """The pair counts at which a neighbours' match is judged (:func:`looks`): ``[M]`` for a
    plain extension to M pairs, ``[M, 2M, 4M, ..., MAX]`` when doubling up to MAX."""

    @property
    def neighbour_alpha(self) -> float:
        """The level a neighbours' match must reach to count as separated: 0.05 shared out over
        the looks (Bonferroni), so that judging at every look keeps the chance of a false
        separation under 5%."""
        return ALPHA / max(1, len(self.neighbour_looks))

    def separated(self, a: str, b: str) -> bool:
        """Whether the match between ``a`` and ``b`` separates them: ``p`` under
        :attr:`neighbour_alpha` for pairings judged as neighbours, under 0.05 otherwise."""
        m, _ = self.match(a, b)
        level = self.neighbour_alpha if (a, b) in self.judged or (b, a) in self.judged else ALPHA
        return m.p_value < level

    def verdict(self, better: str, worse: str) -> str:
        """``"separated"``, ``"not separated"``, or ``"separated, against the ranking"`` when
        the match separates them the other way round (the ranking weighs every match)."""
        if not self.separated(better, worse):
            return "not separated"
        m, sign = self.match(better, worse)
        return "separated" if sign * m.points.mean > 0 else "separated, against the ranking"

    def neighbours_text(self) -> list[str]:
        """The neighbours' matches, one line each: points per deal of the better-ranked agent,
        the pairs played, ``p`` and whether they separate at :attr:`neighbour_alpha`."""
        if not self.neighbours:
            return []
        rule = f"p < {self.neighbour_alpha:.3g}"
        if len(self.neighbour_looks) > 1:
            looks = ", ".join(str(k) for k in self.neighbour_looks)
            rule += f", judged at {looks} pairs: 0.05 over {len(self.neighbour_looks)} looks"
        out = [f"neighbours (separated at {rule}):"]
        for a, b in self.neighbours:
            m, sign = self.match(a, b)
            lo, hi = sorted((sign * m.points.low, sign * m.points.high))
            verdict = self.verdict(a, b)
            out.append(
                f"  {a} - {b}: {sign * m.points.mean:+.2f} [{lo:+.2f}, {hi:+.2f}] points per "
                f"deal, {m.n_pairs} pairs, p = {m.p_value:.2g}: {verdict}"
            )
        return out

    def pairs_text(self) -> str:
        """How many pairs each pairing played, in words."""
        text = f"{self.n_pairs} duplicate pairs per pairing"
        if len(self.neighbour_looks) > 1:
            looks = self.neighbour_looks
            text += f", {looks[0]} to {looks[-1]} between neighbours"
        elif self.neighbours:
            text += f", {self.neighbour_pairs} between neighbours"
        return text

    def table(self) -> list[dict]:
        """One row per agent, best points rating first: the points rating and its standard
        error, the openskill rating, mean points per deal over its opponents, win rate."""
        rows = []
        for name in self.agents:
            pts, wins, n = 0.0, 0.0, 0
            for m in self.matches:
                if name in (m.agent_a, m.agent_b):
                    sign = 1.0 if m.agent_a == name else -1.0
                    pts += sign * m.points.mean
                    wins += m.win_rate if sign > 0 else 1.0 - m.win_rate
                    n += 1
            mu, sigma, ordinal = self.ratings[name]
            rating, stderr = self.points[name]
            rows.append(
                {
                    "agent": name,
                    "rating": rating,
                    "rating_stderr": stderr,
                    "mu": mu,
                    "sigma": sigma,
                    "ordinal": ordinal,
                    "points_per_deal": pts / max(n, 1),
                    "win_rate": wins / max(n, 1),
                }
            )
        rows.sort(key=lambda r: -r["rating"])
        return rows

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
        """JSON-serializable form: the table, the matrices and every match report."""
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
        }

    def summary(self) -> str:
        """The ranking and the head-to-head matrix as readable lines."""
        lines = [
            f"ladder: {self.rules}, {self.mode} mode, {self.pairs_text()}, seed {self.seed}",
            "ranked by rating: points per deal against an average agent of the ladder (± its"
            " 95% interval; openskill's mu - 3 sigma beside it)",
        ]
        for k, r in enumerate(self.table(), 1):
            lines.append(
                f"  {k}. {r['agent']:<24} rating {r['rating']:+6.2f} ± "
                f"{Z95 * r['rating_stderr']:.2f}  openskill {r['ordinal']:6.2f}  "
                f"points/deal {r['points_per_deal']:+.2f}  win {100 * r['win_rate']:.1f}%"
            )
        lines.append("")
        lines.extend(self.matrix_text())
        if self.neighbours:
            lines.append("")
            lines.extend(self.neighbours_text())
        return "\n".join(lines)

    def matrix_text(self) -> list[str]:
        """The head-to-head matrix for a terminal: rows and columns in ranking order, each cell
        the row agent's mean points per deal against the column agent with the half-width of its
        95% interval, ``*`` where the interval excludes 0, ``?`` where too few pairs to judge."""
        names = [r["agent"] for r in self.table()]
        cells: list[list[str]] = []
        for a in names:
            row = []
            for b in names:
                if a == b:
                    row.append("—")
                    continue
                m, sign = self.match(a, b)
                p = m.points
                mark = "?" if m.too_small else ("*" if p.excludes(0.0) else " ")
                half = (p.high - p.low) / 2
                row.append(f"{sign * p.mean:+.1f}±{half:.1f}{mark}")
            cells.append(row)
        width = max(len(c) for row in cells for c in row)
        label = max(len(f"{k}. {n}") for k, n in enumerate(names, 1))
        head = " " * (label + 2) + "  ".join(f"{k:>{width}}" for k in range(1, len(names) + 1))
        out = [
            "head to head: mean points per deal, row minus column, ± half the 95% interval",
            "(* the interval excludes 0; ? too few pairs to judge)",
            head,
        ]
        for k, (n, row) in enumerate(zip(names, cells), 1):
            out.append(f"{f'{k}. {n}':<{label}}  " + "  ".join(f"{c:>{width}}" for c in row))
        return out

    def write_json(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_dict` as JSON to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2)

    def save(self, out_dir: str) -> tuple[str, str]:
        """Write ``ladder.json`` and ``ladder.png`` into ``out_dir``; return their paths."""
        os.makedirs(out_dir, exist_ok=True)
        json_path = os.path.join(out_dir, "ladder.json")
        self.write_json(json_path)
        png_path = os.path.join(out_dir, "ladder.png")
        self.plot(png_path)
        return json_path, png_path

    def figure(self):
        """The ladder's matplotlib figure (Agg backend): the ratings as ranked, and the
        head-to-head matrix with each cell's interval and significance."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        rows = self.table()
        names = [r["agent"] for r in rows]
        k = len(names)
        fig, (ax1, ax2) = plt.subplots(
            1, 2, figsize=(7 + 1.3 * k, 1.8 + 0.9 * k), gridspec_kw={"width_ratios": [1, 1.2]}
        )
        ys = list(range(k))[::-1]  # best at the top
        for y, r in zip(ys, rows):
            half = Z95 * r["rating_stderr"]
            ax1.plot(
                [r["rating"] - half, r["rating"] + half],
                [y, y],
                color="tab:gray",
                lw=2,
                solid_capstyle="butt",
            )
        ax1.scatter(
            [r["rating"] for r in rows],
            ys,
            marker="D",
            s=60,
            color="tab:blue",
            zorder=4,
            label="rating (ranked by), 95% interval",
        )
        for y, r in zip(ys, rows):
            ax1.annotate(
                f"{r['rating']:+.1f}",
                (r["rating"], y),
                textcoords="offset points",
                xytext=(0, 7),
                ha="center",
                fontsize=8,
                color="tab:blue",
            )
        ax1.set_yticks(ys, [f"{i}. {n}" for i, n in enumerate(names, 1)])
        ax1.set_ylim(-0.7, k - 0.3)
        ax1.set_xlabel("points per deal against an average agent of the ladder")
        ax1.set_title("ranking (by points rating)")
        ax1.legend(loc="lower right", fontsize=7)
        ax1.grid(axis="x", alpha=0.3)

        order = [self.agents.index(n) for n in names]
        mat, ci = self.matrix(), self.interval_matrix()
        grid = np.full((k, k), np.nan)
        for a, i in enumerate(order):
            for b, j in enumerate(order):
                if mat[i][j] is not None:
                    grid[a, b] = mat[i][j]
        bound = max(1.0, float(np.nanmax(np.abs(grid))) if k > 1 else 1.0)
        cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="0.85")
        im = ax2.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=-bound, vmax=bound)
        for a, i in enumerate(order):
            for b, j in enumerate(order):
                if a == b:
                    ax2.text(b, a, "—", ha="center", va="center", color="0.4")
                    continue
                lo, hi = ci[i][j]
                m, _ = self.match(names[a], names[b])
                mark = "?" if m.too_small else ("*" if lo > 0 or hi < 0 else "")
                ax2.text(
                    b,
                    a,
                    f"{grid[a, b]:+.1f}{mark}\n[{lo:+.1f}, {hi:+.1f}]",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if abs(grid[a, b]) > bound / 2 else "black",
                )
        ax2.set_xticks(range(k), [str(i) for i in range(1, k + 1)])
        ax2.set_yticks(range(k), [f"{i}. {n}" for i, n in enumerate(names, 1)])
        ax2.set_xlabel("column agent (number as in the ranking)")
        ax2.set_title("head to head: row − column\n(* 95% interval excludes 0; ? too few pairs)")
        bar = fig.colorbar(im, ax=ax2, shrink=0.85)
        bar.set_label("mean points per deal, row − column")
        fig.suptitle(f"piquet ladder: {self.rules}, {self.mode} mode, {self.pairs_text()}")
        fig.tight_layout()
        return fig

    def plot(self, path: str | os.PathLike) -> None:
        """Draw :meth:`figure` to a PNG file at ``path``."""
        import matplotlib.pyplot as plt

        fig = self.figure()
        try:
            fig.savefig(path, dpi=100)
        finally:
            plt.close(fig)


def agent_id(agent: AgentLike) -> str | None:
    """What identifies an agent across runs: a digest of the package version, its spec and the
    bytes of every checkpoint file the spec loads (:func:`~piquet_agents.registry.spec_files`);
    ``None`` for an agent given as an object, whose games are not recorded."""
    if not isinstance(agent, str):
        return None
    from piquet_agents.registry import spec_files

    digest = hashlib.sha256(f"{piquet_env.__version__}\n{agent.strip()}".encode())
    for path in spec_files(agent):
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:20]


class LadderRecordError(ValueError):
    """A ladder's record of played games that cannot be read (names the file and line)."""


MatchKey = tuple[str, str, str, str, str, str, int]
"""(agent A, A's id, agent B, B's id, rules, mode, seed): what a recorded game belongs to."""
KEY_FIELDS = ("agent_a", "id_a", "agent_b", "id_b", "rules", "mode", "seed")
"""The names of a :data:`MatchKey`'s fields in a record's lines."""


class MatchRecord:
    """The games a ladder has played, appended to a JSON-lines file as each batch of pairs ends.

    Pairs are numbered and each is played the same way for the same agents, rules, mode and seed,
    so a ladder that is stopped and run again with ``resume`` takes the recorded pairs instead of
    playing them again: only the pairs missing from the record are played. A game is reused only
    for agents with the same :func:`agent_id` (a retrained checkpoint is played again); after
    changing an agent's code, start a new record. A last line cut short (the process killed while
    writing it) is dropped with a warning; any other unreadable line is an error.
    """

    def __init__(self, path: str | os.PathLike, resume: bool = False) -> None:
        self.path = Path(path)
        self._games: dict[MatchKey, dict[int, list[GameResult]]] = {}
        self.failed = False
        """Whether writing the file failed (nothing more is written to it then)."""
        if resume and self.path.exists():
            self._load()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")

    def _load(self) -> None:
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            cut = raw.rfind(b"\n") + 1
            print(
                f"warning: {self.path}: dropping its last line, cut short "
                f"({len(raw) - cut} bytes); those pairs are played again",
                file=sys.stderr,
            )
            with open(self.path, "r+b") as f:
                f.truncate(cut)
            raw = raw[:cut]
        for number, line in enumerate(raw.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                *names, seed = (entry[k] for k in KEY_FIELDS)
                key = (*map(str, names), int(seed))
                games = [GameResult.from_dict(g) for g in entry["games"]]
            except (ValueError, KeyError, TypeError) as exc:
                raise LadderRecordError(
                    f"{self.path} line {number}: not a recorded batch of games ({exc})"
                ) from None
            self._merge(key, games, f"{self.path} line {number}")

    def _merge(self, key: MatchKey, games: Sequence[GameResult], where: str) -> None:
        by_pair: dict[int, list[GameResult]] = {}
        for g in games:
            by_pair.setdefault(g.pair, []).append(g)
        have = self._games.setdefault(key, {})
        for pair, both in by_pair.items():
            both.sort(key=lambda g: g.game)
            if [g.game for g in both] != [0, 1]:
                raise LadderRecordError(f"{where}: pair {pair} lacks one of its two games")
            if pair in have and have[pair] != both:
                raise LadderRecordError(f"{where}: pair {pair} recorded twice, differently")
            have[pair] = both

    @staticmethod
    def key(
        agent_a: AgentLike, agent_b: AgentLike, rules: Rules, mode: str, seed: int
    ) -> MatchKey | None:
        """The key of the match of ``agent_a`` against ``agent_b``; ``None`` if either is an
        agent object (not recorded)."""
        id_a, id_b = agent_id(agent_a), agent_id(agent_b)
        if id_a is None or id_b is None:
            return None
        return (agent_name(agent_a), id_a, agent_name(agent_b), id_b, rules.name, mode, seed)

    def recorded(self, key: MatchKey) -> dict[int, list[GameResult]]:
        """The recorded games of a match, by pair number (both games of each pair)."""
        return self._games.get(key, {})

    def add(self, key: MatchKey, games: Sequence[GameResult]) -> None:
        """Record the games of a batch of pairs: one line, appended and synced to disk (if the
        file cannot be written, a warning says so and nothing more is recorded)."""
        self._merge(key, games, str(self.path))
        if self.failed:
            return
        entry = {**dict(zip(KEY_FIELDS, key)), "games": [g.to_dict() for g in games]}
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, separators=(",", ":")) + "\n")
                f.flush()
                os.fsync(f.fileno())
        except OSError as err:  # the ladder goes on; only a resume would miss these pairs
            self.failed = True
            print(
                f"warning: could not record games in {self.path} ({err.strerror or err}); "
                "the ladder goes on without its record",
                file=sys.stderr,
            )


def rate(
    agents: Sequence[str], matches: Sequence[MatchReport]
) -> dict[str, tuple[float, float, float]]:
    """Openskill Plackett-Luce ratings from the games of the matches, interleaved pair by pair."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {a: model.rating(name=a) for a in agents}
    longest = max((m.n_pairs for m in matches), default=0)
    by_pair = [{g.pair: [] for g in m.games} for m in matches]
    for m, d in zip(matches, by_pair):
        for g in m.games:
            d[g.pair].append(g)
    for pair in range(longest):
        for m, d in zip(matches, by_pair):
            for g in d.get(pair, ()):
                a, b = ratings[m.agent_a], ratings[m.agent_b]
                ranks = [0, 0] if g.result == 0 else ([0, 1] if g.result > 0 else [1, 0])
                [[a2], [b2]] = model.rate([[a], [b]], ranks=ranks)
                ratings[m.agent_a], ratings[m.agent_b] = a2, b2
    return {a: (r.mu, r.sigma, r.ordinal()) for a, r in ratings.items()}


def points_ratings(
    agents: Sequence[str], matches: Sequence[MatchReport]
) -> dict[str, tuple[float, float]]:
    """Each agent's points rating and its standard error: the ratings ``r`` that best explain
    every match's mean point difference per deal ``d(a, b)`` as ``r[a] - r[b]``, by least squares
    weighted by the inverse of each mean's variance, with the ratings summing to zero (so a rating
    is the points per deal against an average agent of the ladder).

    >>> from types import SimpleNamespace as NS
    >>> def m(a, b, mean): return NS(agent_a=a, agent_b=b, points=NS(mean=mean, stderr=1.0))
    >>> r = points_ratings("xyz", [m("x", "y", 2.0), m("y", "z", 1.0), m("x", "z", 3.0)])
    >>> {a: round(v, 6) for a, (v, _) in r.items()}
    {'x': 1.666667, 'y': -0.333333, 'z': -1.333333}
    """
    import numpy as np

    index = {a: i for i, a in enumerate(agents)}
    k = len(agents)
    lap, rhs = np.zeros((k, k)), np.zeros(k)
    for m in matches:
        i, j = index[m.agent_a], index[m.agent_b]
        se = m.points.stderr
        if not math.isfinite(se):
            continue  # one pair: no variance to weigh it by
        w = 1.0 / max(se, _SE_FLOOR) ** 2
        lap[i, i] += w
        lap[j, j] += w
        lap[i, j] -= w
        lap[j, i] -= w
        rhs[i] += w * m.points.mean
        rhs[j] -= w * m.points.mean
    cov = np.linalg.pinv(lap)  # the ratings' covariance; its null space is the common offset
    values = cov @ rhs
    return {a: (float(values[i]), float(math.sqrt(max(cov[i, i], 0.0)))) for a, i in index.items()}


def looks(first: int, most: int = 0) -> list[int]:
    """The pair counts at which a neighbours' match is judged: ``first``, then doubling while
    under ``most``, then ``most`` (just ``[first]`` when ``most`` is 0).

    >>> looks(500), looks(500, 4000), looks(500, 3000)
    ([500], [500, 1000, 2000, 4000], [500, 1000, 2000, 3000])
    """
    if most and most <= first:
        raise ValueError(f"the most pairs ({most}) must exceed the first look's {first}")
    out = [first]
    while most and out[-1] < most:
        out.append(min(2 * out[-1], most))
    return out


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
) -> LadderResult:
    """Play every pairing of ``agents`` (specs or agents) for ``n`` duplicate pairs and rate
    them; with ``neighbour_pairs`` (more than ``n``), extend the matches between neighbours of
    that ranking to that many pairs and rate again (see the module docstring). With
    ``neighbour_max`` too, a neighbours' match that does not separate them doubles its pairs, up to
    ``neighbour_max``, until it does; each is judged at every look (:func:`looks`) at the level
    0.05 shared out over the looks (:attr:`LadderResult.neighbour_alpha`).

    With ``record``, pairs already recorded there are taken instead of played and every batch
    played is recorded (:class:`MatchRecord`); ``on_match`` is called with each match's report
    as it is complete (an extended match again when extended)."""
    names = [agent_name(a) for a in agents]
    if len(agents) < 2:
        raise ValueError("a ladder needs at least two agents")
    if len(set(names)) != len(names):
        raise ValueError(f"ladder agents must have distinct names, got {names}")
    if neighbour_pairs and neighbour_pairs <= n:
        raise ValueError(
            f"neighbour_pairs must exceed the round robin's {n} pairs, got {neighbour_pairs}"
        )
    if neighbour_max and not neighbour_pairs:
        raise ValueError("neighbour_max needs neighbour_pairs (the first look)")
    counts = looks(neighbour_pairs, neighbour_max) if neighbour_pairs else []

    def match(
        i: int, j: int, pairs: int, desc: str, held: Sequence[GameResult] = ()
    ) -> MatchReport:
        """The match of agents i and j over pairs 0 to ``pairs - 1``: the pairs ``held`` or
        recorded are taken, the others played (and recorded)."""
        key = None if record is None else record.key(agents[i], agents[j], rules, mode, seed)
        have = {} if key is None or record is None else dict(record.recorded(key))
        for pair, run in itertools.groupby(held, lambda g: g.pair):  # held: in pair order
            have.setdefault(pair, list(run))
        missing = [p for p in range(pairs) if p not in have]
        games = [g for p in range(pairs) if p in have for g in have[p]]
        for _, run in itertools.groupby(enumerate(missing), lambda t: t[1] - t[0]):
            todo = [p for _, p in run]
            more = play_games(
                agents[i], agents[j], rules, len(todo), mode, seed, workers, progress,
                desc=desc, start=todo[0],
            )  # fmt: skip
            if key is not None and record is not None:
                record.add(key, more)
            games += more
        games.sort(key=lambda g: (g.pair, g.game))
        m = report(games, names[i], names[j], rules, mode, seed)
        if on_match is not None:
            on_match(m)
        return m

    def rerate(res: LadderResult) -> list[str]:
        """Rate ``res`` from all its games; return the ranking."""
        res.ratings = rate(names, res.matches)
        res.points = points_ratings(names, res.matches)
        return [row["agent"] for row in res.table()]

    pairings = list(itertools.combinations(range(len(agents)), 2))
    matches = [match(i, j, n, f"{names[i]} vs {names[j]}") for i, j in pairings]
    res = LadderResult(names, rules.name, mode, n, seed, matches)
    ranked = rerate(res)
    if neighbour_pairs:
        res.neighbour_pairs = neighbour_pairs
        res.neighbour_looks = counts
        # Judge the neighbours of the ranking; the games that adds may reorder it, so judge the
        # new neighbours too, until every neighbour of the ranking has been (each pairing once).
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
                        res.matches[k] = match(i, j, count, desc, m.games)
                    if res.separated(better, worse):
                        break
            ranked = rerate(res)
        res.neighbours = list(itertools.pairwise(ranked))
    return res
