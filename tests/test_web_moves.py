"""The agents' moves off the event loop (piquet_table.web.moves): worker processes in two lanes.

The server's process only routes messages: no agent acts in it. A search plays in the search
lane, at a lower CPU priority, and never in front of a quick agent's move: a deal against a quick
agent is played to its end while a search is still thinking about its first move.
"""

from __future__ import annotations

import asyncio
import json
import os

import pytest

pytest.importorskip("starlette", reason="the web table needs the web extra: pip install '.[web]'")

from piquet_env.rules import STANDARD
from piquet_table.web.client import Client
from piquet_table.web.hub import Hub
from piquet_table.web.limits import Limits
from piquet_table.web.moves import SEARCH_NICE, MovePool
from piquet_table.web.opponents import Choice
from tests.web_helpers import QUICK, UNLIMITED_RATES, answer

SLOW = Choice("slow", "A search of 8 s a move", "mcts:0:time=8")


class _Browser:
    """A client's socket, as the tests see it: every message sent to it, and a wait for more."""

    def __init__(self, hub: Hub, owner: str) -> None:
        self.got: list[dict] = []
        self._more = asyncio.Event()

        async def send(message: dict) -> None:
            self.got.append(message)
            self._more.set()

        self.client = Client(hub, send, owner)

        self.read = 0
        """How many of the messages :meth:`next` has returned."""

    async def say(self, message: dict) -> None:
        """Send ``message``."""
        await self.client.receive(json.dumps(message))

    async def next(self) -> dict:
        """The next message not read yet (waiting for it)."""
        while len(self.got) <= self.read:
            self._more.clear()
            await asyncio.wait_for(self._more.wait(), 120)
        self.read += 1
        return self.got[self.read - 1]


async def _play_a_deal_beside_a_search(hub: Hub) -> tuple[int, int, bool, int]:
    watcher, person = _Browser(hub, "a"), _Browser(hub, "b")
    await watcher.say({"type": "watch", "players": ["slow", "slow"], "delay": 0})
    (search_table,) = hub.tables.values()
    while not search_table.thinking:
        await asyncio.sleep(0.01)
    await person.say({"type": "new", "opponent": "heuristic", "mode": "deal"})
    msg = await person.next()
    quick_table = hub.tables[msg["table"]]
    moves = 0
    while msg["view"]["phase"] != "over":
        assert msg["type"] != "error", msg
        move = answer(msg["view"], msg["version"])
        if move is not None and msg is person.got[-1]:  # the latest view: answer it
            await person.say(move)
            moves += 1
        msg = await person.next()
    still_thinking = search_table.thinking and search_table.version == 0
    pids = (hub.moves.pids[search_table.id], hub.moves.pids[quick_table.id])
    await hub.shutdown()
    return *pids, still_thinking, moves


def test_a_search_never_holds_up_a_quick_agents_moves(tmp_path):
    pool = MovePool(2)
    choices = {**QUICK, "slow": SLOW}
    hub = Hub(STANDARD, choices, tmp_path, seed=3, limits=Limits(**UNLIMITED_RATES), moves=pool)
    search_pid, quick_pid, still_thinking, moves = asyncio.run(_play_a_deal_beside_a_search(hub))
    assert os.getpid() not in (search_pid, quick_pid) and search_pid != quick_pid
    assert moves > 5 and still_thinking  # the whole deal while the search thought of one move
    assert len(list(tmp_path.glob("[!.]*"))) == 1  # the deal (the watched game, unfinished, is not)


def test_the_search_lane_runs_at_a_lower_priority(tmp_path):
    pool = MovePool(2)

    async def pids() -> tuple[int, int, int]:
        await pool.open("q", False, "random", STANDARD, 1)
        await pool.open("s", True, "mcts:10", STANDARD, 2)
        niceness = [os.getpriority(os.PRIO_PROCESS, pool.pids[k]) for k in ("q", "s")]
        return pool.pids["q"], niceness[0], niceness[1]

    try:
        quick, quick_nice, search_nice = asyncio.run(pids())
    finally:
        pool.shutdown()
    assert quick != os.getpid()
    assert search_nice - quick_nice == min(SEARCH_NICE, 19 - quick_nice)


def test_a_move_pool_has_threads_or_two_processes_at_least():
    with pytest.raises(ValueError, match="0 \\(threads\\) or at least 2 processes, got 1"):
        MovePool(1)


def test_a_worker_that_dies_fails_its_tables_and_is_replaced(tmp_path):
    import signal

    from piquet_env.game import Game
    from piquet_table.web.moves import WorkerLost

    pool = MovePool(2)

    async def run() -> int:
        _, seed = await pool.open("a", False, "random", STANDARD, 1, "random")
        os.kill(pool.pids["a"], signal.SIGKILL)
        with pytest.raises(WorkerLost):
            await pool.move("a", Game(STANDARD, seed=seed))
        _, seed = await pool.open("b", False, "random", STANDARD, 2, "random")  # a new process
        game = Game(STANDARD, seed=seed)
        action = await pool.move("b", game)
        assert game.is_legal(action)
        with pytest.raises(WorkerLost, match="lost with the process"):
            await pool.move("a", game)  # its agents went with the process
        return pool.pids["b"]

    try:
        assert asyncio.run(run()) not in (os.getpid(),)
    finally:
        pool.shutdown()
