"""Tables in the browser: a person against an agent, two agents watched, and the hub holding them.

A :class:`Hub` holds every open table. A browser's WebSocket is a :class:`Client`: it opens a
:class:`PlayTable` (``new``) or a :class:`WatchTable` (``watch``), or joins one it opened before
(``join`` with the table's id and secret token, after a reload or a dropped connection). A table
without its browser waits :attr:`Limits.reconnect_grace` seconds, then it is saved as an unfinished
record and closed. Every game is saved as a ``piquet play`` record (:mod:`piquet_env.game.record`)
in the records folder: when it ends, and when it is left unfinished.

Everything a table sends is an ``update`` (or, on opening and joining, a ``welcome``): the view of
the table (:mod:`piquet_table.web.view`; for a person, only what his seat knows), the lines of
narration the change added (:class:`~piquet_table.narrate.Narrator`, told to that seat), and the
state's ``version``. A person's move must name the version it answers: a move sent twice, sent
for a state that has moved on, sent out of turn, malformed or illegal is answered with an
``error`` message whose text says why, and changes nothing. Agents think in a worker thread, one
move at a time per table, so one table's search never holds up another's moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from piquet_agents.loop import play_turn
from piquet_env.actions import declare_action, done_action, pass_action
from piquet_env.agent import Agent
from piquet_env.cards import card_symbol, cards_of, sort_key
from piquet_env.game import Game, Phase
from piquet_env.game.record import save_record
from piquet_env.rules import Rules
from piquet_table.input import InputError, parse_discards, parse_play
from piquet_table.narrate import Narrator
from piquet_table.session import HUMAN, make_seats
from piquet_table.text import Cast
from piquet_table.web.opponents import Choice
from piquet_table.web.protocol import MODES, ProtocolError, parse_message
from piquet_table.web.view import (
    PageStyle,
    add_settlement,
    deal_end_view,
    seat_view,
    spectator_view,
)

Send = Callable[[dict], Awaitable[None]]
"""How a table reaches its browser: an async callable taking one JSON-ready message."""


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


class MoveError(ValueError):
    """A message a table refuses (out of turn, stale, illegal); the text says why."""


class _Seat:
    """The person's seat: never asked to act (moves come from the browser)."""

    name = HUMAN

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reseed."""

    def act(self, turn: object) -> int:
        """Never called."""
        raise RuntimeError("the person's seat is played from the browser")


class Table:
    """A game at a table: its seats, its narration and its browser (if one is attached).

    ``agents`` holds an agent per seat, ``None`` for the person's (at most one). Subclasses say
    how the game moves on (:meth:`advance`) and what a browser may ask (:meth:`handle`).
    """

    kind = "table"

    def __init__(
        self,
        hub: Hub,
        game: Game,
        agents: list[Agent | None],
        names: tuple[str, str],
        seed: int,
        owner: str,
    ) -> None:
        self.hub = hub
        self.id = secrets.token_hex(8)
        self.token = secrets.token_urlsafe(24)
        self.owner = owner
        self.game = game
        self.seat: int | None = next((p for p in (0, 1) if agents[p] is None), None)
        self.seats: list[Agent] = [a if a is not None else _Seat() for a in agents]
        self.names = names
        self.seed = seed
        self.cast = Cast(names, self.seat)
        self.narrator = Narrator(game.rules, self.cast, PageStyle(), tables=False)
        self.log: list[str] = self.narrator.narrate(None, game, game.events)
        self.version = 0
        self.lock = asyncio.Lock()
        self.thinking = False
        self.ended: tuple[Game, list[dict]] | None = None
        """While a deal's breakdown is shown: the game before its last card, and that move's
        events up to the deal's end."""
        self._held: list[dict] = []
        """The events of the next deal, narrated once the breakdown has been seen."""
        self.send_to: Send | None = None
        self.closed = False
        self.saved: Path | None = None
        self.message: dict = {}
        self.created = time.time()
        self._wake = asyncio.Event()
        self._wake.set()
        self._task: asyncio.Task | None = None
        self._expiry: asyncio.Task | None = None
        self._asked: float | None = None
        self._moving: asyncio.Future | None = None
        """When the person's last move came (``time.perf_counter()``), until he may act again."""

    # ------------------------------------------------------------------ what is shown

    def view(self) -> dict:
        """The table now, as its browser may see it."""
        g = self.game
        if self.ended is not None:
            view = deal_end_view(*self.ended, self.seat, self.names)
        elif self.seat is None:
            view = spectator_view(g, self.names)
        else:
            view = seat_view(g, self.seat, self.names)
        add_settlement(view, g, self.cast)
        p = g.current_player
        busy = not g.is_over and self.ended is None and p >= 0 and p != self.seat
        view["thinking"] = self.names[p] if busy else None
        view["saved"] = self.saved.name if self.saved is not None else None
        return view

    def welcome(self) -> dict:
        """The message that opens (or reopens) the table in a browser: its id and token, the whole
        narration so far and the view."""
        return {
            "type": "welcome",
            "kind": self.kind,
            "table": self.id,
            "token": self.token,
            "version": self.version,
            "log": list(self.log),
            "view": self.message.get("view") or self.view(),
        }

    async def _update(self, lines: list[str]) -> None:
        """Send the view and the new narration ``lines`` (under the lock, right after a change)."""
        self.log += lines
        view = self.view()
        self.message = {
            "type": "update",
            "table": self.id,
            "version": self.version,
            "log": lines,
            "view": view,
        }
        if self._asked is not None and (view["choice"] is not None or view["phase"] == "over"):
            # the person may act again: how long the server took since his move came
            self.message["answered_in"] = round(time.perf_counter() - self._asked, 6)
            self._asked = None
        await self.send(self.message)

    async def _refresh(self) -> None:
        """Send the view again, unchanged in version (the pace changed, the record was saved)."""
        self.message = {
            "type": "update",
            "table": self.id,
            "version": self.version,
            "log": [],
            "view": self.view(),
        }
        await self.send(self.message)

    async def send(self, message: dict) -> None:
        """Send ``message`` to the browser, if one is attached (a closed socket is let go)."""
        if self.send_to is not None:
            try:
                await self.send_to(message)
            except Exception:  # the browser went away mid-send: it can join again
                self.send_to = None

    async def error(self, text: str) -> None:
        """Tell the browser its message was refused, and why."""
        await self.send({"type": "error", "message": text, "version": self.version})

    # ------------------------------------------------------------------ moving the game on

    def _moved(self, before: Game) -> list[str]:
        """Narrate what happened since ``before``; at a deal's end, hold the next deal back until
        the breakdown has been seen (:meth:`_go_on`). Bumps the version."""
        g = self.game
        new = g.events[len(before.events) :]
        k = next((i for i, e in enumerate(new) if e["type"] == "deal"), len(new))
        lines = self.narrator.narrate(before, g, new[:k])
        if k < len(new):
            self.ended = (before, new[:k])
            self._held = new[k:]
        self.version += 1
        return lines

    def _go_on(self) -> list[str]:
        """Leave a deal's breakdown: narrate the next deal."""
        lines = self.narrator.narrate(None, self.game, self._held)
        self.ended, self._held = None, []
        self.version += 1
        return lines

    async def _agent_move(self) -> list[str]:
        """Let the agent to act choose (in a worker thread) and play; its narration."""
        before = self.game.clone()
        self.thinking = True
        # Shielded: a table closed meanwhile waits for the move's thread (see stop) before its
        # record is written, so no thread changes the game while it is saved.
        self._moving = asyncio.ensure_future(asyncio.to_thread(play_turn, self.game, self.seats))
        try:
            await asyncio.shield(self._moving)
        finally:
            self.thinking = False
        return self._moved(before)

    def start(self) -> None:
        """Start the table's driver (the task that plays the agents' moves)."""
        self._task = asyncio.create_task(self._drive())

    async def _drive(self) -> None:
        while not self.closed:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.advance()
            except Exception as err:  # an agent failed: say so, keep the record
                await self.error(f"the game cannot go on: {type(err).__name__}: {err}")
                await self.hub.close(self)
                return
            if self.game.is_over and self.saved is None and await self.hub.save(self):
                async with self.lock:  # say where the record went
                    await self._refresh()

    def wake(self) -> None:
        """Let the driver look at the table again."""
        self._wake.set()

    async def advance(self) -> None:
        """Play every move that is not the person's to make (subclasses)."""
        raise NotImplementedError

    async def handle(self, msg: dict) -> None:
        """Answer a checked message from the browser (subclasses)."""
        raise NotImplementedError

    async def stop(self) -> None:
        """Stop the driver; a move being thought about is let finish in its thread first."""
        self.closed = True
        self._wake.set()
        for task in (self._task, self._expiry):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._moving is not None:
            await asyncio.wait([self._moving])
            if not self._moving.cancelled():
                self._moving.exception()  # retrieved: an agent's failure ends with the table


