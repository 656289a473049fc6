"""Helpers for the web table's tests: a hub with quick opponents, the one test client of the
application (Starlette's) and its one way to send a message, the application served by uvicorn on
a free port, a player that answers every choice (the benchmark's), and the cards a message
names."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from piquet_cli.web_speed import answer
from piquet_env.cards import parse_card
from piquet_env.rules import STANDARD, Rules
from piquet_table.web.hub import Hub
from piquet_table.web.limits import Limits
from piquet_table.web.opponents import Choice

QUICK = {
    "random": Choice("random", "Random", "random"),
    "heuristic": Choice("heuristic", "Heuristic", "heuristic"),
}
"""Opponents that answer at once (the tests need no search or torch)."""


UNLIMITED_RATES = {"rate": 1e9, "burst": 10**9, "client_rate": 1e9, "client_burst": 10**9}
"""Message rates no test client reaches (the tests play far faster than a person); the tests of
the rate limits set their own."""


def make_hub(records: Path, rules: Rules = STANDARD, seed: int = 1, **limits: float) -> Hub:
    """A hub offering :data:`QUICK` (random first), saving into ``records``; its message rates
    are unlimited unless given (:data:`UNLIMITED_RATES`)."""
    limits = {**UNLIMITED_RATES, **limits}
    return Hub(rules, dict(QUICK), records, seed=seed, limits=Limits(**limits))


def client(tmp_path: Path, **limits: float) -> tuple[Hub, object]:
    """A hub over ``tmp_path/records`` (:func:`make_hub`) and Starlette's test client of the
    application on it (the test extra's httpx: imported here, not by the helpers' users)."""
    from starlette.testclient import TestClient

    from piquet_table.web.app import create_app

    hub = make_hub(tmp_path / "records", **limits)
    return hub, TestClient(create_app(hub, allowed_hosts=["testserver"]))


def send(ws: object, msg: dict) -> dict:
    """Send ``msg`` on the test client's socket ``ws`` and return the next message."""
    ws.send_text(json.dumps(msg))  # type: ignore[attr-defined]
    return ws.receive_json()  # type: ignore[attr-defined]


@contextlib.contextmanager
def serving(app: object, limits: Limits | None = None, **config: object) -> Iterator[int]:
    """``app`` served by uvicorn on a free port of 127.0.0.1, in a thread, under ``limits``'
    connections and read timeouts; yields the port. uvicorn's own logging goes to the root logger
    (``log_config=None``), where pytest sees it."""
    import uvicorn

    from piquet_table.web.server import uvicorn_options

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    options = {"host": "127.0.0.1", "port": port, **uvicorn_options(limits), "log_config": None}
    srv = uvicorn.Server(uvicorn.Config(app, **{**options, **config}))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield port
    finally:
        srv.should_exit = True
        thread.join(10)


_CODE = re.compile(r"\b(?:[789TJQKA][CDHS]|JK)\b")
_SYMBOL = re.compile(r"(?:10|[789JQKA])[♣♦♥♠]")


def cards_named(message: dict, skip_cut: bool = True) -> set[int]:
    """Every card a message names, as a code (``"QH"``) or as shown (``"Q♥"``, ``"10♠"``); the
    cut's sentence (its two cards come from the whole pack, before the deal) is left out."""
    text = json.dumps(message, ensure_ascii=False)
    if skip_cut:
        text = re.sub(r"Cut for deal:[^\"]*", "", text)
    named = {parse_card(c) for c in _CODE.findall(text)}
    named |= {
        parse_card(c.replace("♣", "C").replace("♦", "D").replace("♥", "H").replace("♠", "S"))
        for c in _SYMBOL.findall(text)
    }
    return named


__all__ = ["QUICK", "answer", "cards_named", "make_hub", "serving"]
