"""Reading files that may be hostile: checked before they are opened, parsed strictly, checksummed.

Game records (:mod:`piquet_env.game.record`), checkpoints (``piquet_agents.checkpoint``) and a
ladder's record of its games (``piquet_training.evaluation.record``) come from files that
may have been edited, cut short or swapped for something else. These helpers turn such input into
an :class:`UntrustedError` (a ``ValueError``) saying what is wrong, never another exception or a
hang:

- :func:`open_regular_file` and :func:`read_regular_file`: the file's type (:func:`file_kind`) and
  size are checked before it is opened (a FIFO or a device is refused, without blocking), then at
  most so many bytes are read;
- :func:`read_lines`: a file line by line, no line held longer than a cap;
- :func:`read_json_file`: the two together, the file named once in any message;
- :func:`parse_json`: JSON without ``NaN`` or ``Infinity``, without numbers beyond a float's
  range, and nested no deeper than :data:`MAX_DEPTH` (or the depth given);
- :func:`canonical_json` and :func:`sha256_hex`: the bytes a checksum covers (sorted keys, no
  spaces) and their SHA-256;
- :func:`json_kind` and :func:`short_json`: a value named and shown safely in a message.

>>> parse_json('{"a": [1, 2.5]}')
{'a': [1, 2.5]}
>>> parse_json("[-Infinity]")
Traceback (most recent call last):
...
piquet_env.untrusted.UntrustedError: -Infinity is not a JSON number
>>> parse_json("[[[1]]]", max_depth=2)
Traceback (most recent call last):
...
piquet_env.untrusted.UntrustedError: nested too deeply (more than 2 deep)
>>> canonical_json({"b": 1, "a": (2, "é")})
b'{"a":[2,"\\\\u00e9"],"b":1}'
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import json
import math
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "MAX_DEPTH",
    "UntrustedError",
    "canonical_json",
    "file_kind",
    "json_kind",
    "open_regular_file",
    "parse_json",
    "read_json_file",
    "read_lines",
    "read_regular_file",
    "sha256_hex",
    "short_json",
]


MAX_DEPTH = 64
"""How deep JSON read from outside may nest (arrays and objects), unless a reader says otherwise:
the project's files nest under 10 deep, and a deeper value could exhaust the recursion of whatever
walks it later."""


class UntrustedError(ValueError):
    """Input that is not read: the message says why (and names the file, for a file)."""


def _size_text(n: int) -> str:
    """A byte count as a person would write a limit: ``16 MiB``, ``1 GiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def file_kind(mode: int) -> str:
    """The kind of file an ``st_mode`` says: ``"a regular file"``, ``"a directory"``, ``"a
    FIFO"``, ``"a character device"``, ``"a block device"``, ``"a socket"``...

    >>> import os
    >>> file_kind(os.stat(".").st_mode)
    'a directory'
    """
    for test, kind in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return kind
    return "an unknown kind of file"


@contextmanager
def open_regular_file(path: str | os.PathLike, max_bytes: int, what: str) -> Iterator[BinaryIO]:
    """``path`` opened for reading in binary, once it is known to be a regular file of at most
    ``max_bytes`` bytes; ``what`` says what it should be (``"a game record"``), for the messages.

    Its type and size are checked before it is opened, and again on the open file (opened without
    blocking, so a FIFO put there in between cannot hang the read). Raises :class:`UntrustedError`
    naming the file: missing, a directory, not a regular file (a FIFO, a device, a socket, which
    a link to ``/dev/zero`` is), over ``max_bytes``, or unreadable.
    """
    path = Path(path)

    def check(info: os.stat_result) -> None:
        if stat.S_ISDIR(info.st_mode):
            raise UntrustedError(f"{path}: is a directory, not {what}")
        if not stat.S_ISREG(info.st_mode):  # a FIFO or a device could block or never end
            raise UntrustedError(f"{path}: is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            raise UntrustedError(
                f"{path}: {info.st_size:,} bytes, over the {_size_text(max_bytes)} {what} may take"
            )

    try:
        check(os.stat(path))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise UntrustedError(f"{path}: no such file") from None
    except OSError as err:
        raise UntrustedError(f"{path}: cannot be read ({err.strerror or err})") from None
    with os.fdopen(fd, "rb") as f:
        check(os.fstat(f.fileno()))  # the file opened is the file checked
        yield f


