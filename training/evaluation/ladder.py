"""A round-robin ladder: every pair of agents plays a duplicate-deal match; openskill ratings.

A round robin spends as many pairs on a pairing whose result is plain after a few dozen pairs
(anything against ``random``) as on two agents a point per deal apart, which need about a thousand
to separate. With ``neighbour_pairs`` the matches between *neighbours*, the agents next to each
other in the round robin's ranking, are then extended to that many pairs (pairs are numbered, so
an extended match is the match that many pairs would have played in one go), and the ratings are
computed again from all the games: the pairs go where the ranking is decided.

Each match is :func:`piquet_training.evaluation.duplicate.evaluate` (so every pairing sees the same
cards for the same seed). The ratings are openskill Plackett-Luce ratings updated game by game, the
games of all pairings interleaved pair by pair so that the order of the pairings does not favour
anyone; each agent is ranked by the conservative ``ordinal`` (mu - 3 sigma), and the picture and
the terminal show that same number. :meth:`LadderResult.save` writes ``ladder.json`` and
:meth:`LadderResult.plot` draws ``ladder.png`` (the ranking with mu ± 3 sigma, and the head-to-head
matrix of mean points per deal with each cell's 95% interval and significance);
:meth:`LadderResult.matrix_text` is that matrix for a terminal.

>>> from piquet_env.rules import STANDARD
>>> res = run_ladder(["random", "heuristic"], STANDARD, n=10, seed=0)
>>> [row["agent"] for row in res.table()]
['heuristic', 'random']
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from piquet_training.evaluation.duplicate import (
    AgentLike,
    MatchReport,
    agent_name,
    evaluate,
    play_games,
    report,
)

from piquet_env.rules import Rules


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
    """Agent name -> (mu, sigma, ordinal)."""
    neighbour_pairs: int = 0
    """Pairs each match between neighbours of the round robin's ranking was extended to (0:
    none was)."""
    neighbours: list[tuple[str, str]] = field(default_factory=list)
    """The pairings extended to :attr:`neighbour_pairs`, best agent first."""

    def pairs_text(self) -> str:
        """How many pairs each pairing played, in words."""
        text = f"{self.n_pairs} duplicate pairs per pairing"
        if self.neighbours:
            text += f", {self.neighbour_pairs} between neighbours"
        return text

    def table(self) -> list[dict]:
        """One row per agent, best ordinal rating first: rating, mean points per deal, win rate."""
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
            rows.append(
                {
                    "agent": name,
                    "mu": mu,
                    "sigma": sigma,
                    "ordinal": ordinal,
                    "points_per_deal": pts / max(n, 1),
                    "win_rate": wins / max(n, 1),
                }
            )
        rows.sort(key=lambda r: -r["ordinal"])
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
            "seed": self.seed,
            "ranked_by": "ordinal = mu - 3 sigma",
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
            "ranked by rating = mu - 3 sigma (openskill: a conservative skill estimate)",
        ]
        for k, r in enumerate(self.table(), 1):
            lines.append(
                f"  {k}. {r['agent']:<24} rating {r['ordinal']:6.2f} "
                f"(mu {r['mu']:.2f}, sigma {r['sigma']:.2f})  "
                f"points/deal {r['points_per_deal']:+.2f}  win {100 * r['win_rate']:.1f}%"
            )
        lines.append("")
        lines.extend(self.matrix_text())
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
            lo, hi = r["mu"] - 3 * r["sigma"], r["mu"] + 3 * r["sigma"]
            ax1.plot([lo, hi], [y, y], color="tab:gray", lw=2, solid_capstyle="butt")
        ax1.scatter([r["mu"] for r in rows], ys, color="tab:gray", zorder=3, label="mu (± 3 sigma)")
        ax1.scatter(
            [r["ordinal"] for r in rows],
            ys,
            marker="D",
            s=60,
            color="tab:blue",
            zorder=4,
            label="rating = mu − 3 sigma (ranked by)",
        )
        for y, r in zip(ys, rows):
            ax1.annotate(
                f"{r['ordinal']:.1f}",
                (r["ordinal"], y),
                textcoords="offset points",
                xytext=(0, 7),
                ha="center",
                fontsize=8,
                color="tab:blue",
            )
        ax1.set_yticks(ys, [f"{i}. {n}" for i, n in enumerate(names, 1)])
        ax1.set_ylim(-0.7, k - 0.3)
        ax1.set_xlabel("openskill rating")
        ax1.set_title("ranking (by mu − 3 sigma)")
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


def run_ladder(
    agents: Sequence[AgentLike],
    rules: Rules,
    n: int,
    mode: str = "deal",
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    neighbour_pairs: int = 0,
) -> LadderResult:
    """Play every pairing of ``agents`` (specs or agents) for ``n`` duplicate pairs and rate
    them; with ``neighbour_pairs`` (more than ``n``), extend the matches between neighbours of
    that ranking to that many pairs and rate again (see the module docstring)."""
    names = [agent_name(a) for a in agents]
    if len(agents) < 2:
        raise ValueError("a ladder needs at least two agents")
    if len(set(names)) != len(names):
        raise ValueError(f"ladder agents must have distinct names, got {names}")
    if neighbour_pairs and neighbour_pairs <= n:
        raise ValueError(
            f"neighbour_pairs must exceed the round robin's {n} pairs, got {neighbour_pairs}"
        )
    matches = [
        evaluate(agents[i], agents[j], rules, n, mode, seed, workers, progress)
        for i, j in itertools.combinations(range(len(agents)), 2)
    ]
    res = LadderResult(names, rules.name, mode, n, seed, matches)
    res.ratings = rate(names, matches)
    if neighbour_pairs:
        ranked = [row["agent"] for row in res.table()]
        res.neighbour_pairs = neighbour_pairs
        res.neighbours = list(itertools.pairwise(ranked))
        for better, worse in res.neighbours:
            m, _ = res.match(better, worse)
            i, j = names.index(m.agent_a), names.index(m.agent_b)
            more = play_games(
                agents[i],
                agents[j],
                rules,
                neighbour_pairs - m.n_pairs,
                mode,
                seed,
                workers,
                progress,
                desc=f"{m.agent_a} vs {m.agent_b} (neighbours)",
                start=m.n_pairs,
            )
            k = next(k for k, x in enumerate(res.matches) if x is m)
            res.matches[k] = report(m.games + more, m.agent_a, m.agent_b, rules, mode, seed)
        res.ratings = rate(names, res.matches)
    return res
