"""``piquet serve``: the Piquet table in the browser (see :mod:`piquet_table.web`).

Starts an ASGI server (uvicorn, Starlette) serving one page where a person plays a partie against
an agent chosen there, watches two agents, replays saved records and reads people's results
against each agent. Every game is saved in ``--records DIR`` (checked before the server starts),
as ``piquet play`` saves it; Ctrl-C stops the server and saves the games still open.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import math
import os
import re
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from piquet_cli.common import (
    CLIError,
    add_rules_arguments,
    add_seed_argument,
    check_output_path,
    cli_error,
    require,
    resolve_seed,
    rules_from_args,
    seed_text,
)

if TYPE_CHECKING:
    from piquet_table.web.limits import Limits

HOST_NAME = re.compile(r"(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|[0-9A-Fa-f:.]{2,45}")
"""What ``--allowed-host`` takes: a host name or address, or ``*.domain`` for its subdomains."""

BURST = 3.0
"""Seconds of ``--rate`` (and ``--client-rate``) a client may send at once."""


def _one_torch_thread() -> None:
    """With ``--workers 0`` agents think in threads of the server, many tables at once: a batch-1
    policy gains nothing from more than one torch thread each, and threads oversubscribing the
    cores slow every table (the worker processes do the same for themselves)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


WILDCARD = ("0.0.0.0", "::", "")
"""``--host`` values that listen on every interface."""


