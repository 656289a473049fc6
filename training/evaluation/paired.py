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

import io
import math
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, get_type_hints

from piquet_env.errors import Message, Setting
from piquet_env.untrusted import (
    MAX_DEPTH,
    UntrustedError,
    is_utf8,
    json_kind,
    read_regular_file,
    short_json,
)
from piquet_training.evaluation.duplicate import (
    GameResult,
    MatchReport,
    corrected_pairs,
    games_by_pair,
    pair_points,
)
from piquet_training.evaluation.duplicate.report import Deals, MatchHeader
from piquet_training.evaluation.stats import mean_ci

REPORT_MAX_BYTES = 256 << 20
"""The largest report :func:`read_report` reads (2,000 pairs take about 0.6 MB)."""


def same_deals(a: Deals, b: Deals) -> tuple[str, Any, Any] | None:
    """The first field where ``a`` and ``b`` differ, with its two values; None if they are the
    same deals.

    >>> same_deals(Deals("standard", "deal", 0, 10), Deals("standard", "deal", 1, 10))
    ('seed', 0, 1)
    """
    for f in fields(Deals):
        if getattr(a, f.name) != getattr(b, f.name):
            return f.name, getattr(a, f.name), getattr(b, f.name)
    return None


def not_same_deals(
    a: tuple[Deals, object], b: tuple[Deals, object], names: dict[str, str] | None = None
) -> Message | None:
    """Why two results, each ``(deals, where it was read)``, do not compare pair by pair: the
    first field where their deals differ (named as their files name it, ``names``), and the
    settings that make them the same; None if they were played on the same deals."""
    differ = same_deals(a[0], b[0])
    if differ is None:
        return None
    key, in_a, in_b = differ
    return Message(
        f"not the same deals: {(names or {}).get(key, key)} is {in_a!r} in {a[1]} and {in_b!r} "
        f"in {b[1]} (play both with the same ",
        Setting("seed"),
        ", ",
        Setting("pairs"),
        ", ",
        Setting("rules"),
        " and ",
        Setting("mode"),
        ")",
    )


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
class Report(MatchHeader):
    """A ``piquet eval --json`` report as :func:`read_report` reads it: its match's header (who
    played, on what deals) and agent A's points per deal over B in each pair (``points[pair]``:
    the variance-reduced value where the report was played with ``--variance-reduction``, so
    that their mean is the report's own estimate)."""

    variance_reduction: str
    points: dict[int, float]

    @property
    def edge(self) -> Edge:
        """A's points per deal over B with its interval (the report's own estimate of them; in
        partie mode the report's headline is the settled score, not this)."""
        return Edge.of_pairs(self.points)


HEADER_KINDS: dict[str, type] = {
    name: kind for name, kind in get_type_hints(Report).items() if name != "points"
}
"""The report's fields that :func:`read_report` reads besides its games, and their kinds: the
match's header (:class:`~piquet_training.evaluation.duplicate.report.MatchHeader`) and
``variance_reduction``."""
_CONTAINERS = {"start_map": "object", "start_array": "array"}


def read_report(path: str | Path) -> Report:
    """The report ``path`` wrote by ``piquet eval --json``, read as untrusted input; a
    :class:`ReportError` naming the file and the field for anything else (a report without its
    games included, a file cut short, a game out of place).

    The JSON is parsed as a stream of events (``ijson``), so a file costs about its size and
    what it is made into: its header, and its games one at a time, each checked as it comes and
    kept as a :class:`GameResult`; whatever else it holds is passed over unbuilt, and the first
    thing out of place stops the read (a 200 MB array is refused at its first byte)."""
    try:
        data = read_regular_file(path, REPORT_MAX_BYTES, "an eval report")
    except UntrustedError as exc:
        raise ReportError(str(exc)) from None
    if not is_utf8(data):
        raise ReportError(f"{path}: not UTF-8 text")
    header, games = _read_stream(_events(data, path), path)
    for key, kind in HEADER_KINDS.items():
        if key not in header and key != "variance_reduction":
            raise ReportError(f"{path}: {key}: missing (not an eval report)")
        header[key] = _field(header.get(key, ""), kind, f"{path}: {key}")
    if not games:
        raise ReportError(f"{path}: games: missing or empty (an eval report holds its games)")
    n = header["n_pairs"]
    if len(games) != 2 * n:
        raise ReportError(f"{path}: games: {len(games)}, where its {n} pairs make {2 * n}")
    by_pair = games_by_pair(games)
    both = all({g.game for g in v} == {0, 1} for v in by_pair.values())
    if set(by_pair) != set(range(n)) or not both:
        raise ReportError(f"{path}: games: expected games 0 and 1 of each pair 0 to {n - 1}")
    pairs = [by_pair[k] for k in range(n)]
    vr = header.pop("variance_reduction")
    values = corrected_pairs(pairs) if vr else [pair_points(v) for v in pairs]
    if not all(math.isfinite(v) for v in values):
        raise ReportError(f"{path}: games: points per deal beyond a float's range")
    return Report(**header, variance_reduction=vr, points=dict(enumerate(values)))


