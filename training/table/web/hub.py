"""The hub: every open table, the opponents a page may choose, the records folder and the limits.

A :class:`Hub` opens tables (:mod:`piquet_table.web.tables`) for the browsers' sockets
(:mod:`piquet_table.web.client`), finds one again by its id and secret token (a reload, a dropped
connection), and closes it: a table without its browser waits :attr:`Limits.reconnect_grace`
seconds, then it is saved as an unfinished record and closed. Every game is saved as a ``piquet
play`` record (:mod:`piquet_env.game.record`) in the records folder: when it ends, and when it is
left unfinished.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from piquet_env.game import Game
from piquet_env.rules import Rules
from piquet_table.session import HUMAN
from piquet_table.text import printable
from piquet_table.web.limits import Limits
from piquet_table.web.moves import MovePool, WorkerLost
from piquet_table.web.opponents import Choice
from piquet_table.web.protocol import MODES
from piquet_table.web.records import RecordStore
from piquet_table.web.tables import MoveError, PlayTable, Send, Table, WatchTable


class Hub:
    """Every open table, the opponents a page may choose, the records folder and the limits.

    ``rules`` are the server's; ``choices`` the agents a page may pick (the first is the default,
    see :func:`~piquet_table.web.opponents.opponent_choices`); ``records`` the folder games are
    saved in; ``seed`` (optional) makes the tables' cards and agents a repeatable sequence;
    ``moves`` plays the agents' moves (worker processes; by default, threads of this process).
    """

    def __init__(
        self,
        rules: Rules,
        choices: dict[str, Choice],
        records: Path,
        *,
        seed: int | None = None,
        limits: Limits | None = None,
        moves: MovePool | None = None,
    ) -> None:
        if not choices:
            raise ValueError("a hub needs at least one opponent to offer")
        self.rules = rules
        self.choices = choices
        self.default = next(iter(choices))
        self.records = Path(records)
        self.limits = limits or Limits()
        self.store = RecordStore(self.records, self.limits)
        """The records folder, within its budgets."""
        self.moves = moves or MovePool(0)
        self.tables: dict[str, Table] = {}
        self._building: Counter[str] = Counter()
        """Tables being made (their agents built), by owner: they count against the limits."""
        self._seeds = random.Random(seed) if seed is not None else random.SystemRandom()

    def config(self) -> dict:
        """What the page needs to know: the rules, the opponents, the limits."""
        return {
            "rules": self.rules.name,
            "deals": self.rules.deals,
            "opponents": [c.public() for c in self.choices.values()],
            "default": self.default,
            "modes": list(MODES),
            "watch_delay": self.limits.watch_delay,
        }

    def choice(self, cid: str | None) -> Choice:
        """The opponent a page chose by its id (``None``: the default); :class:`MoveError` for an
        id that is not on the list."""
        if cid is None:
            return self.choices[self.default]
        if cid not in self.choices:
            raise MoveError(f"no opponent {cid[:40]!r} here; choose one of the list")
        return self.choices[cid]

    @contextlib.contextmanager
    def _slot(self, owner: str) -> Iterator[None]:
        """Hold a table's place for ``owner`` while it is being made (its agents built): checked
        and taken at once, so no interleaving of concurrent ``new`` messages passes either limit;
        given back when the table is added, or if making it fails."""
        building = sum(self._building.values())
        if len(self.tables) + building >= self.limits.max_tables:
            raise MoveError(
                f"the server has {self.limits.max_tables} tables open, its limit: try again later"
            )
        mine = sum(t.owner == owner for t in self.tables.values()) + self._building[owner]
        if mine >= self.limits.max_per_client:
            raise MoveError(
                f"you have {mine} tables open, the most one client may: leave one (it is saved) "
                f"or let it expire ({self.limits.reconnect_grace:g} s after its page closed)"
            )
        self._building[owner] += 1
        try:
            yield
        finally:
            self._building[owner] -= 1
            if not self._building[owner]:
                del self._building[owner]

    async def open_play(self, owner: str, opponent: str | None, mode: str) -> PlayTable:
        """A new partie (or deal) against the chosen opponent; the person sits at player 0."""
        choice = self.choice(opponent)
        with self._slot(owner):
            seed, key = self._seeds.getrandbits(32), secrets.token_hex(8)
            names, game_seed = await self._agents(key, seed, choice, None)
            game = Game(self.rules, seed=game_seed, mode=mode)
            table = PlayTable(self, game, 0, _distinct(HUMAN, names[1]), seed, owner, key)
            return self._add(table)

    async def open_watch(
        self, owner: str, players: list[str] | None, mode: str, delay: float | None
    ) -> WatchTable:
        """Two chosen agents play each other (player 0 first in the list)."""
        first, second = (self.choice(c) for c in (players or [self.default, self.default]))
        with self._slot(owner):
            seed, key = self._seeds.getrandbits(32), secrets.token_hex(8)
            names, game_seed = await self._agents(key, seed, second, first)
            game = Game(self.rules, seed=game_seed, mode=mode)
            pace = self.limits.watch_delay if delay is None else delay
            seats = _distinct(names[0], names[1])
            table = WatchTable(self, game, None, seats, seed, owner, key, delay=pace)
            return self._add(table)

    async def _agents(
        self, key: str, seed: int, opponent: Choice, player: Choice | None
    ) -> tuple[list[str], int]:
        """Build table ``key``'s agents where their moves are played
        (:class:`~piquet_table.web.moves.MovePool`: loading a policy takes a while); their names
        and the game's seed. An agent that does not build is a :class:`MoveError` naming it."""
        searches = opponent.searches or (player is not None and player.searches)
        try:
            names, game_seed = await self.moves.open(
                key, searches, opponent.spec, self.rules, seed, player and player.spec
            )
        except (ValueError, OSError, ImportError, WorkerLost) as err:
            raise MoveError(f"the agent could not be made: {err}") from None
        return [printable(n) or "agent" if n is not None else HUMAN for n in names], game_seed

    async def move(self, table: Table, game: Game) -> int:
        """The action of ``table``'s agent to act in ``game``, played by the move pool."""
        return await self.moves.move(table.id, game)

    def _add(self, table: Table) -> Table:
        self.tables[table.id] = table
        table.start()
        return table

    def find(self, table_id: str, token: str) -> Table:
        """The open table with this id and token; :class:`MoveError` if there is none."""
        table = self.tables.get(table_id)
        if table is None or not secrets.compare_digest(table.token, token):
            raise MoveError("no such table open (it may have been closed and saved)", "no_table")
        return table

    def attach(self, table: Table, send: Send) -> None:
        """Give ``table`` to a browser (a reconnect cancels the table's expiry)."""
        if table._expiry is not None:
            table._expiry.cancel()
            table._expiry = None
        table.send_to = send

    def detach(self, table: Table) -> None:
        """The browser went away: close the table after the grace period unless it comes back."""
        table.send_to = None
        if isinstance(table, WatchTable):
            table.paused = True
        if not table.closed and table._expiry is None:
            table._expiry = asyncio.create_task(self._expire(table))

    async def _expire(self, table: Table) -> None:
        await asyncio.sleep(self.limits.reconnect_grace)
        if table.send_to is None:
            table._expiry = None
            await self.close(table)

    async def close(self, table: Table) -> None:
        """Save ``table``'s game (unless saved when it ended) and close the table. It leaves
        :attr:`tables` only once its record is written, so a table no longer listed is saved (and
        :meth:`shutdown` waits for a save under way)."""
        if table.closed and table.id not in self.tables:
            return
        await table.stop()
        if table.saved is None and table.unsaved is None:
            await self.save(table)
        await self.moves.close(table.id)
        self.tables.pop(table.id, None)

    async def save(self, table: Table) -> Path | None:
        """Write the table's record to the records folder (whole or not at all,
        :class:`~piquet_table.web.records.RecordStore`); its path, or ``None`` if none was
        written. A game is saved when it is over, or left with a person's move in it: a table
        left before any (a watched game, a ``new`` after ``new``) is not worth a record. An
        address past its records an hour, or a folder that cannot be written, is told to the
        browser (and the latter on stderr)."""
        if not (table.game.is_over or table.person_moved):
            table.unsaved = "no move of a person"
            return None
        refused = self.store.may_save(table.owner)
        if refused is not None:
            table.unsaved = refused
            await table.error(f"this game was not saved: {refused}")
            return None
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(table.created))
        name = f"{stamp}-{table.kind}-{table.id}.json"
        try:
            table.saved = await self.store.save(
                name,
                table.game,
                list(table.names),
                seed=table.seed,
                table=table.kind,
                finished=table.game.is_over,
            )
        except OSError as err:
            print(f"piquet serve: could not save {self.records / name}: {err}", file=sys.stderr)
            await table.error(f"the game record could not be saved: {err.strerror or err}")
            return None
        return table.saved

    async def shutdown(self) -> None:
        """Save and close every table, stop the agents' workers and keep the results rows (the
        server is stopping)."""
        for table in list(self.tables.values()):
            await self.close(table)
        self.moves.shutdown()
        await self.store.stop()


def _distinct(a: str, b: str) -> tuple[str, str]:
    """Two seat names, told apart if they are the same (as ``piquet play`` does)."""
    return (f"{a} (0)", f"{b} (1)") if a == b else (a, b)