class PlayTable(Table):
    """A person (the seat without an agent) against an agent."""

    kind = "play"

    async def advance(self) -> None:
        """The agent's moves until the person has a choice."""
        while not self.closed:
            async with self.lock:
                g = self.game
                if g.is_over or self.ended is not None or g.current_player == self.seat:
                    return
                lines = await self._agent_move()
                await self._update(lines + self._forced())

    def _forced(self) -> list[str]:
        """Play the person's only legal card for him, as ``piquet play`` does (so no view ever
        asks him to choose it); the narration."""
        g, lines = self.game, []
        while not g.is_over and self.ended is None and g.current_player == self.seat:
            legal = g.legal_actions()
            if g.phase != Phase.PLAY or len(legal) != 1:
                break
            before = g.clone()
            g.apply(legal[0])
            lines.append(f"Your only legal card is {card_symbol(legal[0])}: it is played for you.")
            lines += self._moved(before)
        return lines

    async def handle(self, msg: dict) -> None:
        """A move: refused with the reason (nothing changes), or played and sent back."""
        g = self.game
        agent_to_act = not g.is_over and self.ended is None and g.current_player == 1 - self.seat
        if self.thinking or agent_to_act:  # answered at once, without waiting for the move
            await self.error(f"it is not your turn: {self.names[1 - self.seat]} is thinking")
            return
        async with self.lock:
            asked = time.perf_counter()
            try:
                lines = self._move(msg)
            except MoveError as err:
                await self.error(str(err))
                return
            self._asked = asked
            await self._update(lines + self._forced())
        self.wake()

    def _move(self, msg: dict) -> list[str]:
        """Check and play the person's move; its narration. :class:`MoveError` if refused."""
        g, p, kind = self.game, self.seat, msg["type"]
        assert p is not None
        if kind not in ("exchange", "declare", "pass", "play", "next"):
            raise MoveError(f"a {kind!r} message is for watching two agents, not for play")
        if g.is_over:
            raise MoveError("the game is over: start a new one")
        if msg["version"] != self.version:
            raise MoveError(
                f"this move answers version {msg['version']} of the table, which is now at "
                f"version {self.version}: it was not played"
            )
        if kind == "next":
            if self.ended is None:
                raise MoveError("there is no deal breakdown to go on from")
            return self._go_on()
        if self.ended is not None:
            raise MoveError("the deal is over: go on to the next deal first")
        if g.current_player != p:
            raise MoveError(f"it is not your turn: {self.names[g.current_player]} is to play")
        phase = {Phase.EXCHANGE: "exchange", Phase.DECLARE: "declare", Phase.PLAY: "play"}
        want = phase[g.phase]
        if kind != want and not (want == "declare" and kind == "pass"):
            raise MoveError(f"it is the {_PHASE_WORDS[g.phase]}: {_ASKED[want]}")
        before = g.clone()
        try:
            if kind == "exchange":
                self._exchange(msg["cards"])
            elif kind == "play":
                self._play(msg["card"])
            else:
                action = declare_action(g.rules) if kind == "declare" else pass_action(g.rules)
                if not g.is_legal(action):
                    raise MoveError("you may only pass: elder's declaration is better")
                g.apply(action)
        except InputError as err:
            raise MoveError(str(err)) from None
        return self._moved(before)

    def _exchange(self, names: list[str]) -> None:
        g, p = self.game, self.seat
        _no_numbers(names)
        lo, hi = g.exchange_limits(p)
        hand = sorted(cards_of(g.hands[p]), key=sort_key)
        cards = parse_discards(" ".join(names) or "none", hand, lo, hi, g.rules, card_symbol)
        for c in cards:
            g.apply(c)
        if g.phase == Phase.EXCHANGE and g.current_player == p:
            g.apply(done_action(g.rules))  # fewer than the most: done

    def _play(self, name: str) -> None:
        g, p = self.game, self.seat
        _no_numbers([name])
        legal = sorted(g.legal_actions(), key=sort_key)
        lead = g.trick[0] if g.trick else None
        g.apply(parse_play(name, legal, g.rules, g.hands[p], lead, card_symbol))