def _loopback(host: str) -> bool:
    """Whether ``host`` is this machine's loopback only (nobody else reaches it)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def reachable(host: str) -> list[str]:
    """The names and addresses people may reach a server listening on ``host`` by: ``host``
    itself, or for every interface (:data:`WILDCARD`) this machine's name and addresses (they are
    the host names the server answers to, with ``--allowed-host``)."""
    if host not in WILDCARD:
        return [host]
    found = ["127.0.0.1", socket.gethostname(), socket.getfqdn()]
    with contextlib.suppress(OSError):
        found += [a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)]
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # the address a route out would use (nothing is sent)
        found.append(s.getsockname()[0])
    return [n for n in dict.fromkeys(found) if n and not n.startswith("fe80:")]


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def _log_to_stderr() -> None:
    """The server's own log (one line per closed connection, see
    :mod:`piquet_table.web.connection`) on stderr, with the time; uvicorn logs warnings only."""
    import logging

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s piquet serve: %(message)s"))
    log = logging.getLogger("piquet_table.web")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


LIMIT_FLAGS = {
    "max_tables": "--max-tables",
    "max_per_client": "--per-client",
    "max_connections": "--connections-per-client",
    "max_total_connections": "--max-connections",
    "rate": "--rate",
    "client_rate": "--client-rate",
    "max_records": "--max-records",
    "max_record_mib": "--max-record-mib",
    "records_per_hour": "--records-per-hour",
}
"""The flag that sets each field of :class:`~piquet_table.web.limits.Limits` from the command
line."""


def _limits(args: argparse.Namespace) -> Limits:
    """The server's limits from its flags; a value the limits refuse is a :class:`CLIError`
    naming its flag."""
    from piquet_table.web.limits import LimitError, Limits

    given = {
        field: getattr(args, flag[2:].replace("-", "_")) for field, flag in LIMIT_FLAGS.items()
    }
    try:
        return Limits(
            **given,
            burst=_burst(args.rate),
            client_burst=_burst(args.client_rate),
        )
    except LimitError as err:
        raise CLIError(f"{LIMIT_FLAGS.get(err.field, err.field)} {err.rule}") from None


def _burst(rate: float) -> int:
    """Messages sent at once for ``rate`` a second (:data:`BURST` seconds' worth); a rate the
    limits refuse is left for them to name."""
    return max(1, round(BURST * rate)) if math.isfinite(rate) and rate > 0 else 1


def _check_flags(args: argparse.Namespace) -> None:
    """The flags that are the command line's own: the port, the host names, the workers."""
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be 0 to 65535, got {args.port}")
    if args.workers == 1 or args.workers < 0:
        raise CLIError(f"--workers must be 0 (threads) or at least 2, got {args.workers}")
    for name in args.allowed_host:
        if not HOST_NAME.fullmatch(name):
            raise CLIError(
                f"--allowed-host {name[:60]!r}: not a host name, an address or '*.domain'"
            )


def _folders(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The records folder (checked, not yet made) and the checkpoints folder, if given."""
    records = check_output_path(args.records, "--records", directory=True)
    checkpoints = None
    if args.checkpoints is not None:
        checkpoints = Path(args.checkpoints)
        if not checkpoints.is_dir():
            raise CLIError(f"--checkpoints {checkpoints}: not a directory")
    return records, checkpoints


def _secret(args: argparse.Namespace) -> bytes | None:
    """The cookie secret kept in ``--cookie-secret-file`` (made there if missing), or ``None``
    for a fresh one each start."""
    if args.cookie_secret_file is None:
        return None
    from piquet_table.web.token import cookie_secret

    try:
        return cookie_secret(args.cookie_secret_file)
    except (ValueError, OSError) as err:
        raise CLIError(f"--cookie-secret-file: {err}") from None


def _banner(
    args: argparse.Namespace,
    rules_name: str,
    names: list[str],
    token: str | None,
    choices: list[str],
    skipped: list[str],
    records: Path,
    seed: int,
) -> None:
    """What ``piquet serve`` prints as it starts: where to go, the token, the opponents, the
    records folder and seed; and a warning on stderr when others can reach it."""
    first = "127.0.0.1" if args.host in WILDCARD else args.host
    print(f"Piquet, {rules_name} rules: {_url(first, args.port)}  (Ctrl-C stops)")
    others = [_url(n, args.port) for n in names if n != first]
    if others:
        print(f"  also at {', '.join(others)}")
    if token is not None:
        print(f"  token: {token} (the page asks for it once)")
    print(f"  opponents: {', '.join(choices)}")
    for line in skipped:
        print(f"  left out {line}")
    print(
        f"  games are saved in {records}; {seed_text(seed)}",
        flush=True,
    )
    if not _loopback(args.host):
        where = "every interface" if args.host in WILDCARD else args.host
        print(
            f"piquet serve: warning: listening on {where}: anyone who can reach this machine "
            "can open tables and read, and upload, every record; "
            + (
                "they need the token"
                if token is not None
                else "give --token to make the page ask for a shared secret"
            ),
            file=sys.stderr,
        )


def _serve(args: argparse.Namespace) -> int:
    from piquet_table.web import WEB_EXTRA

    require(WEB_EXTRA, "web")
    rules = rules_from_args(args)
    seed = resolve_seed(args)
    _check_flags(args)
    limits = _limits(args)
    records, checkpoints = _folders(args)
    try:
        from piquet_table.text import printable
        from piquet_table.web.app import create_app
        from piquet_table.web.hub import Hub
        from piquet_table.web.moves import MovePool
        from piquet_table.web.opponents import opponent_choices
        from piquet_table.web.server import run
        from piquet_table.web.token import new_token
    except ImportError as err:
        raise cli_error(err) from None
    try:
        choices, skipped = opponent_choices(rules, args.opponent, checkpoints)
    except ValueError as err:
        raise CLIError(f"--opponent: {err}") from None
    secret = _secret(args)
    _one_torch_thread()
    records.mkdir(parents=True, exist_ok=True)
    hub = Hub(rules, choices, records, seed=seed, limits=limits, moves=MovePool(args.workers))
    token = (args.token or new_token()) if args.token is not None else None
    names = reachable(args.host)
    shown = [printable(c) for c in choices]
    _banner(args, rules.name, names, token, shown, skipped, records, seed)
    _log_to_stderr()
    app = create_app(
        hub, allowed_hosts=[*names, *args.allowed_host], token=token, cookie_secret=secret
    )
    run(app, args.host, args.port, limits)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet serve``."""
    from piquet_table.web.limits import Limits

    p = sub.add_parser(
        "serve",
        help="play, watch and replay in the browser",
        description="Serve the Piquet table as a web page: play a partie against an agent "
        "chosen on the page, watch two agents, replay saved records and see people's results. "
        "Needs the web extra: pip install -e '.[web]'.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    p.add_argument(
        "--token",
        nargs="?",
        const="",
        metavar="TOKEN",
        help="a shared secret the page asks for once (its cookie then lasts 30 days); --token "
        "alone makes a random one, printed at start (a TOKEN given here is seen in ps)",
    )
    p.add_argument(
        "--cookie-secret-file",
        metavar="FILE",
        help="keep the secret the token's cookies are signed with in FILE (made, readable by you "
        "only, if missing), so cookies outlive a restart; by default each start makes a new one, "
        "and a restart asks every page for the token again",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the page may be reached by, besides 127.0.0.1, localhost and the "
        "--host address (repeatable; '*.example.org' allows its subdomains); requests naming "
        "any other host are refused (DNS rebinding)",
    )
    add_rules_arguments(p)
    add_seed_argument(p, "every table's cards and agents")
    p.add_argument(
        "--opponent",
        default="baseline",
        metavar="SPEC",
        help="the page's default opponent: random, heuristic, mcts:N, baseline or a checkpoint "
        "path (default: baseline)",
    )
    p.add_argument(
        "--records",
        default="piquet-records",
        metavar="DIR",
        help="folder where finished and abandoned games are saved, and replayed from "
        "(default: piquet-records)",
    )
    p.add_argument(
        "--checkpoints",
        metavar="DIR",
        help="folder of policy checkpoints (and run directories) the page may choose from",
    )
    p.add_argument(
        "--max-tables",
        type=int,
        default=64,
        metavar="N",
        help="tables open at once, all browsers together (default: 64)",
    )
    p.add_argument(
        "--per-client",
        type=int,
        default=8,
        metavar="N",
        help="tables open at once from one address (default: 8)",
    )
    p.add_argument(
        "--connections-per-client",
        type=int,
        default=Limits.max_connections,
        metavar="N",
        help="connections one address may hold open, HTTP and WebSocket together; past it a new "
        f"one is dropped (default: {Limits.max_connections})",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=Limits.max_total_connections,
        metavar="N",
        help="connections open at once, all addresses together, never more than half the file "
        f"limit (ulimit -n); one address group (a /24, a /64) at most half of them (default: "
        f"{Limits.max_total_connections})",
    )
    p.add_argument(
        "--max-records",
        type=int,
        default=Limits.max_records,
        metavar="N",
        help="records of the server's kept in --records: past it, or past --max-record-mib, the "
        f"oldest unfinished go first, then the oldest (default: {Limits.max_records})",
    )
    p.add_argument(
        "--max-record-mib",
        type=float,
        default=Limits.max_record_mib,
        metavar="MIB",
        help=f"MiB of the server's records kept in --records (default: {Limits.max_record_mib:g})",
    )
    p.add_argument(
        "--records-per-hour",
        type=float,
        default=Limits.records_per_hour,
        metavar="N",
        help="records one address may have saved an hour; past it its games are played but not "
        f"saved (default: {Limits.records_per_hour:g})",
    )
    p.add_argument(
        "--rate",
        type=float,
        default=Limits.rate,
        metavar="N",
        help=f"messages a second one socket may send, {BURST:g} seconds' worth at once; past it "
        f"the socket gets one error and is closed (default: {Limits.rate:g})",
    )
    p.add_argument(
        "--client-rate",
        type=float,
        default=Limits.client_rate,
        metavar="N",
        help="messages a second one address may send over all its sockets, a new socket "
        f"counting as one (default: {Limits.client_rate:g})",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=max(2, os.cpu_count() or 2),
        metavar="N",
        help="processes that play the agents' moves: one for the quick agents, the others (at a "
        "lower priority) for the searches; 0 plays them in threads of the server (default: the "
        "number of cores, at least 2)",
    )
    p.set_defaults(func=_serve)
