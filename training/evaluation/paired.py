"""Paired edges: one agent's points per deal over another, and two such edges compared pair by
pair on the same deals.

Two matches played with one seed, rules, mode and number of pairs deal the very same cards (the
deals come from the seed's own stream, :func:`~piquet_training.evaluation.duplicate.pair_rng`).
Their difference pair by pair is then far tighter than the two intervals side by side: the
luck of the cards, most of the variance, is the same in both and cancels.

- :class:`Edge`: an edge with its 95% interval and p, of one match (:meth:`Edge.of`), of one
  match over another on the same deals (:meth:`Edge.gain`), or of any two per-pair series
  (:meth:`Edge.paired`);
- :func:`report_pairs` and :func:`compare_reports`: the same from two reports written by
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
    games_by_pair,
    pair_points,
)
from piquet_training.evaluation.stats import mean_ci

REPORT_MAX_BYTES = 1 << 30
"""The largest report :func:`report_pairs` reads (2,000 pairs take about 0.6 MB)."""
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


def report_pairs(path: str | Path) -> tuple[dict[str, Any], dict[int, float]]:
    """A ``piquet eval --json`` report's header (agents, rules, mode, seed, pairs) and its agent
    A's points per deal over B in each pair; a :class:`ReportError` naming the file and the field
    for anything else (a report written without its games included)."""
    try:
        d = parse_json(read_regular_file(path, REPORT_MAX_BYTES, "an eval report").decode())
    except (UntrustedError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: {exc}") from None
    if not isinstance(d, dict):
        raise ReportError(f"{path}: expected an object (piquet eval --json), got {json_kind(d)}")
    header = {}
    kinds = {"agent_a": str, "agent_b": str, "rules": str, "mode": str, "seed": int}
    for key, kind in {**kinds, "n_pairs": int}.items():
        if key not in d:
            raise ReportError(f"{path}: {key}: missing (not a report of piquet eval --json)")
        if isinstance(d[key], bool) or not isinstance(d[key], kind):
            want = "a string" if kind is str else "an integer"
            raise ReportError(f"{path}: {key}: expected {want}, got {json_kind(d[key])}")
        header[key] = d[key]
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
    return header, {pair: pair_points(both) for pair, both in by_pair.items()}


def compare_reports(path_a: str | Path, path_b: str | Path) -> tuple[Edge, str]:
    """Report A's edge minus report B's, pair by pair on their common deals, and what it is in
    words (``X − Y, each against Z``). The two must have played the same deals (the same rules,
    mode, seed and number of pairs); else a :class:`ReportError` says which differs."""
    (ha, a), (hb, b) = report_pairs(path_a), report_pairs(path_b)
    for key in SAME_DEALS:
        if ha[key] != hb[key]:
            raise ReportError(
                f"not the same deals: {key} is {ha[key]!r} in {path_a} and {hb[key]!r} in "
                f"{path_b} (play both with the same --seed, --deals, --rules and --mode)"
            )
    if a.keys() != b.keys():
        raise ReportError(f"{path_a} and {path_b}: the reports hold different pairs")
    if ha["agent_b"] == hb["agent_b"]:
        what = f"{ha['agent_a']} − {hb['agent_a']}, each against {ha['agent_b']}"
    else:
        what = f"({ha['agent_a']} over {ha['agent_b']}) − ({hb['agent_a']} over {hb['agent_b']})"
    return Edge.paired(a, b), what