_PHASE_WORDS = {
    Phase.EXCHANGE: "exchange",
    Phase.DECLARE: "declarations",
    Phase.PLAY: "play",
}
_ASKED = {
    "exchange": "choose the cards to discard, then done",
    "declare": "declare or pass",
    "play": "play a card",
}


def _no_numbers(names: list[str]) -> None:
    """The page names cards; a number (the terminal's choice number) is refused."""
    for name in names:
        if name.strip().isdigit():
            raise MoveError(f"{name.strip()[:8]!r} is not a card: name one, such as QH or 10s")


class WatchTable(Table):
    """Two agents play; the browser paces them (``speed``, ``pause``, ``resume``, ``step``)."""

    kind = "watch"

    def __init__(self, *args: object, delay: float, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.delay = delay
        self.paused = False
        self.steps = 0
        self._interrupt = asyncio.Event()

    def view(self) -> dict:
        """The view, with the pace."""
        view = super().view()
        view["paused"] = self.paused
        view["delay"] = self.delay
        if self.paused:
            view["thinking"] = None
        return view

    async def advance(self) -> None:
        """Move on at the chosen pace until paused (a step at a time then) or over."""
        while not self.closed and not self.game.is_over:
            if self.paused:
                if not self.steps:
                    return
                self.steps -= 1
            async with self.lock:
                lines = self._go_on() if self.ended is not None else await self._agent_move()
                await self._update(lines)
            if not self.paused and not self.game.is_over:
                await self._sleep(self.delay * (4 if self.ended is not None else 1))

    async def _sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or less if the pace changes."""
        self._interrupt.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._interrupt.wait(), seconds)

    async def handle(self, msg: dict) -> None:
        """Pace the game; a move is refused (nobody's seat is the browser's)."""
        kind = msg["type"]
        if kind == "pause":
            self.paused = True
        elif kind == "resume":
            self.paused, self.steps = False, 0
        elif kind == "step":
            self.paused = True
            self.steps += 1
        elif kind == "speed":
            self.delay = float(msg["delay"])
        else:
            await self.error(f"a {kind!r} message is for playing: here two agents play")
            return
        self._interrupt.set()
        async with self.lock:
            await self._refresh()
        self.wake()


class Hub:
    """Every open table, the opponents a page may choose, the records folder and the limits.

    ``rules`` are the server's; ``choices`` the agents a page may pick (the first is the default,
    see :func:`~piquet_table.web.opponents.opponent_choices`); ``records`` the folder games are
    saved in; ``seed`` (optional) makes the tables' cards and agents a repeatable sequence.
    """

    def __init__(
        self,
        rules: Rules,
        choices: dict[str, Choice],
        records: Path,
        *,
        seed: int | None = None,
        limits: Limits | None = None,
    ) -> None:
        if not choices:
            raise ValueError("a hub needs at least one opponent to offer")
        self.rules = rules
        self.choices = choices
        self.default = next(iter(choices))
        self.records = Path(records)
        self.limits = limits or Limits()
        self.tables: dict[str, Table] = {}
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

    def _room(self, owner: str) -> None:
        if len(self.tables) >= self.limits.max_tables:
            raise MoveError(
                f"the server has {self.limits.max_tables} tables open, its limit: try again later"
            )
        mine = sum(t.owner == owner for t in self.tables.values())
        if mine >= self.limits.max_per_client:
            raise MoveError(
                f"you have {mine} tables open, the most one client may: leave one (it is saved) "
                f"or let it expire ({self.limits.reconnect_grace:g} s after its page closed)"
            )

    async def open_play(self, owner: str, opponent: str | None, mode: str) -> PlayTable:
        """A new partie (or deal) against the chosen opponent; the person sits at player 0."""
        self._room(owner)
        choice = self.choice(opponent)
        seed = self._seeds.getrandbits(32)
        agents, game_seed = await _seats(choice.spec, self.rules, seed)
        game = Game(self.rules, seed=game_seed, mode=mode)
        names = _distinct(HUMAN, agents[1].name)  # type: ignore[union-attr]
        table = PlayTable(self, game, agents, names, seed, owner)
        return self._add(table)

    async def open_watch(
        self, owner: str, players: list[str] | None, mode: str, delay: float | None
    ) -> WatchTable:
        """Two chosen agents play each other (player 0 first in the list)."""
        self._room(owner)
        first, second = (self.choice(c) for c in (players or [self.default, self.default]))
        seed = self._seeds.getrandbits(32)
        agents, game_seed = await _seats(second.spec, self.rules, seed, first.spec)
        game = Game(self.rules, seed=game_seed, mode=mode)
        names = _distinct(agents[0].name, agents[1].name)  # type: ignore[union-attr]
        pace = self.limits.watch_delay if delay is None else delay
        table = WatchTable(self, game, agents, names, seed, owner, delay=pace)
        return self._add(table)

    def _add(self, table: Table) -> Table:
        self.tables[table.id] = table
        table.start()
        return table

    def find(self, table_id: str, token: str) -> Table:
        """The open table with this id and token; :class:`MoveError` if there is none."""
        table = self.tables.get(table_id)
        if table is None or not secrets.compare_digest(table.token, token):
            raise MoveError("no such table open (it may have been closed and saved)")
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
        if table.saved is None:
            await self.save(table)
        self.tables.pop(table.id, None)

    async def save(self, table: Table) -> Path | None:
        """Write the table's record to the records folder (whole or not at all); its path, or
        ``None`` if it could not be written (said on stderr and to the browser)."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(table.created))
        path = self.records / f"{stamp}-{table.kind}-{table.id}.json"
        try:
            table.saved = await asyncio.to_thread(
                save_record,
                path,
                table.game,
                list(table.names),
                seed=table.seed,
                table=table.kind,
                finished=table.game.is_over,
            )
        except OSError as err:
            print(f"piquet serve: could not save {path}: {err}", file=sys.stderr)
            await table.error(f"the game record could not be saved: {err.strerror or err}")
            return None
        return table.saved

    async def shutdown(self) -> None:
        """Save and close every table (the server is stopping)."""
        for table in list(self.tables.values()):
            await self.close(table)


