"""A match's chunk checked before it is counted: what a worker process or another machine sends
back is input like any other (:mod:`piquet_training.evaluation.executor` runs the check before it
yields a result)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import fields

from piquet_env.game.scoring import MAX_DEAL_POINTS, MAX_TOTAL
from piquet_training.evaluation.duplicate.match import GameResult
from piquet_training.evaluation.executor import ResultError
from piquet_training.memory import ProcessMemory

_MAX_EXACT_INT = 2**53
MAX_GAME_DEALS = MAX_TOTAL // MAX_DEAL_POINTS
"""The most deals one game can play: a partie whose deals could pass the largest total is
refused by the game, tie-break deals included."""
MAX_RESULT = 2 * MAX_TOTAL + 100
"""The largest result a game can settle to: both totals at the largest, rubiconed, plus 100."""


def _shown(value: object) -> str:
    """A value as an error shows it: a number's repr (cut), anything else by its type's name
    (its repr may be huge or may raise)."""
    return f"{value!r:.40}" if type(value) in (int, float, bool) else f"a {type(value).__name__}"


def _check_int(name: str, value: object, low: int = -_MAX_EXACT_INT) -> None:
    if type(value) is not int or not low <= value <= _MAX_EXACT_INT:
        span = "within 2^53" if low == -_MAX_EXACT_INT else f"from {low} to 2^53"
        raise ResultError(f"{name} is not an int {span}: {_shown(value)}")


def _check_float(name: str, value: object, low: float = -math.inf) -> None:
    if type(value) not in (int, float) or not math.isfinite(value) or value < low:  # type: ignore[arg-type]
        raise ResultError(f"{name} is not a finite number: {_shown(value)}")


def _check_game(game: object, pairs: set[int]) -> tuple[int, int]:

    if type(game) is not GameResult:
        raise ResultError(f"a game is a {type(game).__name__}, not a GameResult")
    # every type is checked before any comparison: a numpy array or an object whose __eq__
    # raises is refused by name, never compared
    _check_int("a game's pair", game.pair, 0)
    if type(game.game) is not int or game.game not in (0, 1):
        raise ResultError(f"pair {game.pair}: game is a {type(game.game).__name__}, not 0 or 1")
    where = f"game {game.game} of pair {game.pair}"
    if type(game.a_seat) is not int or game.a_seat != game.game:
        seat = game.a_seat if type(game.a_seat) is int else type(game.a_seat).__name__
        raise ResultError(f"{where}: A's seat is {seat}, not {game.game}")
    if game.pair not in pairs:
        raise ResultError(f"pair {game.pair} is not one of the task's")
    _check_int(f"{where}: deals", game.deals, 1)
    if game.deals > MAX_GAME_DEALS:
        raise ResultError(
            f"{where}: deals {game.deals} is more than a game plays ({MAX_GAME_DEALS})"
        )
    _check_int(f"{where}: result", game.result)
    _check_int(f"{where}: points", game.points)
    most = MAX_DEAL_POINTS * game.deals
    if abs(game.points) > most:
        raise ResultError(f"{where}: points {game.points} is beyond ±{most} in {game.deals} deals")
    if abs(game.result) > MAX_RESULT:
        raise ResultError(f"{where}: result {game.result} is beyond ±{MAX_RESULT}")
    if (game.result > 0) - (game.result < 0) != (game.points > 0) - (game.points < 0):
        raise ResultError(
            f"{where}: result {game.result} and points {game.points} disagree on who won"
        )
    _check_float(f"{where}: correction", game.correction)
    if abs(game.correction) > MAX_RESULT * game.deals:
        raise ResultError(
            f"{where}: correction {game.correction:.6g} is beyond ±{MAX_RESULT * game.deals}"
        )
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
    (ints within 2^53, A's seat the game's number, 1 to :data:`MAX_GAME_DEALS` deals, points
    within :data:`~piquet_env.game.scoring.MAX_DEAL_POINTS` a deal, a result within
    :data:`MAX_RESULT` whose sign is that of the points, a finite correction within
    :data:`MAX_RESULT` a deal; every type checked before any comparison),
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


def games_from_json(items: object, pairs: Sequence[int]) -> list[GameResult]:
    """The games of the pairs numbered ``pairs`` from their JSON form (a list of
    :meth:`GameResult.to_dict` objects, as a file gives them back), checked as a worker's chunk
    is (:func:`check_chunk`): the values are taken as they are, never converted (``5.0`` deals,
    ``1e300`` points or ``"3"`` are refused, not rounded). :class:`ResultError` says what is
    wrong."""
    if type(items) is not list:
        raise ResultError(f"the games are a {type(items).__name__}, not a list")
    names = [f.name for f in fields(GameResult)]
    games = []
    for d in items:
        if type(d) is not dict or not set(names) - {"correction"} <= set(d) <= set(names):
            raise ResultError(f"a game is not an object with the fields {', '.join(names)}")
        games.append(GameResult(**d))
    check_chunk(pairs, (games, None))
    return games


def chunk_checker(chunks: Sequence[Sequence[int]]) -> Callable[[int, object], None]:
    """The ``check`` for tasks whose task ``i`` plays the pairs ``chunks[i]``
    (:func:`check_chunk`)."""
    frozen = [tuple(c) for c in chunks]

    def check(i: int, result: object) -> None:
        check_chunk(frozen[i], result)

    return check
