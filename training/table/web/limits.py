"""What browsers may hold open, send and save: the server's limits, one frozen value.

Read by the hub (tables open), the sockets' gate (message rates,
:mod:`piquet_table.web.connection`), the records store (:mod:`piquet_table.web.records`), the
HTTP protocol (connections and read timeouts, :mod:`piquet_table.web.server`) and ``piquet
serve``'s flags, whose defaults are these. Importing it loads nothing else, so the
command line can show the defaults without the web extra.

A value out of range is refused when the limits are made (:class:`LimitError`, naming the field):

>>> Limits(max_tables=0)
Traceback (most recent call last):
...
piquet_table.web.limits.LimitError: max_tables must be at least 1, got 0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

COUNTS = (
    "max_tables",
    "max_per_client",
    "burst",
    "client_burst",
    "max_sockets",
    "max_connections",
    "max_group_connections",
    "max_total_connections",
    "max_uploads",
    "max_uploads_per_client",
    "max_records",
)
"""The fields that count something: whole numbers, at least 1."""

RATES = ("rate", "client_rate")
"""The fields that are messages a second: positive."""

DELAYS = ("reconnect_grace", "watch_delay", "cooldown")
"""The fields in seconds that may be 0."""


class LimitError(ValueError):
    """A limit out of its range: :attr:`field` names it, :attr:`rule` says what it must be (and
    what it was), so a command line can name its own flag."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field} {rule}")
        self.field = field
        self.rule = rule


@dataclass(frozen=True)
class Limits:
    """Bounds on what browsers may hold open."""

    max_tables: int = 64
    """Tables open at once, all browsers together."""
    max_per_client: int = 8
    """Tables open at once from one client address."""
    reconnect_grace: float = 120.0
    """Seconds a table waits for its browser to come back before it is saved and closed."""
    watch_delay: float = 0.8
    """Default seconds between two moves of a watched game."""
    rate: float = 20.0
    """Messages a second one socket may send, on average (:mod:`piquet_table.web.ratelimit`)."""
    burst: int = 60
    """Messages one socket may send at once."""
    client_rate: float = 60.0
    """Messages a second one client address may send over all its sockets (a new socket counts as
    one)."""
    client_burst: int = 180
    """Messages (and new sockets) one client address may send at once."""
    max_sockets: int = 32
    """Sockets open at once from one client address."""
    max_connections: int = 64
    """Connections open at once from one client address, HTTP and WebSocket together
    (:mod:`piquet_table.web.server`): past it a new one is dropped when accepted."""
    max_group_connections: int = 128
    """Connections open at once from one address group (an IPv4 /24, an IPv6 /64), so that
    many addresses of one network cannot hold every file either (at most half the total)."""
    max_total_connections: int = 1024
    """Connections open at once, all addresses together; never more than half the server's file
    limit (``RLIMIT_NOFILE``), so that the server always has files left for its own work."""
    max_uploads: int = 4
    """Record uploads (``POST /api/replay``) read and replayed at once, all addresses together:
    one more is answered 503, unread."""
    max_uploads_per_client: int = 1
    """Record uploads read and replayed at once from one client address."""
    header_timeout: float = 10.0
    """Seconds a request's head (its line and headers) may take to arrive."""
    body_timeout: float = 10.0
    """Seconds a request's body may pause between two reads."""
    body_deadline: float = 120.0
    """Seconds a request's whole body may take from its start (a 4 MiB upload at 35 KB/s)."""
    body_min_rate: float = 1024.0
    """Bytes a second a request's body must average from its start, once it has run
    :attr:`body_timeout` seconds: a body trickled a byte at a time is dropped then."""
    keep_alive: float = 5.0
    """Seconds an HTTP connection may stay idle between requests."""
    cooldown: float = 10.0
    """Seconds an address may open no socket after one of its sockets was closed for its rate."""
    max_records: int = 2000
    """Records of the server's kept in the records folder (the oldest unfinished go first)."""
    max_record_mib: float = 64.0
    """MiB of the server's records kept in the records folder."""
    records_per_hour: float = 120.0
    """Records one client address may have saved an hour."""

    def __post_init__(self) -> None:
        """Refuse a value out of its range (:class:`LimitError`, naming the field): counts are
        whole numbers of at least 1, rates and the other amounts positive finite numbers, and
        delays finite and not negative."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in COUNTS:
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise LimitError(f.name, f"must be at least 1, got {value}")
            elif isinstance(value, bool) or not isinstance(value, (int, float)):
                raise LimitError(f.name, f"must be a number, got {value!r}")
            elif f.name in RATES:
                if not (math.isfinite(value) and value > 0):
                    raise LimitError(
                        f.name, f"must be a positive number of messages a second, got {value}"
                    )
            elif f.name in DELAYS:
                if not (math.isfinite(value) and value >= 0):
                    raise LimitError(f.name, f"must be 0 or more seconds, got {value:g}")
            elif not (math.isfinite(value) and value > 0):
                raise LimitError(f.name, f"must be a positive number, got {value:g}")
