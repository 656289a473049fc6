"""What browsers may hold open, send and save: the server's limits, one frozen value.

Read by the hub (tables open), the sockets' gate (message rates,
:mod:`piquet_table.web.connection`), the records store (:mod:`piquet_table.web.records`), the
HTTP protocol (connections and read timeouts, :mod:`piquet_table.web.server`) and ``piquet
serve``'s flags, whose defaults are these. Importing it loads nothing else, so the
command line can show the defaults without the web extra.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    header_timeout: float = 10.0
    """Seconds a request's head (its line and headers) may take to arrive."""
    body_timeout: float = 10.0
    """Seconds a request's body may pause between two reads."""
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
