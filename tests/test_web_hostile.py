"""The web table against hostile clients: what one address, or many, can make the server do.

Each test here reproduces a way a client could hurt a shared server (issue 36) and shows it is
bounded: concurrent ``new`` messages against the table limits, ...
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

pytest.importorskip("starlette", reason="the web table needs the web extra: pip install '.[web]'")

from starlette.testclient import TestClient, WebSocketDenialResponse

from piquet_table.web.app import create_app
from piquet_table.web.client import Client
from tests.web_helpers import make_hub, serving

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
