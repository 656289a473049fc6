"""A match's report: its games reduced to estimates with 95% intervals and a verdict."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from piquet_env.rules import Rules
from piquet_training.evaluation.duplicate.match import GameResult
from piquet_training.evaluation.stats import (
    MIN_PAIRS,
    Estimate,
    mean_ci,
    proportion_ci,
    too_small,
    verdict_word,
)
from piquet_training.memory import ProcessMemory


@dataclass(frozen=True)
class Deals:
    """The deals a match was played on, whoever played them: its rules, mode, seed and number
    of pairs. Two results with equal ``Deals`` compare pair by pair (an eval report, an exploit
    run's final evaluation); :func:`same_deals` says where two differ."""

    rules: str
    mode: str
    seed: int
    pairs: int


@dataclass
class MatchHeader:
    """Who played a duplicate-deal match, and on what deals: agents A and B (their names), the
    rules, the mode, the seed and the number of pairs. A match's report and a report read back
    from its file (:class:`~piquet_training.evaluation.paired.Report`) both begin with it."""

    agent_a: str
    agent_b: str
    rules: str
    mode: str
    seed: int
    n_pairs: int

    @property
    def deals(self) -> Deals:
        """The deals the match was played on."""
        return Deals(self.rules, self.mode, self.seed, self.n_pairs)


@dataclass
class MatchReport(MatchHeader):
    """The outcome of a duplicate-deal match of agent A against agent B (its header, then what
    it measured).

    ``mean_diff``, ``ci_low`` and ``ci_high`` are A's mean result per deal (``deal`` mode) or per
    partie (``partie`` mode, the settled score) and its 95% interval; ``significant`` says whether
    that interval excludes 0; ``too_small`` whether there are too few pairs to judge by.
    ``points`` (per deal), ``wins`` (win rate, Wilson interval) and ``partie_score`` are the full
    :class:`~piquet_training.evaluation.stats.Estimate` objects.
    """

    points: Estimate
    wins: Estimate
    partie_score: Estimate | None
    games: list[GameResult] = field(default_factory=list, repr=False)
    variance_reduction: str = ""
    """The value function whose talon corrections ``points`` subtracts (empty: none)."""
    plain_points: Estimate | None = None
    """Points per deal without the corrections, where ``points`` has them."""
    worker_memory: list[ProcessMemory] = field(default_factory=list, repr=False)
    """Each worker process's own memory where the match was played by several (see
    :func:`play_games`)."""

    @property
    def headline(self) -> Estimate:
        """The estimate the verdict is about: points per deal, or the partie score."""
        return self.partie_score if self.partie_score is not None else self.points

    @property
    def mean_diff(self) -> float:
        """A's mean point difference per deal (per partie, settled, in partie mode)."""
        return self.headline.mean

    @property
    def ci_low(self) -> float:
        """Lower end of the 95% interval of :attr:`mean_diff`."""
        return self.headline.low

    @property
    def ci_high(self) -> float:
        """Upper end of the 95% interval of :attr:`mean_diff`."""
        return self.headline.high

    @property
    def p_value(self) -> float:
        """Two-sided p-value of :attr:`mean_diff` differing from 0 (normal approximation)."""
        return self.headline.p_value(0.0)

    @property
    def significant(self) -> bool:
        """Whether A and B differ significantly (the 95% interval of ``mean_diff`` excludes 0)."""
        return self.headline.excludes(0.0)

    @property
    def too_small(self) -> bool:
        """Whether the match has too few pairs (under ``MIN_PAIRS``) for its verdict to count."""
        return too_small(self.n_pairs)

    @property
    def beats(self) -> str:
        """Does A beat B? ``"yes"``, ``"no (worse)"``, ``"not demonstrated"``, or ``"too few
        pairs to judge"`` under ``MIN_PAIRS`` pairs (as :meth:`summary`'s verdict)."""
        return verdict_word(self.ci_low, self.ci_high, self.n_pairs)

    @property
    def win_rate(self) -> float:
        """A's share of games won (ties count half)."""
        return self.wins.mean

    @property
    def n_games(self) -> int:
        """Games played (two per pair)."""
        return len(self.games)

    @property
    def n_deals(self) -> int:
        """Deals played over all games."""
        return sum(g.deals for g in self.games)

    def to_dict(self, games: bool = False) -> dict:
        """JSON-serializable form; ``games=True`` adds every game's result."""
        d = {
            "agent_a": self.agent_a,
            "agent_b": self.agent_b,
            "rules": self.rules,
            "mode": self.mode,
            "seed": self.seed,
            "n_pairs": self.n_pairs,
            "n_games": self.n_games,
            "n_deals": self.n_deals,
            "mean_diff": self.mean_diff,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "significant": self.significant,
            "too_small": self.too_small,
            "beats": self.beats,
            "win_rate": self.win_rate,
            "points_per_deal": self.points.to_dict(),
            "win_rate_ci": self.wins.to_dict(),
            "partie_score": None if self.partie_score is None else self.partie_score.to_dict(),
        }
        if self.variance_reduction:
            d["variance_reduction"] = self.variance_reduction
            d["plain_points_per_deal"] = self.plain_points.to_dict() if self.plain_points else None
        if games:
            d["games"] = [g.to_dict() for g in self.games]
        return d

    def summary(self) -> str:
        """A few readable lines: the estimates with their intervals and the verdict."""
        a, b = self.agent_a, self.agent_b
        lines = [
            f"{a} vs {b}: {self.rules}, {self.mode} mode, {self.n_pairs} duplicate pairs "
            f"({self.n_games} games, {self.n_deals} deals)"
        ]
        p = self.points
        lines.append(
            f"  points per deal ({a} − {b}): {p.mean:+.2f}  95% CI [{p.low:+.2f}, {p.high:+.2f}]"
        )
        if self.plain_points is not None:
            q = self.plain_points
            lines[-1] += f" (talon luck removed by {self.variance_reduction}'s critic)"
            lines.append(
                f"    without the correction: {q.mean:+.2f}  95% CI [{q.low:+.2f}, {q.high:+.2f}]"
                f" (interval {(q.high - q.low) / max(p.high - p.low, 1e-12):.2f}x as wide)"
            )
        w = self.wins
        lines.append(
            f"  win rate of {a}: {100 * w.mean:.1f}%  "
            f"95% CI [{100 * w.low:.1f}%, {100 * w.high:.1f}%] (Wilson)"
        )
        if self.partie_score is not None:
            s = self.partie_score
            lines.append(
                f"  settled partie score of {a}: {s.mean:+.1f}  "
                f"95% CI [{s.low:+.1f}, {s.high:+.1f}]"
            )
        p_text = f"p = {self.p_value:.2g}" if self.p_value >= 1e-16 else "p < 1e-16"
        if self.too_small:
            verdict = f"too few pairs to judge ({self.n_pairs} < {MIN_PAIRS}; play more pairs)"
        else:
            # the figure judged: the settled partie score in partie mode (:attr:`headline`)
            on = " on the settled partie score" if self.partie_score is not None else ""
            if self.significant:
                better, worse = (a, b) if self.mean_diff > 0 else (b, a)
                verdict = f"{better} is significantly better than {worse}{on} ({p_text})"
            else:
                verdict = f"no difference demonstrated{on} ({p_text})"
        lines.append(f"  verdict: {verdict}")
        return "\n".join(lines)


def report(
    games: Sequence[GameResult],
    agent_a: str,
    agent_b: str,
    rules: Rules,
    mode: str,
    seed: int,
    variance_reduction: str = "",
) -> MatchReport:
    """The :class:`MatchReport` of a list of paired games (both games of every pair present).
    With ``variance_reduction`` (the name of the value function the games were corrected with)
    ``points`` subtracts each game's correction and ``plain_points`` keeps the raw estimate."""
    pairs = [v for _, v in sorted(games_by_pair(games).items())]
    if not pairs or any(len(v) != 2 for v in pairs):
        raise ValueError("a report needs both games of every duplicate pair")
    points = mean_ci([pair_points(v) for v in pairs])
    plain = None
    if variance_reduction:
        plain = points
        points = mean_ci(corrected_pairs(pairs))
    wins = proportion_ci([sum(g.a_win for g in v) / 2 for v in pairs], per_value=2)
    score = mean_ci([sum(g.result for g in v) / 2 for v in pairs]) if mode == "partie" else None
    if math.isnan(points.mean):
        raise ValueError("no games to report")
    return MatchReport(
        agent_a,
        agent_b,
        rules.name,
        mode,
        seed,
        len(pairs),
        points,
        wins,
        score,
        list(games),
        variance_reduction,
        plain,
    )


def games_by_pair(games: Iterable[GameResult]) -> dict[int, list[GameResult]]:
    """The games of a match grouped by duplicate pair (in the order they come)."""
    by_pair: dict[int, list[GameResult]] = {}
    for g in games:
        by_pair.setdefault(g.pair, []).append(g)
    return by_pair


def pair_points(pair: Sequence[GameResult]) -> float:
    """A's points per deal over B in one duplicate pair: the mean of its two games'."""
    return sum(g.points / g.deals for g in pair) / 2


MIN_FIT_PAIRS = 20
"""Fewest pairs in a half of a match for :func:`corrected_pairs` to fit the correction's weight on
it (with fewer, the weight is 1)."""
NO_SIGNAL = 1e-4
"""Corrections whose spread is under this fraction of the points' (plus a point) carry no signal
a weight could use, only float rounding: :func:`corrected_pairs` gives them the weight 1 rather
than a least-squares weight fitted to the noise (under ``mini`` the talon is one card and every
term is 0 up to rounding, about 1e-7 points; a weight fitted to that, 10^5 and more, moved each
match by up to a twentieth of a point)."""


def corrected_pairs(pairs: Sequence[Sequence[GameResult]]) -> list[float]:
    """Each pair's points per deal minus its weighted correction (both per deal, the two games'
    mean), the weight cross-fitted: the least-squares weight of the corrections fitted on the
    odd-numbered pairs is used on the even-numbered ones and the reverse, so no pair's weight
    depends on the pair itself and each corrected value keeps its plain value's mean (the halves
    are independent and each correction has mean zero). A half of under :data:`MIN_FIT_PAIRS`
    pairs, or whose corrections are rounding noise (:data:`NO_SIGNAL`), gives the weight 1."""
    x = np.array([pair_points(v) for v in pairs], dtype=np.float64)
    c = np.array([sum(g.correction / g.deals for g in v) / 2 for v in pairs], dtype=np.float64)
    odd = np.array([v[0].pair % 2 == 1 for v in pairs])

    def weight(half: np.ndarray) -> float:
        xs, cs = x[half], c[half]
        var = float(np.var(cs))
        if len(cs) < MIN_FIT_PAIRS or var <= (NO_SIGNAL * (1.0 + float(np.std(xs)))) ** 2:
            return 1.0
        return float(np.mean((xs - xs.mean()) * (cs - cs.mean())) / var)

    w = np.where(odd, weight(~odd), weight(odd))
    return list(x - w * c)
