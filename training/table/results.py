"""People's results against each agent, from saved game records (``piquet humans``, the web
table's results view).

A record is a person's game when exactly one of its two agents is named ``human`` (what
``piquet play`` and ``piquet serve`` write). Its games are grouped by opponent, rules and mode;
each finished game counts once. For each group the person's points per deal (his deal points
minus the agent's, per deal) and, in partie mode, his settled partie score get the Student-t 95%
interval, and his win rate (a drawn game counts half) the Wilson interval, exactly as ``piquet
eval`` reports a match (:mod:`piquet_training.evaluation.stats`); the games are independent (not
duplicate pairs), so every game is one trial. Below
:data:`~piquet_training.evaluation.stats.MIN_PAIRS` games the summary says there are too few to
judge by. Unfinished games are counted, not scored.

>>> from piquet_env.game import Game
>>> from piquet_env.game.record import record_of
>>> from piquet_agents.loop import play_game
>>> from piquet_env.agent import RandomAgent
>>> docs = []
>>> for seed in range(3):
...     g = play_game(Game(seed=seed, mode="deal"), [RandomAgent(seed=seed), RandomAgent()])
...     docs.append((f"g{seed}.json", record_of(g, ["human", "random"])))
>>> s = summarize(docs)
>>> [(x.opponent, x.mode, x.games) for x in s.standings]
[('random', 'deal', 3)]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from piquet_env.game.record import RecordError, load_record, replay
from piquet_table.session import HUMAN
from piquet_table.text import printable
from piquet_training.evaluation.stats import (
    MIN_PAIRS,
    Estimate,
    mean_ci,
    proportion_ci,
    too_small,
    verdict_word,
)

MAX_RECORDS = 10_000
"""Most record files read from one folder (the newest by name, which starts with the time)."""


@dataclass(frozen=True)
class Outcome:
    """One finished game from the person's side: his points per deal, result and deals."""

    points_per_deal: float
    result: int
    deals: int

    @property
    def win(self) -> float:
        """1 for a won game, 0.5 for a drawn one, 0 for a lost one."""
        return 1.0 if self.result > 0 else 0.5 if self.result == 0 else 0.0


@dataclass
class Standing:
    """The person's games against one agent under one rule set and mode, with their intervals."""

    opponent: str
    rules: str
    mode: str
    outcomes: list[Outcome] = field(default_factory=list)
    unfinished: int = 0

    @property
    def games(self) -> int:
        """Finished games."""
        return len(self.outcomes)

    @property
    def deals(self) -> int:
        """Deals of the finished games."""
        return sum(o.deals for o in self.outcomes)

    @property
    def points(self) -> Estimate | None:
        """Points per deal (person minus agent), Student-t interval; ``None`` without a game."""
        return mean_ci([o.points_per_deal for o in self.outcomes]) if self.outcomes else None

    @property
    def wins(self) -> Estimate | None:
        """The person's win rate, Wilson interval; ``None`` without a game."""
        return proportion_ci([o.win for o in self.outcomes]) if self.outcomes else None

    @property
    def score(self) -> Estimate | None:
        """The settled partie score (partie mode), Student-t interval."""
        if self.mode != "partie" or not self.outcomes:
            return None
        return mean_ci([float(o.result) for o in self.outcomes])

    @property
    def too_small(self) -> bool:
        """Too few games to judge by (under ``MIN_PAIRS``)."""
        return too_small(self.games)

    @property
    def beats(self) -> str | None:
        """Does the person beat the agent (by the headline estimate)? ``None`` without a game."""
        head = self.score or self.points
        return None if head is None else verdict_word(head.low, head.high)

    def to_dict(self) -> dict:
        """JSON-ready form (infinite interval ends, from a single game, become ``None``)."""

        def est(e: Estimate | None) -> dict | None:
            if e is None:
                return None
            d = e.to_dict()
            return {
                k: (None if isinstance(v, float) and abs(v) == float("inf") else v)
                for k, v in d.items()
            }

        return {
            "opponent": self.opponent,
            "rules": self.rules,
            "mode": self.mode,
            "games": self.games,
            "deals": self.deals,
            "unfinished": self.unfinished,
            "points_per_deal": est(self.points),
            "win_rate": est(self.wins),
            "partie_score": est(self.score),
            "too_small": self.too_small,
            "beats": self.beats,
        }

    def lines(self) -> list[str]:
        """The standing in words, worded as ``piquet eval`` words a match."""
        games = f"{self.games} game{'' if self.games == 1 else 's'}"
        deals = f"{self.deals} deal{'' if self.deals == 1 else 's'}"
        head = f"{HUMAN} vs {self.opponent}: {self.rules}, {self.mode} mode, {games} ({deals})"
        head += f", {self.unfinished} unfinished" if self.unfinished else ""
        out = [head]
        if not self.outcomes:
            return [*out, "  no finished game yet"]
        p, w = self.points, self.wins
        assert p is not None and w is not None
        out.append(
            f"  points per deal ({HUMAN} − {self.opponent}): {p.mean:+.2f}  "
            f"95% CI [{p.low:+.2f}, {p.high:+.2f}]"
        )
        out.append(
            f"  win rate of {HUMAN}: {100 * w.mean:.1f}%  "
            f"95% CI [{100 * w.low:.1f}%, {100 * w.high:.1f}%] (Wilson)"
        )
        s = self.score
        if s is not None:
            out.append(
                f"  settled partie score of {HUMAN}: {s.mean:+.1f}  "
                f"95% CI [{s.low:+.1f}, {s.high:+.1f}]"
            )
        if self.too_small:
            verdict = f"too few games to judge ({self.games} < {MIN_PAIRS})"
        else:
            verdict = {
                "yes": f"{HUMAN} is significantly better than {self.opponent}",
                "no (worse)": f"{self.opponent} is significantly better than {HUMAN}",
            }.get(self.beats or "", "no difference demonstrated")
        out.append(f"  verdict: {verdict}")
        return out


