"""Game records on disk, and ``piquet replay``: step through a saved game trick by trick.

A record is the JSON document of :func:`piquet_env.game.to_json`: the engine's event log plus the
agents' names (``agents``, one per player). ``piquet play --save FILE`` writes one, and so does
``piquet eval --save-games DIR``. :func:`replay_chunks` rebuilds the game from the log (checking
that every event comes out the same) and yields the narration for an onlooker who sees both hands,
one chunk per pause: the deal and exchange, the declarations, each trick, the deal's end.

>>> from piquet_env.game import Game
>>> from piquet_agents.play import play_game
>>> from piquet_agents.random_agent import RandomAgent
>>> g = play_game(Game(seed=3, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
>>> chunks = list(replay_chunks(record_of(g, ["random", "random"])))
>>> sum("Trick 12 (last)" in line for chunk in chunks for line in chunk)
1
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from piquet_training.tui.input import read_line
from piquet_training.tui.narrate import Narrator
from piquet_training.tui.text import Cast, Style, role

from piquet_env.game import Game, Phase, replay, to_json
from piquet_env.rules import Rules

RECORD_FORMAT = "piquet-log/1"


def record_of(game: Game, agents: list[str], **extra: object) -> dict:
    """The record of ``game`` as a dict: its event log plus the agents' names (one per player)."""
    if len(agents) != 2:
        raise ValueError(f"a record names two agents, got {agents!r}")
    return json.loads(to_json(game, agents=list(agents), **extra))


def save_record(path: str | Path, game: Game, agents: list[str], **extra: object) -> Path:
    """Write the record of ``game`` (see :func:`record_of`) to ``path``; return the path."""
    path = Path(path)
    if path.parent != Path():
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_json(game, agents=list(agents), **extra) + "\n", encoding="utf-8")
    return path


def load_record(path: str | Path) -> dict:
    """Read a record written by :func:`save_record` (or ``to_json``); ``ValueError`` names the
    problem if the file is not one."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: not a JSON game record ({err})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("events"), list) or not doc["events"]:
        raise ValueError(f"{path}: not a piquet game record (no 'events' list)")
    if doc.get("format", RECORD_FORMAT) != RECORD_FORMAT:
        raise ValueError(f"{path}: record format {doc['format']!r}, expected {RECORD_FORMAT!r}")
    return doc


def player_names(doc: dict) -> tuple[str, str]:
    """The players' names in a record, made distinct (``'random (0)'``, ``'random (1)'``) if
    both agents have the same name."""
    names = doc.get("agents") or ["player 0", "player 1"]
    names = [str(n) for n in names][:2]
    if len(names) != 2:
        raise ValueError(f"a record names two agents, got {doc.get('agents')!r}")
    if names[0] == names[1]:
        names = [f"{names[0]} ({p})" for p in (0, 1)]
    return names[0], names[1]


def _start(events: list[dict]) -> Game:
    """A fresh game dealt the logged cards, as :func:`piquet_env.game.replay` builds it."""
    start = events[0]
    deals = [
        (e["elder_hand"], e["younger_hand"], e["talon"]) for e in events if e["type"] == "deal"
    ]
    first_elder = next(e["elder"] for e in events if e["type"] == "deal")
    return Game(
        Rules.from_dict(start["rules"]),
        mode=start["mode"],
        deals=deals,
        first_elder=first_elder,
        deal_number=start.get("deal_number", 0),
        totals=tuple(start.get("totals", (0, 0))),
    )


def hands_lines(game: Game, cast: Cast, style: Style) -> list[str]:
    """Both players' hands now (elder first), with tricks won and this deal's score."""
    labels = {p: f"{cast.names[p]} ({role(game.elder, p)})" for p in (0, 1)}
    width = max(len(x) for x in labels.values()) + 2
    out = []
    for p in (game.elder, game.younger):
        extra = ""
        if game.phase == Phase.PLAY:
            n, pts = game.tricks_won[p], game.deal_score(p).total
            extra = (
                f"   {style.dot} {n} trick{'' if n == 1 else 's'} {style.dot} "
                f"{pts} point{'' if pts == 1 else 's'}"
            )
        out.append(f"    {labels[p]:<{width}}{style.hand(game.hands[p])}{extra}")
    return out


def replay_chunks(
    doc: dict, style: Style | None = None, start_deal: int = 1
) -> Iterator[list[str]]:
    """Narration of a recorded game for an onlooker, one chunk of lines per pause: the deal with
    the exchange, the declarations, each trick (with both hands after it), the deal's end.

    With ``start_deal`` (1-based) the chunks of earlier deals are left out, except the opening
    lines; the first chunk kept ends the deal before, with the totals. The log is checked first
    (:func:`piquet_env.game.replay`): ``ValueError`` says where a tampered or inconsistent record
    parts from the rules, or that the record has no such deal.
    """
    style = style or Style()
    final = replay(doc)  # validate the whole log before narrating any of it
    events = doc["events"]
    game = _start(events)
    last = final.deal_number if final.is_over else final.deal_number + 1
    if not game.deal_number + 1 <= start_deal <= last:
        raise ValueError(
            f"no deal {start_deal} in this record: it has deals {game.deal_number + 1} to {last}"
        )
    cast = Cast(player_names(doc))
    narrator = Narrator(game.rules, cast, style)
    first = list(game.events)
    cut = [e for e in events if e["type"] == "cut"]
    chunk = narrator.narrate(None, game, first[:1] + cut)
    if start_deal > game.deal_number + 1:
        yield [*chunk, f"(deals {game.deal_number + 1} to {start_deal - 1} left out)"]
        chunk = []
    chunk += narrator.narrate(None, game, first[1:])
    for e in events:
        if e["type"] != "action" or e.get("auto"):
            continue
        before = game.clone()
        game.apply(e["action"])
        new = game.events[len(before.events) :]
        chunk += narrator.narrate(before, game, new)
        kinds = {x["type"] for x in new}
        if (
            "trick" in kinds
            or "deal_end" in kinds
            or (before.phase != Phase.PLAY and game.phase == Phase.PLAY)
        ):
            if "deal_end" not in kinds and not game.is_over:
                chunk += hands_lines(game, cast, style)
            if game.deal_number + 1 >= start_deal:
                yield chunk
            chunk = []
    if chunk:
        yield chunk


def run_replay(
    path: str | Path,
    style: Style | None = None,
    show_all: bool = False,
    start_deal: int = 1,
    read: Callable[[str], str] = read_line,
    write: Callable[[str], None] = print,
) -> int:
    """``piquet replay``: print a saved game chunk by chunk, waiting for Enter between chunks
    (``q`` quits, ``a`` prints the rest) unless ``show_all``, from deal ``start_deal`` on.
    Returns the exit status."""
    try:
        doc = load_record(path)
        chunks = replay_chunks(doc, style, start_deal)
        first = next(chunks)
    except (ValueError, KeyError, TypeError) as err:
        write(f"piquet replay: {err}")
        return 2
    for line in first:
        write(line)
    try:
        for chunk in chunks:
            if not show_all:
                answer = read("[Enter] next, a: all the rest, q: quit> ").strip().lower()
                if answer in ("q", "quit"):
                    return 0
                show_all = answer in ("a", "all")
            for line in chunk:
                write(line)
    except EOFError:
        write("")
    except KeyboardInterrupt:
        write("")
        return 130
    return 0
