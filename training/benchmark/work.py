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

from piquet_env.untrusted import UntrustedError, parse_json, read_regular_file
from piquet_training.benchmark.protocol import BenchmarkError
from piquet_training.evaluation.duplicate import GameResult

MAX_MATCH_FILE = 1 << 28
"""The largest match file read back (256 MiB; 2,000 pairs take about 0.4 MiB)."""

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
        raise BenchmarkError(f"--resume: {work} holds no matches or exploiter run to continue")
    if held and not (resume or overwrite):
        raise BenchmarkError(
            f"{work} holds a benchmark run already: continue it with --resume, replace it "
            "with --overwrite, or give another --work folder"
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
    games, minutes = _read(path, header) if path.exists() else ([], 0.0)
    done = len(games) // 2
    if done > pairs:
        raise BenchmarkError(f"{path}: holds {done} pairs, more than the match's {pairs}")
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


def _read(path: Path, header: dict[str, Any]) -> tuple[list[GameResult], float]:
    """The games and minutes recorded in ``path``, checked against ``header`` (a last line cut
    short by a kill is removed from the file)."""
    try:
        text = read_regular_file(path, MAX_MATCH_FILE, "a benchmark match file").decode()
    except (UntrustedError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: {exc}") from None
    if text and not text.endswith("\n"):  # the last write was cut short: play that chunk again
        text = text[: text.rfind("\n") + 1]
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    lines = text.splitlines()
    try:
        records = [parse_json(line) for line in lines]
    except UntrustedError as exc:
        raise BenchmarkError(f"{path}: not a benchmark match file ({exc})") from None
    if not records or not isinstance(records[0], dict) or "header" not in records[0]:
        raise BenchmarkError(f"{path}: not a benchmark match file (no header line)")
    if records[0]["header"] != header:
        raise BenchmarkError(
            f"{path}: its games are of another match ({records[0]['header']}), not of this one "
            f"({header}): give another --work folder, or --overwrite"
        )
    games: list[GameResult] = []
    minutes = 0.0
    for i, rec in enumerate(records[1:], start=2):
        try:
            chunk = [GameResult.from_dict(g) for g in rec["games"]]
            start, spent = int(rec["start"]), float(rec["minutes"])
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchmarkError(f"{path}, line {i}: not a chunk of games ({exc!r})") from None
        first = len(games) // 2
        expected = [(p, k) for p in range(first, first + len(chunk) // 2) for k in (0, 1)]
        if start != first or not chunk or [(g.pair, g.game) for g in chunk] != expected:
            raise BenchmarkError(
                f"{path}, line {i}: expected both games of pairs {first} onwards, in order"
            )
        games += chunk
        minutes += spent
    return games, minutes
