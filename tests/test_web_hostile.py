"""The web table against hostile clients: what one address, or many, can make the server do.

Each test reproduces a way a client could hurt a shared server (issue 36) and shows it bounded:
300 concurrent ``new`` messages against the table limits; a rebinding Host; a flood then an abort
(one log line, no traceback); floods against the rates of a socket and of an address, the
cooldown and the sockets an address may hold; a pause flood on a watch table; a flood beside a
person's game over real sockets from two loopback addresses; the token. (The displaced window's
rejoin is in tests/test_web_server.py, the records' budget in tests/test_web_records.py.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time

import pytest

pytest.importorskip("starlette", reason="the web table needs the web extra: pip install '.[web]'")

from starlette.testclient import TestClient, WebSocketDenialResponse

from piquet_table.web.app import create_app
from piquet_table.web.client import Client
from tests.web_helpers import answer, make_hub, serving

NEW = json.dumps({"type": "new", "opponent": "random", "mode": "partie"})


async def _concurrent_news(hub, owners: list[str]) -> list[dict]:
    """One client per owner, each sending ``new`` at the same instant; the first reply of each."""
    replies: list[list[dict]] = [[] for _ in owners]

    def sender(i: int):
        async def send(message: dict) -> None:
            replies[i].append(message)

        return send

    clients = [Client(hub, sender(i), owner) for i, owner in enumerate(owners)]
    await asyncio.gather(*(c.receive(NEW) for c in clients))
    await hub.shutdown()
    return [r[0] for r in replies]


@pytest.mark.parametrize(
    ("owners", "per_client", "in_all"),
    [(["one address"] * 20, 8, 8), ([f"address {i}" for i in range(300)], 8, 64)],
    ids=["20 sockets of one address", "300 sockets of 300 addresses"],
)
def test_concurrent_news_never_pass_the_table_limits(tmp_path, owners, per_client, in_all):
    """The slot is reserved before the agent is built: however the building interleaves, no more
    tables open than the limits allow (20 at once from one address get 8, 300 get 64)."""
    hub = make_hub(tmp_path / "records", max_per_client=per_client, max_tables=64)
    first = asyncio.run(_concurrent_news(hub, owners))
    welcomed = [r for r in first if r["type"] == "welcome"]
    refused = [r for r in first if r["type"] == "error"]
    assert len(welcomed) == in_all and len(refused) == len(owners) - in_all
    limit = "tables open, the most one client may" if in_all == 8 else "tables open, its limit"
    assert all(limit in r["message"] for r in refused), refused[:3]


def test_a_rebinding_host_is_refused_by_the_pages_the_records_and_the_socket(tmp_path):
    """DNS rebinding: a site whose name is made to point at the server reaches it with its own
    name in Host (and Origin). Only the allowed hosts are served."""
    hub = make_hub(tmp_path / "records")
    client = TestClient(create_app(hub, allowed_hosts=["testserver"]))
    evil = {"host": "evil.example:8000", "origin": "http://evil.example:8000"}
    with client:
        for path in ("/", "/api/records", "/api/results", "/api/config"):
            reply = client.get(path, headers=evil)
            assert reply.status_code == 400 and "Invalid host header" in reply.text, path
        assert client.post("/api/replay", content="{}", headers=evil).status_code == 400
        with (
            pytest.raises(WebSocketDenialResponse) as err,
            client.websocket_connect("/ws", headers=evil),
        ):
            pass
        assert err.value.status_code == 400
        assert client.get("/api/records").status_code == 200  # the allowed host is served
        with client.websocket_connect("/ws") as ws:
            ws.send_text(NEW)
            assert ws.receive_json()["type"] == "welcome"


async def _flood_then_abort(port: int, messages: int, wait: float) -> None:
    """A client that sends ``messages`` refused messages without reading a reply, waits ``wait``
    seconds, and drops the connection without closing it."""
    from websockets.asyncio.client import connect

    ws = await connect(f"ws://127.0.0.1:{port}/ws")
    for _ in range(messages):
        await ws.send('{"type": "cheat"}')
    await asyncio.sleep(wait)
    ws.transport.abort()


def test_a_client_that_floods_then_aborts_leaves_one_line_in_the_log(tmp_path, caplog):
    """Thousands of unread replies to a connection that is gone made thousands of asyncio
    warnings; a reply to a socket that just closed, a traceback. Each connection now leaves one
    line, and a client's own disconnect no traceback."""
    pytest.importorskip("uvicorn", reason="needs the web extra")
    hub = make_hub(tmp_path / "records")
    caplog.set_level(logging.INFO)
    with serving(create_app(hub)) as port:
        asyncio.run(_flood_then_abort(port, 3000, 0.3))
        for _ in range(10):  # an error sent to a socket that has just gone
            asyncio.run(_flood_then_abort(port, 1, 0))
        deadline = time.monotonic() + 20
        while sum("connection" in r.getMessage() for r in caplog.records) < 11:
            assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records][:20]
            time.sleep(0.05)
    text = [r.getMessage() for r in caplog.records]
    assert not [t for t in text if "socket.send() raised" in t], len(text)
    assert not [r for r in caplog.records if r.exc_info or "Exception in ASGI" in r.getMessage()]
    closed = [r for r in caplog.records if r.name == "piquet_table.web"]
    assert len(closed) == 11, [r.getMessage() for r in closed]
    assert all(r.levelno == logging.INFO and "\n" not in r.getMessage() for r in closed)


