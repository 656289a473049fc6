"""A record of played games, ``matches.jsonl`` (a ladder's, or ``piquet eval --record``'s):
appended as played, read back as hostile; :func:`play_recorded` plays what it lacks.

Each line is one batch of pairs: the key of its match (:data:`KEY_FIELDS`), its games, and
``sha256``, the SHA-256 of the canonical JSON of the rest of the line
(:func:`piquet_env.untrusted.sha256_hex`, the form checkpoints checksum their metadata in).

A record comes back from disk (``piquet ladder --resume``), where it may have been edited, cut
short or replaced, so nothing in it is trusted: the file must be a regular file (a FIFO or a
device is refused before it is opened) of at most :data:`MAX_RECORD_BYTES`, and every line UTF-8,
strict JSON (no ``NaN`` or ``Infinity``, bounded nesting), with a checksum that matches it and
well-formed games. Anything else is a :class:`LadderRecordError` naming the file and the line.

A line without a checksum (written before records had one) is refused as well, with the advice to
run without ``--resume``: its games cannot be told from edited ones, and a ladder's ratings are
only worth its games. Taking such lines only while no line has a checksum would not last either:
the first resume appends checksummed lines, so the next would refuse the file anyway.

The checksum finds a line changed by hand or by a fault; it is no signature (whoever can write the
file can compute it again).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

import piquet_env
from piquet_env.errors import Message, Setting
from piquet_env.rules import Rules
from piquet_env.untrusted import (
    UntrustedError,
    file_kind,
    json_kind,
    open_regular_file,
    parse_json,
    read_lines,
    sha256_hex,
    short_json,
)
from piquet_training.evaluation.duplicate import (
    AgentLike,
    DuplicateMatch,
    GameResult,
    agent_name,
    games_by_pair,
    play_games,
)
from piquet_training.evaluation.executor import HERE, Fanout

RECORD_FILE = "matches.jsonl"
"""Name of a ladder's record of played games in its output folder (see :class:`MatchRecord`)."""

MAX_RECORD_BYTES = 1 << 30
"""Largest record read back (1 GiB; ten agents at 4,000 pairs a pairing take about 60 MB)."""

MAX_RECORD_LINE = 4 << 20
"""Longest line of a record read back (4 MiB; a line holds at most :data:`LINE_PAIRS` pairs,
some 200 KB): a line is read alone, and no longer one is held whole."""

LINE_PAIRS = 1000
"""Most pairs written on one line of a record."""

MAX_VALUE = 10**9
"""Largest magnitude of a number in a recorded game."""

_GAME_BOUNDS = {
    "pair": (0, MAX_VALUE),
    "game": (0, 1),
    "a_seat": (0, 1),
    "result": (-MAX_VALUE, MAX_VALUE),
    "points": (-MAX_VALUE, MAX_VALUE),
    "deals": (1, MAX_VALUE),
}
"""Each field of a recorded game (:class:`GameResult`) and its lowest and highest value."""

MatchKey = tuple[str, str, str, str, str, str, int]
"""(agent A, A's id, agent B, B's id, rules, mode, seed): what a recorded game belongs to."""
KEY_FIELDS = ("agent_a", "id_a", "agent_b", "id_b", "rules", "mode", "seed")
"""The names of a :data:`MatchKey`'s fields in a record's lines."""


class LadderRecordError(ValueError):
    """A ladder's record of played games that cannot be read (names the file and line)."""


def agent_id(agent: AgentLike, rules: Rules | None = None) -> str | None:
    """What identifies an agent across runs: a digest of the package version, its spec and the
    bytes of every checkpoint file the spec loads under ``rules``
    (:func:`~piquet_agents.registry.spec_files`); ``None`` for an agent given as an object, whose
    games are not recorded."""
    if not isinstance(agent, str):
        return None
    from piquet_agents.registry import spec_files

    digest = hashlib.sha256(f"{piquet_env.__version__}\n{agent.strip()}".encode())
    for path in spec_files(agent, rules):
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:20]


