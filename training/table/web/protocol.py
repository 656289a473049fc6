"""The messages a browser may send to a table, checked before anything reads them.

The browser is untrusted: every WebSocket message is a JSON object of at most
:data:`MAX_MESSAGE_CHARS` characters whose ``type`` is one of :data:`MESSAGES`, with exactly the
fields that type allows, each of the right JSON type and within its bounds. Anything else is a
:class:`ProtocolError`, whose text the server sends back as an ``error`` message; no table sees
the message. Moves carry the ``version`` of the state they answer, so a message sent twice, or
sent for a state that has moved on, is refused (see :mod:`piquet_table.web.tables`).

Messages (``?`` marks an optional field):

==========  =====================================================  =============================
type        fields                                                 what it does
==========  =====================================================  =============================
new         opponent?, mode?                                       a partie against an agent
watch       players?, mode?, delay?                                watch two agents play
join        table, token                                           reconnect to a table
exchange    cards, version                                         discard ``cards``, take as many
declare     version                                                declare the combination shown
pass        version                                                sink it
play        card, version                                          play a card (``"QH"``, ``"10s"``)
next        version                                                go on after a deal's breakdown
pause       (none)                                                 watching: stop after this move
resume      (none)                                                 watching: go on
step        (none)                                                 watching: one move
speed       delay                                                  watching: seconds between moves
leave       (none)                                                 leave the table (it is saved)
==========  =====================================================  =============================

>>> parse_message('{"type": "play", "card": "QH", "version": 3}')
{'type': 'play', 'card': 'QH', 'version': 3}
>>> parse_message('{"type": "play", "card": "QH"}')
Traceback (most recent call last):
...
piquet_table.web.protocol.ProtocolError: a 'play' message needs 'version'
"""

from __future__ import annotations

import math

from piquet_env.untrusted import UntrustedError, parse_json, short_json

MAX_MESSAGE_CHARS = 2048
"""Longest message a browser may send (a move or a command takes under 200 characters)."""

MAX_TEXT = 200
"""Longest string field (an agent spec, a table id, a token)."""

MAX_VERSION = 10**9
"""Largest state version a message may name."""

MAX_DELAY = 5.0
"""Longest pause between two moves of a watched game, in seconds."""

MODES = ("partie", "deal")
"""What a new table plays: a whole partie or one deal."""


class ProtocolError(ValueError):
    """A message that is not one a table accepts; its text says why (sent back to the browser)."""


def _text(limit: int = MAX_TEXT):
    def check(value: object) -> bool:
        return isinstance(value, str) and 0 < len(value) <= limit

    check.want = f"a string of 1 to {limit} characters"  # type: ignore[attr-defined]
    return check


def _version(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_VERSION


_version.want = "the version of the state it answers, an integer"  # type: ignore[attr-defined]


def _delay(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= MAX_DELAY
    )


_delay.want = f"a number of seconds from 0 to {MAX_DELAY:g}"  # type: ignore[attr-defined]


def _mode(value: object) -> bool:
    return value in MODES


_mode.want = " or ".join(repr(m) for m in MODES)  # type: ignore[attr-defined]


def _strings(most: int, limit: int):
    def check(value: object) -> bool:
        return (
            isinstance(value, list)
            and len(value) <= most
            and all(isinstance(x, str) and 0 < len(x) <= limit for x in value)
        )

    check.want = f"a list of at most {most} strings"  # type: ignore[attr-defined]
    return check


def _two_specs(value: object) -> bool:
    return _strings(2, MAX_TEXT)(value) and len(value) == 2  # type: ignore[arg-type]


_two_specs.want = "a list of two agent names"  # type: ignore[attr-defined]

_MOVE = {"version": _version}
MESSAGES: dict[str, tuple[dict, dict]] = {
    "new": ({}, {"opponent": _text(), "mode": _mode}),
    "watch": ({}, {"players": _two_specs, "mode": _mode, "delay": _delay}),
    "join": ({"table": _text(64), "token": _text(64)}, {}),
    "exchange": ({"cards": _strings(12, 16), **_MOVE}, {}),
    "declare": (_MOVE, {}),
    "pass": (_MOVE, {}),
    "play": ({"card": _text(16), **_MOVE}, {}),
    "next": (_MOVE, {}),
    "pause": ({}, {}),
    "resume": ({}, {}),
    "step": ({}, {}),
    "speed": ({"delay": _delay}, {}),
    "leave": ({}, {}),
}
"""Each message type: its required fields and its optional fields, each with its check."""


def parse_message(text: object) -> dict:
    """The checked message in ``text`` (a WebSocket text frame); :class:`ProtocolError` saying
    what is wrong otherwise."""
    if not isinstance(text, str):
        raise ProtocolError("messages are JSON text, not binary frames")
    if len(text) > MAX_MESSAGE_CHARS:
        raise ProtocolError(
            f"message of {len(text):,} characters: at most {MAX_MESSAGE_CHARS:,} are read"
        )
    try:
        msg = parse_json(text)
    except UntrustedError:
        raise ProtocolError("not a JSON message") from None
    if not isinstance(msg, dict):
        raise ProtocolError("a message is a JSON object with a 'type'")
    kind = msg.get("type")
    if not isinstance(kind, str) or kind not in MESSAGES:
        raise ProtocolError(
            f"unknown message type {short_json(kind, 40)}; expected one of {', '.join(MESSAGES)}"
        )
    required, optional = MESSAGES[kind]
    for key in required:
        if key not in msg:
            raise ProtocolError(f"a {kind!r} message needs {key!r}")
    for key, value in msg.items():
        if key == "type":
            continue
        check = required.get(key) or optional.get(key)
        if check is None:
            raise ProtocolError(f"a {kind!r} message has no field {short_json(key, 40)}")
        if not check(value):
            raise ProtocolError(
                f"{kind!r}: {key!r} must be {check.want}, got {short_json(value, 40)}"
            )
    return msg