def _drain(ws, limit: int = 10_000) -> tuple[list[dict], int | None]:
    """Every message until the server closes the socket, and the close code."""
    from starlette.websockets import WebSocketDisconnect

    got = []
    try:
        for _ in range(limit):
            got.append(ws.receive_json())
    except WebSocketDisconnect as err:
        return got, err.code
    return got, None


def test_past_its_message_rate_a_socket_gets_one_error_and_is_closed(tmp_path):
    """A token bucket per connection: ``burst`` messages at once, then ``rate`` a second; the
    message past it gets one error (code ``rate``) and the socket is closed (1008)."""
    from starlette.websockets import WebSocketDisconnect

    hub = make_hub(tmp_path / "records", rate=0.001, burst=10, cooldown=0.3)
    with TestClient(create_app(hub, allowed_hosts=["testserver"])) as client:
        with client.websocket_connect("/ws") as ws:
            for _ in range(50):
                ws.send_text('{"type": "pause"}')
            got, code = _drain(ws)
        assert [m["type"] for m in got] == ["error"] * 11 and code == 1008
        assert all("no table is open here" in m["message"] for m in got[:10])
        assert got[10]["code"] == "rate" and "too many messages" in got[10]["message"]
        with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws"):
            pass  # its address may open no socket for the cooldown
        assert refused.value.code == 1008 and "too many messages" in refused.value.reason
        time.sleep(0.5)
        with client.websocket_connect("/ws") as ws:  # then a new socket has its own bucket
            ws.send_text(NEW)
            assert ws.receive_json()["type"] == "welcome"


def test_an_address_holds_a_bounded_number_of_sockets(tmp_path):
    from starlette.websockets import WebSocketDisconnect

    hub = make_hub(tmp_path / "records", max_sockets=3)
    with TestClient(create_app(hub, allowed_hosts=["testserver"])) as client:
        held = [client.websocket_connect("/ws") for _ in range(3)]
        for ws in held:
            ws.__enter__()
        try:
            with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws"):
                pass
            assert "has 3 sockets open" in refused.value.reason
        finally:
            held.pop().__exit__(None, None, None)
        with client.websocket_connect("/ws") as ws:  # one closed: room for another
            ws.send_text(NEW)
            assert ws.receive_json()["type"] == "welcome"
        for ws in held:
            ws.__exit__(None, None, None)


