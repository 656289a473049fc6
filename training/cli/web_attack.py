"""Another client's latency while ``piquet serve`` is attacked, beside a quiet reference in the same
run (docs/results/web.md): a slow-connection attack (300 half-sent requests from 127.0.0.1,
re-opened as the server drops them) and 300 MB login bodies streamed from 127.0.0.1 again and
again, against ``piquet serve --token`` with its file limit at 256. The measured client,
127.0.1.2 (another /24 than the attack's, which the server counts as one network), sends an
HTTP ``GET /api/config`` (keep-alive) and a WebSocket message every 0.1 s;
each phase prints their p50, p95 and largest answer times, the errors, and the server's resident
memory before and after.

    python -m piquet_cli.web_attack [--seconds 8]

Loopback only; every loop is bounded by the phase's time, and the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import http.client
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

TOKEN = "bench-token"
HALF_SENT = b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
"""A request's head that never ends: what a slow-connection attacker sends."""
CLIENT = "127.0.1.2"
"""The measured client's address (another loopback address stands in for another machine)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _low_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


class _Server:
    """``piquet serve --token`` on a free port, its file limit at 256, its stderr kept."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="piquet-attack-"))
        cmd = [sys.executable, "-m", "piquet_cli", "serve", "--port", str(self.port)]
        cmd += ["--workers", "0", "--opponent", "random", "--records", str(self.folder / "r")]
        cmd += ["--token", TOKEN]
        self.log = (self.folder / "stderr.txt").open("wb")
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=self.log, preexec_fn=_low_file_limit
        )
        self.cookie = self._login()

    def http(self, source: str = CLIENT) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=10, source_address=(source, 0)
        )

    def _login(self) -> str:
        for _ in range(300):
            try:
                c = self.http()
                c.request("GET", "/")
                c.getresponse().read()
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise SystemExit(f"the server did not answer on port {self.port} within 60 s")
        c = self.http()
        body = f'{{"token": "{TOKEN}"}}'
        c.request("POST", "/api/login", body=body, headers={"content-type": "application/json"})
        r = c.getresponse()
        r.read()
        return r.getheader("set-cookie", "").split(";")[0]

    def websocket(self) -> Any:
        from websockets.sync.client import connect

        url = f"ws://127.0.0.1:{self.port}/ws"
        return connect(url, source_address=(CLIENT, 0), additional_headers={"Cookie": self.cookie})

    def rss_mib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmRSS"))

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()
        return (self.folder / "stderr.txt").read_text(errors="replace")


def _measure(server: _Server, until: float) -> tuple[list[float], list[float], int]:
    """The measured client's HTTP and WebSocket answer times (ms) until ``until``, and errors."""
    http_ms: list[float] = []
    ws_ms: list[float] = []
    errors = 0
    h, ws = server.http(), server.websocket()
    while time.monotonic() < until:
        t = time.perf_counter()
        try:
            h.request("GET", "/api/config", headers={"Cookie": server.cookie})
            resp = h.getresponse()
            resp.read()
            if resp.status != 200:
                raise OSError(f"status {resp.status}")
            http_ms.append(1000 * (time.perf_counter() - t))
        except Exception:
            errors += 1
            h.close()
            h = server.http()
        t = time.perf_counter()
        try:
            ws.send('{"type": "leave"}')
            ws.recv(timeout=10)
            ws_ms.append(1000 * (time.perf_counter() - t))
        except Exception:
            errors += 1
            ws = server.websocket()
        time.sleep(0.1)
    ws.close()
    h.close()
    return http_ms, ws_ms, errors


def _slow_connections(server: _Server, stop: threading.Event, stats: dict) -> None:
    """Keep 300 half-sent requests open from 127.0.0.1, opening new ones as the server drops
    them."""
    socks: list[socket.socket] = []
    opened = dropped = 0
    while not stop.is_set():
        alive = []
        for s in socks:
            try:
                s.setblocking(False)
                if s.recv(1) == b"":
                    raise OSError("closed")
                alive.append(s)
                continue
            except BlockingIOError:
                alive.append(s)
                continue
            except OSError:
                pass
            dropped += 1
            s.close()
        socks = alive
        while len(socks) < 300 and not stop.is_set():
            s = socket.socket()
            s.settimeout(2)
            try:
                s.connect(("127.0.0.1", server.port))
                s.sendall(HALF_SENT)
                opened += 1
            except OSError:
                s.close()
                continue
            socks.append(s)
        time.sleep(0.2)
    for s in socks:
        s.close()
    stats["slow connections opened, dropped"] = (opened, dropped)


def _big_logins(server: _Server, stop: threading.Event, stats: dict) -> None:
    """Stream 300 MB login bodies from 127.0.0.1, one after another."""
    sent_total = bodies = 0
    chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    while not stop.is_set():
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(
            b"POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        sent = 0
        bodies += 1
        try:
            while sent < 300 * 10**6 and not stop.is_set():
                s.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        sent_total += sent
        s.close()
    stats["login bodies, bytes sent"] = (bodies, sent_total)


def _quantiles(xs: list[float]) -> tuple[float, float, float]:
    if len(xs) < 3:
        return (float("nan"),) * 3
    return statistics.median(xs), statistics.quantiles(xs, n=20)[18], max(xs)


def _phase(
    server: _Server,
    name: str,
    seconds: float,
    stats: dict,
    attacker: Callable[[_Server, threading.Event, dict], None] | None = None,
) -> None:
    stop = threading.Event()
    thread = None
    if attacker is not None:
        thread = threading.Thread(target=attacker, args=(server, stop, stats))
        thread.start()
        time.sleep(1)
    rss0 = server.rss_mib()
    http_ms, ws_ms, errors = _measure(server, time.monotonic() + seconds)
    rss1 = server.rss_mib()
    stop.set()
    if thread is not None:
        thread.join()
    h, w = _quantiles(http_ms), _quantiles(ws_ms)
    print(
        f"{name:34s} HTTP p50/p95/max {h[0]:6.1f} {h[1]:6.1f} {h[2]:7.1f} ms (n={len(http_ms)})  "
        f"WebSocket {w[0]:6.1f} {w[1]:6.1f} {w[2]:7.1f} ms (n={len(ws_ms)})  errors {errors}  "
        f"server RSS {rss0}->{rss1} MiB",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the four phases (quiet, slow connections, quiet, big logins) and print them."""
    parser = argparse.ArgumentParser(prog="python -m piquet_cli.web_attack", description=__doc__)
    parser.add_argument("--seconds", type=float, default=8.0, help="each phase's length")
    args = parser.parse_args(argv)
    server = _Server()
    stats: dict = {}
    try:
        _phase(server, "quiet reference", args.seconds, stats)
        _phase(server, "slow connections (300 half-sent)", args.seconds, stats, _slow_connections)
        _phase(server, "quiet reference", args.seconds, stats)
        _phase(server, "300 MB login bodies", args.seconds, stats, _big_logins)
        print("attackers:", stats)
        print("server file descriptors at the end:", len(os.listdir(f"/proc/{server.proc.pid}/fd")))
    finally:
        err = server.stop()
    print(
        "server stderr: 'Too many open files' lines:",
        err.count("Too many open files"),
        "; tracebacks:",
        err.count("Traceback"),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
