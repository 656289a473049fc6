"""The ladder's statistics: the points rating, the openskill rating, the looks and the verdicts.

The *points rating* (:func:`points_ratings`) is fitted to every match at once by weighted least
squares; the openskill Plackett-Luce rating (:func:`rate`) is shown beside it; :func:`standings`
is one row per agent. A neighbours' match is judged at every look of :func:`looks`, each at
:func:`look_level` (0.05 shared out over the looks), and :func:`verdict` words the judgement.

>>> looks(100, 400), look_level(3)
([100, 200, 400], 0.016666666666666666)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from piquet_training.evaluation.duplicate import MatchReport, games_by_pair

ALPHA = 0.05
"""The ladder's level: a match separates two agents when its ``p`` is under this (shared out
over the looks for neighbours judged at several pair counts)."""

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval (for the ratings' intervals)."""

_SE_FLOOR = 0.01
"""Smallest standard error a match is weighed by (a match whose games all ended alike has 0)."""


def rate(
    agents: Sequence[str], matches: Sequence[MatchReport]
) -> dict[str, tuple[float, float, float]]:
    """Openskill Plackett-Luce ratings from the games of the matches, interleaved pair by pair."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {a: model.rating(name=a) for a in agents}
    longest = max((m.n_pairs for m in matches), default=0)
    by_pair = [games_by_pair(m.games) for m in matches]
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


def standings(
    agents: Sequence[str],
    matches: Sequence[MatchReport],
    ratings: Mapping[str, tuple[float, float, float]],
    points: Mapping[str, tuple[float, float]],
) -> list[dict]:
    """One row per agent, best points rating first: the points rating and its standard error,
    the openskill rating, mean points per deal over its opponents, win rate."""
    rows = []
    for name in agents:
        pts, wins, n = 0.0, 0.0, 0
        for m in matches:
            if name in (m.agent_a, m.agent_b):
                sign = 1.0 if m.agent_a == name else -1.0
                pts += sign * m.points.mean
                wins += m.win_rate if sign > 0 else 1.0 - m.win_rate
                n += 1
        mu, sigma, ordinal = ratings[name]
        rating, stderr = points[name]
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


def look_level(n_looks: int) -> float:
    """The level each of ``n_looks`` looks at a match is judged at: 0.05 shared out over them
    (Bonferroni), so that judging at every look keeps the chance of a false separation under
    5%."""
    return ALPHA / max(1, n_looks)


def separates(m: MatchReport, level: float) -> bool:
    """Whether match ``m`` separates its agents at ``level`` (its ``p`` is under it)."""
    return m.p_value < level


def verdict(m: MatchReport, sign: float, level: float) -> str:
    """The verdict on the agent ranked better (the side ``sign`` turns ``m``'s numbers into) and
    the other: ``"separated"``, ``"not separated"``, or ``"separated, against the ranking"`` when
    ``m`` separates them the other way round (the ranking weighs every match)."""
    if not separates(m, level):
        return "not separated"
    return "separated" if sign * m.points.mean > 0 else "separated, against the ranking"
