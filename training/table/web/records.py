"""The records folder of ``piquet serve``: what the server writes there, within its budgets, and
what it reads back quickly.

Every game the server saves is a ``piquet play`` record (:mod:`piquet_env.game.record`) named
``YYYYmmdd-HHMMSS-KIND-ID.json`` (:data:`SERVER_NAME`). A :class:`RecordStore` keeps:

- **a budget**: at most ``max_records`` of the server's records, and ``max_record_mib`` MiB of
  them; past either, the oldest unfinished record is removed first, then the oldest finished one
  (never the one just written). The budget holds from the start: the folder is brought within it
  when the server starts. Files of other names are read (results, the replay list) but never
  counted, and never removed;
- **a rate per client address**: at most ``records_per_hour`` records saved an hour (a token
  bucket); past it a game is played but not saved, and its page is told;
- **the folder's index and results**: each record's :class:`~piquet_table.results.Row` is
  worked out once, when the server writes it or, for the files already there, in the background
  when the server starts, so ``/api/results`` and the replay list read no file again (a file
  copied in while the server runs is read once, when the folder is seen to have changed). The
  rows are kept in :data:`CACHE` when the server stops, so a restart reads them, not the records.

Every file there is read as hostile input (:mod:`piquet_env.untrusted`: regular files only,
opened without blocking, with a size and a depth cap): a file that does not read (a FIFO, a
record nested too deeply, a cache that is not one) is skipped, named in one log line (logger
``piquet_table.web``), and never stops the server or its pages.

Which games are saved at all (finished, or with a person's move) is the hub's decision
(:meth:`piquet_table.web.hub.Hub.save`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from piquet_env.game import Game
from piquet_env.game.record import MAX_RECORD_BYTES, record_of, save_record
from piquet_env.untrusted import UntrustedError, file_kind, read_json_file
from piquet_table import results
from piquet_table.results import Outcome, Row, Summary, file_row, record_row, summarize_rows
from piquet_table.text import printable
from piquet_table.web.limits import Limits
from piquet_table.web.ratelimit import Buckets

SERVER_NAME = re.compile(r"\d{8}-\d{6}-(?:play|watch)-[0-9a-f]{16}\.json")
"""The names the server gives its records: only these count against the budget, or are removed."""

RECORD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}\.json")
"""What a record's name in the records folder may look like (no path, no hidden file)."""

MAX_LISTED = 500
"""Most records listed (the newest)."""

CACHE = ".piquet-results.json"
"""Where the results rows are kept when the server stops (a hidden file: never listed or read as
a record)."""

CACHE_FORMAT = 1
"""The cache's format (another is ignored)."""

MAX_CACHE_BYTES = 64 * 2**20
"""Largest results cache read (a row takes under 200 bytes)."""

LOG = logging.getLogger("piquet_table.web")
"""Where a skipped file is named."""


@dataclass
class Entry:
    """A record file of the folder as the store knows it."""

    name: str
    mtime: float
    size: int
    finished: bool
    row: Row | None = None
    """Its results row, once worked out."""

    @property
    def servers(self) -> bool:
        """Whether the server wrote it (by its name): it counts against the budget."""
        return SERVER_NAME.fullmatch(self.name) is not None


