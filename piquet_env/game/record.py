"""The event log as JSON, and replaying a log into exactly the same game.

A game's :attr:`~piquet_env.game.state.Game.events` is a list of plain dicts (JSON-serializable):
``partie`` (rules, mode), ``cut``, ``deal`` (the dealt cards and talon order), ``action`` (player,
action id, name, ``auto`` for forced declaration decisions), ``score``, ``trick``, ``deal_end`` (the
score breakdowns), ``tie_break`` and ``result``. The deals and the players' own actions are enough
to rebuild the game: :func:`replay` does that and checks that every event comes out the same.
"""

from __future__ import annotations

import json

from piquet_env.game.state import Game
from piquet_env.rules import Rules


def to_json(game: Game, **extra: object) -> str:
    """The game's event log as a JSON document; ``extra`` keys (e.g. agent names) are added."""
    return json.dumps({"format": "piquet-log/1", **extra, "events": game.events})


def load_events(doc: str | dict | list) -> list[dict]:
    """The event list from a JSON string, a document from :func:`to_json`, or a list of events."""
    if isinstance(doc, str):
        doc = json.loads(doc)
    if isinstance(doc, dict):
        if "events" not in doc:
            raise ValueError("not a piquet game record: no 'events' key")
        doc = doc["events"]
    if not isinstance(doc, list) or not doc or doc[0].get("type") != "partie":
        raise ValueError("not a piquet event log: it must start with a 'partie' event")
    return doc


def replay(doc: str | dict | list, *, check: bool = True) -> Game:
    """Rebuild the game of an event log by dealing the logged cards and applying the logged actions.

    With ``check`` (the default) every event of the rebuilt game must equal the logged one, else
    ``ValueError`` says where they part; a log cut short replays up to where it ends.
    """
    events = load_events(doc)
    start = events[0]
    rules = Rules.from_dict(start["rules"])
    deals = [
        (e["elder_hand"], e["younger_hand"], e["talon"]) for e in events if e["type"] == "deal"
    ]
    if not deals:
        raise ValueError("the event log has no deal")
    first_elder = next(e["elder"] for e in events if e["type"] == "deal")
    game = Game(
        rules,
        mode=start["mode"],
        deals=deals,
        first_elder=first_elder,
        deal_number=start.get("deal_number", 0),
        totals=tuple(start.get("totals", (0, 0))),
    )
    for e in events:
        if e["type"] == "action" and not e.get("auto"):
            if game.current_player != e["player"]:
                raise ValueError(
                    f"log says player {e['player']} acts, the game says {game.current_player}: {e}"
                )
            game.apply(e["action"])
    if check:
        mine = [e for e in game.events if e["type"] != "cut"]
        theirs = [e for e in events if e["type"] != "cut"]
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if a != b:
                raise ValueError(f"replay differs at event {i}: logged {b}, replayed {a}")
        if len(mine) < len(theirs):
            raise ValueError(f"replay stopped after {len(mine)} of {len(theirs)} events")
    return game
