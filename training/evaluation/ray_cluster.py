"""Joining Ray: a cluster's address found and knocked on within a deadline, one line on what was
joined, and Ray's own output kept off standard output.

:func:`join_ray` starts a Ray instance here (``"local"``) or joins a running cluster (``"auto"``,
``"ray://HOST:PORT"``). A cluster is first knocked on: a TCP connection to its address (``auto``:
``RAY_ADDRESS`` or the cluster ``ray start`` left on this machine) within :func:`join_timeout`
seconds (:data:`TIMEOUT_ENV`, default :data:`JOIN_TIMEOUT_S`), so a wrong address is one
:class:`ClusterError` within seconds instead of Ray's retries (minutes, or for ever). Ray's wait
for the cluster's control store is bounded by the same deadline; only Ray Client's own handshake
(``ray://`` to a port that answers) keeps Ray's limit of about 30 s.

A ``ray://`` join that the head accepts but whose own Ray Client server (the one process the head
starts for each driver) fails to start or to answer, as it does on a busy head, is tried again
(:data:`CLIENT_SERVER_TRIES` in all) before it is a :class:`ClusterError`.

A cluster with Ray's token authentication (Ray 2.60 turns it on wherever ``~/.ray/auth_token``
exists, and any local ``ray.init()`` writes that file) needs ``RAY_AUTH_MODE=token`` and the
cluster's token here: a join that fails says so (:data:`TOKEN_HINT`).

What Ray prints: its INFO lines are not shown (warnings are), and the messages its raylets send
the driver (a worker that died, with colour codes) go to a log file, with one line on standard
error the first time, so standard output holds only the command's report (:func:`quiet_ray`).
"""

from __future__ import annotations

import logging
import math
import os
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piquet_env.errors import Message, Setting

RAY_INSTALL = "pip install -e '.[ray]'"
"""The command that installs what ``--ray`` needs."""

TIMEOUT_ENV = "PIQUET_RAY_TIMEOUT"
"""The environment variable that sets the deadline to join a cluster, in seconds."""

JOIN_TIMEOUT_S = 10.0
"""The deadline to join a cluster, in seconds, unless :data:`TIMEOUT_ENV` says otherwise."""

TOKEN_HINT = (
    "A cluster with token authentication (Ray turns it on where ~/.ray/auth_token exists) needs "
    "RAY_AUTH_MODE=token and its token here (~/.ray/auth_token, or RAY_AUTH_TOKEN; "
    "ray get-auth-token on the head prints it)"
)
"""What a failed join says about Ray's token authentication."""


CLIENT_SERVER_TRIES = 3
"""How many times a ``ray://`` join is tried when the head could not start this driver's own Ray
Client server: Ray's proxier gives up on it after 30 s, and a busy head takes longer."""

CLIENT_SERVER_FAILURES = (
    "Starting Ray client server failed",
    "Proxy failed to Connect to backend",
    "proxy_manager.start_specific_server",
)
"""What Ray's proxier answers when the server it started for this driver died or did not answer
(its message, or its traceback through ``start_specific_server``: the process it started
vanished while it was being watched, ``psutil.NoSuchProcess``, on a busy head)."""

LOGGER = "piquet_training"
"""The logger of the joins' warnings: the library's one logger, which the ``piquet`` commands
print as their own lines (``piquet eval: ...``)."""


class ClusterError(ConnectionError, ValueError):
    """A Ray cluster that cannot be joined: the message names the address and what to check."""


class RayNotInstalledError(ImportError):
    """A Ray cluster asked for without Ray installed: the message is one line naming the extra
    to install."""


def import_ray() -> Any:
    """The ``ray`` module, or :class:`RayNotInstalledError` saying what to install."""
    try:
        import ray
    except ImportError:
        raise RayNotInstalledError(
            f"a Ray cluster needs Ray, which is not installed: {RAY_INSTALL}"
        ) from None
    return ray