class RecordStore:
    """The records folder ``folder`` under ``limits``' budgets (see the module's docstring)."""

    def __init__(self, folder: Path, limits: Limits) -> None:
        self.folder = Path(folder)
        self.limits = limits
        self._rates = Buckets(limits.records_per_hour / 3600, max(1, limits.records_per_hour))
        self._entries: dict[str, Entry] | None = None
        self._left_out = 0
        self._stamp: int | None = None
        """The folder's modification time when it was last read (it changes as files come and
        go)."""
        self._indexing: asyncio.Task | None = None
        self._rows: asyncio.Task | None = None
        self._skipped: set[str] = set()
        """The names of the files already logged as skipped."""

    def _skip(self, name: str, why: str) -> None:
        """Name a file that is not read, once (a log line)."""
        if name not in self._skipped:
            self._skipped.add(name)
            LOG.warning("records folder: skipped %s", printable(why, 300))

    def _row(self, entry: Entry) -> Row:
        """``entry``'s results row, read from its file now (one that does not read is named in
        the log, once)."""
        row = file_row(self.folder / entry.name)
        if row.problem is not None:
            self._skip(entry.name, row.problem)
        return row

    def _scan(self, known: dict[str, Entry]) -> tuple[dict[str, Entry], int, int | None]:
        """:func:`_scan` of the folder, the files it skipped named in the log."""
        entries, left_out, stamp, skipped = _scan(self.folder, known)
        for name, why in skipped:
            self._skip(name, why)
        return entries, left_out, stamp

    # ------------------------------------------------------------------ the index

    async def start(self) -> None:
        """Index the folder (bringing it within the budget); the results rows of the files
        already there are worked out in the background."""
        await self._index()
        if self._rows is None:
            self._rows = asyncio.create_task(self._fill_rows())

    async def _index(self) -> dict[str, Entry]:
        if self._entries is None:
            if self._indexing is None:
                self._indexing = asyncio.create_task(asyncio.to_thread(self._scan, {}))
            entries, left_out, stamp = await asyncio.shield(self._indexing)
            if self._entries is None:
                self._entries, self._left_out, self._stamp = entries, left_out, stamp
                self._rotate(keep=None)
        return self._entries

    async def _current(self) -> dict[str, Entry]:
        """The index, brought up to date first if the folder changed since it was read (a
        record copied in, or removed, while the server runs): only new names are read."""
        entries = await self._index()
        if _stamp(self.folder) != self._stamp:
            fresh, self._left_out, self._stamp = await asyncio.to_thread(self._scan, dict(entries))
            entries.clear()
            entries.update(fresh)
        return entries

    async def _fill_rows(self) -> None:
        entries = await self._index()
        for entry in list(entries.values()):
            if entry.row is None and entry.name in entries:
                entry.row = await asyncio.to_thread(self._row, entry)

    async def stop(self) -> None:
        """Keep the results rows worked out in :data:`CACHE` (the server is stopping): the next
        start reads them rather than every record."""
        if self._rows is not None:
            self._rows.cancel()
        if self._entries is not None:
            rows = {e.name: e for e in self._entries.values() if e.row is not None}
            with contextlib.suppress(OSError):
                await asyncio.to_thread(_write_cache, self.folder, rows)

    def forget(self) -> None:
        """Drop the index: the next question reads the folder again."""
        if self._rows is not None:
            self._rows.cancel()
        self._entries, self._indexing, self._rows, self._stamp = None, None, None, None

    # ------------------------------------------------------------------ saving

    def may_save(self, owner: str) -> str | None:
        """``None`` if ``owner`` (a client address) may save one more record now (it takes one of
        its tokens), else why not."""
        if self._rates.take(owner):
            return None
        return (
            f"your address saved {self.limits.records_per_hour:g} records an hour, the most it may"
        )

    async def save(self, name: str, game: Game, agents: list[str], **extra: object) -> Path:
        """Write ``game``'s record as ``name`` (whole or not at all), index it, and bring the
        folder within its budget; its path. ``OSError`` if it could not be written."""
        entries = await self._index()
        path = self.folder / name

        def write() -> tuple[Path, Row, float, int]:
            written = save_record(path, game, agents, **extra)
            row = record_row(name, record_of(game, agents, **extra))
            info = written.stat()
            return written, row, info.st_mtime, info.st_size

        written, row, mtime, size = await asyncio.to_thread(write)
        entries[name] = Entry(name, mtime, size, game.is_over, row)
        self._rotate(keep=name)
        return written

    def _rotate(self, keep: str | None) -> None:
        """Remove the server's oldest records (unfinished first) until within the budget."""
        assert self._entries is not None
        mine = sorted(
            (e for e in self._entries.values() if e.servers),
            key=lambda e: (e.finished, e.mtime, e.name),
        )
        count, size = len(mine), sum(e.size for e in mine)
        budget = self.limits.max_record_mib * 2**20
        for entry in mine:
            if count <= self.limits.max_records and size <= budget:
                break
            if entry.name == keep:
                continue
            with contextlib.suppress(FileNotFoundError):
                (self.folder / entry.name).unlink()
            del self._entries[entry.name]
            count, size = count - 1, size - entry.size

    # ------------------------------------------------------------------ reading

    async def summary(self) -> Summary:
        """People's results over the folder's records (:mod:`piquet_table.results`), from the
        rows kept (the files not worked out yet are read now)."""
        entries = await self._current()
        await asyncio.to_thread(self._rows_of, list(entries.values()))
        ordered = sorted(entries.values(), key=lambda e: e.name)
        newest = ordered[-results.MAX_RECORDS :] if results.MAX_RECORDS else []
        left_out = self._left_out + len(ordered) - len(newest)
        return summarize_rows((e.row for e in newest if e.row is not None), left_out)

    def _rows_of(self, entries: list[Entry]) -> None:
        for entry in entries:
            if entry.row is None:
                entry.row = self._row(entry)

    async def listing(self) -> list[dict]:
        """The records, newest first (at most :data:`MAX_LISTED`): name, modification time,
        size."""
        entries = await self._current()
        newest = sorted(entries.values(), key=lambda e: (-e.mtime, e.name))[:MAX_LISTED]
        return [{"name": e.name, "mtime": e.mtime, "bytes": e.size} for e in newest]