def test_a_clients_sockets_share_its_rate_and_new_sockets_take_from_it(tmp_path):
    """A token bucket per client address, over all its sockets, new ones included: a flood
    spread over many sockets (or reconnecting) is held to the client's rate."""
    from starlette.websockets import WebSocketDisconnect

    hub = make_hub(tmp_path / "records", client_rate=0.001, client_burst=12)
    with TestClient(create_app(hub, allowed_hosts=["testserver"])) as client:
        with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
            for _ in range(5):
                a.send_text('{"type": "pause"}')
                assert a.receive_json()["type"] == "error"
            for _ in range(10):
                b.send_text('{"type": "pause"}')
            got, code = _drain(b)
        assert len(got) == 6 and got[-1]["code"] == "rate" and code == 1008  # 2 + 5 + 5 = 12
        with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws"):
            pass
        assert refused.value.code == 1008  # no token left for a new socket


def test_a_paused_watch_table_answers_a_pause_flood_with_nothing_new(tmp_path):
    """``pause`` on a paused table (and ``resume`` on a running one) changes nothing, so it is not
    answered with the whole view again."""
    hub = make_hub(tmp_path / "records")
    with TestClient(create_app(hub, allowed_hosts=["testserver"])) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"type": "watch", "players": ["random", "random"]}))
            assert ws.receive_json()["type"] == "welcome"
            ws.send_text('{"type": "step"}')  # paused, one move: then the table waits
            first = ws.receive_json()
            while (msg := ws.receive_json())["version"] == first["version"]:
                pass
            version = msg["version"]
            for _ in range(20):
                ws.send_text('{"type": "pause"}')
            ws.send_text('{"type": "step"}')
            answers = [ws.receive_json()]
            while answers[-1]["version"] == version:
                answers.append(ws.receive_json())
        assert len(answers) == 2  # the step's view, then its move: nothing for the 20 pauses
        assert answers[-1]["version"] == version + 1 and answers[-1]["view"]["paused"]


