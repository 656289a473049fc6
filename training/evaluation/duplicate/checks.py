"""A match's chunk checked before it is counted: what a worker process or another machine sends
back is input like any other (:mod:`piquet_training.evaluation.executor` runs the check before it
yields a result)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from piquet_training.evaluation.duplicate.match import GameResult
from piquet_training.evaluation.executor import ResultError
from piquet_training.memory import ProcessMemory

_MAX_EXACT_INT = 2**53


def _check_int(name: str, value: object, low: int = -_MAX_EXACT_INT) -> None:
    if type(value) is not int or not low <= value <= _MAX_EXACT_INT:
        raise ResultError(f"{name} is not an int within 2^53: {value!r:.40}")


def _check_float(name: str, value: object, low: float = -math.inf) -> None:
    if type(value) not in (int, float) or not math.isfinite(value) or value < low:  # type: ignore[arg-type]
        raise ResultError(f"{name} is not a finite number: {value!r:.40}")


def _check_game(game: object, pairs: set[int]) -> tuple[int, int]:

    if type(game) is not GameResult:
        raise ResultError(f"a game is a {type(game).__name__}, not a GameResult")
    where = f"game {game.game!r:.20} of pair {game.pair!r:.20}"
    _check_int("a game's pair", game.pair, 0)
    if game.pair not in pairs:
        raise ResultError(f"pair {game.pair} is not one of the task's")
    if game.game not in (0, 1) or type(game.game) is not int:
        raise ResultError(f"{where}: game is not 0 or 1")
    if game.a_seat != game.game or type(game.a_seat) is not int:
        raise ResultError(f"{where}: A's seat is {game.a_seat!r:.20}, not {game.game}")
    _check_int(f"{where}: result", game.result)
    _check_int(f"{where}: points", game.points)
    _check_int(f"{where}: deals", game.deals, 1)
    _check_float(f"{where}: correction", game.correction)
    return game.pair, game.game


def _check_memory(memory: object) -> None:

    if memory is None:
        return
    if type(memory) is not ProcessMemory:
        raise ResultError(f"the memory reading is a {type(memory).__name__}, not a ProcessMemory")
    _check_int("the memory reading's pid", memory.pid, 1)
    for name in ("peak_rss_mib", "rss_mib", "pss_mib", "uss_mib"):
        _check_float(f"the memory reading's {name}", getattr(memory, name), 0.0)


def check_chunk(pairs: Sequence[int], result: object) -> None:
    """Check a result of ``_play_chunk_measured`` for the pairs numbered ``pairs``: a
    ``(games, memory)`` tuple, ``games`` a list of exactly games 0 and 1 of each of those pairs
    (ints within 2^53, A's seat the game's number, at least one deal, a finite correction),
    ``memory`` ``None`` or a well-formed :class:`~piquet_training.memory.ProcessMemory`.
    :class:`ResultError` says what is wrong."""
    if type(result) is not tuple or len(result) != 2:
        raise ResultError(f"not a (games, memory) pair but a {type(result).__name__}")
    games, memory = result
    if type(games) is not list:
        raise ResultError(f"the games are a {type(games).__name__}, not a list")
    want = {(p, g) for p in pairs for g in (0, 1)}
    if len(games) != len(want):
        raise ResultError(f"{len(games)} games for {len(want) // 2} pairs, not {len(want)}")
    wanted_pairs = set(pairs)
    got = {_check_game(g, wanted_pairs) for g in games}
    if got != want:
        pair, game = min(want - got)
        raise ResultError(f"game {game} of pair {pair} is missing (another given twice)")
    _check_memory(memory)


def chunk_checker(chunks: Sequence[Sequence[int]]) -> Callable[[int, object], None]:
    """The ``check`` for tasks whose task ``i`` plays the pairs ``chunks[i]``
    (:func:`check_chunk`)."""
    frozen = [tuple(c) for c in chunks]

    def check(i: int, result: object) -> None:
        check_chunk(frozen[i], result)

    return check