def _events(data: bytes, path: str | Path) -> Iterator[tuple[str, Any]]:
    """The JSON ``data``'s parse events ``(event, value)``, numbers as ``int`` or ``float``;
    :class:`ReportError` naming the file where it stops being JSON (``NaN`` and ``Infinity``
    are not)."""
    import ijson

    try:
        for _, event, value in ijson.parse(io.BytesIO(data), use_float=True):
            yield event, value
    except ijson.JSONError as exc:  # its first line says what (the rest draws where)
        raise ReportError(f"{path}: not JSON ({str(exc).splitlines()[0].strip()})") from None


def _read_stream(
    events: Iterator[tuple[str, Any]], path: str | Path
) -> tuple[dict[str, Any], list[GameResult]]:
    """A report's header fields (:data:`HEADER_KINDS`, scalars as they are) and its games, from
    its parse events; anything else passed over."""
    event, value = next(events, ("end", None))
    if event != "start_map":
        kind = _CONTAINERS.get(event) or json_kind(value)
        raise ReportError(f"{path}: expected an object (an eval report), got {kind}")
    header: dict[str, Any] = {}
    games: list[GameResult] = []
    for event, key in events:
        if event == "end_map":
            break
        event, value = next(events)
        if key == "games" and event == "start_array":
            games = list(_games(events, path))
        elif key in HEADER_KINDS and event in _CONTAINERS:
            header[key] = _Unbuilt(_CONTAINERS[event])
            _pass_over(events)
        elif key in HEADER_KINDS:
            header[key] = value
        elif event in _CONTAINERS:
            _pass_over(events)
    return header, games


def _games(events: Iterator[tuple[str, Any]], path: str | Path) -> Iterator[GameResult]:
    """The games of a report's ``games`` array, each checked as it ends (:func:`_game`)."""
    for i, (event, value) in enumerate(events):
        if event == "end_array":
            return
        where = f"{path}: games[{i}]"
        if event != "start_map":
            raise ReportError(
                f"{where}: expected an object, got {_CONTAINERS.get(event) or json_kind(value)}"
            )
        game: dict[str, Any] = {}
        for inner, key in events:
            if inner == "end_map":
                break
            inner, value = next(events)
            if inner in _CONTAINERS:
                raise ReportError(f"{where}.{key}: expected a number, got {_CONTAINERS[inner]}")
            game[key] = value
        yield _game(game, where)


def _pass_over(events: Iterator[tuple[str, Any]]) -> None:
    """Consume the rest of an object or array whose start was just read, building nothing;
    :class:`ReportError` past :data:`~piquet_env.untrusted.MAX_DEPTH` levels."""
    depth = 1
    for event, _ in events:
        if event in _CONTAINERS:
            depth += 1
            if depth > MAX_DEPTH:
                raise ReportError(f"nested too deeply (more than {MAX_DEPTH} deep)")
        elif event in ("end_map", "end_array"):
            depth -= 1
            if not depth:
                return


class _Unbuilt:
    """An object or array the header holds where a scalar belongs (never built)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind


GAME_KEYS = frozenset(f.name for f in fields(GameResult))
"""The keys of a game in a report (``correction`` may be left out: 0)."""


def _field(v: object, kind: type, where: str) -> Any:
    """``v`` if it is a ``kind`` (``str``; ``int``, not a boolean, of at most 2^53 in size, as a
    float holds exactly; ``float``: any finite number); else :class:`ReportError`."""
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    if kind is float:
        ok = number and abs(v) <= 1e300
    elif kind is int:
        ok = number and isinstance(v, int) and abs(v) <= 1 << 53
    else:
        ok = isinstance(v, kind)
    if not ok:
        want = {str: "a string", int: "an integer (at most 2^53 in size)", float: "a number"}[kind]
        got = v.kind if isinstance(v, _Unbuilt) else short_json(v)
        raise ReportError(f"{where}: expected {want}, got {got}")
    return v


def _game(d: object, where: str) -> GameResult:
    """One game of a report's ``games``, each field checked."""
    if not isinstance(d, dict):
        raise ReportError(f"{where}: expected an object, got {json_kind(d)}")
    if not GAME_KEYS - {"correction"} <= set(d) <= GAME_KEYS:
        missing, extra = sorted(GAME_KEYS - {"correction"} - set(d)), sorted(set(d) - GAME_KEYS)
        parts = [f"missing {', '.join(missing)}"] * bool(missing)
        parts += [f"unknown {', '.join(map(short_json, extra))}"] * bool(extra)
        raise ReportError(f"{where}: {'; '.join(parts)}")
    v = {k: _field(d[k], int, f"{where}.{k}") for k in GAME_KEYS - {"correction"}}
    correction = float(_field(d.get("correction", 0.0), float, f"{where}.correction"))
    if v["game"] not in (0, 1) or v["a_seat"] not in (0, 1) or v["deals"] < 1:
        raise ReportError(f"{where}: expected game and a_seat 0 or 1, deals at least 1")
    return GameResult(**v, correction=correction)


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
    """Report A's points per deal over its opponent minus report B's, pair by pair. The two must
    have played the same deals (the same rules, mode, seed and number of pairs); else a
    :class:`ReportError` says which differs."""
    a, b = read_report(path_a), read_report(path_b)
    differ = not_same_deals((a.deals, path_a), (b.deals, path_b), {"pairs": "n_pairs"})
    if differ is not None:
        raise ReportError(differ)
    if a.points.keys() != b.points.keys():
        raise ReportError(f"{path_a} and {path_b}: the reports hold different pairs")
    return Comparison(a, b, Edge.paired(a.points, b.points))
