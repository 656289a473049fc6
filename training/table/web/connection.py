"""The server's sockets: which are let in, how fast they may send, and one log line for each.

:class:`Gate` holds the message rates of :class:`~piquet_table.web.limits.Limits`: a token bucket
per socket and one per client address over all its sockets, a new socket taking a token of its
address's (:mod:`piquet_table.web.ratelimit`). A socket past either gets one error, code
``rate``, and is closed; a new socket from an address with no token left is refused.

A browser may go at any moment: its tab closes, its network drops, a script aborts without reading
what it was sent. :meth:`Connection.send` is how everything reaches the socket: once the socket is
gone (or has not read its messages for :data:`SEND_TIMEOUT` seconds) further messages are dropped
and counted, never raised to the table or the client that sent them, and never written to a dead
transport. When the connection ends, :meth:`Connection.log` writes one line (logger
``piquet_table.web``, level INFO): who, for how long, how many messages each way, how many
errors, and who closed it (``the client`` for its own disconnect, which is no error).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from starlette.websockets import WebSocket, WebSocketDisconnect

from piquet_table.web.limits import Limits
from piquet_table.web.ratelimit import Buckets, TokenBucket

LOG = logging.getLogger("piquet_table.web")
"""The server's own log: one line per closed connection (see :meth:`Connection.log`)."""

SEND_TIMEOUT = 20.0
"""Seconds a message may wait for a client that reads nothing before its connection is dropped."""


class Gate:
    """The message rates of one server (``limits``): who may open a socket and send a message."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._clients = Buckets(limits.client_rate, limits.client_burst)
        self._refusals_logged = Buckets(1 / 20, 3)

    def admit(self, owner: str, peer: str) -> bool:
        """Whether the client at ``owner`` may open another socket (it takes one of its tokens);
        a refusal is logged, a few a minute at most per address."""
        if self._clients.take(owner):
            return True
        if self._refusals_logged.take(owner):
            LOG.info("%s: connection refused: too many messages and sockets from %s", peer, owner)
        return False

    def bucket(self) -> TokenBucket:
        """A new socket's own bucket."""
        return TokenBucket(self.limits.rate, self.limits.burst)

    def allow(self, owner: str, bucket: TokenBucket) -> bool:
        """Whether a socket (its ``bucket``) of ``owner`` may send one more message."""
        return bucket.take() and self._clients.take(owner)

    def too_many(self) -> dict:
        """The one error a socket gets past its rate, before it is closed."""
        lim = self.limits
        return {
            "type": "error",
            "code": "rate",
            "message": f"too many messages: a socket may send {lim.rate:g} a second "
            f"({lim.burst} at once), an address {lim.client_rate:g} ({lim.client_burst} at once); "
            "this connection is closed",
        }


class Connection:
    """An accepted WebSocket of the client at ``peer`` (``host:port``)."""

    def __init__(self, ws: WebSocket, peer: str) -> None:
        self.ws = ws
        self.peer = peer
        self.open = True
        """False once the socket is gone or closed: sends are dropped from then on."""
        self.closed_by = "the client"
        """Who ended the connection, for the log line."""
        self.received = 0
        self.errors = 0
        self.sent = 0
        self.dropped = 0
        self._started = time.monotonic()
        self._lock = asyncio.Lock()

    async def send(self, message: dict) -> None:
        """Send ``message`` (a JSON-ready dict), or drop it if the socket is gone; never raises."""
        async with self._lock:
            await asyncio.sleep(0)  # let the event loop notice a connection lost meanwhile
            if not self.open:
                self.dropped += 1
                return
            try:
                await asyncio.wait_for(self.ws.send_json(message), SEND_TIMEOUT)
            except TimeoutError:
                self.dropped += 1
                await self.close(1008, "the client reads nothing", by="the server (not read)")
            except (WebSocketDisconnect, RuntimeError, OSError):
                self.dropped += 1
                self.open = False
                self.closed_by = "the client (lost)"
            else:
                self.sent += 1
                self.errors += message.get("type") == "error"

    async def close(self, code: int, reason: str, by: str) -> None:
        """Close the socket from the server's side (``by`` says why, in the log line)."""
        if not self.open:
            return
        self.open = False
        self.closed_by = by
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            await self.ws.close(code=code, reason=reason)

    def log(self) -> None:
        """Write the connection's one line to :data:`LOG`."""
        LOG.info(
            "%s: connection closed by %s after %.1f s; messages received %d, sent %d "
            "(errors %d), dropped %d",
            self.peer,
            self.closed_by,
            time.monotonic() - self._started,
            self.received,
            self.sent,
            self.errors,
            self.dropped,
        )
