"""The agents' moves, off the event loop: a bounded pool of worker processes.

The server's event loop only routes messages: it checks a person's move, applies it, narrates and
sends the views. An agent's move is played in a worker process (:class:`MovePool`): each table's
agents are built there when the table opens (loading a policy takes a while), live there for the
table's life (a search's plan, its random state), and are sent the game, a copy, for each move;
the worker answers with the action, which the table applies to its own game.

The workers form two lanes, so that a search never waits in front of a quick agent's move:

- the **quick** lane plays the agents that answer in milliseconds (``random``, ``heuristic``, the
  policies), in one process;
- the **search** lane plays the agents that search (``mcts:...``, for up to seconds a move), in
  the others, at a lower CPU priority (``nice`` :data:`SEARCH_NICE`): the cores go to the event
  loop and the quick lane first, and the searches take what is left.

A worker ends with the server, however the server ends (a ``kill -9``, the out-of-memory killer):
on Linux the kernel kills it when its parent dies (``PR_SET_PDEATHSIG``), and everywhere a thread
of its own checks every :data:`ORPHAN_POLL` seconds that its parent is still there. The
multiprocessing resource tracker ends when the last of them has (its pipe closes).

A table goes to the process of its lane holding the fewest tables. ``processes=0`` plays the
moves in threads of this process instead (the tests' quick opponents; nothing to start).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from piquet_agents.loop import play_turn
from piquet_env.agent import Agent
from piquet_env.game import Game
from piquet_env.rules import Rules
from piquet_table.session import make_seats

SEARCH_NICE = 10
"""How much lower the search lane's CPU priority is (``os.nice``; 10 gives a search about a tenth
of a core that a quick move or the event loop wants)."""

QUICK, SEARCH = "quick", "search"
"""The two lanes."""

ORPHAN_POLL = 1.0
"""Seconds between a worker's checks that the server that started it still runs."""

T = TypeVar("T")

# ---------------------------------------------------------------------- the worker's side

_SEATS: dict[str, list[Agent | None]] = {}
"""The agents of each table this worker holds, by table id (``None``: the person's seat)."""


def _start(nice: int, parent: int) -> None:
    """A worker process's start: it ends with its parent, the server of process id ``parent``
    (:func:`_end_with`), and takes its priority."""
    _end_with(parent)
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)


PR_SET_PDEATHSIG = 1
"""Linux's ``prctl`` option: the signal a process gets when its parent dies."""


def _end_with(parent: int) -> None:
    """Make this process end when the process ``parent`` does: on Linux, the kernel sends it
    ``SIGKILL`` (``prctl(PR_SET_PDEATHSIG)``); everywhere, a daemon thread checks its parent
    every :data:`ORPHAN_POLL` seconds and ends it once re-parented."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()


def _open(
    key: str, opponent: str, rules: Rules, seed: int, player: str | None
) -> tuple[list[str | None], int, int]:
    """Build table ``key``'s agents here (:func:`~piquet_table.session.make_seats`); their names,
    the game's seed and this process's id."""
    agents, game_seed = make_seats(opponent, rules, seed, player)
    torch = sys.modules.get("torch")
    if torch is not None:  # a batch-1 policy gains nothing from more threads, and many tables
        torch.set_num_threads(1)  # of them would oversubscribe the cores
    _SEATS[key] = agents
    return [a.name if a is not None else None for a in agents], game_seed, os.getpid()


class _Person:
    """The person's seat: never asked to act here (his moves come from the browser)."""

    name = "human"

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reseed."""

    def act(self, turn: object) -> int:
        """Never called."""
        raise RuntimeError("the person's seat is played from the browser")


def _move(key: str, game: Game) -> int:
    """The action of table ``key``'s agent to act in ``game`` (this worker's copy)."""
    agents = _SEATS.get(key)
    if agents is None:
        raise WorkerLost("this table's agents were lost with the process that held them")
    return play_turn(game, [a if a is not None else _Person() for a in agents])


def _close(key: str) -> None:
    """Forget table ``key``'s agents."""
    _SEATS.pop(key, None)


