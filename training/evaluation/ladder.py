"""A round-robin ladder: every pair of agents plays a duplicate-deal match; openskill ratings.

Each match is :func:`piquet_training.evaluation.duplicate.evaluate` (so every pairing sees the same
cards for the same seed). The ratings are openskill Plackett-Luce ratings updated game by game, the
games of all pairings interleaved pair by pair so that the order of the pairings does not favour
anyone; each agent is ranked by the conservative ``ordinal`` (mu - 3 sigma).
:meth:`LadderResult.save` writes ``ladder.json`` and :meth:`LadderResult.plot` draws ``ladder.png``
(ratings with their uncertainty, and the matrix of mean points per deal).

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

from piquet_training.evaluation.duplicate import AgentLike, MatchReport, agent_name, evaluate

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

    def matrix(self) -> list[list[float | None]]:
        """Mean points per deal of row agent against column agent (``None`` on the diagonal)."""
        idx = {a: i for i, a in enumerate(self.agents)}
        out: list[list[float | None]] = [[None] * len(self.agents) for _ in self.agents]
        for m in self.matches:
            i, j = idx[m.agent_a], idx[m.agent_b]
            out[i][j] = m.points.mean
            out[j][i] = -m.points.mean
        return out

    def to_dict(self) -> dict:
        """JSON-serializable form: the table, the matrix and every match report."""
        return {
            "agents": self.agents,
            "rules": self.rules,
            "mode": self.mode,
            "n_pairs": self.n_pairs,
            "seed": self.seed,
            "table": self.table(),
            "points_matrix": self.matrix(),
            "matches": [m.to_dict() for m in self.matches],
        }

    def summary(self) -> str:
        """The ranking as readable lines."""
        lines = [
            f"ladder: {self.rules}, {self.mode} mode, {self.n_pairs} duplicate pairs per pairing"
        ]
        for k, r in enumerate(self.table(), 1):
            lines.append(
                f"  {k}. {r['agent']:<24} rating {r['ordinal']:6.2f} "
                f"(mu {r['mu']:.2f}, sigma {r['sigma']:.2f})  "
                f"points/deal {r['points_per_deal']:+.2f}  win {100 * r['win_rate']:.1f}%"
            )
        return "\n".join(lines)

    def save(self, out_dir: str) -> tuple[str, str]:
        """Write ``ladder.json`` and ``ladder.png`` into ``out_dir``; return their paths."""
        os.makedirs(out_dir, exist_ok=True)
        json_path = os.path.join(out_dir, "ladder.json")
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2)
        png_path = os.path.join(out_dir, "ladder.png")
        self.plot(png_path)
        return json_path, png_path

    def plot(self, path: str) -> None:
        """Draw the ratings (mu with ±2 sigma bars) and the points matrix to a PNG file."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rows = self.table()
        names = [r["agent"] for r in rows]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6 + 1.2 * len(names), 4.5))
        ax1.barh(
            names[::-1],
            [r["mu"] for r in rows[::-1]],
            xerr=[2 * r["sigma"] for r in rows[::-1]],
            color="tab:blue",
            alpha=0.8,
        )
        ax1.set_xlabel("openskill mu (bars: ±2 sigma)")
        ax1.set_title("ratings")
        mat = self.matrix()
        idx = [self.agents.index(n) for n in names]
        grid = [[mat[i][j] if mat[i][j] is not None else 0.0 for j in idx] for i in idx]
        bound = max(1.0, *(abs(v) for row in grid for v in row))
        im = ax2.imshow(grid, cmap="RdBu", vmin=-bound, vmax=bound)
        ax2.set_xticks(range(len(names)), names, rotation=45, ha="right")
        ax2.set_yticks(range(len(names)), names)
        for a, row in enumerate(grid):
            for b, v in enumerate(row):
                if a != b:
                    ax2.text(
                        b,
                        a,
                        f"{v:+.1f}",
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="white" if abs(v) > bound / 2 else "black",
                    )
        ax2.set_title("points per deal (row vs column)")
        fig.colorbar(im, ax=ax2, shrink=0.8)
        fig.suptitle(f"piquet ladder: {self.rules}, {self.mode} mode, {self.n_pairs} pairs each")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
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
) -> LadderResult:
    """Play every pairing of ``agents`` (specs or agents) for ``n`` duplicate pairs and rate
    them."""
    names = [agent_name(a) for a in agents]
    if len(agents) < 2:
        raise ValueError("a ladder needs at least two agents")
    if len(set(names)) != len(names):
        raise ValueError(f"ladder agents must have distinct names, got {names}")
    matches = [
        evaluate(agents[i], agents[j], rules, n, mode, seed, workers, progress)
        for i, j in itertools.combinations(range(len(agents)), 2)
    ]
    res = LadderResult(names, rules.name, mode, n, seed, matches)
    res.ratings = rate(names, matches)
    return res