async def _flood_beside_a_game(port: int) -> tuple[int, int | None, int]:
    """A flood from 127.0.0.2 (unread refused messages) while a person at 127.0.0.1 plays a deal;
    the flood's replies, its close code, and the person's moves played."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    url = f"ws://127.0.0.1:{port}/ws"

    async def flood() -> tuple[int, int | None]:
        async with connect(url, local_addr=("127.0.0.2", 0)) as ws:
            try:
                for _ in range(5000):
                    await ws.send('{"type": "cheat"}')
            except ConnectionClosed:
                pass
            replies = 0
            try:
                async for _ in ws:
                    replies += 1
            except ConnectionClosed:
                pass
            return replies, ws.close_code

    async def person() -> int:
        moves = 0
        async with connect(url, local_addr=("127.0.0.1", 0)) as ws:
            await ws.send(json.dumps({"type": "new", "opponent": "random", "mode": "deal"}))
            while True:
                msg = json.loads(await ws.recv())
                assert msg["type"] != "error", msg
                view = msg["view"]
                if view["phase"] == "over":
                    return moves
                move = answer(view, msg["version"])
                if move is not None and msg["type"] in ("welcome", "update"):
                    await ws.send(json.dumps(move))
                    moves += 1
                    await asyncio.sleep(0.01)  # a quick person, within his burst

    (replies, code), moves = await asyncio.gather(flood(), person())
    return replies, code, moves


def test_a_flood_is_cut_off_at_its_burst_while_another_table_plays_on(tmp_path):
    pytest.importorskip("uvicorn", reason="needs the web extra")
    hub = make_hub(tmp_path / "records", rate=1, burst=60, client_rate=60, client_burst=180)
    with serving(create_app(hub)) as port:
        replies, code, moves = asyncio.run(_flood_beside_a_game(port))
    assert code == 1008 and replies <= 60 + 1 + 5  # the burst, the error, a few refilled
    assert moves > 10


def test_with_a_token_only_a_browser_that_gave_it_is_served(tmp_path):
    from starlette.websockets import WebSocketDisconnect

    hub = make_hub(tmp_path / "records")
    app = create_app(hub, allowed_hosts=["testserver"], token="s3cret-table")
    with TestClient(app) as client:
        assert client.get("/").status_code == 200  # the page, to ask for it
        assert client.get("/static/table.js").status_code == 200
        for path in ("/api/config", "/api/records", "/api/results"):
            reply = client.get(path)
            assert reply.status_code == 401 and reply.json()["code"] == "token", path
        with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws"):
            pass
        assert refused.value.code == 1008
        wrong = client.post("/api/login", json={"token": "guess"})
        assert wrong.status_code == 403 and "token" not in wrong.cookies
        right = client.post("/api/login", json={"token": "s3cret-table"})
        assert right.status_code == 200
        cookie = right.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "s3cret" not in cookie
        assert client.get("/api/config").status_code == 200  # the cookie, from now on
        with client.websocket_connect("/ws") as ws:
            ws.send_text(NEW)
            assert ws.receive_json()["type"] == "welcome"
        client.cookies.clear()
        tries = [client.post("/api/login", json={"token": "x"}).status_code for _ in range(12)]
        assert tries.count(429) >= 2  # tries are limited: a token is not guessed by trying


def _post_login(port: int, headers: str, body_chunk: bytes, total: int) -> tuple[bytes, int]:
    """POST ``total`` bytes to /api/login (``body_chunk`` at a time, framed as ``headers`` say)
    until the server answers, then read until it drops the connection; its answer and the bytes
    sent."""
    import select
    import socket

    sock = socket.create_connection(("127.0.0.1", port))
    sock.setblocking(False)
    head = f"POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode()
    pending, sent, answer_ = head, 0, b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            sending = sent < total and not answer_
            readable, writable, _ = select.select([sock], [sock] if sending else [], [], 1)
            if readable:
                try:
                    data = sock.recv(65536)
                except ConnectionResetError:
                    break
                if not data:
                    break
                answer_ += data
            elif writable:
                if not pending:
                    pending = body_chunk
                try:
                    n = sock.send(pending)
                except (BrokenPipeError, ConnectionResetError):
                    break
                pending = pending[n:]
                sent += n
    finally:
        sock.close()
    return answer_, sent


def test_a_huge_login_body_is_refused_without_being_read(tmp_path):
    """A 300 MB login body took the server to 842 MB resident: it was read whole. Now it is
    refused by its Content-Length at once, and a chunked one (no length) once past 1 KiB: the
    server answers 413 and stops reading while the client has sent a small part of it (what the
    sockets' buffers hold)."""
    pytest.importorskip("uvicorn", reason="needs the web extra")
    hub = make_hub(tmp_path / "records")
    app = create_app(hub, allowed_hosts=["testserver"], token="s3cret-table")
    total = 300 * 10**6
    with serving(app) as port:
        reply, sent = _post_login(port, f"Content-Length: {total}\r\n", b"x" * 65536, total)
        assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
        assert sent < 64 * 2**20, sent  # of 300 MB
        chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
        reply, sent = _post_login(port, "Transfer-Encoding: chunked\r\n", chunk, total)
        assert reply.startswith(b"HTTP/1.1 413") and b"at most 1,024 bytes" in reply, reply[:300]
        assert sent < 64 * 2**20, sent
        for _ in range(10):  # past its tries an address is refused (429) before its body is read
            reply, sent = _post_login(port, "Transfer-Encoding: chunked\r\n", chunk, total)
            assert reply.startswith((b"HTTP/1.1 413", b"HTTP/1.1 429")), reply[:200]
            assert sent < 64 * 2**20, sent
        assert reply.startswith(b"HTTP/1.1 429"), reply[:200]
        with TestClient(app) as client:  # an ordinary login still works
            right = client.post("/api/login", json={"token": "s3cret-table"})
            assert right.status_code == 200


def test_a_restart_revokes_the_cookies_unless_the_secret_is_kept(tmp_path):
    """The cookie was a fixed HMAC of the token: no restart revoked it. Now it is keyed by a
    secret of the server's, new each start unless kept in a file."""
    from piquet_table.web.token import COOKIE, cookie_secret

    hub = make_hub(tmp_path / "records")

    def app(**options):
        return create_app(hub, allowed_hosts=["testserver"], **options)

    def cookie_of(app) -> str:
        with TestClient(app) as client:
            reply = client.post("/api/login", json={"token": "s3cret-table"})
            assert reply.status_code == 200
            return reply.cookies[COOKIE]

    def served(app, cookie: str) -> int:
        with TestClient(app, cookies={COOKIE: cookie}) as client:
            return client.get("/api/config").status_code

    first = cookie_of(app(token="s3cret-table"))
    assert served(app(token="s3cret-table"), first) == 401  # a new start
    kept = tmp_path / "cookie-secret"
    secret = cookie_secret(kept)
    assert (kept.stat().st_mode & 0o777) == 0o600 and len(secret) == 64
    assert cookie_secret(kept) == secret  # read back, not made again
    cookie = cookie_of(app(token="s3cret-table", cookie_secret=secret))
    assert cookie != first
    assert served(app(token="s3cret-table", cookie_secret=secret), cookie) == 200
    assert served(app(token="another", cookie_secret=secret), cookie) == 401
    short = tmp_path / "short"
    short.write_text("abc\n")
    short.chmod(0o600)
    with pytest.raises(ValueError, match="at least 32 characters"):
        cookie_secret(short)
    with pytest.raises(ValueError, match="is a directory"):
        cookie_secret(tmp_path)


HALF = b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
"""A request's head cut short: the server waits for the rest."""


def _closed_within(sock, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (reading what it sends)."""
    import select

    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if select.select([sock], [], [], left)[0]:
            try:
                if not sock.recv(65536):
                    return True
            except ConnectionResetError:
                return True
    return False


def _get(port: int, source: str = "127.0.0.1", path: str = "/api/config") -> int:
    """The status of ``GET path`` sent from the address ``source``; 0 if the server dropped
    the connection or did not answer in 10 s."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    except OSError:
        return 0
    finally:
        conn.close()


def test_slow_requests_are_dropped_after_their_timeouts(tmp_path):
    """300 half-sent requests stayed open 75 s: no timeout. Now a head must arrive within the
    header timeout, a body may not pause past the body timeout, and an idle connection goes after
    the keep-alive (1, 1 and 1 s here; a request sent whole, byte by byte, is served)."""
    import socket

    pytest.importorskip("uvicorn", reason="needs the web extra")
    from piquet_table.web.limits import Limits

    hub = make_hub(tmp_path / "records")
    limits = Limits(header_timeout=1.0, body_timeout=1.0, keep_alive=1.0)
    with serving(create_app(hub), limits=limits) as port:
        silent = socket.create_connection(("127.0.0.1", port))
        half = socket.create_connection(("127.0.0.1", port))
        half.sendall(HALF)
        body = socket.create_connection(("127.0.0.1", port))
        body.sendall(
            b"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"
        )
        idle = socket.create_connection(("127.0.0.1", port))
        idle.sendall(b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        slow = socket.create_connection(("127.0.0.1", port))
        for byte in b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"[:20]:
            slow.sendall(bytes([byte]))  # well within the head's timeout
        slow.sendall(b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"[20:])
        assert slow.recv(15).startswith(b"HTTP/1.1 200")
        for sock in (silent, half, body, idle):
            assert _closed_within(sock, 10), sock
            sock.close()
        slow.close()
        assert _get(port) == 200


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_getaffinity"), reason="Linux only")
def test_half_sent_requests_from_one_address_leave_the_server_to_others(tmp_path):
    """With the file limit at 256, 300 half-sent requests from one address made every other
    request fail ("Too many open files") until they let go. Now an address holds at most
    64 connections: another address (127.0.1.2, of another /24: the server counts 127.0.0.x as
    one network) is served, by HTTP and by WebSocket, while they hang."""
    import resource
    import socket
    import subprocess
    import sys

    pytest.importorskip("uvicorn", reason="needs the web extra")
    from websockets.sync.client import connect

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "piquet_cli", "serve", "--port", str(port), "--workers", "0"]
    cmd += ["--opponent", "random", "--records", str(tmp_path / "records")]

    def low_file_limit() -> None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))

    log = tmp_path / "stderr.txt"
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        preexec_fn=low_file_limit,
    )
    attack: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while _get(port) != 200:
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        for _ in range(300):
            sock = socket.socket()
            sock.settimeout(5)
            try:
                sock.connect(("127.0.0.1", port))
                sock.sendall(HALF)
            except OSError:
                pass  # dropped at once: the address holds its most
            attack.append(sock)
        deadline = time.monotonic() + 10  # the first burst may pass the file limit for a second
        while (status := _get(port, source="127.0.1.2")) != 200:
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        with connect(f"ws://127.0.0.1:{port}/ws", source_address=("127.0.1.2", 0)) as ws:
            ws.send(NEW)
            assert json.loads(ws.recv())["type"] == "welcome"
        held = sum(not _closed_within(sock, 0.01) for sock in attack)
        assert held <= 64, held
    finally:
        for sock in attack:
            sock.close()
        proc.terminate()
        proc.wait(30)
    err = log.read_text()
    assert "Traceback" not in err, err[-2000:]
    assert err.count("Too many open files") <= 3, err[-2000:]  # a line every 10 s at most


