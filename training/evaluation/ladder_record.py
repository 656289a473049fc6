"""A ladder's record of its games, ``matches.jsonl``: a line appended as each batch of pairs ends.

:class:`MatchRecord` writes it and reads it back for ``piquet ladder --resume``; a game is known
by its :data:`MatchKey` (the agents and their :func:`agent_id`, the rules, mode and seed).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from piquet_training.evaluation.duplicate import AgentLike, GameResult, agent_name

import piquet_env
from piquet_env.rules import Rules

RECORD_FILE = "matches.jsonl"
"""Name of a ladder's record of played games in its output folder (see :class:`MatchRecord`)."""


def agent_id(agent: AgentLike) -> str | None:
    """What identifies an agent across runs: a digest of the package version, its spec and the
    bytes of every checkpoint file the spec loads (:func:`~piquet_agents.registry.spec_files`);
    ``None`` for an agent given as an object, whose games are not recorded."""
    if not isinstance(agent, str):
        return None
    from piquet_agents.registry import spec_files

    digest = hashlib.sha256(f"{piquet_env.__version__}\n{agent.strip()}".encode())
    for path in spec_files(agent):
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:20]


class LadderRecordError(ValueError):
    """A ladder's record of played games that cannot be read (names the file and line)."""


MatchKey = tuple[str, str, str, str, str, str, int]
"""(agent A, A's id, agent B, B's id, rules, mode, seed): what a recorded game belongs to."""
KEY_FIELDS = ("agent_a", "id_a", "agent_b", "id_b", "rules", "mode", "seed")
"""The names of a :data:`MatchKey`'s fields in a record's lines."""


class MatchRecord:
    """The games a ladder has played, appended to a JSON-lines file as each batch of pairs ends.

    Pairs are numbered and each is played the same way for the same agents, rules, mode and seed,
    so a ladder that is stopped and run again with ``resume`` takes the recorded pairs instead of
    playing them again: only the pairs missing from the record are played. A game is reused only
    for agents with the same :func:`agent_id` (a retrained checkpoint is played again); after
    changing an agent's code, start a new record. A last line cut short (the process killed while
    writing it) is dropped with a warning; any other unreadable line is an error.
    """

    def __init__(self, path: str | os.PathLike, resume: bool = False) -> None:
        self.path = Path(path)
        self._games: dict[MatchKey, dict[int, list[GameResult]]] = {}
        self.failed = False
        """Whether writing the file failed (nothing more is written to it then)."""
        if resume and self.path.exists():
            self._load()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")

    def _load(self) -> None:
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            cut = raw.rfind(b"\n") + 1
            print(
                f"warning: {self.path}: dropping its last line, cut short "
                f"({len(raw) - cut} bytes); those pairs are played again",
                file=sys.stderr,
            )
            with open(self.path, "r+b") as f:
                f.truncate(cut)
            raw = raw[:cut]
        for number, line in enumerate(raw.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                *names, seed = (entry[k] for k in KEY_FIELDS)
                key = (*map(str, names), int(seed))
                games = [GameResult.from_dict(g) for g in entry["games"]]
            except (ValueError, KeyError, TypeError) as exc:
                raise LadderRecordError(
                    f"{self.path} line {number}: not a recorded batch of games ({exc})"
                ) from None
            self._merge(key, games, f"{self.path} line {number}")

    def _merge(self, key: MatchKey, games: Sequence[GameResult], where: str) -> None:
        by_pair: dict[int, list[GameResult]] = {}
        for g in games:
            by_pair.setdefault(g.pair, []).append(g)
        have = self._games.setdefault(key, {})
        for pair, both in by_pair.items():
            both.sort(key=lambda g: g.game)
            if [g.game for g in both] != [0, 1]:
                raise LadderRecordError(f"{where}: pair {pair} lacks one of its two games")
            if pair in have and have[pair] != both:
                raise LadderRecordError(f"{where}: pair {pair} recorded twice, differently")
            have[pair] = both

    @staticmethod
    def key(
        agent_a: AgentLike, agent_b: AgentLike, rules: Rules, mode: str, seed: int
    ) -> MatchKey | None:
        """The key of the match of ``agent_a`` against ``agent_b``; ``None`` if either is an
        agent object (not recorded)."""
        id_a, id_b = agent_id(agent_a), agent_id(agent_b)
        if id_a is None or id_b is None:
            return None
        return (agent_name(agent_a), id_a, agent_name(agent_b), id_b, rules.name, mode, seed)

    def recorded(self, key: MatchKey) -> dict[int, list[GameResult]]:
        """The recorded games of a match, by pair number (both games of each pair)."""
        return self._games.get(key, {})

    def add(self, key: MatchKey, games: Sequence[GameResult]) -> None:
        """Record the games of a batch of pairs: one line, appended and synced to disk (if the
        file cannot be written, a warning says so and nothing more is recorded)."""
        self._merge(key, games, str(self.path))
        if self.failed:
            return
        entry = {**dict(zip(KEY_FIELDS, key)), "games": [g.to_dict() for g in games]}
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, separators=(",", ":")) + "\n")
                f.flush()
                os.fsync(f.fileno())
        except OSError as err:  # the ladder goes on; only a resume would miss these pairs
            self.failed = True
            print(
                f"warning: could not record games in {self.path} ({err.strerror or err}); "
                "the ladder goes on without its record",
                file=sys.stderr,
            )
