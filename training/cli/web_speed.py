"""How fast ``piquet serve`` answers a person's move: many tables, searches beside, floods.

Command::

    python -m piquet_cli.web_speed [--tables 20] [--moves 30] [--think 0]
        [--busy mcts:400 --busy-tables 8] [--flood] [--records N] [--workers N] [OPPONENT ...]

It starts ``piquet serve`` in a process of its own on a free port of 127.0.0.1 (its own records
folder, its default limits and worker processes) and opens ``--tables`` WebSockets to it, each
from an address of its own on the loopback (127.0.0.x: as many people as tables), each playing a
partie against the opponent (one opponent after another). Every client answers each of its
choices at random (:func:`answer`), ``--think`` seconds after it came (the clients start at
random times within the first ``--think`` seconds), and times each move until the person may act
again (the agent's replies, and his own only legal cards, included): at the server (from the
move's arrival to the message that hands the choice back, which says so in ``answered_in``) and at
the client (from sending to receiving, loopback and the client's own work added). It prints, per
opponent, the median, the 95th percentile and the slowest answer of each.

Loads (each measured beside a reference run without it, on the same server, one after the
other):

- ``--busy SPEC --busy-tables K``: K more tables play against SPEC (a search) at once, each
  answering the moment it may;
- ``--flood``: two clients of their own addresses flood the server from another process, one with
  refused messages on a socket, the other with ``pause`` on a watch table, each as fast as it can
  send, and each connecting again (and joining its table again) when the server closes it.

``--records N`` fills the server's records folder with N records first (copies of a few played
here) and times ``GET /api/results`` (the first request, then the median of 20), after a start and
after a restart (which reads the results rows the server kept as it stopped).

Without ``--flood`` the server is started with message rates no client here reaches (the clients
may play far faster than a person); with it, with its default rates, which the measured clients
keep to at ``--think`` 0.2 s or more. This module is a client of the server, which it runs as
``python -m piquet_cli serve``; it imports nothing of the server, only the engine (which writes
the records of ``--records``). It lives with the command it starts (it was
``piquet_env.testing.web_speed``, in the engine's layer, which may not name the command).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

DEFAULT_OPPONENTS = ("random", "heuristic", "baseline", "mcts:100")
"""What is measured unless opponents are named (ids of the server's opponent list)."""

FLOOD = '{"type": "cheat"}'
"""What the refused-message flood sends (refused with a reason, as every bad message is)."""


def answer(view: dict, version: int, rng: random.Random | None = None) -> dict | None:
    """A legal answer to the seat's choice in ``view`` (the first one, or a random one with
    ``rng``), as the page would send it; ``None`` when the seat has nothing to do."""
    choice = view.get("choice")
    if choice is None:
        return None
    kind = choice["kind"]
    if kind == "exchange":
        n = rng.randint(choice["min"], choice["max"]) if rng else choice["min"]
        cards = rng.sample(choice["cards"], n) if rng else choice["cards"][:n]
        return {"type": "exchange", "cards": cards, "version": version}
    if kind == "declare":
        declare = choice["can_declare"] and (rng.random() < 0.7 if rng else True)
        return {"type": "declare" if declare else "pass", "version": version}
    if kind == "play":
        card = rng.choice(choice["cards"]) if rng else choice["cards"][0]
        return {"type": "play", "card": card, "version": version}
    return {"type": "next", "version": version}


def address(i: int) -> str:
    """The loopback address of client ``i`` (127.0.0.2 on): one per client, as people have."""
    return f"127.0.{i // 250}.{i % 250 + 2}"


async def _ready(ws) -> dict:
    """Read until the person may act (or the game is over)."""
    while True:
        msg = json.loads(await ws.recv())
        if msg["type"] == "error":
            raise RuntimeError(f"the server refused a move: {msg['message']}")
        if msg["type"] in ("welcome", "update"):
            view = msg["view"]
            if view["choice"] is not None or view["phase"] == "over":
                return msg


async def _player(
    url: str,
    opponent: str,
    moves: int | None,
    think: float,
    seed: int,
    opened: asyncio.Barrier,
    stop: asyncio.Event,
) -> list[tuple[float, float]]:
    """One table from address ``seed``: once every table is open, play ``moves`` moves against
    ``opponent`` (new parties as needed; ``None``: until ``stop``); each move's (server, client)
    answer time in seconds."""
    from websockets.asyncio.client import connect

    rng = random.Random(seed)
    times: list[tuple[float, float]] = []
    async with connect(url, max_size=2**22, local_addr=(address(seed), 0)) as ws:
        await ws.send(json.dumps({"type": "new", "opponent": opponent}))
        msg = await _ready(ws)
        await opened.wait()
        await asyncio.sleep(rng.uniform(0, think))  # people do not all move at the same instant
        while (len(times) < moves) if moves is not None else not stop.is_set():
            if msg["view"]["phase"] == "over":
                await ws.send(json.dumps({"type": "new", "opponent": opponent}))
                msg = await _ready(ws)
            await asyncio.sleep(think)
            move = answer(msg["view"], msg["version"], rng)
            start = time.perf_counter()
            await ws.send(json.dumps(move))
            msg = await _ready(ws)
            times.append((msg["answered_in"], time.perf_counter() - start))
        await ws.send(json.dumps({"type": "leave"}))  # saved and closed: room for the next run
        while json.loads(await ws.recv())["type"] != "left":
            pass
    return times


async def _measure(
    url: str, opponent: str, tables: int, moves: int, think: float, busy: str | None, n_busy: int
) -> tuple[list[tuple[float, float]], int]:
    """The measured tables' answer times, and the moves the busy tables played meanwhile."""
    n_busy = n_busy if busy else 0
    opened, stop = asyncio.Barrier(tables + n_busy), asyncio.Event()
    runs = [_player(url, opponent, moves, think, i, opened, stop) for i in range(tables)]
    loads = [
        asyncio.ensure_future(_player(url, busy, None, 0.0, tables + i, opened, stop))
        for i in range(n_busy)
        if busy
    ]
    measured = await asyncio.gather(*runs)
    stop.set()
    busy_moves = sum(len(t) for t in await asyncio.gather(*loads))
    return [t for ts in measured for t in ts], busy_moves


# ---------------------------------------------------------------------- the flood


FLOODS = ("refused", "pause")
"""The two floods: refused messages on a socket, ``pause`` on a watch table."""


async def _flood_socket(url: str, addr: str, counts, watch: bool) -> None:
    """Flood from ``addr`` until killed: refused messages on a socket, or (``watch``) ``pause`` on
    a watch table; connect again (and join the table again) whenever the server closes it.
    ``counts`` (shared memory) gets the connections made, the messages sent and the
    connections the server closed or refused."""
    from websockets.asyncio.client import connect

    ids = None
    while True:
        try:
            async with connect(url, local_addr=(addr, 0)) as ws:
                counts[0] += 1
                if watch:
                    if ids is None:
                        await ws.send(json.dumps({"type": "watch", "delay": 0.5}))
                    else:
                        await ws.send(json.dumps({"type": "join", **ids}))
                    msg = json.loads(await ws.recv())
                    if msg["type"] == "welcome":
                        ids = {"table": msg["table"], "token": msg["token"]}
                frame = '{"type": "pause"}' if watch else FLOOD
                while True:
                    await ws.send(frame)
                    counts[1] += 1
                    if counts[1] % 200 == 0:
                        await asyncio.sleep(0)  # let the closing frame be read
        except Exception:  # closed, refused, reset: connect again
            counts[2] += 1
            await asyncio.sleep(0.01)


def _flood_process(url: str, counts: dict) -> None:
    """The flood's process: the two flooding clients, from addresses of their own."""

    async def run() -> None:
        await asyncio.gather(
            _flood_socket(url, "127.1.0.1", counts["refused"], watch=False),
            _flood_socket(url, "127.1.0.2", counts["pause"], watch=True),
        )

    asyncio.run(run())


class _Flood:
    """The flood, in a process of its own (so that it does not slow the measuring clients)."""

    def __init__(self, url: str) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.counts = {kind: ctx.Array("d", 3, lock=False) for kind in FLOODS}
        self._proc = ctx.Process(target=_flood_process, args=(url, self.counts), daemon=True)
        self._started = 0.0
        self.seconds = 0.0

    def __enter__(self) -> _Flood:
        self._proc.start()
        self._started = time.perf_counter()
        time.sleep(2.0)  # under way before the measurement
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.kill()
        self._proc.join(10)
        self.seconds = time.perf_counter() - self._started

    def lines(self) -> list[str]:
        """The flood in words: what each client sent, and how often it was cut off."""
        return [
            f"    flood of {kind} messages: {c[1] / self.seconds:,.0f} a second sent over "
            f"{self.seconds:.0f} s, {c[0]:.0f} connections, {c[2]:.0f} closed or refused"
            for kind, c in self.counts.items()
        ]


# ---------------------------------------------------------------------- the server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(
    port: int, records: str, tables: int, rates: bool, workers: int | None
) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "piquet_cli", "serve", "--port", str(port), "--seed", "1"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    cmd += ["--opponent", "random", "--records", records]
    cmd += ["--max-tables", str(max(64, tables + 8))]
    if not rates:
        cmd += ["--rate", "1e6", "--client-rate", "1e6"]  # the clients play as fast as answered
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config") as r:
                json.load(r)
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"the server did not start: {proc.stderr.read()}") from None
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the server did not start in 120 s") from None
            time.sleep(0.2)