def _write_cache(folder: Path, entries: dict[str, Entry]) -> None:
    if not entries or not folder.is_dir():
        return  # nothing to keep
    rows = {}
    for name, e in entries.items():
        row = e.row
        assert row is not None
        outcome = row.outcome
        rows[name] = [
            e.mtime,
            e.size,
            list(row.key) if row.key is not None else None,
            [outcome.points_per_deal, outcome.result, outcome.deals] if outcome else None,
            row.problem,
        ]
    tmp = folder / (CACHE + ".tmp")
    tmp.write_text(json.dumps({"format": CACHE_FORMAT, "rows": rows}), encoding="utf-8")
    tmp.replace(folder / CACHE)


def _read_cache(folder: Path) -> tuple[dict[str, tuple[float, int, Row]], str | None]:
    """The rows kept in :data:`CACHE`, by record name, with the file's time and size then; and
    why the cache was not read, if it is there but does not read (it is ignored: its rows are
    worked out again)."""
    path = folder / CACHE
    if not path.exists() and not path.is_symlink():
        return {}, None
    try:
        doc = read_json_file(path, MAX_CACHE_BYTES, "a results cache", max_depth=4)
        assert isinstance(doc, dict) and doc["format"] == CACHE_FORMAT, "not a results cache"
        out = {}
        for name, (mtime, size, key, outcome, problem) in doc["rows"].items():
            if key is not None:
                key = tuple(printable(str(k)) for k in key)
                assert len(key) == 3
            if outcome is not None:
                points, result, deals = outcome
                outcome = Outcome(float(points), int(result), int(deals))
            problem = printable(str(problem), 300) if problem is not None else None
            out[str(name)] = (float(mtime), int(size), Row(key, outcome, problem))
        return out, None
    except UntrustedError as err:
        return {}, str(err).replace(str(folder) + "/", "")
    except (ValueError, TypeError, KeyError, AssertionError, AttributeError) as err:
        return {}, f"{CACHE}: not a results cache of format {CACHE_FORMAT} ({type(err).__name__})"


def _stamp(folder: Path) -> int | None:
    try:
        return folder.stat().st_mtime_ns
    except OSError:
        return None


def _scan(
    folder: Path, known: dict[str, Entry]
) -> tuple[dict[str, Entry], int, int | None, list[tuple[str, str]]]:
    """The record files directly in ``folder`` (plain files, no links, names a record may have;
    at most the newest :data:`~piquet_table.results.MAX_RECORDS` by name of those not the
    server's), how many were left out, the folder's modification time, and the files skipped
    (name, why: a record's name on something not a regular file, a cache that does not read);
    the entries in ``known`` are kept as they are (their rows with them)."""
    stamp = _stamp(folder)
    if stamp is None:
        return {}, 0, None, []
    skipped: list[tuple[str, str]] = []
    cached: dict[str, tuple[float, int, Row]] = {}
    if not known:
        cached, why = _read_cache(folder)
        if why is not None:
            skipped.append((CACHE, why))
    entries, others = {}, []
    for path in folder.iterdir():
        entry = known.get(path.name)
        if entry is None:
            if not RECORD_NAME.fullmatch(path.name):
                continue
            try:
                info = path.lstat()
            except OSError:  # gone meanwhile
                continue
            if not stat.S_ISREG(info.st_mode):
                if not stat.S_ISDIR(info.st_mode) and not stat.S_ISLNK(info.st_mode):
                    skipped.append((path.name, f"{path.name}: {file_kind(info.st_mode)}"))
                continue
            entry = Entry(path.name, info.st_mtime, info.st_size, False)
            entry.finished = entry.servers and _finished(path)
            mtime, size, row = cached.get(path.name, (None, None, None))
            if (mtime, size) == (entry.mtime, entry.size):
                entry.row = row
        if entry.servers:
            entries[path.name] = entry
        else:
            others.append(entry)
    others.sort(key=lambda e: e.name)
    room = max(0, results.MAX_RECORDS - len(entries))
    kept = others[len(others) - room :] if room else []
    entries.update((e.name, e) for e in kept)
    return entries, len(others) - len(kept), stamp, skipped


def _finished(path: Path) -> bool:
    """Whether the server's record at ``path`` says its game was finished (a file that does not
    read as one is taken as unfinished: it goes first)."""
    try:
        doc = read_json_file(path, MAX_RECORD_BYTES, "a game record")
    except UntrustedError:  # named in the log when its results row is worked out
        return False
    return isinstance(doc, dict) and doc.get("finished") is True
