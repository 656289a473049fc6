"""Playing a match's pairs: in this process, in worker processes, or on a Ray cluster.

:func:`play_games` plays a :class:`~piquet_training.evaluation.duplicate.match.DuplicateMatch`
and returns its games sorted by pair then game; :func:`evaluate_match` adds the report, and
:func:`evaluate` is the same with the match given field by field. Pairs are independent and
numbered, so where each is played changes nothing: with a
:class:`~piquet_training.evaluation.executor.Fanout` of several workers, or on Ray, chunks of pair
numbers are the executor's tasks, each worker rebuilding the agents from their specs (or a
pickled copy), each chunk's games checked before they are counted, and counted once.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from piquet_env.agent import Agent
from piquet_env.errors import Message, Setting
from piquet_env.rules import Rules
from piquet_training.evaluation.duplicate.checks import chunk_checker
from piquet_training.evaluation.duplicate.match import (
    AgentLike,
    DuplicateMatch,
    GameResult,
    play_pair,
)
from piquet_training.evaluation.duplicate.report import MatchReport, report
from piquet_training.evaluation.executor import HERE, AgentFiles, Fanout
from piquet_training.evaluation.variance import TalonCorrection, correction_for
from piquet_training.memory import ProcessMemory, process_memory

_WORKER_AGENTS: dict[tuple[str, str], Agent] = {}

OnChunk = Callable[[list[GameResult]], None]
"""Called with each chunk's games as it is played."""


def _resolve(agent: AgentLike, rules: Rules, key: str | None = None) -> Agent:
    if not isinstance(agent, str):
        return agent
    from piquet_agents.registry import make_agent

    cache_key = (key or agent, rules.name)  # a spec may name another agent under other rules
    if cache_key not in _WORKER_AGENTS:
        _WORKER_AGENTS[cache_key] = make_agent(agent, rules)
    return _WORKER_AGENTS[cache_key]


def _play_chunk(
    match: DuplicateMatch,
    pairs: Sequence[int],
    save_dir: str | None,
    fallback_dir: str | None = None,
) -> list[GameResult]:
    """Play the pairs numbered ``pairs`` of ``match`` (in a worker: the agents built once per
    process and spec)."""
    a_spec, b_spec = match.agent_a, match.agent_b
    a = _resolve(a_spec, match.rules, "A:" + a_spec if isinstance(a_spec, str) else None)
    b = _resolve(b_spec, match.rules, "B:" + b_spec if isinstance(b_spec, str) else None)
    corr = correction_for(match.variance_reduction, match.rules)
    out: list[GameResult] = []
    for i in pairs:
        out.extend(
            play_pair(a, b, match.rules, match.mode, match.seed, i, save_dir, fallback_dir, corr)
        )
    return out


def _play_chunk_measured(*args: Any) -> tuple[list[GameResult], ProcessMemory | None]:
    """:func:`_play_chunk` in a worker process, with the worker's memory after it."""
    games = _play_chunk(*args)
    return games, process_memory()


@contextlib.contextmanager
def _log_folders(save_dir: str | None) -> Iterator[str | None]:
    """The games' log folder made, and a fresh fallback folder for logs that cannot be written
    there (yielded; removed at the end unless something fell back into it)."""
    if save_dir is None:
        yield None
        return
    os.makedirs(save_dir, exist_ok=True)
    fallback_dir = tempfile.mkdtemp(prefix="piquet-games-")
    try:
        yield fallback_dir
    finally:
        with contextlib.suppress(OSError):  # removed only when empty: nothing fell back
            os.rmdir(fallback_dir)


@contextlib.contextmanager
def _progress_bar(show: bool, total: int, desc: str) -> Iterator[Any]:
    """A tqdm bar over ``total`` pairs when ``show``, else ``None``; closed at the end."""
    if not show:
        yield None
        return
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit="pair", smoothing=0.05)
    try:
        yield bar
    finally:
        bar.close()