@dataclass
class Summary:
    """Every person's game of a set of records, by opponent; and what was left out: records
    without a person, unreadable ones, and ``left_out`` older ones not read at all (past
    :data:`MAX_RECORDS`)."""

    standings: list[Standing]
    records: int
    without_human: int = 0
    unreadable: list[str] = field(default_factory=list)
    left_out: int = 0

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "standings": [s.to_dict() for s in self.standings],
            "records": self.records,
            "without_human": self.without_human,
            "unreadable": list(self.unreadable),
            "left_out": self.left_out,
        }

    def lines(self, where: str = "the records") -> list[str]:
        """The summary in words."""
        games = sum(s.games + s.unfinished for s in self.standings)
        out = [
            f"{games} games of a person in {self.records} records in {where} "
            f"({self.without_human} without a person, {len(self.unreadable)} unreadable)"
        ]
        if self.left_out:
            older = "record" if self.left_out == 1 else "records"
            out.append(
                f"  {self.left_out} older {older} not read (at most the newest "
                f"{MAX_RECORDS:,} are): these results leave them out"
            )
        for s in self.standings:
            out += s.lines()
        out += [f"  skipped {why}" for why in self.unreadable[:20]]
        if len(self.unreadable) > 20:
            out.append(f"  ... and {len(self.unreadable) - 20} more unreadable files")
        return out


def human_seat(doc: dict) -> int | None:
    """The seat of the person in a record (the one agent named ``human``), or ``None``."""
    agents = doc.get("agents") or []
    seats = [p for p, name in enumerate(agents[:2]) if name == HUMAN]
    return seats[0] if len(seats) == 1 else None


@dataclass(frozen=True)
class Row:
    """What one record adds to a :class:`Summary`: a person's game (``key``: opponent, rules,
    mode; ``outcome``, or ``None`` while unfinished), a game without a person, or an unreadable
    file (``problem`` says why). Rows are kept (the web table's records store) so that a summary
    reads no file again."""

    key: tuple[str, str, str] | None = None
    outcome: Outcome | None = None
    problem: str | None = None


def record_row(name: str, doc: dict) -> Row:
    """The :class:`Row` of the checked record document ``doc`` (file ``name``); a record whose log
    does not replay is unreadable. Names are made safe to show
    (:func:`~piquet_table.text.printable`: no escape sequences or control characters)."""
    seat = human_seat(doc)
    if seat is None:
        return Row()
    try:
        game = replay(doc)
    except RecordError as err:
        return Row(problem=printable(f"{name}: {err}", 300))
    opponent = printable(str(doc["agents"][1 - seat])) or "(no name)"  # shown on terminals
    key = (opponent, game.rules.name, game.mode)
    if not game.is_over:
        return Row(key)
    diff = sum(ds[seat].total - ds[1 - seat].total for ds in game.deal_scores)
    deals = len(game.deal_scores)
    return Row(key, Outcome(diff / deals, game.result[seat], deals))


def file_row(path: Path) -> Row:
    """The :class:`Row` of the record file at ``path`` (unreadable, with the reason, if it is no
    valid record)."""
    try:
        return record_row(path.name, load_record(path))
    except RecordError as err:
        return Row(problem=printable(str(err).replace(str(path.parent) + "/", ""), 300))


def summarize_rows(rows: Iterable[Row], left_out: int = 0) -> Summary:
    """The :class:`Summary` of records' :class:`Row` s (``left_out``: older records not read)."""
    groups: dict[tuple[str, str, str], Standing] = {}
    summary = Summary([], 0, left_out=left_out)
    for row in rows:
        summary.records += 1
        if row.problem is not None:
            summary.unreadable.append(row.problem)
        elif row.key is None:
            summary.without_human += 1
        else:
            standing = groups.setdefault(row.key, Standing(*row.key))
            if row.outcome is None:
                standing.unfinished += 1
            else:
                standing.outcomes.append(row.outcome)
    summary.standings = sorted(groups.values(), key=lambda s: (s.opponent, s.rules, s.mode))
    return summary


def summarize(docs: Iterable[tuple[str, dict]]) -> Summary:
    """The :class:`Summary` of checked record documents ``(name, doc)``; a record whose log does
    not replay is listed as unreadable."""
    return summarize_rows(record_row(name, doc) for name, doc in docs)


def record_files(folder: str | Path) -> tuple[list[Path], int]:
    """The record files (``*.json``, plain files, no links, no hidden files) directly in
    ``folder``, oldest first
    by name (which starts with the time), at most the newest :data:`MAX_RECORDS`; and how many
    older ones were left out."""
    paths = sorted(
        p
        for p in Path(folder).glob("*.json")
        if not p.name.startswith(".") and p.is_file() and not p.is_symlink()
    )
    keep = paths[-MAX_RECORDS:] if MAX_RECORDS else []
    return keep, len(paths) - len(keep)


def summarize_folder(folder: str | Path) -> Summary:
    """The :class:`Summary` of the records (``*.json``) directly in ``folder``; files that are not
    valid records are listed as unreadable, with the reason; past :data:`MAX_RECORDS`, the oldest
    are left out, and the summary says how many."""
    paths, left_out = record_files(folder)
    return summarize_rows((file_row(p) for p in paths), left_out)
