"""A benchmark run's work folder: everything played so far, so that a stopped run continues exactly.

::

    WORK/matches/<opponent>.jsonl   each match's games: a header line, then one line per chunk
    WORK/exploit/                   the exploiter's run (piquet_training.exploit.exploiter)

A match's missing pairs are played in one fan-out (one executor, one Ray job), in the chunks of
a few pairs each that it plays (:func:`~piquet_training.evaluation.duplicate.play.match_chunks`,
at most 10 pairs); each chunk's games are appended to the match's file as soon as it and every
chunk before it have ended (one line, flushed to disk), so a kill loses only the chunks under way
or finished ahead of one under way.
Pairs are independent and numbered (:func:`~piquet_training.evaluation.duplicate.play_games`), so
a match continued from its file gives the very games of one played in one go. The header names
what the games are of (the agent, its files' SHA-256, the opponent, the rules, the mode, the seed,
the pairs): a file made for anything else is refused, never mixed in. A last line cut short by a
kill is dropped and its chunk played again; any other damage is an error that names the file.

:func:`check_work_dir` guards the folder: what it holds is continued only with ``resume`` and
replaced only with ``overwrite``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from piquet_env.errors import Message, Setting
from piquet_env.untrusted import (
    UntrustedError,
    open_regular_file,
    parse_json,
    read_lines,
    short_json,
)
from piquet_training.benchmark.protocol import BenchmarkError
from piquet_training.evaluation.duplicate import GameResult
from piquet_training.evaluation.duplicate.checks import games_from_json
from piquet_training.evaluation.executor import ResultError

MAX_MATCH_FILE = 1 << 28
"""The largest match file read back (256 MiB; 2,000 pairs take about 0.4 MiB)."""
MAX_MATCH_LINE = 1 << 20
"""The longest line of a match file read back (1 MiB; a chunk of :data:`CHUNK_PAIRS` pairs takes
about 25 KiB): no more is ever held for one line."""
MAX_CHUNK_MINUTES = 10**6
"""The most minutes a chunk's line may say it took (about two years)."""

OnChunk = Callable[[list[GameResult]], None]
PlayPairs = Callable[[int, int, OnChunk], list[GameResult]]
"""``play(start, n, on_chunk)``: the games of pairs ``start`` to ``start + n - 1``, sorted;
``on_chunk`` is called with each chunk of consecutive pairs' games as it ends, in any order."""


def match_file(work: Path, opponent: str) -> Path:
    """The file of the match against ``opponent`` in the work folder ``work``.

    >>> match_file(Path("w"), "mcts:100").as_posix()
    'w/matches/mcts_100.jsonl'
    """
    return work / "matches" / (re.sub(r"[^A-Za-z0-9_.=-]+", "_", opponent).strip("_") + ".jsonl")


def exploiter_held(work: Path) -> bool:
    """Whether ``work`` holds an exploiter run (one with checkpoints)."""
    return (work / "exploit" / "exploiter" / "checkpoints").is_dir()


def check_work_dir(work: Path, *, resume: bool, overwrite: bool) -> None:
    """Refuse a work folder that holds played matches or an exploiter run, unless ``resume``
    (continue them) or ``overwrite`` (the matches are removed here; the exploiter's run is
    replaced when it starts); ``resume`` needs something there to continue."""
    matches = sorted((work / "matches").glob("*.jsonl"))
    held = bool(matches) or exploiter_held(work)
    if resume and not held:
        raise BenchmarkError(
            Message(
                "cannot resume (",
                Setting("resume"),
                f"): {work} holds no matches or exploiter run to continue",
                path=work,
            )
        )
    if held and not (resume or overwrite):
        raise BenchmarkError(
            Message(
                f"{work} holds a benchmark run already: continue it (",
                Setting("resume"),
                "), replace it (",
                Setting("overwrite"),
                "), or give another ",
                Setting("work_dir"),
                path=work,
            )
        )
    if overwrite and not resume:
        shutil.rmtree(work / "matches", ignore_errors=True)