async def _seats(
    opponent: str, rules: Rules, seed: int, player: str | None = None
) -> tuple[list[Agent | None], int]:
    """:func:`~piquet_table.session.make_seats` in a worker thread (loading a policy takes a
    while); an agent that does not build is a :class:`MoveError` naming it."""
    try:
        return await asyncio.to_thread(make_seats, opponent, rules, seed, player)
    except (ValueError, OSError, ImportError) as err:
        raise MoveError(f"the agent could not be made: {err}") from None


def _distinct(a: str, b: str) -> tuple[str, str]:
    """Two seat names, told apart if they are the same (as ``piquet play`` does)."""
    return (f"{a} (0)", f"{b} (1)") if a == b else (a, b)


class Client:
    """One browser's WebSocket: it holds at most one table at a time.

    ``send`` delivers a message to the browser; ``owner`` is what the table limits count by (the
    client's address). :meth:`receive` takes each text frame; :meth:`gone` is called when the
    socket closes.
    """

    def __init__(self, hub: Hub, send: Send, owner: str) -> None:
        self.hub = hub
        self._send = send
        self.owner = owner
        self.table: Table | None = None

    async def receive(self, text: object) -> None:
        """Check one message and act on it; every refusal is an ``error`` message."""
        try:
            msg = parse_message(text)
            await self._dispatch(msg)
        except (ProtocolError, MoveError) as err:
            version = self.table.version if self.table is not None else None
            await self._send({"type": "error", "message": str(err), "version": version})

    async def _dispatch(self, msg: dict) -> None:
        kind = msg["type"]
        if kind in ("new", "watch"):
            wanted = [msg.get("opponent")] if kind == "new" else msg.get("players") or [None]
            for cid in wanted:
                self.hub.choice(cid)  # a bad choice changes nothing
            await self._leave(close=True)  # a new game leaves the one under way (saved)
            mode = msg.get("mode", "partie")
            if kind == "new":
                table: Table = await self.hub.open_play(self.owner, msg.get("opponent"), mode)
            else:
                table = await self.hub.open_watch(
                    self.owner, msg.get("players"), mode, msg.get("delay")
                )
            await self._take(table)
        elif kind == "join":
            table = self.hub.find(msg["table"], msg["token"])
            if table is not self.table:
                await self._leave()
                if table.send_to is not None:
                    await table.send(
                        {"type": "error", "message": "this table was opened in another window"}
                    )
                await self._take(table)
            else:
                await self._send(table.welcome())
        elif kind == "leave":
            if self.table is None:
                raise MoveError("there is no table to leave")
            await self._leave(close=True)
            await self._send({"type": "left"})
        elif self.table is None:
            raise MoveError("no table is open here: start a new one")
        elif self.table.closed:
            self.table = None
            raise MoveError("this table was closed (its game is saved): start a new one")
        elif self.table.send_to is not self._send:
            self.table = None
            raise MoveError("this table was opened in another window: play it there")
        else:
            await self.table.handle(msg)

    async def _take(self, table: Table) -> None:
        async with table.lock:
            self.hub.attach(table, self._send)
            self.table = table
            await self._send(table.welcome())
        table.wake()

    async def _leave(self, close: bool = False) -> None:
        """Let go of the current table: close it if asked (or if its game is over)."""
        table, self.table = self.table, None
        if table is None:
            return
        if close or table.game.is_over:
            await self.hub.close(table)
        elif table.send_to is self._send:
            self.hub.detach(table)

    async def gone(self) -> None:
        """The socket closed: the table waits for its browser to come back."""
        table, self.table = self.table, None
        if table is not None and table.send_to is self._send:
            self.hub.detach(table)
