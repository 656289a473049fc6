"""Files written whole or not at all, with the permissions of an ordinary new file."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["temp_beside", "write_text"]


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


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all: into :func:`temp_beside`, then
    renamed onto ``path``; on any error the temporary is removed and the error raised, and an
    earlier ``path`` is left as it was. Return the path."""
    path = Path(path)
    fd, tmp = temp_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex, read a MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
