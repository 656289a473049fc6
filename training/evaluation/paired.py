"""Paired edges: one agent's points per deal over another, and two such edges compared pair by
pair on the same deals.

Two matches played with one seed, rules, mode and number of pairs deal the very same cards (the
deals come from the seed's own stream, :func:`~piquet_training.evaluation.duplicate.pair_rng`).
Their difference pair by pair is then far tighter than the two intervals side by side: the
luck of the cards, most of the variance, is the same in both and cancels.

- :class:`Edge`: an edge with its 95% interval and p, of one match (:meth:`Edge.of`), of one
  match over another on the same deals (:meth:`Edge.gain`), or of any two per-pair series
  (:meth:`Edge.paired`);
- :func:`read_report` and :func:`compare_reports`: the same from two reports written by
  ``piquet eval --json`` (``piquet eval --compare A.json B.json``), the files read as untrusted
  input.

>>> Edge.paired({0: 3.0, 1: 5.0}, {0: 1.0, 1: 1.0}).mean
3.0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piquet_env.untrusted import UntrustedError, json_kind, parse_json, read_regular_file
from piquet_training.evaluation.duplicate import (
    GameResult,
    MatchReport,
    corrected_pairs,
    games_by_pair,
    pair_points,
)
from piquet_training.evaluation.stats import mean_ci

REPORT_MAX_BYTES = 1 << 30
"""The largest report :func:`read_report` reads (2,000 pairs take about 0.6 MB)."""
SAME_DEALS = ("rules", "mode", "seed", "n_pairs")
"""What two reports must share to have played the same deals."""


class ReportError(ValueError):
    """A report that is not one ``piquet eval --json`` writes, or two that did not play the same
    deals: the message names the file and what is wrong."""


@dataclass
class Edge:
    """Points per deal, one agent minus the target, with its 95% interval and two-sided p."""

    mean: float
    ci_low: float
    ci_high: float
    p: float
    pairs: int

    @classmethod
    def of(cls, rep: MatchReport) -> Edge:
        """The edge a duplicate match measured (its agent A minus its agent B)."""
        pts = rep.points
        return cls(pts.mean, pts.low, pts.high, pts.p_value(0.0), rep.n_pairs)

    @classmethod
    def gain(cls, rep: MatchReport, ref: MatchReport) -> Edge:
        """How much more ``rep``'s agent A won from B than ``ref``'s did, pair by pair on the
        same deals (both matches played with one seed): a paired estimate, far tighter than the
        two edges' intervals side by side."""
        a, b = match_pair_points(rep), match_pair_points(ref)
        if a.keys() != b.keys():
            raise ValueError("the two matches were not played on the same pairs")
        return cls.paired(a, b)

    @classmethod
    def of_pairs(cls, points: dict[int, float]) -> Edge:
        """The mean of a match's points per deal pair by pair (``points[k]``, pair ``k``), with
        its interval and p."""
        est = mean_ci([points[k] for k in sorted(points)])
        return cls(est.mean, est.low, est.high, est.p_value(0.0), len(points))

    @classmethod
    def paired(cls, a: dict[int, float], b: dict[int, float]) -> Edge:
        """The mean of ``a[k] - b[k]`` over the pairs ``k`` both hold (the same keys), with its
        interval and p."""
        return cls.of_pairs({k: a[k] - b[k] for k in a})

    def text(self) -> str:
        """``+1.23 [+0.45, +2.01] (p = 0.002, 1,000 pairs)``."""
        return (
            f"{self.mean:+.2f} [{self.ci_low:+.2f}, {self.ci_high:+.2f}] "
            f"(p = {self.p:.2g}, {self.pairs:,} pairs)"
        )


def match_pair_points(rep: MatchReport) -> dict[int, float]:
    """A's points per deal over B in each duplicate pair of a match (both games)."""
    return {pair: pair_points(both) for pair, both in games_by_pair(rep.games).items()}


