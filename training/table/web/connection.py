"""The server's sockets: which are let in, how fast they may send, and one log line for each.

:class:`Gate` holds the message rates of :class:`~piquet_table.web.limits.Limits`: a token bucket
per socket and one per client address over all its sockets, a new socket taking a token of its
address's (:mod:`piquet_table.web.ratelimit`). A socket past either gets one error, code
``rate``, and is closed, and its address may open no socket for
:attr:`~piquet_table.web.limits.Limits.cooldown` seconds; a new socket from an address with no
token left, or with :attr:`~piquet_table.web.limits.Limits.max_sockets` open, is refused.

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
import errno
import logging
import time
from collections import Counter
from collections.abc import Callable

from starlette.websockets import WebSocket, WebSocketDisconnect

from piquet_table.web.limits import Limits
from piquet_table.web.ratelimit import Buckets, TokenBucket

LOG = logging.getLogger("piquet_table.web")
"""The server's own log: one line per closed connection (see :meth:`Connection.log`)."""

REFUSAL_DELAY = 1.0
"""Seconds a refused socket waits to be told (see :meth:`Gate.hold_off`)."""

SEND_TIMEOUT = 10.0
"""Seconds a message may wait for a client that reads nothing before its connection is dropped."""


OUT_OF_FILES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
"""Errors of ``accept()`` that mean the server holds all the files it may: asyncio waits a second
and accepts again."""

OUT_OF_FILES_EVERY = 10.0
"""Seconds between two log lines saying the server ran out of files."""


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``loop`` log the server's running out of files (an ``accept()`` refused for
    :data:`OUT_OF_FILES`) in one line every :data:`OUT_OF_FILES_EVERY` seconds at most, with
    the count, rather than a traceback for every connection it could not accept (asyncio tries
    hundreds at once); other errors go to the handler there was."""
    previous = loop.get_exception_handler()
    last, count = -OUT_OF_FILES_EVERY, 0

    def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        nonlocal last, count
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in OUT_OF_FILES:
            count += 1
            now = time.monotonic()
            if now - last >= OUT_OF_FILES_EVERY:
                LOG.warning(
                    "out of files (%s): %d connections waited to be accepted", exc.strerror, count
                )
                last, count = now, 0
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


class Gate:
    """The message rates of one server (``limits``): who may open a socket and send a message."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._clients = Buckets(limits.client_rate, limits.client_burst, clock)
        self._refusals_logged = Buckets(1 / 20, 3, clock)
        self._open: Counter[str] = Counter()
        self._waiting: Counter[str] = Counter()
        self._cooling: dict[str, float] = {}
        """Addresses refused new sockets, until when (one of their sockets went past its rate)."""

    def admit(self, owner: str, peer: str) -> str | None:
        """``None`` if the client at ``owner`` may open another socket (it takes one of its
        tokens; :meth:`release` gives the socket back), else why not (logged, a few lines a
        minute at most per address)."""
        now = self._clock()
        if self._cooling.get(owner, now) > now:
            why = (
                f"a socket of this address sent too many messages: wait {self.limits.cooldown:g} s"
            )
        elif self._open[owner] >= self.limits.max_sockets:
            why = f"this address has {self.limits.max_sockets} sockets open, the most it may"
        elif not self._clients.take(owner):
            why = "too many messages and new sockets from this address"
        else:
            self._open[owner] += 1
            return None
        if self._refusals_logged.take(owner):
            LOG.info("%s: connection refused: %s", peer, why)
        return why

    async def hold_off(self, owner: str) -> None:
        """Wait :data:`REFUSAL_DELAY` before a refused socket is told (so a script reconnecting
        in a loop is slowed rather than served at once); at most ``max_sockets`` wait at a time
        per address, the others are told at once."""
        if self._waiting[owner] >= self.limits.max_sockets:
            return
        self._waiting[owner] += 1
        try:
            await asyncio.sleep(REFUSAL_DELAY)
        finally:
            self._waiting[owner] -= 1
            if self._waiting[owner] <= 0:
                del self._waiting[owner]

    def release(self, owner: str) -> None:
        """A socket :meth:`admit` let in has closed."""
        self._open[owner] -= 1
        if self._open[owner] <= 0:
            del self._open[owner]

    def cut(self, owner: str) -> None:
        """One of ``owner``'s sockets went past its rate: it may open none for a while."""
        now = self._clock()
        if len(self._cooling) > 10_000:
            self._cooling = {k: t for k, t in self._cooling.items() if t > now}
        self._cooling[owner] = now + self.limits.cooldown

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

    async def send(self, message: dict, timeout: float = SEND_TIMEOUT) -> None:
        """Send ``message`` (a JSON-ready dict), or drop it if the socket is gone or reads
        nothing for ``timeout`` seconds (then it is closed); never raises."""
        async with self._lock:
            await asyncio.sleep(0)  # let the event loop notice a connection lost meanwhile
            if not self.open:
                self.dropped += 1
                return
            try:
                await asyncio.wait_for(self.ws.send_json(message), timeout)
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
