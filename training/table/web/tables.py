"""The tables in the browser: a person against an agent (:class:`PlayTable`) and two agents
watched (:class:`WatchTable`).

A table holds a game, its seats, its narration and the browser attached to it, if one is (see
:mod:`piquet_table.web.hub` for the tables open and :mod:`piquet_table.web.client` for a browser's
socket). Everything a table sends is an ``update`` (or, on opening and joining, a ``welcome``): the
view of the table (:mod:`piquet_table.web.view`; for a person, only what his seat knows), the lines
of narration the change added (:class:`~piquet_table.narrate.Narrator`, told to that seat), and the
state's ``version``. A person's move must name the version it answers: a move sent twice, sent for
a state that has moved on, sent out of turn, malformed or illegal is answered with an ``error``
message whose text says why, and changes nothing. Agents think elsewhere (worker processes, see
:mod:`piquet_table.web.moves`), one move at a time per table: the event loop only routes messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from piquet_env.actions import declare_action, done_action, pass_action
from piquet_env.cards import card_symbol, cards_of, sort_key
from piquet_env.game import Game, Phase
from piquet_table.input import InputError, parse_discards, parse_play
from piquet_table.narrate import Narrator
from piquet_table.text import Cast
from piquet_table.web.view import (
    PageStyle,
    add_settlement,
    deal_end_view,
    seat_view,
    spectator_view,
)

Send = Callable[[dict], Awaitable[None]]
"""How a table reaches its browser: an async callable taking one JSON-ready message."""


class Host(Protocol):
    """What a table needs from whoever holds it (the :class:`~piquet_table.web.hub.Hub`): its
    agents' moves, closing it, and saving its record."""

    async def move(self, table: Table, game: Game) -> int:
        """The action ``table``'s agent to act chooses in ``game`` (a copy: it may be sent to
        another process)."""

    async def close(self, table: Table) -> None:
        """Save (if not saved) and close ``table``."""

    async def save(self, table: Table) -> Path | None:
        """Write ``table``'s record; its path, or ``None`` if it was not written."""


class MoveError(ValueError):
    """A message a table refuses (out of turn, stale, illegal); the text says why, and ``code``
    (optional) names the refusal for the page to act on: ``"displaced"`` (the table was opened in
    another window; a ``join`` takes it back), ``"no_table"`` (no table is open with that id and
    token), ``"rate"`` (too many messages: the socket is closed)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class Table:
    """A game at a table: its seats, its narration and its browser (if one is attached).

    ``seat`` is the person's (``None`` when two agents play); the agents themselves live where the
    ``hub`` plays their moves (:mod:`piquet_table.web.moves`). ``table_id`` is the table's public
    id; its secret token is made here. Subclasses say how the game moves on (:meth:`advance`) and
    what a browser may ask (:meth:`handle`).
    """

    kind = "table"

    def __init__(
        self,
        hub: Host,
        game: Game,
        seat: int | None,
        names: tuple[str, str],
        seed: int,
        owner: str,
        table_id: str,
    ) -> None:
        self.hub = hub
        self.id = table_id
        self.token = secrets.token_urlsafe(24)
        self.owner = owner
        self.game = game
        self.seat = seat
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
        self.unsaved: str | None = None
        """Why no record was written, once that was decided (see the hub's ``save``)."""
        self.person_moved = False
        """Whether the person made a move (a table left without one is not saved)."""
        self.message: dict = {}
        self.created = time.time()
        self._wake = asyncio.Event()
        self._wake.set()
        self._task: asyncio.Task | None = None
        self._expiry: asyncio.Task | None = None
        self._asked: float | None = None
        """When the person's last move came (``time.perf_counter()``), until he may act again."""
        self._moving: asyncio.Future[int] | None = None
        """The agent's move being chosen (elsewhere), until it is applied."""

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
        view["unsaved"] = self.unsaved if self.saved is None and self.seat is not None else None
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
        """Let the agent to act choose (where the hub plays agents) and play; its narration."""
        before = self.game.clone()
        self.thinking = True
        # Shielded: a table closed meanwhile lets the move finish and applies it (see stop)
        # before its record is written.
        self._moving = asyncio.ensure_future(self.hub.move(self, before.clone()))
        try:
            await asyncio.shield(self._moving)
        finally:
            self.thinking = False
        self._apply_move()
        return self._moved(before)

    def _apply_move(self) -> None:
        """Apply the agent's move once chosen (once only); an agent's failure is raised."""
        moving, self._moving = self._moving, None
        if moving is not None and not moving.cancelled():
            action = moving.result()
            if not self.game.is_legal(action):  # the agent's process checked it on its copy
                raise RuntimeError(f"the agent chose action {action}, not legal here")
            self.game.apply(action)

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
            if self.game.is_over and self.saved is None and self.unsaved is None:
                await self.hub.save(self)
                async with self.lock:  # say where the record went (or why it did not)
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
        """Stop the driver; a move being thought about is let finish, and applied, first."""
        self.closed = True
        self._wake.set()
        for task in (self._task, self._expiry):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._moving is not None:  # the driver was stopped while the agent thought
            await asyncio.wait([self._moving])
            with contextlib.suppress(Exception):  # an agent's failure ends with the table
                self._apply_move()


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
            self.person_moved |= msg["type"] != "next"
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
        lo, hi = g.exchange_limits(p)
        hand = sorted(cards_of(g.hands[p]), key=sort_key)
        text = " ".join(names) or "none"
        cards = parse_discards(text, hand, lo, hi, g.rules, card_symbol, numbers=False)
        for c in cards:
            g.apply(c)
        if g.phase == Phase.EXCHANGE and g.current_player == p:
            g.apply(done_action(g.rules))  # fewer than the most: done

    def _play(self, name: str) -> None:
        g, p = self.game, self.seat
        legal = sorted(g.legal_actions(), key=sort_key)
        lead = g.trick[0] if g.trick else None
        g.apply(parse_play(name, legal, g.rules, g.hands[p], lead, card_symbol, numbers=False))


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
        pace = (self.paused, self.delay)
        if kind == "pause":
            self.paused = True
        elif kind == "resume":
            self.paused, self.steps = False, 0
        elif kind == "step":
            self.paused = True
            self.steps = 1  # one move: steps asked faster than moves come are one
        elif kind == "speed":
            self.delay = float(msg["delay"])
        else:
            await self.error(f"a {kind!r} message is for playing: here two agents play")
            return
        if kind != "step" and (self.paused, self.delay) == pace:
            return  # nothing changed: no need to send the view again
        self._interrupt.set()
        async with self.lock:
            await self._refresh()
        self.wake()