def test_an_address_holds_so_many_connections_websockets_and_http_together(tmp_path):
    """The connection cap counts an address's WebSockets and HTTP connections together: with 3
    sockets open (its most, here), its next request is dropped, another address's is served, and
    a socket closed makes room."""
    pytest.importorskip("uvicorn", reason="needs the web extra")
    from websockets.sync.client import connect

    from piquet_table.web.limits import Limits

    hub = make_hub(tmp_path / "records")
    with serving(create_app(hub), limits=Limits(max_connections=3)) as port:
        sockets = [connect(f"ws://127.0.0.1:{port}/ws") for _ in range(3)]
        try:
            assert _get(port) == 0
            assert _get(port, source="127.0.0.2") == 200
            sockets.pop().close()
            deadline = time.monotonic() + 10
            while _get(port) != 200:
                assert time.monotonic() < deadline, "no room made"
                time.sleep(0.1)
        finally:
            for ws in sockets:
                ws.close()


def _post_head(source: str, port: int, length: int) -> socket.socket:
    """A connection from ``source`` that has sent a record upload's head, its body to come."""
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(5)
    sock.connect(("127.0.0.1", port))
    head = f"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n\r\n"
    sock.sendall(head.encode())
    return sock


def _trickle(sock, chunk: bytes, pause: float, most: int) -> tuple[bool, int]:
    """Send ``chunk`` every ``pause`` seconds, at most ``most`` times, until the server closes
    ``sock``: whether it did, and the bytes sent."""
    sent = 0
    for _ in range(most):
        try:
            sock.sendall(chunk)
        except OSError:
            return True, sent
        sent += len(chunk)
        if _closed_within(sock, pause):
            return True, sent
    return False, sent


