"""How uvicorn serves the application: its options in one place (``piquet serve``, the tests).

uvicorn's WebSocket protocol, once the server has closed a socket (one past its message rate),
reads on for the client's closing reply, up to 10 s, parsing and dropping every frame: a flood
that never reads keeps it parsing all that time. :class:`QuickCloseProtocol` waits
:data:`CLOSE_TIMEOUT` seconds instead. Frames past :data:`WS_MAX_BYTES` close the socket
(the page's messages are refused, with the reason, past 2,048 characters).

A connection that holds a file of the server's without finishing its request is dropped
(:class:`GuardedH11Protocol`, uvicorn's HTTP/1.1 protocol):

- a request's head (its line and headers) must arrive within
  :attr:`~piquet_table.web.limits.Limits.header_timeout` seconds of its first byte (or of the
  connection, for the first);
- a request's body may pause at most :attr:`~piquet_table.web.limits.Limits.body_timeout`
  seconds between two reads, must arrive whole within
  :attr:`~piquet_table.web.limits.Limits.body_deadline` seconds of its start, and must average
  :attr:`~piquet_table.web.limits.Limits.body_min_rate` bytes a second once it has run
  ``body_timeout`` seconds (a body trickled a byte every few seconds is dropped);
- an idle connection between requests is closed after
  :attr:`~piquet_table.web.limits.Limits.keep_alive` seconds (uvicorn's ``timeout_keep_alive``);
- a connection answered before its request's body was read (a refusal: too big, too many tries,
  no token) is closed, rather than read to the end of its body as uvicorn would, to keep it.

And one client address holds at most :attr:`~piquet_table.web.limits.Limits.max_connections`
connections at once, HTTP and WebSocket together, one address group (an IPv4 /24, an IPv6 /64)
at most :attr:`~piquet_table.web.limits.Limits.max_group_connections` and all together at most
:attr:`~piquet_table.web.limits.Limits.max_total_connections`, never more than half the file
limit (a :class:`Guard` per server): past a count a new connection is dropped as soon as it is
accepted, so neither an address nor a network of them can take every file the server may open,
and other addresses are served on.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from piquet_table.web.limits import Limits

CLOSE_TIMEOUT = 1.0
"""Seconds a socket the server closed may take to answer before its connection is dropped."""

WS_MAX_BYTES = 64 * 1024
"""Largest WebSocket frame the server reads at all."""

LINGER = 1.0
"""Seconds a connection answered before its body was read stays open, unread, before it is
closed."""


def address_group(host: str) -> str:
    """The network an address belongs to for the connection caps: its IPv4 /24 or IPv6 /64
    (an IPv4 address mapped into IPv6 as IPv4); anything else (a Unix socket) is its own.

    >>> address_group("127.0.0.7"), address_group("2001:db8::1")
    ('127.0.0.0/24', '2001:db8::/64')
    """
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def file_limit() -> int | None:
    """The server's soft limit on open files (``RLIMIT_NOFILE``), or ``None`` where there is
    none to read."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


class Guard:
    """The connections open at once: at most :attr:`per_address` from one client address,
    :attr:`per_group` from one address group (:func:`address_group`) and :attr:`total` in all,
    the total never more than half the file limit and a group's never more than half the total
    (``limits``' ``max_connections``, ``max_group_connections`` and ``max_total_connections``,
    lowered so)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        files = file_limit()
        total = limits.max_total_connections
        self.total = max(2, min(total, files // 2) if files else total)
        self.per_group = max(1, min(limits.max_group_connections, self.total // 2))
        self.per_address = min(limits.max_connections, self.per_group)
        self._open: dict[str, set[asyncio.BaseTransport]] = {}
        self._groups: dict[str, int] = {}
        self._count = 0
        self.refused = 0
        """Connections dropped for a count."""

    def admit(self, transport: asyncio.BaseTransport) -> bool:
        """Count ``transport``'s connection against its address, its group and the total;
        ``False`` if one of them is at its most already (the connection is then to be
        dropped)."""
        host = _host(transport)
        held = self._open.setdefault(host, set())
        if transport in held:  # an HTTP connection upgraded to a WebSocket
            return True
        group = address_group(host)
        if (
            len(held) >= self.per_address
            or self._groups.get(group, 0) >= self.per_group
            or self._count >= self.total
        ):
            if not held:
                del self._open[host]
            self.refused += 1
            return False
        held.add(transport)
        self._groups[group] = self._groups.get(group, 0) + 1
        self._count += 1
        return True

    def release(self, transport: asyncio.BaseTransport) -> None:
        """``transport``'s connection has closed."""
        host = _host(transport)
        held = self._open.get(host)
        if held is None or transport not in held:
            return
        held.discard(transport)
        if not held:
            del self._open[host]
        group = address_group(host)
        self._groups[group] -= 1
        if not self._groups[group]:
            del self._groups[group]
        self._count -= 1


