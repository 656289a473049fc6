"""Small statistics for match reports: means with 95% confidence intervals, without SciPy.

Duplicate-deal matches produce one number per *pair* of games (the same cards played twice with
the seats swapped); pairs are independent, so the confidence interval of a mean is the Student-t
interval over the pair values.

>>> est = mean_ci([1.0, 2.0, 3.0, 4.0])
>>> round(est.mean, 3), round(est.low, 3), round(est.high, 3)
(2.5, 0.446, 4.554)
>>> est.excludes(0.0)
True
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


@dataclass(frozen=True)
class Estimate:
    """A sample mean with its 95% confidence interval ``[low, high]``, standard error and size."""

    mean: float
    low: float
    high: float
    stderr: float
    n: int

    def excludes(self, value: float) -> bool:
        """Whether ``value`` lies outside the interval (the difference from it is significant)."""
        return value < self.low or value > self.high

    def p_value(self, value: float = 0.0) -> float:
        """Two-sided p-value of the mean differing from ``value`` (Student's t test, the same
        test as the interval: ``p < 0.05`` exactly when the interval excludes ``value``, up to the
        rounding of the quantile table)."""
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