def record_line(key: MatchKey, games: Sequence[GameResult]) -> str:
    """The line that records ``games`` of the match ``key``, its checksum last, newline ended."""
    entry: dict[str, object] = {**dict(zip(KEY_FIELDS, key)), "games": [g.to_dict() for g in games]}
    entry["sha256"] = sha256_hex(entry)
    return json.dumps(entry, separators=(",", ":")) + "\n"


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _not_a_batch(where: str, problem: str) -> LadderRecordError:
    return LadderRecordError(f"{where}: not a recorded batch of games ({problem})")


def _batch_name(entry: dict) -> str:
    """The match and pairs a line says it holds (it may say anything), for a message."""
    a, b = (short_json(entry.get(k), 40) for k in ("agent_a", "agent_b"))
    games = entry.get("games")
    pairs = sorted(
        {g["pair"] for g in games if isinstance(g, dict) and _is_int(g.get("pair"))}
        if isinstance(games, list)
        else ()
    )
    if not pairs:
        return f"{a} vs {b}"
    span = f"pair {pairs[0]}" if len(pairs) == 1 else f"pairs {pairs[0]} to {pairs[-1]}"
    return f"{a} vs {b}, {span}"


def _check_game(g: object, i: int, where: str) -> GameResult:
    if not isinstance(g, dict):
        raise _not_a_batch(where, f"game {i} is a JSON {json_kind(g)}, not an object")
    for name, (low, high) in _GAME_BOUNDS.items():
        value = g.get(name)
        if not (_is_int(value) and low <= value <= high):
            want = f"an integer from {low} to {high}"
            raise _not_a_batch(where, f"game {i}: {name!r} must be {want}, got {short_json(value)}")
    correction = g.get("correction", 0.0)  # absent from plain games and older records
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise _not_a_batch(where, f"game {i}: 'correction' must be a number")
    if not math.isfinite(correction) or abs(correction) > MAX_VALUE:
        raise _not_a_batch(where, f"game {i}: 'correction' must be finite, at most {MAX_VALUE}")
    return GameResult(**{name: g[name] for name in _GAME_BOUNDS}, correction=float(correction))