def _fill_records(folder: Path, n: int) -> None:
    """``n`` records of a person's games in ``folder``, named as the server names its own: ten
    parties against ``random`` (random play), each copied over and over."""
    from piquet_env.agent import RandomAgent, Turn
    from piquet_env.game import Game
    from piquet_env.game.record import save_record

    played = []
    for seed in range(10):
        game = Game(seed=seed)
        agents = [RandomAgent(seed=seed), RandomAgent(seed=100 + seed)]
        while not game.is_over:
            game.apply(agents[game.current_player].act(Turn(game, game.current_player)))
        played.append(save_record(folder / f"seed-{seed}.json", game, ["human", "random"]))
    for i in range(n):
        name = f"20261201-{i // 60 % 24:02d}{i % 60:02d}00-play-{i:016x}.json"
        shutil.copyfile(played[i % len(played)], folder / name)
    for path in played:
        path.unlink()


def _results_after_start(port: int, records: str, workers: int | None) -> tuple[float, float]:
    """Start the server on ``records``, time ``GET /api/results`` (:func:`_time_results`) and
    stop it (it keeps the results rows as it stops)."""
    proc = _start_server(port, records, 1, rates=False, workers=workers)
    try:
        return _time_results(port)
    finally:
        proc.terminate()
        proc.wait(60)


