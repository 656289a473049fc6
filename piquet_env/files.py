"""Files written whole or not at all, with the permissions of an ordinary new file."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["file_sha256", "temp_beside", "whole_file", "write_bytes", "write_text"]


def temp_beside(path: str | Path, prefix: str | None = None) -> tuple[int, str]:
    """A new temporary file in ``path``'s folder, to be written and then renamed onto ``path``
    (``os.replace``) so that ``path`` is never seen half written: ``(fd, name)``, the name
    ``prefix`` (by default ``.<name>.``, hidden), random letters and ``.tmp``.

    Its mode is that of a file made by ``open()``, ``0o666`` less the umask, rather than
    ``tempfile.mkstemp``'s owner-only ``0o600``: a checkpoint or game record is as readable as any
    other file its user writes."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}." if prefix is None else prefix, suffix=".tmp", dir=path.parent
    )
    umask = os.umask(0o022)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    return fd, tmp


@contextmanager
def whole_file(
    path: str | Path, mode: str = "wb", *, prefix: str | None = None, durable: bool = False
) -> Iterator[IO[Any]]:
    """A file to write ``path`` through, whole or not at all: the writes go to a
    :func:`temp_beside` (``prefix`` its name's start), renamed onto ``path`` when the block ends;
    on any error the temporary is removed and the error raised, and an earlier ``path`` is left
    as it was. ``mode`` is ``"wb"`` or ``"w"`` (UTF-8 text). ``durable``: the data, then the
    rename, synced to the disk before the block returns (a checkpoint that must survive a
    crash)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"whole_file: mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    fd, tmp = temp_beside(path, prefix)
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as f:
            yield f
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        try:  # make the rename itself durable
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:  # pragma: no cover - platforms without directory fsync
            pass


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (:func:`whole_file`). Return the
    path."""
    with whole_file(path, "w") as f:
        f.write(text)
    return Path(path)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all (:func:`whole_file`). Return the path."""
    with whole_file(path) as f:
        f.write(data)
    return Path(path)


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex, read a MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