def read_line(line: bytes, where: str) -> tuple[MatchKey, list[GameResult]]:
    """The match key and games of one line of a record, checked (checksum first); ``where``
    (``"FILE line N"``) starts the message of the :class:`LadderRecordError` raised otherwise."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise LadderRecordError(f"{where}: not UTF-8 text (byte {err.start} of the line)") from None
    try:
        entry = parse_json(text)
    except UntrustedError as err:
        raise _not_a_batch(where, f"not JSON: {err}") from None
    if not isinstance(entry, dict):
        raise _not_a_batch(where, f"a JSON {json_kind(entry)}, not an object")
    digest = entry.get("sha256")
    if digest is None:
        raise LadderRecordError(
            Message(
                f"{where}: no checksum (written before ladder records had one), so its games "
                "cannot be checked; start a new record (without ",
                Setting("resume"),
                ")",
            )
        )
    try:
        expected = sha256_hex({k: v for k, v in entry.items() if k != "sha256"})
    except (RecursionError, ValueError, TypeError):
        raise _not_a_batch(where, "nested too deeply") from None
    if digest != expected:
        raise LadderRecordError(
            Message(
                f"{where}: checksum mismatch: the games of {_batch_name(entry)} were changed "
                "after they were recorded; delete the line to play them again, or start a new "
                "record (without ",
                Setting("resume"),
                ")",
            )
        )
    for name in KEY_FIELDS:
        value = entry.get(name)
        if not (_is_int(value) if name == "seed" else isinstance(value, str)):
            want = "an integer" if name == "seed" else "a string"
            raise _not_a_batch(where, f"{name!r} must be {want}, got {short_json(value)}")
    games = entry.get("games")
    if not isinstance(games, list) or not games:
        raise _not_a_batch(where, f"'games' must be a list of games, got {short_json(games)}")
    key = tuple(entry[name] for name in KEY_FIELDS)
    return key, [_check_game(g, i, where) for i, g in enumerate(games)]


class MatchRecord:
    """The games a ladder has played, appended to a JSON-lines file as each batch of pairs ends.

    Pairs are numbered and each is played the same way for the same agents, rules, mode and seed,
    so a ladder that is stopped and run again with ``resume`` takes the recorded pairs instead of
    playing them again: only the pairs missing from the record are played. A game is reused only
    for agents with the same :func:`agent_id` (a retrained checkpoint is played again); after
    changing an agent's code, start a new record. A last line cut short (the process killed while
    writing it) is dropped with a warning; any other unreadable line, or one whose checksum does
    not match it, is an error (see the module docstring).

    Without ``resume`` the record starts empty; where its path is not a regular file (a
    directory, a FIFO) or cannot be written, it is left alone and the ladder goes on without a
    record, saying so, as when writing fails later.
    """

    def __init__(self, path: str | os.PathLike, resume: bool = False) -> None:
        self.path = Path(path)
        self._games: dict[MatchKey, dict[int, list[GameResult]]] = {}
        self.failed = False
        """Whether writing the file failed (nothing more is written to it then)."""
        if resume and os.path.lexists(self.path):
            self._load()
        else:
            self._start()

    def _give_up(self, reason: str) -> None:
        self.failed = True
        print(
            f"warning: could not record games in {self.path} ({reason}); the ladder goes on "
            "without its record",
            file=sys.stderr,
        )

    def _start(self) -> None:
        """Empty the record, or leave alone a path that is not a regular file."""
        try:
            mode = os.stat(self.path).st_mode
        except OSError:
            mode = None  # missing (it is created), or the writing below says what is wrong
        if mode is not None and not stat.S_ISREG(mode):
            self._give_up(f"it is {file_kind(mode)}, not a regular file")
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")
        except OSError as err:
            self._give_up(err.strerror or str(err))

    def _load(self) -> None:
        kept = 0  # bytes of whole lines
        cut = b""
        try:
            with open_regular_file(self.path, MAX_RECORD_BYTES, "a ladder record") as f:
                lines = read_lines(f, MAX_RECORD_LINE, str(self.path), MAX_RECORD_BYTES)
                for number, line in enumerate(lines, 1):
                    if not line.endswith(b"\n"):  # the last line, cut short by a kill
                        cut = line
                        break
                    kept += len(line)
                    if line.strip():
                        where = f"{self.path} line {number}"
                        key, games = read_line(line, where)
                        self._merge(key, games, where)
        except UntrustedError as err:
            raise LadderRecordError(str(err)) from None
        if cut:  # every whole line is good: only now is the file changed
            print(
                f"warning: {self.path}: dropping its last line, cut short "
                f"({len(cut)} bytes); those pairs are played again",
                file=sys.stderr,
            )
            try:
                with open(self.path, "r+b") as f:
                    f.truncate(kept)
            except OSError as err:  # appending after the cut line would spoil the next one
                self._give_up(f"it cannot be truncated: {err.strerror or err}")

    def _merge(self, key: MatchKey, games: Sequence[GameResult], where: str) -> None:
        have = self._games.setdefault(key, {})
        for pair, both in games_by_pair(games).items():
            both.sort(key=lambda g: g.game)
            if [g.game for g in both] != [0, 1]:
                raise LadderRecordError(f"{where}: pair {pair} lacks one of its two games")
            if pair in have and have[pair] != both:
                raise LadderRecordError(f"{where}: pair {pair} recorded twice, differently")
            have[pair] = both

    @staticmethod
    def key(
        agent_a: AgentLike,
        agent_b: AgentLike,
        rules: Rules,
        mode: str,
        seed: int,
        variance_reduction: str = "",
    ) -> MatchKey | None:
        """The key of the match of ``agent_a`` against ``agent_b``; ``None`` if either is an
        agent object (not recorded). Games corrected by a value function
        (``variance_reduction``) are a match of their own: the key's mode names the value
        function's id too (``deal+talon:ID``), so plain records stay readable as they were."""
        id_a, id_b = agent_id(agent_a, rules), agent_id(agent_b, rules)
        if id_a is None or id_b is None:
            return None
        if variance_reduction:
            mode = f"{mode}+talon:{agent_id(variance_reduction, rules)}"
        return (agent_name(agent_a), id_a, agent_name(agent_b), id_b, rules.name, mode, seed)

    @staticmethod
    def key_of(match: DuplicateMatch) -> MatchKey | None:
        """The key of ``match``'s games (:meth:`key`)."""
        vr = match.variance_reduction or ""
        return MatchRecord.key(
            match.agent_a, match.agent_b, match.rules, match.mode, match.seed, vr
        )

    def recorded(self, key: MatchKey) -> dict[int, list[GameResult]]:
        """The recorded games of a match, by pair number (both games of each pair)."""
        return self._games.get(key, {})

    def add(self, key: MatchKey, games: Sequence[GameResult]) -> None:
        """Record the games of a batch of pairs: a line with its checksum (:func:`record_line`)
        for each :data:`LINE_PAIRS` pairs, appended and synced to disk (if the file cannot be
        written, a warning says so and nothing more is recorded)."""
        self._merge(key, games, str(self.path))
        if self.failed:
            return
        pairs = sorted(games_by_pair(games).items())
        lines = [
            record_line(key, [g for _, both in pairs[i : i + LINE_PAIRS] for g in both])
            for i in range(0, len(pairs), LINE_PAIRS)
        ]
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.writelines(lines)
                f.flush()
                os.fsync(f.fileno())
        except OSError as err:  # the ladder goes on; only a resume would miss these pairs
            self._give_up(err.strerror or str(err))