@dataclass
class Report:
    """A ``piquet eval --json`` report as :func:`read_report` reads it: who played, on what
    deals, and agent A's points per deal over B in each pair (``points[pair]``: the
    variance-reduced value where the report was played with ``--variance-reduction``, so that
    their mean is the report's own estimate)."""

    agent_a: str
    agent_b: str
    rules: str
    mode: str
    seed: int
    n_pairs: int
    variance_reduction: str
    points: dict[int, float]

    @property
    def edge(self) -> Edge:
        """A's edge over B with its interval (the report's own estimate)."""
        return Edge.of_pairs(self.points)


def read_report(path: str | Path) -> Report:
    """The report ``path`` wrote by ``piquet eval --json``, read as untrusted input; a
    :class:`ReportError` naming the file and the field for anything else (a report without its
    games included, a file cut short)."""
    try:
        d = parse_json(read_regular_file(path, REPORT_MAX_BYTES, "an eval report").decode())
    except (UntrustedError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: {exc}") from None
    if not isinstance(d, dict):
        raise ReportError(f"{path}: expected an object (piquet eval --json), got {json_kind(d)}")
    header: dict[str, Any] = {}
    kinds = {"agent_a": str, "agent_b": str, "rules": str, "mode": str, "seed": int}
    for key, kind in {**kinds, "n_pairs": int}.items():
        if key not in d:
            raise ReportError(f"{path}: {key}: missing (not a report of piquet eval --json)")
        if isinstance(d[key], bool) or not isinstance(d[key], kind):
            want = "a string" if kind is str else "an integer"
            raise ReportError(f"{path}: {key}: expected {want}, got {json_kind(d[key])}")
        header[key] = d[key]
    vr = d.get("variance_reduction", "")
    if not isinstance(vr, str):
        raise ReportError(f"{path}: variance_reduction: expected a string, got {json_kind(vr)}")
    games = d.get("games")
    if not isinstance(games, list) or not games:
        raise ReportError(f"{path}: games: missing or empty (a report of piquet eval --json)")
    try:
        parsed = [GameResult.from_dict(g) for g in games]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReportError(f"{path}: games: not the games of a report ({exc!r})") from None
    by_pair = games_by_pair(parsed)
    if len(by_pair) != header["n_pairs"] or any(len(g) != 2 for g in by_pair.values()):
        raise ReportError(
            f"{path}: games: expected both games of each of its {header['n_pairs']} pairs"
        )
    if any(g.deals <= 0 for g in parsed):
        raise ReportError(f"{path}: games: a game of no deals")
    keys = sorted(by_pair)
    pairs = [by_pair[k] for k in keys]
    values = corrected_pairs(pairs) if vr else [pair_points(v) for v in pairs]
    return Report(**header, variance_reduction=vr, points=dict(zip(keys, values, strict=True)))


@dataclass
class Comparison:
    """Two reports on the same deals and report A's edge minus report B's, pair by pair."""

    a: Report
    b: Report
    diff: Edge

    def what(self) -> str:
        """The difference in words: ``X − Y, each against Z``."""
        a, b = self.a, self.b
        if a.agent_b == b.agent_b:
            return f"{a.agent_a} − {b.agent_a}, each against {a.agent_b}"
        return f"({a.agent_a} over {a.agent_b}) − ({b.agent_a} over {b.agent_b})"


def compare_reports(path_a: str | Path, path_b: str | Path) -> Comparison:
    """Report A's edge minus report B's, pair by pair on their common deals. The two must have
    played the same deals (the same rules, mode, seed and number of pairs); else a
    :class:`ReportError` says which differs."""
    a, b = read_report(path_a), read_report(path_b)
    for key in SAME_DEALS:
        if getattr(a, key) != getattr(b, key):
            raise ReportError(
                f"not the same deals: {key} is {getattr(a, key)!r} in {path_a} and "
                f"{getattr(b, key)!r} in {path_b} (play both with the same --seed, --deals, "
                "--rules and --mode)"
            )
    if a.points.keys() != b.points.keys():
        raise ReportError(f"{path_a} and {path_b}: the reports hold different pairs")
    return Comparison(a, b, Edge.paired(a.points, b.points))
