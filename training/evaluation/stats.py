"""Small statistics for match reports: 95% confidence intervals, without SciPy.

Duplicate-deal matches produce one number per *pair* of games (the same cards played twice with
the seats swapped); pairs are independent. A mean of unbounded values (points per deal, a settled
score) gets the Student-t interval over the pair values (:func:`mean_ci`). A rate (the share of
games won) gets the Wilson score interval (:func:`proportion_ci`), which stays inside [0, 1] and
does not collapse to a point when every game went the same way; its sample size is the effective
number of games the pairs are worth (see :func:`effective_size`).

Below :data:`MIN_PAIRS` pairs the intervals are shown but a report says the sample is too small to
judge (:func:`too_small`).

>>> est = mean_ci([1.0, 2.0, 3.0, 4.0])
>>> round(est.mean, 3), round(est.low, 3), round(est.high, 3)
(2.5, 0.446, 4.554)
>>> est.excludes(0.0)
True
>>> [round(x, 4) for x in wilson_interval(1.0, 12)]  # 12 wins in 12 games: 12 / (12 + 1.96²)
[0.7575, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30.
_T975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
Z975 = 1.959963984540054
"""The 97.5% quantile of the standard normal distribution."""


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (table, then a series)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def normal_two_sided_p(z: float) -> float:
    """Two-sided p-value of a standard normal statistic ``z``."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln_front) * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: int) -> float:
    """Two-sided p-value of a Student-t statistic ``t`` with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    return betainc(df / 2.0, 0.5, df / (df + t * t))


MIN_PAIRS = 10
"""Fewest duplicate pairs whose intervals a report treats as enough to judge by: below it the
normal approximations behind both intervals are rough, and a verdict would be a guess."""


def too_small(n_pairs: int) -> bool:
    """Whether ``n_pairs`` duplicate pairs are too few to judge by (under :data:`MIN_PAIRS`)."""
    return n_pairs < MIN_PAIRS


TOO_FEW = "too few pairs to judge"
"""The verdict of a match of fewer than :data:`MIN_PAIRS` pairs, whatever its interval says."""


def verdict_word(low: float, high: float, n_pairs: int | None = None) -> str:
    """A one-word answer to "does A beat B?" from the 95% interval of A's advantage: ``"yes"``
    (the interval is above 0), ``"no (worse)"`` (below 0) or ``"not demonstrated"`` (it holds 0);
    :data:`TOO_FEW` when ``n_pairs`` is given and under :data:`MIN_PAIRS`, as the match summary
    says.

    >>> verdict_word(0.2, 1.5), verdict_word(-2.0, -0.1), verdict_word(-0.5, 0.7)
    ('yes', 'no (worse)', 'not demonstrated')
    >>> verdict_word(-9.0, -0.1, n_pairs=4)
    'too few pairs to judge'
    """
    if n_pairs is not None and too_small(n_pairs):
        return TOO_FEW
    if low > 0:
        return "yes"
    if high < 0:
        return "no (worse)"
    return "not demonstrated"


@dataclass(frozen=True)
class Estimate:
    """A sample mean with its 95% confidence interval ``[low, high]``, standard error and size.

    ``method`` says how the interval was made: ``"t"`` (Student-t over the values) or
    ``"wilson"`` (Wilson score interval of a rate over ``n_eff`` effective trials).
    """

    mean: float
    low: float
    high: float
    stderr: float
    n: int
    method: str = "t"
    n_eff: float | None = None

    def excludes(self, value: float) -> bool:
        """Whether ``value`` lies outside the interval (the difference from it is significant)."""
        return value < self.low or value > self.high

    def p_value(self, value: float = 0.0) -> float:
        """Two-sided p-value of the mean differing from ``value``, by the test the interval
        inverts (Student's t, or the score test for ``"wilson"``): ``p < 0.05`` exactly when the
        interval excludes ``value``, up to the rounding of the quantile table."""
        if self.method == "wilson" and self.n_eff:
            # the score test that the Wilson interval inverts
            if not 0.0 < value < 1.0:
                return 1.0 if self.mean == value else 0.0
            z = (self.mean - value) / math.sqrt(value * (1.0 - value) / self.n_eff)
            return normal_two_sided_p(z)
        if self.n < 2 or math.isinf(self.stderr):
            return 1.0
        if self.stderr == 0.0:
            return 1.0 if self.mean == value else 0.0
        return t_two_sided_p((self.mean - value) / self.stderr, self.n - 1)

    def to_dict(self) -> dict[str, float | int]:
        """JSON-serializable form."""
        return {
            "mean": self.mean,
            "ci_low": self.low,
            "ci_high": self.high,
            "stderr": self.stderr,
            "n": self.n,
            "method": self.method,
            "n_eff": self.n_eff,
        }

    def __str__(self) -> str:
        half = (self.high - self.low) / 2
        return f"{self.mean:+.2f} ± {half:.2f}"


def mean_ci(values: Sequence[float]) -> Estimate:
    """Mean of ``values`` with its 95% Student-t confidence interval.

    With one value the interval is infinite (nothing can be concluded); with none it is an error.
    """
    n = len(values)
    if n == 0:
        raise ValueError("mean_ci needs at least one value")
    mean = math.fsum(values) / n
    if n == 1:
        return Estimate(mean, -math.inf, math.inf, math.inf, 1)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    se = math.sqrt(var / n)
    half = t_quantile_975(n - 1) * se
    return Estimate(mean, mean - half, mean + half, se, n)


def wilson_interval(p_hat: float, n: float, z: float = Z975) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p_hat`` observed over ``n`` trials (``n`` may
    be fractional: an effective sample size).

    >>> [round(x, 4) for x in wilson_interval(0.5, 4)]
    [0.15, 0.85]
    """
    if not 0.0 <= p_hat <= 1.0:
        raise ValueError(f"a proportion must lie in [0, 1], got {p_hat}")
    if not n > 0:
        raise ValueError(f"the number of trials must be positive, got {n}")
    z2n = z * z / n
    centre = (p_hat + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p_hat * (1 - p_hat) / n + z2n / (4 * n)) / (1 + z2n)
    low = 0.0 if p_hat == 0.0 else max(0.0, centre - half)  # exact ends, not rounding residue
    high = 1.0 if p_hat == 1.0 else min(1.0, centre + half)
    return low, high


def effective_size(values: Sequence[float], per_value: int) -> float:
    """How many independent trials the unit values (each the mean of ``per_value`` trials, in
    [0, 1]) are worth for the Wilson interval of their mean: Kish's ``n p(1 - p) / s²``.

    Duplicate pairs usually vary less than independent games would (the luck of the cards cancels
    within a pair), and then they are worth more games than there are pairs: with enough pairs
    the Wilson interval over this size is the Student-t interval of the pair means, kept inside
    [0, 1]. Where ``s²`` says nothing (every pair scored the same, or a single pair) or is
    estimated from too few pairs (under :data:`MIN_PAIRS` units), the size is at most
    ``len(values) * per_value``: every trial counted as independent.

    >>> effective_size([0.0, 1.0, 1.0, 1.0], per_value=2)  # p 0.75, s² 0.25: 4 * 0.1875 / 0.25
    3.0
    >>> effective_size([1.0] * 6, per_value=2)  # 12 games, all won
    12.0
    """
    n = len(values)
    cap = float(n * per_value)
    if n < 2:
        return cap
    p = math.fsum(values) / n
    var = math.fsum((v - p) ** 2 for v in values) / (n - 1)
    if var == 0.0:
        return cap
    kish = n * p * (1 - p) / var
    return min(cap, kish) if n < MIN_PAIRS else kish


def proportion_ci(values: Sequence[float], per_value: int = 1) -> Estimate:
    """Mean of rates ``values`` (each in [0, 1], the mean of ``per_value`` trials: a duplicate
    pair's share of won games has ``per_value=2``) with its 95% Wilson score interval over the
    :func:`effective_size` of the sample.

    >>> est = proportion_ci([0.0, 1.0, 1.0, 1.0], per_value=2)
    >>> est.mean, est.n_eff, round(est.low, 4), round(est.high, 4)
    (0.75, 3.0, 0.2561, 0.9632)
    """
    n = len(values)
    if n == 0:
        raise ValueError("proportion_ci needs at least one value")
    if any(not 0.0 <= v <= 1.0 for v in values):
        raise ValueError("proportion_ci takes rates in [0, 1]")
    p = math.fsum(values) / n
    n_eff = effective_size(values, per_value)
    low, high = wilson_interval(p, n_eff)
    se = math.sqrt(p * (1 - p) / n_eff)
    return Estimate(p, low, high, se, n, method="wilson", n_eff=n_eff)