def join_timeout() -> float:
    """The deadline to join a cluster: :data:`TIMEOUT_ENV` if set (a number of seconds above 0,
    else :class:`ClusterError`), otherwise :data:`JOIN_TIMEOUT_S`."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return JOIN_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise ClusterError(f"{TIMEOUT_ENV} must be a number of seconds above 0, got {text!r}")
    return seconds


@dataclass(frozen=True)
class Joined:
    """What :func:`join_ray` joined: the cluster's address, its nodes and CPUs."""

    address: str
    """The cluster's address as Ray resolved it (``HOST:PORT``, or the ``ray://`` address)."""
    nodes: int
    """The nodes alive when it was joined."""
    cpus: float
    """The CPUs of those nodes."""

    def line(self) -> str:
        """One line for the user, before any work.

        >>> Joined("10.0.0.1:6379", 3, 48.0).line()
        'joined the Ray cluster at 10.0.0.1:6379: 3 nodes, 48 CPUs'
        """
        nodes = "1 node" if self.nodes == 1 else f"{self.nodes} nodes"
        return f"joined the Ray cluster at {self.address}: {nodes}, {self.cpus:g} CPUs"


def _endpoint(address: str) -> tuple[str, int]:
    """The host and port to knock on for ``address`` (``auto``: ``RAY_ADDRESS`` or the cluster
    ``ray start`` left on this machine); :class:`ClusterError` if there is none."""
    if address.startswith("ray://"):
        host, _, port = address[len("ray://") :].rpartition(":")
        return host, int(port)
    from ray._private import services

    try:
        found = services.canonicalize_bootstrap_address(address)
    except (ConnectionError, ValueError) as exc:
        raise ClusterError(
            Message(
                "cannot join a Ray cluster with ",
                Setting("ray", address),
                f": {exc} (start one with ray start, or set RAY_ADDRESS)",
            )
        ) from None
    if found is None:  # pragma: no cover - "auto" never asks for a local instance
        raise ClusterError(
            Message(Setting("ray", address), ": no Ray cluster found on this machine")
        )
    host, _, port = found.rpartition(":")
    return host.strip("[]"), int(port)


def _token_hint() -> str:
    """:data:`TOKEN_HINT`, and what this machine lacks for it."""
    mode = os.environ.get("RAY_AUTH_MODE")
    has_token = bool(os.environ.get("RAY_AUTH_TOKEN")) or (Path.home() / ".ray/auth_token").exists()
    if mode is None and has_token:
        return f"{TOKEN_HINT}; this machine has a token but RAY_AUTH_MODE is not set"
    return TOKEN_HINT


def _reason(text: str) -> str:
    """Ray's refusal in one line: its first 300 characters, and where it is a traceback from the
    head, the exception it ends with.

    >>> _reason("Initialization failure from server:\\nTraceback (most recent call last):\\n"
    ...         '  File "proxier.py", line 765\\npsutil.NoSuchProcess: process no longer exists')
    'Initialization failure from server: ... psutil.NoSuchProcess: process no longer exists'
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if "Traceback (most recent call last)" in text and len(lines) > 1:
        head = lines[0] if not lines[0].startswith("Traceback") else ""
        return " ".join(f"{head} ... {lines[-1]}".split())[:300].strip(" .")
    return " ".join(text.split())[:300]


def _failed(address: str, where: str, why: str) -> ClusterError:
    return ClusterError(
        Message(
            f"cannot join the Ray cluster at {where} (",
            Setting("ray", address),
            f"): {why}. Is it up (ray status)? {_token_hint()}",
        )
    )


def _knock(address: str, host: str, port: int, seconds: float) -> None:
    """A TCP connection to the cluster's address within ``seconds``, or :class:`ClusterError`."""
    try:
        with socket.create_connection((host, port), timeout=seconds):
            pass
    except OSError as exc:
        if isinstance(exc, TimeoutError):
            why = f"no answer within {seconds:g} s ({TIMEOUT_ENV} sets the deadline)"
        else:
            why = (exc.strerror or str(exc)).lower()
        raise ClusterError(
            Message(
                f"cannot join the Ray cluster at {host}:{port} (",
                Setting("ray", address),
                f"): {why}. Is it up (ray status), and is this its address?",
            )
        ) from None


