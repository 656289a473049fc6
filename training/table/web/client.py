"""A browser's WebSocket: the messages it sends, routed to the hub and to its table.

A :class:`Client` opens a :class:`~piquet_table.web.tables.PlayTable` (``new``) or a
:class:`~piquet_table.web.tables.WatchTable` (``watch``), or joins one it opened before (``join``
with the table's id and secret token, after a reload or a dropped connection); every other message
goes to its table. Every refusal is an ``error`` message saying why.
"""

from __future__ import annotations

from piquet_table.web.hub import Hub
from piquet_table.web.protocol import ProtocolError, parse_message
from piquet_table.web.tables import MoveError, Send, Table

DISPLACED = {
    "type": "error",
    "code": "displaced",
    "message": "this table was opened in another window: play it there, or here to take it back",
}
"""What a socket is told when another window joins its table (and when it moves after that)."""


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
            reply = {"type": "error", "message": str(err), "version": version}
            if getattr(err, "code", None) is not None:
                reply["code"] = err.code  # type: ignore[union-attr]
            await self._send(reply)

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
            if table is self.table and self._holds(table):
                await self._send(table.welcome())
                return
            if table is not self.table:
                await self._leave()
            if table.send_to is not None:  # the window that had it is told, and lets it go
                await table.send(DISPLACED)
            await self._take(table)
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
        elif not self._holds(self.table):
            raise MoveError(DISPLACED["message"], "displaced")
        else:
            await self.table.handle(msg)

    async def _take(self, table: Table) -> None:
        async with table.lock:
            self.hub.attach(table, self._send)
            self.table = table
            await self._send(table.welcome())
        table.wake()

    def _holds(self, table: Table) -> bool:
        """Whether ``table`` is attached to this socket (not displaced by another window)."""
        return table.send_to is self._send

    async def _leave(self, close: bool = False) -> None:
        """Let go of the current table: close it if asked (or if its game is over), unless
        another window holds it now."""
        table, self.table = self.table, None
        if table is None or not (self._holds(table) or table.send_to is None):
            return
        if close or table.game.is_over:
            await self.hub.close(table)
        else:
            self.hub.detach(table)

    async def gone(self) -> None:
        """The socket closed: the table waits for its browser to come back."""
        table, self.table = self.table, None
        if table is not None and table.send_to is self._send:
            self.hub.detach(table)
