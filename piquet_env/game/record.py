"""Game records: the event log as JSON, on disk, and replaying a log into exactly the same game.

A game's :attr:`~piquet_env.game.state.Game.events` is a list of plain dicts (JSON-serializable):
``partie`` (rules, mode), ``cut``, ``deal`` (the dealt cards and talon order), ``action`` (player,
action id, name, ``auto`` for forced declaration decisions), ``score``, ``trick``, ``deal_end`` (the
score breakdowns), ``tie_break`` and ``result``. The deals and the players' own actions are enough
to rebuild the game: :func:`replay` does that and checks that every event comes out the same.

A *record* (:func:`record_of`, :func:`save_record`, :func:`load_record`) is the JSON document
``{"format": "piquet-log/1", "agents": [name, name], ..., "events": [...]}``. Records come from
files, so they are read as hostile: every malformed field ends in a :class:`RecordError` (a
``ValueError``) naming the field and the event's index, never in another exception.

>>> from piquet_env.game import Game
>>> g = Game(seed=1, mode="deal")
>>> replay(to_json(g, agents=["a", "b"])).current_player == g.current_player
True
>>> load_events([None])
Traceback (most recent call last):
...
piquet_env.game.record.RecordError: event 0 is not an object (got null)
"""

from __future__ import annotations

import json
from pathlib import Path

from piquet_env.cards import parse_card
from piquet_env.files import write_text
from piquet_env.game.state import MODES, Game, check_deal
from piquet_env.rules import Rules
from piquet_env.untrusted import UntrustedError, parse_json, read_regular_file
from piquet_env.untrusted import json_kind as _kind
from piquet_env.untrusted import short_json as _short

RECORD_FORMAT = "piquet-log/1"
"""The ``format`` string of a game record."""

MAX_RECORD_BYTES = 16 * 2**20
"""Largest record file :func:`load_record` reads (a 12-deal partie takes about 100 KB)."""

MAX_NAME_CHARS = 200
"""Longest agent name a record may hold."""

_RULE_FIELDS = Rules().to_dict()


class RecordError(ValueError):
    """A game record (a file, a JSON document or an event list) that is not a valid one; the
    message names the file, the field and the event index where it can."""


def to_json(game: Game, **extra: object) -> str:
    """The game's event log as a JSON document; ``extra`` keys (e.g. agent names) are added."""
    return json.dumps({"format": RECORD_FORMAT, **extra, "events": game.events})


def record_of(game: Game, agents: list[str] | tuple[str, str], **extra: object) -> dict:
    """The record of ``game`` as a dict: its event log plus the agents' names (one per player)."""
    if len(agents) != 2 or not all(isinstance(a, str) for a in agents):
        raise RecordError(f"a record names two agents, got {agents!r}")
    return json.loads(to_json(game, agents=list(agents), **extra))


# ---------------------------------------------------------------------- files


def save_record(
    path: str | Path, game: Game, agents: list[str] | tuple[str, str], **extra: object
) -> Path:
    """Write the record of ``game`` (see :func:`record_of`) to ``path`` and return the path.

    Missing directories are made; the file is written whole or not at all (a temporary file in the
    same directory, then renamed). Raises ``OSError`` if it cannot be written.
    """
    path = Path(path)
    text = json.dumps(record_of(game, agents, **extra)) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text(path, text)