def _time_results(port: int) -> tuple[float, float]:
    """``GET /api/results``: the first request, and the median of 20 more, in seconds."""

    def get() -> float:
        start = time.perf_counter()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/results") as r:
            json.load(r)
        return time.perf_counter() - start

    first = get()
    return first, statistics.median(get() for _ in range(20))


# ---------------------------------------------------------------------- the report


def _spread(times: list[float]) -> str:
    """Median, 95th percentile and the slowest, in milliseconds."""
    times = sorted(times)
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    return f"{_ms(statistics.median(times))}{_ms(p95)}{_ms(times[-1])}"


def _ms(x: float) -> str:
    return f"{1000 * x:9.1f}"


def _row(label: str, times: list[tuple[float, float]]) -> str:
    server, client = ([t[k] for t in times] for k in (0, 1))
    return f"  {label:<34}{len(times):>6}{_spread(server)}{_spread(client)}"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per opponent (and per load)."""
    p = argparse.ArgumentParser(
        prog="python -m piquet_cli.web_speed",
        description=__doc__.split("\n")[0],
    )
    p.add_argument("opponents", nargs="*", default=list(DEFAULT_OPPONENTS), metavar="OPPONENT")
    p.add_argument("--tables", type=int, default=20, help="tables measured at once (default: 20)")
    p.add_argument("--moves", type=int, default=30, help="moves timed per table (default: 30)")
    p.add_argument(
        "--think", type=float, default=0.0, help="seconds a client waits before each move"
    )
    p.add_argument("--busy", metavar="SPEC", help="more tables play against SPEC meanwhile")
    p.add_argument("--busy-tables", type=int, default=8, help="how many (default: 8)")
    p.add_argument("--flood", action="store_true", help="two clients flood the server meanwhile")
    p.add_argument("--records", type=int, metavar="N", help="time /api/results with N records")
    p.add_argument(
        "--workers", type=int, metavar="N", help="the server's --workers (0: agents in threads)"
    )
    args = p.parse_args(argv)
    if args.tables < 1 or args.moves < 1 or args.busy_tables < 1 or not args.think >= 0:
        p.error("--tables, --moves and --busy-tables must be at least 1, --think 0 or more")
    port = _free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    with tempfile.TemporaryDirectory(prefix="piquet-bench-") as records:
        if args.records:
            _fill_records(Path(records), args.records)
            first = _results_after_start(port, records, args.workers)
            again = _results_after_start(port, records, args.workers)
        proc = _start_server(
            port, records, args.tables + args.busy_tables, rates=args.flood, workers=args.workers
        )
        try:
            print(
                f"piquet serve on 127.0.0.1:{port}: {args.tables} tables measured at once, each "
                f"timing {args.moves} moves, {args.think:g} s between a client's moves"
            )
            if args.records:
                print(
                    f"  GET /api/results with {args.records} records: the first after a start "
                    f"{1000 * first[0]:,.0f} ms (every record read), then {1000 * first[1]:.1f} "
                    f"ms (median of 20); the first after a restart {1000 * again[0]:,.0f} ms "
                    f"(the rows kept), then {1000 * again[1]:.1f} ms"
                )
            print(
                f"  {'':<34}{'':>6}{'at the server (ms)':>27}{'at the client (ms)':>27}\n"
                f"  {'opponent':<34}{'moves':>6}" + f"{'median':>9}{'p95':>9}{'max':>9}" * 2
            )
            for opponent in args.opponents:
                times, _ = asyncio.run(
                    _measure(url, opponent, args.tables, args.moves, args.think, None, 0)
                )
                print(_row(opponent, times), flush=True)
                if args.busy:
                    times, played = asyncio.run(
                        _measure(
                            url,
                            opponent,
                            args.tables,
                            args.moves,
                            args.think,
                            args.busy,
                            args.busy_tables,
                        )
                    )
                    label = f"{opponent}, {args.busy_tables} x {args.busy} beside"
                    print(_row(label, times) + f"   ({played} {args.busy} moves)", flush=True)
                if args.flood:
                    with _Flood(url) as flood:
                        times, _ = asyncio.run(
                            _measure(url, opponent, args.tables, args.moves, args.think, None, 0)
                        )
                    print(_row(f"{opponent}, under the flood", times), flush=True)
                    for line in flood.lines():
                        print(line)
        finally:
            proc.terminate()
            proc.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