def test_a_trickled_body_is_dropped_by_its_rate_and_a_slow_one_by_its_deadline(tmp_path):
    """A body sent a byte every 4 s was never dropped: the body timeout only timed the pauses.
    Now it must average body_min_rate once it has run body_timeout (here 200 B/s after 1 s) and
    end within body_deadline (here 3 s); a body sent at once is served."""
    pytest.importorskip("uvicorn", reason="needs the web extra")
    from piquet_table.web.limits import Limits

    hub = make_hub(tmp_path / "records")
    limits = Limits(body_timeout=1.0, body_deadline=3.0, body_min_rate=200.0)
    with serving(create_app(hub), limits=limits) as port:
        # a byte every 0.25 s: never a pause of 1 s, but 4 B/s
        trickled = _post_head("127.0.0.1", port, 1000)
        closed, sent = _trickle(trickled, b" ", 0.25, 40)  # 10 s at most
        assert closed and sent < 1000
        trickled.close()
        # 100 bytes every 0.25 s, 400 B/s: above the rate, past the deadline
        steady = _post_head("127.0.0.1", port, 100_000)
        closed, sent = _trickle(steady, b" " * 100, 0.25, 60)  # 15 s at most
        assert closed and sent < 100_000
        steady.close()
        whole = _post_head("127.0.0.1", port, 2)
        whole.sendall(b"{}")
        assert whole.recv(15).startswith(b"HTTP/1.1 400")  # served: not a record
        whole.close()