def _host(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    return peer[0] if isinstance(peer, tuple) else str(peer)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the read timeouts and the address's count of the
    module's docstring (:attr:`guard` is set on a subclass made for each server)."""

    guard: Guard

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection (drop it past its address's most); its first request's head
        is due within the header timeout."""
        super().connection_made(transport)
        self._timer: asyncio.TimerHandle | None = None
        self._timing: str | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._body_start: float | None = None
        self._body_bytes = 0
        if not self.guard.admit(transport):
            transport.abort()
            return
        self._arm("head", self.guard.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the timers and uncount the connection."""
        self._disarm()
        self._end_body()
        self.guard.release(self.transport)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Read, then time what the client still owes: the rest of a head, or of a body."""
        super().data_received(data)
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            self._disarm()  # closed, or upgraded to a WebSocket
            return
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self._body_start is None:  # the body begins: its whole is due by the deadline
                self._body_start, self._body_bytes = time.monotonic(), 0
                self._deadline = self.loop.call_later(
                    self.guard.limits.body_deadline, self._too_slow
                )
            self._body_bytes += len(data)
            if self._below_rate():
                self._too_slow()
                return
            self._arm("body", self.guard.limits.body_timeout)  # again at every read
        elif state is h11.IDLE:
            self._end_body()
            if self._timing != "head":  # a head begun: due within the timeout of its first byte
                self._arm("head", self.guard.limits.header_timeout)
        else:
            self._end_body()
            self._disarm()

    def _below_rate(self) -> bool:
        """Whether the body under way, past its first ``body_timeout`` seconds, has averaged
        less than ``body_min_rate`` bytes a second (the app holding its reading back aside)."""
        if self._body_start is None or self.flow.read_paused:
            return False
        spent = time.monotonic() - self._body_start
        limits = self.guard.limits
        return spent > limits.body_timeout and self._body_bytes < limits.body_min_rate * spent

    def _too_slow(self) -> None:
        """The body under way is past its deadline or below its rate: drop the connection."""
        self._end_body()
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()

    def _end_body(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._body_start = None, None

    def on_response_complete(self) -> None:
        """The answer is sent: a body still coming is not read. The connection stops reading,
        says it has nothing more to send, and is closed :data:`LINGER` seconds later (a client
        still sending then reads the answer before the reset that closing with unread data
        makes)."""
        super().on_response_complete()
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            self._disarm()
            self.flow.pause_reading()
            if self.transport.can_write_eof():
                try:
                    self.transport.write_eof()
                except OSError:  # the client is gone already
                    self.transport.abort()
                    return
            self.loop.call_later(LINGER, self.transport.close)

    def _arm(self, kind: str, seconds: float) -> None:
        self._disarm()
        self._timing = kind
        self._timer = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timing = None, None

    def _expired(self) -> None:
        self._timer = None
        if self._timing == "body" and self.flow.read_paused:  # the app is slow, not the client
            self._arm("body", self.guard.limits.body_timeout)
            return
        self._timing = None
        if not self.transport.is_closing():
            self.transport.close()


class QuickCloseProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol (websockets' sans-I/O), dropping a closed socket's connection
    after :data:`CLOSE_TIMEOUT` seconds rather than 10, and counting its connection against its
    address (:attr:`guard`, set on a subclass made for each server; ``None``: not counted)."""

    guard: Guard | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.close_timeout = CLOSE_TIMEOUT

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Count the connection (already counted when it came as HTTP)."""
        super().connection_made(transport)
        if self.guard is not None and not self.guard.admit(transport):
            transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        """Uncount the connection."""
        if self.guard is not None:
            self.guard.release(self.transport)
        super().connection_lost(exc)


def uvicorn_options(limits: Limits | None = None) -> dict[str, Any]:
    """The options :func:`uvicorn.run` (or :class:`uvicorn.Config`) serves the application
    with, besides the host and the port: ``limits``' read timeouts and connections per address
    (by default :class:`~piquet_table.web.limits.Limits`'), counted for this server alone."""
    guard = Guard(limits or Limits())
    http = type("ServerH11Protocol", (GuardedH11Protocol,), {"guard": guard})
    ws = type("ServerWebSocketProtocol", (QuickCloseProtocol,), {"guard": guard})
    return {
        "http": http,
        "ws": ws,
        "ws_max_size": WS_MAX_BYTES,
        "timeout_keep_alive": guard.limits.keep_alive,
        "log_level": "warning",
    }


def run(app: Any, host: str, port: int, limits: Limits | None = None) -> None:
    """Serve ``app`` on ``host``:``port`` until interrupted (uvicorn, :func:`uvicorn_options`)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, **uvicorn_options(limits))