# ---------------------------------------------------------------------- the server's side


class WorkerLost(RuntimeError):
    """The worker process holding a table's agents stopped (killed, out of memory)."""


class MovePool:
    """Where the agents' moves are played: ``processes`` worker processes (one for the quick lane,
    the rest, at least one, for the searches), or threads of this process with ``processes=0``.
    """

    def __init__(self, processes: int = 2) -> None:
        if processes < 0 or processes == 1:
            raise ValueError(
                f"a move pool has 0 (threads) or at least 2 processes, got {processes}"
            )
        self.processes = processes
        self._threads: ThreadPoolExecutor | None = None
        self._lanes: dict[str, list[Executor | None]] = {
            QUICK: [None] * min(1, processes),
            SEARCH: [None] * max(0, processes - 1),
        }
        self._where: dict[str, tuple[str, int]] = {}
        """Each table's lane and worker index."""
        self.pids: dict[str, int] = {}
        """The process id of the worker holding each table's agents (this one's, for threads)."""

    def start(self) -> None:
        """Start every worker process now (each loads the agents' modules), rather than at its
        first table."""
        for lane, workers in self._lanes.items():
            for i in range(len(workers)):
                self._executor(lane, i).submit(_close, "")

    def _executor(self, lane: str, i: int) -> Executor:
        if not self.processes:
            if self._threads is None:
                self._threads = ThreadPoolExecutor(thread_name_prefix="agent")
            return self._threads
        workers = self._lanes[lane]
        if workers[i] is None:
            workers[i] = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start,
                initargs=(SEARCH_NICE if lane == SEARCH else 0, os.getpid()),
            )
        return workers[i]  # type: ignore[return-value]

    def _place(self, key: str, lane: str) -> Executor:
        if not self.processes:
            self._where[key] = (lane, 0)
            return self._executor(lane, 0)
        held = Counter(i for ln, i in self._where.values() if ln == lane)
        i = min(range(len(self._lanes[lane])), key=lambda j: (held[j], j))
        self._where[key] = (lane, i)
        return self._executor(lane, i)

    async def open(
        self,
        key: str,
        searches: bool,
        opponent: str,
        rules: Rules,
        seed: int,
        player: str | None = None,
    ) -> tuple[list[str | None], int]:
        """Build table ``key``'s agents in a worker of their lane (``searches``: the search lane);
        their names and the game's seed. Raises what building them raised."""
        executor = self._place(key, SEARCH if searches else QUICK)
        try:
            names, game_seed, pid = await self._run(
                executor, _open, key, opponent, rules, seed, player
            )
        except BaseException:
            self._where.pop(key, None)
            raise
        self.pids[key] = pid
        return names, game_seed

    async def move(self, key: str, game: Game) -> int:
        """The action of table ``key``'s agent to act in ``game`` (sent as a copy)."""
        lane, i = self._where[key]
        return await self._run(self._executor(lane, i), _move, key, game)

    async def close(self, key: str) -> None:
        """Let table ``key``'s agents go."""
        where = self._where.pop(key, None)
        self.pids.pop(key, None)
        if where is not None:
            with contextlib.suppress(WorkerLost, KeyError):
                await self._run(self._executor(*where), _close, key)

    async def _run(self, executor: Executor, fn: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(executor, fn, *args)
        except BrokenProcessPool:
            self._lost(executor)
            raise WorkerLost("the process playing this table's agents stopped") from None

    def _lost(self, executor: Executor) -> None:
        """A worker died: its tables' agents are gone (their next move says so); a new process
        takes its place."""
        for workers in self._lanes.values():
            for i, ex in enumerate(workers):
                if ex is executor:
                    workers[i] = None
        executor.shutdown(wait=False, cancel_futures=True)

    def shutdown(self) -> None:
        """Stop every worker (the server is stopping); a later table starts them again."""
        executors = [self._threads] if self._threads is not None else []
        self._threads = None
        for workers in self._lanes.values():
            executors += [ex for ex in workers if ex is not None]
            workers[:] = [None] * len(workers)
        for ex in executors:
            ex.shutdown(wait=True, cancel_futures=True)