def test_one_network_cannot_hold_every_connection(tmp_path):
    """5 addresses x 64 slow requests held every file of a server at nofile=256, and another
    address was not served. Now one address group (an IPv4 /24) holds at most its share (here 4,
    3 an address) and another group is served beside it; the total stays within half the file
    limit."""
    pytest.importorskip("uvicorn", reason="needs the web extra")
    import resource

    from piquet_table.web.limits import Limits
    from piquet_table.web.server import Guard

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert Guard(Limits()).total <= max(2, soft // 2)
    hub = make_hub(tmp_path / "records")
    limits = Limits(max_connections=3, max_group_connections=4, max_total_connections=10)
    with serving(create_app(hub), limits=limits) as port:
        attack = []
        try:
            for host in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
                for _ in range(3):
                    sock = socket.socket()
                    sock.bind((host, 0))
                    sock.connect(("127.0.0.1", port))
                    with contextlib.suppress(OSError):  # dropped at once
                        sock.sendall(HALF)  # a head never finished: held until its timeout
                    attack.append(sock)
            held = sum(not _closed_within(sock, 0.2) for sock in attack)
            assert held == 4, held
            assert _get(port, source="127.0.0.5") == 0  # its group is full
            assert _get(port, source="127.0.1.1") == 200  # another group is served
        finally:
            for sock in attack:
                sock.close()


def test_record_uploads_at_once_are_bounded_per_address_and_in_all(tmp_path):
    """60 uploads at once from one address took 521-743 MiB and held other clients' answers for
    4 s. Now an address has one upload read at a time and the server max_uploads (here 2); one
    more is answered 503 unread, and room is made as each ends."""
    pytest.importorskip("uvicorn", reason="needs the web extra")
    from piquet_table.web.limits import Limits

    hub = make_hub(tmp_path / "records", max_uploads=2, max_uploads_per_client=1)
    with serving(create_app(hub), limits=Limits(body_timeout=5.0)) as port:
        first = _post_head("127.0.0.2", port, 4)
        first.sendall(b"{")  # under way: the route is reading its body
        time.sleep(0.3)
        again = _post_head("127.0.0.2", port, 2)
        assert again.recv(15).startswith(b"HTTP/1.1 503")  # the address's one is under way
        again.close()
        second = _post_head("127.0.0.3", port, 4)
        second.sendall(b"{")
        time.sleep(0.3)
        third = _post_head("127.0.0.4", port, 2)
        assert third.recv(15).startswith(b"HTTP/1.1 503")  # two under way in all
        third.close()
        first.sendall(b'"a"')
        assert first.recv(15).startswith(b"HTTP/1.1 400")  # read whole, then refused: no record
        first.close()
        deadline = time.monotonic() + 10
        while True:
            fourth = _post_head("127.0.0.4", port, 2)
            fourth.sendall(b"{}")
            status = fourth.recv(15)
            fourth.close()
            if status.startswith(b"HTTP/1.1 400"):
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.1)
        second.close()


@pytest.mark.parametrize("mode", [0o644, 0o604, 0o620, 0o660, 0o666])
def test_a_cookie_secret_others_can_read_or_write_is_refused(tmp_path, capsys, mode):
    """A world-readable or world-writable --cookie-secret-file was used without a word: whoever
    reads it can make a cookie. Now it is refused, naming the file and the chmod, as ssh does."""
    from piquet_cli import main
    from piquet_table.web.token import cookie_secret

    kept = tmp_path / "cookie-secret"
    cookie_secret(kept)  # made readable by its owner only
    kept.chmod(mode)
    with pytest.raises(ValueError, match=f"permissions {mode:04o} are too open"):
        cookie_secret(kept)
    argv = ["serve", "--token", "--cookie-secret-file", str(kept), "--port", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"chmod 600 {kept}" in err
    kept.chmod(0o600)
    assert len(cookie_secret(kept)) == 64