def join_ray(workers: int, address: str) -> Joined | None:
    """Start (``"local"``, ``workers`` CPUs) or join (``"auto"``, ``"ray://HOST:PORT"``) Ray
    unless this process already has; return what was joined (None for ``"local"``, or when Ray
    was already up). A cluster that cannot be reached within :func:`join_timeout` seconds, or
    that refuses this driver, is a :class:`ClusterError` naming the address and what to check."""
    ray = import_ray()
    if ray.is_initialized():
        return None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address == "local":
        cpus = max(workers, 1)
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, **quiet)
        quiet_ray()
        return None
    seconds = join_timeout()
    start = time.monotonic()
    host, port = _endpoint(address)
    _knock(address, host, port, seconds)
    left = max(1, math.ceil(seconds - (time.monotonic() - start)))
    # Ray waits for the cluster's control store this many times, a second apart (default 20)
    bound = "RAY_gcs_server_port_wait_time_s"
    given = os.environ.get(bound)
    if given is None:
        os.environ[bound] = str(left)
    tries = CLIENT_SERVER_TRIES if address.startswith("ray://") else 1
    try:
        for tried in range(1, tries + 1):
            try:
                ray.init(address=address, **quiet)
                break
            except (ConnectionError, RuntimeError) as exc:
                text = str(exc)
                if tried < tries and any(failure in text for failure in CLIENT_SERVER_FAILURES):
                    logging.getLogger(LOGGER).warning(
                        "the head's Ray Client server for this driver failed; joining again"
                    )
                    continue
                why = _reason(text) or type(exc).__name__
                raise _failed(address, f"{host}:{port}", why) from None
    finally:
        if given is None:
            os.environ.pop(bound, None)
    quiet_ray()
    where = address if address.startswith("ray://") else f"{host}:{port}"
    alive = [n for n in ray.nodes() if n.get("Alive")]
    cpus = sum(n.get("Resources", {}).get("CPU", 0.0) for n in alive)
    return Joined(where, len(alive), cpus)


# ----------------------------------------------------------------------------- Ray's output


def _log_file() -> Path:
    """Where Ray's messages to this driver are written (Ray's session log folder, if any)."""
    try:
        from ray._private import worker

        logs = Path(worker._global_node.get_session_dir_path()) / "logs"
        if logs.is_dir() and os.access(logs, os.W_OK):
            return logs / f"piquet-driver-{os.getpid()}.log"
    except Exception:  # a place for a log file, never a failure of its own
        pass
    return Path(tempfile.gettempdir()) / f"piquet-ray-{os.getpid()}.log"


class _RaySink:
    """Takes the place of Ray's ``print_to_stdstream`` in this driver: every message to a log
    file, and one line on standard error the first time."""

    def __init__(self) -> None:
        self.path: Path | None = None

    def __call__(self, data: dict, **_: object) -> None:  # and Ray's ignore_prefix
        lines = [str(line) for line in data.get("lines", [])]
        if not lines:
            return
        if self.path is None:
            self.path = _log_file()
            first = " ".join(_plain(lines[0]).split())[:160]
            print(f"Ray: {first} (Ray's messages: {self.path})", file=sys.stderr, flush=True)
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                for line in lines:
                    f.write(f"({data.get('pid', '?')}) {_plain(line)}\n")
        except OSError:  # the one line said where they were to go
            pass


def _plain(text: str) -> str:
    """``text`` without terminal colour codes."""
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def quiet_ray() -> None:
    """Keep Ray's messages to this driver (a worker that died: the raylet's, printed on standard
    output by Ray) off standard output: to a log file, with one line on standard error."""
    try:
        from ray._private import worker
    except ImportError:  # pragma: no cover - Ray is imported by then
        return
    if not isinstance(getattr(worker, "print_to_stdstream", None), _RaySink):
        worker.print_to_stdstream = _RaySink()