def match_chunks(
    match: DuplicateMatch, workers: int, numbers: Sequence[int] | None = None
) -> list[list[int]]:
    """The pair numbers of ``match`` (or ``numbers``, some of them) in the chunks that
    ``workers`` tasks play: about four chunks a worker, at most 10 pairs each.

    >>> from piquet_env.rules import STANDARD
    >>> match_chunks(DuplicateMatch("random", "random", STANDARD, 40), 2, [3, 4, 9, 30, 31])
    [[3], [4], [9], [30], [31]]
    """
    numbers = list(match.numbers if numbers is None else numbers)
    size = max(1, min(10, len(numbers) // (workers * 4)))
    return [numbers[k : k + size] for k in range(0, len(numbers), size)]


def _play_here(
    match: DuplicateMatch,
    numbers: Sequence[int],
    corr: TalonCorrection | None,
    save_dir: str | None,
    fallback_dir: str | None,
    bar: Any,
    on_chunk: OnChunk | None,
) -> list[GameResult]:
    """Every pair in this process, with one agent object per seat (a spec naming the same agent
    twice is built twice: an agent keeps state between moves)."""
    a, b = _resolve(match.agent_a, match.rules), _resolve(match.agent_b, match.rules)
    if a is b:
        from piquet_agents.registry import make_agent

        b = make_agent(match.agent_b, match.rules) if isinstance(match.agent_b, str) else b
    games: list[GameResult] = []
    for chunk in match_chunks(match, 1, numbers):
        played: list[GameResult] = []
        for i in chunk:
            played.extend(
                play_pair(
                    a, b, match.rules, match.mode, match.seed, i, save_dir, fallback_dir, corr
                )
            )
            if bar is not None:
                bar.update(1)
        if on_chunk is not None:
            on_chunk(played)
        games.extend(played)
    return games


def _fan_out(
    match: DuplicateMatch,
    numbers: Sequence[int],
    fanout: Fanout,
    save_dir: str | None,
    fallback_dir: str | None,
    bar: Any,
    memory: list[ProcessMemory] | None,
    on_chunk: OnChunk | None,
) -> list[GameResult]:
    """Chunks of pairs as tasks of ``fanout``'s executor (worker processes, or Ray), each result
    checked before it is counted (:func:`~piquet_training.evaluation.duplicate.checks.check_chunk`),
    and each chunk counted once however often it was played; each worker's largest memory reading
    appended to ``memory`` (on this machine: a remote node's pids are its own)."""
    chunks = match_chunks(match, fanout.workers, numbers)
    agents = (match.agent_a, match.agent_b, match.variance_reduction)
    games: list[GameResult] = []
    readings: dict[int, ProcessMemory] = {}
    with fanout.open() as ex:
        for i, (chunk, used) in ex.run(
            _play_chunk_measured,
            [(c, save_dir, fallback_dir) for c in chunks],
            shared=(match,),
            check=chunk_checker(chunks),
            prepare=AgentFiles.of(agents, match.rules),
        ):
            if on_chunk is not None:
                on_chunk(chunk)
            games.extend(chunk)
            if used is not None and used.uss_mib >= readings.get(used.pid, used).uss_mib:
                readings[used.pid] = used
            if bar is not None:
                bar.update(len(chunks[i]))
    if memory is not None and fanout.on_this_machine:
        memory.extend(readings[pid] for pid in sorted(readings))
    return games


def check_save_dir(save_dir: str | None, fanout: Fanout) -> None:
    """Raise ``ValueError`` when game logs (``save_dir``) are asked of a cluster: each game's
    log is written where the game is played, so only where every task runs on this machine (no
    Ray, or ``ray="local"``)."""
    if save_dir is not None and not fanout.on_this_machine:
        raise ValueError(
            Message(
                "game logs (",
                Setting("save_dir"),
                ") are written where each game is played: not with ",
                Setting("ray", fanout.ray),
                " (use ",
                Setting("ray", "local"),
                ", or no cluster)",
            )
        )


def play_games(
    match: DuplicateMatch,
    *,
    fanout: Fanout = HERE,
    progress: bool = False,
    save_dir: str | None = None,
    desc: str | None = None,
    memory: list[ProcessMemory] | None = None,
    on_chunk: OnChunk | None = None,
    numbers: Sequence[int] | None = None,
) -> list[GameResult]:
    """Play ``match``'s pairs (or those numbered ``numbers``, some of ``match.numbers``: the
    pairs a record lacks, all in one fan-out) and return their games, sorted by pair then game
    (pairs are numbered: a match extended from ``start`` equals one played from 0 in one go).

    ``fanout`` says where (:class:`~piquet_training.evaluation.executor.Fanout`: this process,
    ``workers`` processes, or Ray; agents given as objects must then be picklable); the games are
    the same wherever they are played. With a ``memory`` list each worker's own memory
    (:func:`~piquet_training.memory.process_memory`, the reading with the largest unique set of
    its batches) is appended to it. ``progress`` shows a bar (``desc`` its label). With
    ``save_dir`` every game's log is written there (not on a cluster's other machines: refused
    there); a log that cannot be is written to a fresh temporary folder instead (a warning says
    where), so no game and no log is lost. ``on_chunk`` is called with each chunk's games as it
    is played (in the order chunks finish): how a record keeps what a killed run played.
    """
    check_save_dir(save_dir, fanout)
    corr = correction_for(match.variance_reduction, match.rules)  # a bad value fails before play
    todo = list(match.numbers if numbers is None else numbers)
    if len(set(todo)) != len(todo) or not set(todo) <= set(match.numbers):
        raise ValueError(f"numbers must be distinct pairs of the match's {match.numbers}")
    if not todo:
        return []
    label = desc or "duplicate pairs"
    with _log_folders(save_dir) as fallback_dir, _progress_bar(progress, len(todo), label) as bar:
        if fanout == HERE:
            games = _play_here(match, todo, corr, save_dir, fallback_dir, bar, on_chunk)
        else:
            games = _fan_out(match, todo, fanout, save_dir, fallback_dir, bar, memory, on_chunk)
    games.sort(key=lambda g: (g.pair, g.game))
    return games


def evaluate_match(
    match: DuplicateMatch,
    *,
    fanout: Fanout = HERE,
    progress: bool = False,
    save_dir: str | None = None,
) -> MatchReport:
    """Play ``match`` where ``fanout`` says (:func:`play_games`) and report A's difference with
    95% intervals."""
    name_a, name_b = match.names
    memory: list[ProcessMemory] = []
    games = play_games(
        match,
        fanout=fanout,
        progress=progress,
        save_dir=save_dir,
        desc=f"{name_a} vs {name_b}",
        memory=memory,
    )
    vr = match.variance_reduction or ""
    out = report(games, name_a, name_b, match.rules, match.mode, match.seed, vr)
    out.worker_memory = memory
    return out


def evaluate(
    agent_a: AgentLike,
    agent_b: AgentLike,
    rules: Rules,
    n: int,
    mode: str = "deal",
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    save_dir: str | None = None,
    variance_reduction: str | None = None,
    ray: str | None = None,
) -> MatchReport:
    """Play ``n`` duplicate pairs of A against B and report the difference with 95% intervals.

    ``agent_a``/``agent_b`` are agents or specs (``"random"``, ``"heuristic"``, ``"mcts:200"``, a
    checkpoint path). ``mode`` is ``"deal"`` or ``"partie"``; ``seed`` fixes the cards and the
    agents' seeds (same seed, same match); ``workers`` processes share the pairs (agents given as
    objects must then be picklable), or ``workers`` tasks at a time on Ray with ``ray``
    (``"local"``, ``"auto"``, ``"ray://HOST:PORT"``: the same games); ``progress`` shows a
    progress bar; ``save_dir`` writes each game's event log there as JSON; ``variance_reduction`` (a
    policy checkpoint spec such as ``"baseline"``) removes the talon's luck with that policy's
    critic (:mod:`~piquet_training.evaluation.variance`: the same games, an unbiased estimate with a
    smaller interval, the plain one kept as ``plain_points``). The match as one value is
    :class:`~piquet_training.evaluation.duplicate.match.DuplicateMatch`
    (:func:`evaluate_match`).
    """
    match = DuplicateMatch(agent_a, agent_b, rules, n, mode, seed, 0, variance_reduction)
    fanout = Fanout(workers, ray)
    return evaluate_match(match, fanout=fanout, progress=progress, save_dir=save_dir)