def load_record(path: str | Path) -> dict:
    """Read and check a record file written by :func:`save_record` (or ``to_json``).

    Raises :class:`RecordError` naming the file and the problem: missing, not a regular file, over
    :data:`MAX_RECORD_BYTES`, not UTF-8, not JSON (or nested too deeply), or not a valid record
    (see :func:`check_record`).
    """
    path = Path(path)
    try:
        data = read_regular_file(path, MAX_RECORD_BYTES, "a game record")
    except UntrustedError as err:
        raise RecordError(str(err)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RecordError(f"{path}: not UTF-8 text (byte {err.start})") from None
    try:
        return parse_record(text)
    except RecordError as err:
        raise RecordError(f"{path}: {err}") from None


def parse_record(text: str) -> dict:
    """Read and check a record from its JSON text (a file's contents, an upload), as hostile as
    :func:`load_record` reads a file: :class:`RecordError` if it is not JSON, is nested too
    deeply, holds ``NaN``, or is not a valid record (see :func:`check_record`)."""
    return check_record(_parse_json(text))


def _parse_json(text: str) -> object:
    """JSON text as Python objects (:func:`~piquet_env.untrusted.parse_json`: no ``NaN``, no
    ``Infinity``, bounded nesting); :class:`RecordError` if it is not JSON."""
    try:
        return parse_json(text)
    except UntrustedError as err:
        raise RecordError(f"not a JSON game record ({err})") from None


def check_record(doc: object) -> dict:
    """Check a record document: ``format``, two agent names (strings), and the event list (see
    :func:`load_events`). Returns the document (a bare event list comes back as
    ``{"events": list}``); :class:`RecordError` names what is wrong."""
    if isinstance(doc, list):  # a bare event list (``game.events`` dumped as it is)
        doc = {"events": doc}
    if not isinstance(doc, dict):
        raise RecordError(f"not a piquet game record: a JSON {_kind(doc)}, not an object")
    fmt = doc.get("format", RECORD_FORMAT)
    if fmt != RECORD_FORMAT:
        raise RecordError(f"'format' is {_short(fmt)}, expected {RECORD_FORMAT!r}")
    agents = doc.get("agents")
    if agents is not None:
        if not (isinstance(agents, list) and len(agents) == 2):
            raise RecordError(f"'agents' must be a list of two names, got {_short(agents)}")
        for i, name in enumerate(agents):
            if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS:
                raise RecordError(
                    f"'agents'[{i}] must be a name of 1 to {MAX_NAME_CHARS} characters, "
                    f"got {_short(name)}"
                )
    load_events(doc)
    return doc


# ---------------------------------------------------------------------- checking events


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _field(e: dict, i: int, key: str, ok, want: str, default: object = ...) -> object:
    """``e[key]`` if ``ok`` accepts it (or ``default`` when absent and one is given)."""
    if key not in e:
        if default is not ...:
            return default
        raise RecordError(f"event {i} ({e['type']}): no {key!r} field")
    value = e[key]
    if not ok(value):
        raise RecordError(f"event {i} ({e['type']}): {key!r} must be {want}, got {_short(value)}")
    return value


def _check_rules(e: dict, i: int) -> Rules:
    d = _field(e, i, "rules", lambda x: isinstance(x, dict), "an object")
    for key, value in d.items():
        if key not in _RULE_FIELDS:
            raise RecordError(f"event {i} (partie): unknown rule option {_short(key)}")
        default = _RULE_FIELDS[key]
        if key == "variants":
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif key == "younger_max_exchange":
            ok = value is None or _is_int(value)
        elif isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = _is_int(value) and abs(value) <= 1000
        else:
            ok = isinstance(value, type(default))
        if not ok:
            raise RecordError(f"event {i} (partie): rule option {key!r} is {_short(value)}")
    try:
        return Rules.from_dict(d)
    except ValueError as err:
        raise RecordError(f"event {i} (partie): bad rules: {err}") from None


def _check_event(e: dict, i: int, rules: Rules) -> None:
    """Check the fields :func:`replay` reads from event ``i`` (the others are compared whole)."""
    kind = e["type"]
    if kind == "action":
        _field(e, i, "player", lambda x: _is_int(x) and x in (0, 1), "0 or 1")
        _field(e, i, "action", _is_int, "an integer action id")
        _field(e, i, "auto", lambda x: isinstance(x, bool), "true or false", False)
    elif kind == "deal":
        _field(e, i, "elder", lambda x: _is_int(x) and x in (0, 1), "0 or 1")
        for key in ("elder_hand", "younger_hand", "talon"):
            _field(e, i, key, lambda x: isinstance(x, str), "a string of card names")
        try:
            check_deal((e["elder_hand"], e["younger_hand"], e["talon"]), rules)
        except ValueError as err:
            raise RecordError(f"event {i} (deal): {err}") from None
    elif kind == "cut":
        cards = _field(
            e,
            i,
            "cards",
            lambda x: isinstance(x, list) and len(x) == 2 and all(isinstance(c, str) for c in x),
            "two card names",
        )
        try:
            if any(parse_card(c) not in rules.pack for c in cards):
                raise ValueError(f"a card not in the {rules.pack_size}-card pack")
        except ValueError as err:
            raise RecordError(f"event {i} (cut): 'cards': {err}") from None
        _field(e, i, "elder", lambda x: _is_int(x) and x in (0, 1), "0 or 1")


def load_events(doc: str | dict | list) -> list[dict]:
    """The checked event list from a JSON string, a record (:func:`to_json`) or a list of events.

    Every event must be an object with a string ``type``; the first is the ``partie`` event, and
    the fields that :func:`replay` reads (rules, mode, totals, the deals' cards, the actions) must
    have the right types and values. Raises :class:`RecordError` naming the field and the event
    index otherwise.
    """
    if isinstance(doc, str):
        doc = _parse_json(doc)
    if isinstance(doc, dict):
        if "events" not in doc:
            raise RecordError("not a piquet game record: no 'events' key")
        doc = doc["events"]
    if not isinstance(doc, list):
        raise RecordError(f"'events' must be a list of events, got a JSON {_kind(doc)}")
    if not doc:
        raise RecordError("'events' is empty: a record starts with a 'partie' event")
    for i, e in enumerate(doc):
        if not isinstance(e, dict):
            raise RecordError(f"event {i} is not an object (got {_short(e)})")
        if not isinstance(e.get("type"), str):
            raise RecordError(f"event {i}: 'type' must be a string, got {_short(e.get('type'))}")
    start = doc[0]
    if start["type"] != "partie":
        raise RecordError("not a piquet event log: it must start with a 'partie' event")
    rules = _check_rules(start, 0)
    _field(start, 0, "mode", lambda x: x in MODES, f"one of {MODES}")
    _field(
        start,
        0,
        "deal_number",
        lambda x: _is_int(x) and 0 <= x < rules.deals,
        f"an integer 0..{rules.deals - 1}",
        0,
    )
    _field(
        start,
        0,
        "totals",
        lambda x: isinstance(x, list) and len(x) == 2 and all(_is_int(t) and t >= 0 for t in x),
        "two non-negative integers",
        [0, 0],
    )
    for i, e in enumerate(doc[1:], 1):
        if e["type"] == "partie":
            raise RecordError(f"event {i}: a second 'partie' event")
        _check_event(e, i, rules)
    if not any(e["type"] == "deal" for e in doc):
        raise RecordError("the event log has no deal")
    return doc


# ---------------------------------------------------------------------- replaying


def start_game(doc: str | dict | list) -> Game:
    """A fresh game dealt the logged cards, at the logged start (rules, mode, deal number, totals,
    first elder), before any action: where :func:`replay` starts."""
    events = load_events(doc)
    start = events[0]
    deals = [
        (e["elder_hand"], e["younger_hand"], e["talon"]) for e in events if e["type"] == "deal"
    ]
    first_elder = next(e["elder"] for e in events if e["type"] == "deal")
    try:
        return Game(
            Rules.from_dict(start["rules"]),
            mode=start["mode"],
            deals=deals,
            first_elder=first_elder,
            deal_number=start.get("deal_number", 0),
            totals=tuple(start.get("totals", (0, 0))),
        )
    except ValueError as err:
        raise RecordError(f"the record's start is not a valid game: {err}") from None


def replay(doc: str | dict | list, *, check: bool = True) -> Game:
    """Rebuild the game of an event log by dealing the logged cards and applying the logged actions.

    With ``check`` (the default) every event of the rebuilt game must equal the logged one, else
    :class:`RecordError` says where they part; a log cut short replays up to where it ends.
    """
    events = load_events(doc)
    game = start_game(events)
    for i, e in enumerate(events):
        if e["type"] == "action" and not e.get("auto"):
            if game.is_over:
                raise RecordError(f"event {i} (action): the game is already over")
            if game.current_player != e["player"]:
                raise RecordError(
                    f"event {i} (action): the record says player {e['player']} acts, "
                    f"the game says player {game.current_player}"
                )
            if not game.is_legal(e["action"]):
                raise RecordError(
                    f"event {i} (action): action {_short(e['action'])} is not legal here; "
                    f"legal: {game.legal_actions()}"
                )
            game.apply(e["action"])
    if check:
        mine = [e for e in game.events if e["type"] != "cut"]
        theirs = [(i, e) for i, e in enumerate(events) if e["type"] != "cut"]
        for a, (i, b) in zip(mine, theirs):
            if a != b:
                raise RecordError(
                    f"replay differs at event {i} ({_short(b['type'], 20)}): "
                    f"logged {_short(b, 200)}, replayed {_short(a, 200)}"
                )
        if len(mine) < len(theirs):
            i = theirs[len(mine)][0]
            raise RecordError(
                f"replay stopped after {len(mine)} of {len(theirs)} events: "
                f"event {i} ({_short(theirs[len(mine)][1]['type'], 20)}) never happens"
            )
    return game
