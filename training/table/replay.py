"""``piquet replay``: step through a saved game trick by trick, both hands shown.

A record is the JSON document of :func:`piquet_env.game.record.record_of`: the engine's event log
plus the agents' names. ``piquet play --save FILE`` writes one, and so does ``piquet eval
--save-games DIR``; reading and checking the file is :mod:`piquet_env.game.record`'s job. Here
:func:`replay_steps` rebuilds the game from the log and cuts the narration for an onlooker into
steps, one per pause: a deal's start (the hands, the exchange and the declarations), each trick
(with both hands after it), the deal's end. :func:`run_replay` is the program: Enter steps on,
``b`` goes back, ``d`` jumps to the next deal (single keypresses on a terminal, a line each from a
pipe).

>>> from piquet_env.game import Game
>>> from piquet_env.game.record import record_of
>>> from piquet_agents.loop import play_game
>>> from piquet_env.agent import RandomAgent
>>> g = play_game(Game(seed=3, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
>>> steps = replay_steps(record_of(g, ["random", "random"]))
>>> [s.kind for s in steps][:3], sum(s.kind == "trick" for s in steps), steps[-1].kind
(['opening', 'start', 'trick'], 11, 'end')
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from piquet_env.game import Game, Phase
from piquet_env.game.record import RecordError, load_record, replay, start_game
from piquet_table.input import key_reader
from piquet_table.narrate import Narrator
from piquet_table.signals import Stopped
from piquet_table.text import Cast, Style, fit, fit_help, printable, role, terminal_width

KEYS = """\
Replay keys (on a terminal each acts at once; from a pipe, one per line):
  Enter, n     next step (the deal's start, each trick, the deal's end)
  b            back one step
  d            jump to the next deal
  a            print all the rest without pausing
  q            quit (Ctrl-D too)
  ?, h         this help"""
PROMPT = "[Enter] next, b back, d next deal, q quit, ? help> "


@dataclass
class Step:
    """What is shown at one pause of a replay: ``lines`` of deal ``deal`` (1-based); ``kind`` is
    ``'opening'`` (the partie and the cut), ``'start'`` (a deal dealt, exchanged and declared),
    ``'trick'``, ``'end'`` (the deal's last trick and its score) or ``'unfinished'``.

    ``state`` is the game as the step leaves it, for a reader that draws the table (the web
    table); for an ``'end'`` step, whose move already dealt the next deal, it is the game just
    before that move, and ``events`` are the move's events up to the deal's end."""

    deal: int
    kind: str
    lines: list[str] = field(default_factory=list)
    state: Game | None = field(default=None, repr=False, compare=False)
    events: list[dict] = field(default_factory=list, repr=False, compare=False)


def player_names(doc: dict) -> tuple[str, str]:
    """The players' names in a record, safe for the terminal (escape sequences and control
    characters removed, see :func:`~piquet_table.text.printable`) and made distinct
    (``'random (0)'``, ``'random (1)'``) if both agents have the same name."""
    raw = doc.get("agents") or ["player 0", "player 1"]
    names = [printable(str(n)) or f"player {p}" for p, n in enumerate(raw[:2])]
    if len(names) != 2:
        raise RecordError(f"a record names two agents, got {len(names)}")
    if names[0] == names[1]:
        names = [f"{names[0]} ({p})" for p in (0, 1)]
    return names[0], names[1]


def hands_lines(game: Game, cast: Cast, style: Style) -> list[str]:
    """Both players' hands now (elder first), then, in the play, this deal's points so far."""
    labels = {p: f"{cast.names[p]} ({role(game.elder, p)})" for p in (0, 1)}
    width = max(len(x) for x in labels.values()) + 2
    out = [
        f"    {labels[p]:<{width}}{style.hand(game.hands[p])}" for p in (game.elder, game.younger)
    ]
    if game.phase == Phase.PLAY:
        pts = [game.deal_score(p).total for p in (0, 1)]
        out.append(f"    points this deal: {cast.names[0]} {pts[0]}, {cast.names[1]} {pts[1]}")
    return out


def _where(game: Game) -> str:
    """Where an unfinished game stands, in words."""
    if game.phase == Phase.PLAY:
        n = game.tricks_won[0] + game.tricks_won[1] + 1
        return f"during trick {n}"
    return "during the exchange" if game.phase == Phase.EXCHANGE else "during the declarations"


def replay_steps(doc: dict, style: Style | None = None, *, tables: bool = True) -> list[Step]:
    """The narration of a recorded game for an onlooker, one :class:`Step` per pause.

    The whole log is checked first (:func:`piquet_env.game.record.replay`): a tampered or
    inconsistent record raises :class:`~piquet_env.game.record.RecordError` before anything is
    narrated. A record cut short ends with an ``'unfinished'`` step saying where it stops.
    ``tables=False`` leaves out what a page draws itself from :attr:`Step.state`: both hands after
    each trick, the deal's score table and the score sheet.
    """
    style = style or Style()
    final = replay(doc)
    events = doc["events"]
    game = start_game(events)
    cast = Cast(player_names(doc))
    narrator = Narrator(game.rules, cast, style, tables=tables)

    def hands(game: Game) -> list[str]:
        return hands_lines(game, cast, style) if tables else []

    first = list(game.events)
    cut = [e for e in events if e["type"] == "cut"]
    opening = narrator.narrate(None, game, first[:1] + cut)
    steps = [Step(game.deal_number + 1, "opening", opening, game.clone())]

    def deal_start(lines: list[str]) -> Step:
        """The step of a deal's start; closed at once if the play began with the deal (every
        decision before it forced)."""
        step = Step(game.deal_number + 1, "start", lines)
        if game.phase != Phase.PLAY:
            return step
        lines = lines + hands(game)
        steps.append(Step(step.deal, "start", lines, game.clone()))
        return Step(step.deal, "trick")

    current = deal_start(narrator.narrate(None, game, first[1:]))
    for e in events:
        if e["type"] != "action" or e.get("auto"):
            continue
        before = game.clone()
        game.apply(e["action"])
        new = game.events[len(before.events) :]
        k = next((i for i, x in enumerate(new) if x["type"] == "deal"), len(new))
        current.lines += narrator.narrate(before, game, new[:k])
        kinds = {x["type"] for x in new[:k]}
        if "deal_end" in kinds or game.is_over:
            current.kind = "end"
            current.state, current.events = before, new[:k]
            steps.append(current)
            current = Step(game.deal_number + 1, "start")
        elif "trick" in kinds or (before.phase != Phase.PLAY and game.phase == Phase.PLAY):
            current.lines += hands(game)
            current.state = game.clone()
            steps.append(current)
            current = Step(game.deal_number + 1, "trick")
        if k < len(new):  # a new deal was dealt: its start is a step of its own
            current = deal_start(narrator.narrate(None, game, new[k:]))
    if current.lines:
        current.state = game.clone()
        steps.append(current)
    if not final.is_over:
        steps.append(
            Step(
                final.deal_number + 1,
                "unfinished",
                [
                    "",
                    f"The record ends here, in deal {final.deal_number + 1} {_where(final)}: "
                    "the game was not finished.",
                ],
                game.clone(),
            )
        )
    return steps


def replay_chunks(doc: dict, style: Style | None = None, start_deal: int = 1) -> list[list[str]]:
    """The lines of :func:`replay_steps` from deal ``start_deal`` (1-based) on, one list per
    pause; the first holds the opening lines and, when deals are left out, a line saying so with
    the totals before deal ``start_deal``. ``RecordError`` if the record has no such deal."""
    steps = replay_steps(doc, style)
    return [step.lines for step in _from_deal(steps, doc, start_deal)]


def _from_deal(steps: list[Step], doc: dict, start_deal: int) -> list[Step]:
    """``steps`` from the start of deal ``start_deal``, the first one with the opening lines."""
    starts = [i for i, s in enumerate(steps) if s.kind == "start"]
    numbers = [steps[i].deal for i in starts]
    if start_deal not in numbers:
        raise RecordError(
            f"no deal {start_deal} in this record: it has deals {numbers[0]} to {numbers[-1]}"
        )
    i = starts[numbers.index(start_deal)]
    head = list(steps[0].lines)
    if start_deal > numbers[0]:
        deal = next(e for e in doc["events"] if e["type"] == "deal" and e["deal"] == start_deal - 1)
        a, b = player_names(doc)
        t = deal["totals"]
        head.append(
            f"(deals {numbers[0]} to {start_deal - 1} left out; totals before deal "
            f"{start_deal}: {a} {t[0]}, {b} {t[1]})"
        )
    first = Step(start_deal, "start", head + steps[i].lines, steps[i].state, steps[i].events)
    return [first, *steps[i + 1 :]]


def _error(message: str) -> None:
    print(message, file=sys.stderr)


def run_replay(
    path: str | Path,
    style: Style | None = None,
    show_all: bool = False,
    start_deal: int = 1,
    read: Callable[[str], str] | None = None,
    write: Callable[[str], None] = print,
    error: Callable[[str], None] = _error,
) -> int:
    """``piquet replay``: print a saved game step by step, from deal ``start_deal`` on, waiting
    for a key between steps (see :data:`KEYS`) unless ``show_all``: ``read(prompt)`` returns it,
    by default a single keypress on a terminal and a line otherwise
    (:func:`~piquet_table.input.key_reader`). A bad record or deal number is reported through
    ``error`` as ``piquet replay: <reason>`` with status 2. Returns the exit status (130 after
    Ctrl-C, 128 + N after a signal N that raises :class:`~piquet_table.signals.Stopped`)."""
    try:
        doc = load_record(path)
    except RecordError as err:
        error(f"piquet replay: {err}")
        return 2
    try:
        steps = _from_deal(replay_steps(doc, style), doc, start_deal)
    except RecordError as err:
        error(f"piquet replay: {path}: {err}")
        return 2
    width = terminal_width()
    read = read or key_reader()
    emit = write

    def write(line: str) -> None:
        for part in fit(line, width):
            emit(part)

    i = 0
    for line in steps[0].lines:
        write(line)
    try:
        while i + 1 < len(steps):
            answer = "" if show_all else read(PROMPT).strip().lower()
            if answer in ("", "n", "next"):
                i += 1
            elif answer in ("b", "back"):
                if i == 0:
                    write("(this is the first step)")
                    continue
                i -= 1
                write("(back one step)")
            elif answer in ("d", "deal"):
                later = [j for j in range(i + 1, len(steps)) if steps[j].kind == "start"]
                if not later:
                    write("(this is the last deal)")
                    continue
                i = later[0]
            elif answer in ("a", "all"):
                show_all = True
                i += 1
            elif answer in ("q", "quit", "exit"):
                return 0
            elif answer in ("?", "h", "help"):
                for line in fit_help(KEYS, width):
                    write(line)
                continue
            else:
                shown = printable(answer, 12)
                write(
                    f"  unknown key{f' {shown!r}' if shown else ''}: Enter next, b back, "
                    "d next deal, a all, q quit, ? help"
                )
                continue
            for line in steps[i].lines:
                write(line)
    except EOFError:
        write("")
    except KeyboardInterrupt as err:
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            write("")
        return err.exit_status if isinstance(err, Stopped) else 130
    return 0