def read_regular_file(path: str | os.PathLike, max_bytes: int, what: str) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes`` bytes, checked as
    :func:`open_regular_file` checks it; ``what`` says what it should be, for the messages."""
    try:
        with open_regular_file(path, max_bytes, what) as f:
            # read what the file holds (read(max_bytes) would first take max_bytes of memory)
            size = os.fstat(f.fileno()).st_size
            data = f.read(min(size, max_bytes) + 1)
            if len(data) > size:  # it grew since: read on, up to the cap
                data += f.read(max_bytes + 1 - len(data))
    except OSError as err:
        raise UntrustedError(f"{path}: cannot be read ({err.strerror or err})") from None
    if len(data) > max_bytes:  # it grew while being read
        raise UntrustedError(f"{path}: over the {_size_text(max_bytes)} {what} may take")
    return data


def read_lines(f: BinaryIO, max_line: int, where: str, max_bytes: int) -> Iterator[bytes]:
    """Each line of the open file ``f`` in turn (its newline kept; the last may lack one), read
    so that no more than ``max_line`` bytes are ever held for one line: :class:`UntrustedError`
    naming ``where`` and the line's number for a longer line, or once more than ``max_bytes``
    have been read (the file grew)."""
    number = total = 0
    while True:
        try:
            line = f.readline(max_line + 1)
        except OSError as err:
            raise UntrustedError(f"{where}: cannot be read ({err.strerror or err})") from None
        if not line:
            return
        number += 1
        total += len(line)
        if len(line) > max_line:
            raise UntrustedError(
                f"{where}, line {number}: over the {_size_text(max_line)} a line may take"
            )
        if total > max_bytes:
            raise UntrustedError(f"{where}: over the {_size_text(max_bytes)} it may take")
        yield line


def read_csv_rows(
    path: str | os.PathLike, what: str, max_bytes: int, max_line: int
) -> Iterator[list[str]]:
    """The rows of the CSV file ``path`` in turn, read as untrusted input line by line: a
    regular file (not a FIFO, a device or a link to one) of at most ``max_bytes``, no line over
    ``max_line`` bytes, UTF-8 text, well-formed CSV; ``what`` says what it should be, for the
    messages. Raises :class:`UntrustedError` naming the file otherwise. At most a line is held
    at once, however large the file."""
    with open_regular_file(path, max_bytes, what) as f:
        lines = read_lines(f, max_line, str(path), max_bytes)
        try:
            yield from csv.reader(_decoded(lines, str(path)))
        except csv.Error as exc:
            raise UntrustedError(f"{path}: not a CSV file ({exc})") from None


def _decoded(lines: Iterator[bytes], where: str) -> Iterator[str]:
    for line in lines:
        try:
            yield line.decode()
        except UnicodeDecodeError:
            raise UntrustedError(f"{where}: not UTF-8 text") from None


def is_utf8(data: bytes, chunk: int = 1 << 20) -> bool:
    """Whether ``data`` is UTF-8 text, decoded ``chunk`` bytes at a time (no copy of the whole
    is made).

    >>> is_utf8("é".encode()), is_utf8(b"\\xe9")
    (True, False)
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(data), chunk):
            decoder.decode(data[start : start + chunk])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _no_constant(name: str) -> object:
    raise UntrustedError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UntrustedError(f"{text[:30]} is beyond the range of a JSON number")
    return value


def _depth_within(value: object, max_depth: int) -> None:
    """:class:`UntrustedError` if ``value`` nests arrays and objects more than ``max_depth`` deep
    (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth > max_depth:
            raise UntrustedError(f"nested too deeply (more than {max_depth} deep)")
        stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))


def parse_json(text: str, max_depth: int = MAX_DEPTH) -> object:
    """``text`` as JSON, strictly: :class:`UntrustedError` if it is not JSON, holds ``NaN`` or
    ``Infinity`` (or a number that would become one), nests arrays and objects more than
    ``max_depth`` deep (or deeper than the parser can go), or holds an integer of more digits
    than Python converts."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
        _depth_within(value, max_depth)
        return value
    except UntrustedError:
        raise
    except json.JSONDecodeError as err:
        raise UntrustedError(str(err)) from None
    except RecursionError:
        raise UntrustedError(f"nested too deeply (more than {max_depth} deep)") from None
    except ValueError as err:  # e.g. an integer of more than 4,300 digits
        raise UntrustedError(str(err)) from None


def read_json_file(
    path: str | os.PathLike, max_bytes: int, what: str, max_depth: int = MAX_DEPTH
) -> object:
    """The strict JSON (:func:`parse_json`, at most ``max_depth`` deep) of the regular file
    ``path`` of at most ``max_bytes`` (:func:`read_regular_file`); :class:`UntrustedError` naming
    the file once, whatever is wrong (not UTF-8 text included)."""
    try:
        return parse_json(read_regular_file(path, max_bytes, what).decode(), max_depth)
    except UnicodeDecodeError:
        raise UntrustedError(f"{path}: not UTF-8 text") from None
    except UntrustedError as exc:
        text = str(exc)
        raise UntrustedError(text if text.startswith(str(path)) else f"{path}: {text}") from None


def canonical_json(value: object) -> bytes:
    """``value`` as canonical JSON, the bytes a checksum covers: first made plain JSON (tuples
    become lists), then written with sorted keys, no spaces and ASCII escapes. ``TypeError`` or
    ``ValueError`` for a value that is not JSON."""
    plain = json.loads(json.dumps(value))
    return json.dumps(plain, sort_keys=True, separators=(",", ":")).encode()


def sha256_hex(value: object) -> str:
    """The SHA-256 of :func:`canonical_json` of ``value``, in hex.

    >>> sha256_hex({"b": 1, "a": [2]}) == sha256_hex({"a": (2,), "b": 1})
    True
    """
    return hashlib.sha256(canonical_json(value)).hexdigest()


def json_kind(value: object) -> str:
    """The JSON name of a value's type (``"null"``, ``"number"``, ``"object"``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def short_json(value: object, limit: int = 60) -> str:
    """``value`` as JSON cut to ``limit`` characters; control and non-ASCII characters are
    escaped, so the text is safe to print on a terminal."""
    try:
        text = json.dumps(value, ensure_ascii=True, default=repr)
    except (RecursionError, ValueError):
        return f"a deeply nested {json_kind(value)}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