def played_match(
    path: Path,
    header: dict[str, Any],
    pairs: int,
    play: PlayPairs,
    on_pairs: Callable[[int], None] | None = None,
) -> tuple[list[GameResult], float]:
    """All ``pairs`` pairs' games of the match ``header`` describes, and the minutes they took:
    those already in ``path`` read back, the rest played by one call of ``play`` and appended to
    ``path`` chunk by chunk, in pair order, as they end. ``on_pairs(n)`` is told of each ``n``
    pairs done."""
    header = json.loads(json.dumps(header))  # as the file gives it back
    games, minutes = _read(path, header, pairs) if path.exists() else ([], 0.0)
    done = len(games) // 2
    if on_pairs is not None and done:
        on_pairs(done)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        _append(path, {"header": header})
    if done >= pairs:
        return games, minutes
    ahead: dict[int, list[GameResult]] = {}  # chunks ended before one that comes first
    since = time.perf_counter()

    def keep(chunk: list[GameResult]) -> None:
        nonlocal done, minutes, since
        ahead[min(g.pair for g in chunk)] = sorted(chunk, key=lambda g: (g.pair, g.game))
        while done in ahead:
            part = ahead.pop(done)
            now = time.perf_counter()
            spent, since = (now - since) / 60, now
            _append(path, {"start": done, "minutes": spent, "games": [g.to_dict() for g in part]})
            games.extend(part)
            minutes += spent
            done += len(part) // 2
            if on_pairs is not None:
                on_pairs(len(part) // 2)

    play(done, pairs - done, keep)
    if done != pairs or ahead:  # pragma: no cover - play_games hands every chunk over
        raise BenchmarkError(f"{path}: the match ended at pair {done} of {pairs}")
    return games, minutes


def _append(path: Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one JSON line, on disk before this returns."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _read(path: Path, header: dict[str, Any], pairs: int) -> tuple[list[GameResult], float]:
    """The games and minutes recorded in ``path``, checked against ``header`` and, game by game,
    as a worker's results are (``games_from_json`` of
    :mod:`~piquet_training.evaluation.duplicate.checks`); read line by line, no line over
    :data:`MAX_MATCH_LINE`, and no more than ``pairs`` pairs. A last line cut short by a kill is
    cut from the file."""
    games: list[GameResult] = []
    minutes = 0.0
    kept = 0  # bytes of whole lines
    cut = False
    try:
        with open_regular_file(path, MAX_MATCH_FILE, "a benchmark match file") as f:
            for i, line in enumerate(read_lines(f, MAX_MATCH_LINE, str(path), MAX_MATCH_FILE), 1):
                if not line.endswith(b"\n"):  # the last write was cut short: play it again
                    cut = True
                    break
                kept += len(line)
                record = parse_json(line.decode())
                if i == 1:
                    _check_header(path, record, header)
                    continue
                first = len(games) // 2
                chunk, spent = _chunk(path, i, record, first, pairs)
                games += chunk
                minutes += spent
    except (UntrustedError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: not a benchmark match file ({exc})") from None
    if kept == 0:
        raise BenchmarkError(f"{path}: not a benchmark match file (no header line)")
    if cut:
        os.truncate(path, kept)
    return games, minutes


def _check_header(path: Path, record: object, header: dict[str, Any]) -> None:
    """Refuse a first line that is not ``header``, naming the fields that differ, each shown
    cut short (a header of any size is never echoed whole)."""
    if type(record) is not dict or set(record) != {"header"}:
        raise BenchmarkError(f"{path}: not a benchmark match file (no header line)")
    theirs = record["header"]
    if theirs == header:
        return
    if type(theirs) is not dict:
        differ = f"its header is {short_json(theirs)}"
    else:
        keys = sorted(set(theirs) | set(header), key=str)
        shown = [
            f"{short_json(k, 30)}: {short_json(theirs.get(k), 40)} here, "
            f"{short_json(header.get(k), 40)} in this match"
            for k in keys
            if theirs.get(k) != header.get(k)
        ]
        differ = "; ".join(shown[:3]) + (f"; and {len(shown) - 3} more" if len(shown) > 3 else "")
    raise BenchmarkError(
        Message(
            f"{path}: its games are of another match ({differ}): give another ",
            Setting("work_dir"),
            ", or ",
            Setting("overwrite"),
            path=path,
        )
    )


def _chunk(
    path: Path, line: int, record: object, first: int, pairs: int
) -> tuple[list[GameResult], float]:
    """The games and minutes of the chunk on line ``line``, which must hold both games of the
    pairs from ``first`` on, in order, within the match's ``pairs``."""
    where = f"{path}, line {line}"
    if type(record) is not dict or set(record) != {"start", "minutes", "games"}:
        raise BenchmarkError(f"{where}: not a chunk of games (start, minutes, games)")
    start, spent, items = record["start"], record["minutes"], record["games"]
    if type(start) is not int or start != first:
        raise BenchmarkError(f"{where}: expected both games of pairs {first} onwards, in order")
    if type(spent) not in (int, float) or not 0 <= spent <= MAX_CHUNK_MINUTES:
        raise BenchmarkError(
            f"{where}: minutes is not a number from 0 to {MAX_CHUNK_MINUTES:,}: "
            f"{short_json(spent, 30)}"
        )
    if first >= pairs:
        raise BenchmarkError(f"{where}: more pairs than the match's {pairs}")
    n = len(items) // 2 if type(items) is list else 0
    if n < 1 or first + n > pairs:
        raise BenchmarkError(
            f"{where}: expected both games of 1 to {pairs - first} pairs from pair {first}"
        )
    try:
        games = games_from_json(items, range(first, first + n))
    except ResultError as exc:
        raise BenchmarkError(f"{where}: {exc}") from None
    if [(g.pair, g.game) for g in games] != [
        (p, k) for p in range(first, first + n) for k in (0, 1)
    ]:
        raise BenchmarkError(f"{where}: expected both games of pairs {first} onwards, in order")
    return games, float(spent)