def play_recorded(
    match: DuplicateMatch,
    record: MatchRecord | None,
    *,
    fanout: Fanout = HERE,
    progress: bool = False,
    desc: str | None = None,
    held: Sequence[GameResult] = (),
    each_chunk: bool = False,
    save_dir: str | None = None,
) -> list[GameResult]:
    """The games of ``match``'s pairs 0 to ``match.pairs - 1`` (``match.start`` is not used):
    those ``held`` or found in ``record`` are taken, the others played where ``fanout`` says, all
    in one fan-out (one executor: one Ray job however many holes the record has), and
    recorded: each run of missing pairs as one line once played (``piquet ladder --resume``
    picks up at the match under way), or with ``each_chunk`` each chunk as it is played, so a run
    killed in the middle loses at most the chunks under way (``piquet eval --record``); with
    ``save_dir`` the played games' logs are written there. Sorted by pair then game."""
    key = None if record is None else record.key_of(match)
    have = {} if key is None or record is None else dict(record.recorded(key))
    for pair, run in itertools.groupby(held, lambda g: g.pair):  # held: in pair order
        have.setdefault(pair, list(run))
    missing = [p for p in range(match.pairs) if p not in have]
    games = [g for p in range(match.pairs) if p in have for g in have[p]]

    def keep(chunk: list[GameResult]) -> None:
        if key is not None and record is not None:
            record.add(key, chunk)

    if not missing:
        return sorted(games, key=lambda g: (g.pair, g.game))
    more = play_games(  # every missing pair in one fan-out: one executor, one Ray job
        dataclasses.replace(match, start=0),
        fanout=fanout,
        progress=progress,
        desc=desc,
        save_dir=save_dir,
        on_chunk=keep if each_chunk else None,
        numbers=missing,
    )
    if not each_chunk:
        for _, run in itertools.groupby(enumerate(missing), lambda t: t[1] - t[0]):
            span = {p for _, p in run}  # each run of missing pairs one line, as before
            keep([g for g in more if g.pair in span])
    games += more
    games.sort(key=lambda g: (g.pair, g.game))
    return games
