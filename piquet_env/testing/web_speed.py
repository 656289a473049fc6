"""How fast a table answers a person's move with many tables open: a benchmark that prints numbers.

``python -m piquet_env.testing.web_speed [--tables 20] [--moves 30] [--think 0] [OPPONENT ...]``
starts ``piquet serve`` in a process of its own on a free port of 127.0.0.1 and opens ``--tables``
WebSockets to it, each playing a partie against the opponent (one opponent after another). Every
client answers each of its choices at random (:func:`answer`), ``--think`` seconds after it came
(the clients start at random times within the first ``--think`` seconds),
and times each move until the person may act again (the agent's replies, and his own only legal
cards, included): at the server (from the move's arrival to the message that hands the choice
back, which says so in ``answered_in``) and at the client (from sending to receiving, loopback and
the client's own work added). It prints, per opponent, the median, the 95th percentile and the
slowest answer of each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

DEFAULT_OPPONENTS = ("random", "heuristic", "baseline", "mcts:100")
"""What is measured unless opponents are named (ids of the server's opponent list)."""


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
    url: str, opponent: str, moves: int, think: float, seed: int, opened: asyncio.Barrier
) -> list[tuple[float, float]]:
    """One table: once every table is open, play ``moves`` moves against ``opponent`` (new
    parties as needed); each move's (server, client) answer time in seconds."""
    from websockets.asyncio.client import connect

    rng = random.Random(seed)
    times: list[tuple[float, float]] = []
    async with connect(url, max_size=2**22) as ws:
        await ws.send(json.dumps({"type": "new", "opponent": opponent}))
        msg = await _ready(ws)
        await opened.wait()
        await asyncio.sleep(rng.uniform(0, think))  # people do not all move at the same instant
        while len(times) < moves:
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
    url: str, opponent: str, tables: int, moves: int, think: float
) -> list[tuple[float, float]]:
    opened = asyncio.Barrier(tables)
    runs = [_player(url, opponent, moves, think, seed, opened) for seed in range(tables)]
    return [t for ts in await asyncio.gather(*runs) for t in ts]


def _spread(times: list[float]) -> str:
    """Median, 95th percentile and the slowest, in milliseconds."""
    times = sorted(times)
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    return f"{_ms(statistics.median(times))}{_ms(p95)}{_ms(times[-1])}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(port: int, records: str, tables: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "piquet_cli", "serve", "--port", str(port), "--seed", "1"]
    cmd += ["--opponent", "random", "--records", records]
    cmd += ["--max-tables", str(tables + 4), "--per-client", str(tables + 4)]
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


def _ms(x: float) -> str:
    return f"{1000 * x:9.1f}"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per opponent."""
    p = argparse.ArgumentParser(prog="python -m piquet_env.testing.web_speed", description=__doc__)
    p.add_argument("opponents", nargs="*", default=list(DEFAULT_OPPONENTS), metavar="OPPONENT")
    p.add_argument("--tables", type=int, default=20, help="tables open at once (default: 20)")
    p.add_argument("--moves", type=int, default=30, help="moves timed per table (default: 30)")
    p.add_argument(
        "--think", type=float, default=0.0, help="seconds a client waits before each move"
    )
    args = p.parse_args(argv)
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="piquet-bench-") as records:
        proc = _start_server(port, records, args.tables)
        try:
            print(
                f"piquet serve on 127.0.0.1:{port}: {args.tables} tables open at once, each "
                f"timing {args.moves} moves, {args.think:g} s between a client's moves"
            )
            print(
                f"  {'':<26}{'':>6}{'at the server (ms)':>27}{'at the client (ms)':>27}\n"
                f"  {'opponent':<26}{'moves':>6}" + f"{'median':>9}{'p95':>9}{'max':>9}" * 2
            )
            for opponent in args.opponents:
                url = f"ws://127.0.0.1:{port}/ws"
                times = asyncio.run(_measure(url, opponent, args.tables, args.moves, args.think))
                server, client = ([t[k] for t in times] for k in (0, 1))
                print(
                    f"  {opponent:<26}{len(times):>6}{_spread(server)}{_spread(client)}",
                    flush=True,
                )
        finally:
            proc.terminate()
            proc.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
