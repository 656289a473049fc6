"""``piquet play`` and ``piquet replay``: play against an agent, and replay saved games, in the
terminal (see :mod:`piquet_table.session` and :mod:`piquet_table.replay`).

``--save FILE`` is checked before the game starts (a directory, a path under a regular file or an
unwritable folder is a user error, exit 2); if writing still fails at the end, the record goes to a
fresh temporary folder and the program says where. Ctrl-C, SIGTERM and SIGHUP end the game with
the record saved (exit 130, 143, 129).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from piquet_agents.registry import SPEC_HELP
from piquet_cli.common import (
    CLIError,
    add_rules_arguments,
    add_seed_argument,
    at_least,
    check_output_path,
    cli_error,
    resolve_seed,
    rules_from_args,
    seed_text,
    write_or_fall_back,
)
from piquet_table.text import Style, want_color

WATCH_DELAY = 0.6
"""Default seconds between moves when watching two agents on a terminal (``--delay``)."""

MAX_DELAY = 60.0
"""Longest ``--delay`` accepted."""


def _tolerant_io() -> None:
    """Undecodable bytes typed at a prompt become U+FFFD (answered as bad input), and characters
    the terminal cannot show are replaced, rather than crash the game."""
    for stream in (sys.stdin, sys.stdout):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


def _style(args: argparse.Namespace) -> Style:
    ascii_only = args.ascii or not _can_encode("♠♥♦♣·═─→✗…")
    return Style(ascii=ascii_only, color=want_color(ascii_only))


def _can_encode(text: str) -> bool:
    try:
        text.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _isatty() -> bool:
    try:
        return sys.stdout.isatty()
    except ValueError:  # a closed stdout
        return False


def _play(args: argparse.Namespace) -> int:
    from piquet_env.game import Game
    from piquet_table.session import HUMAN, Session, make_seats, seat_seeds, terminal_status
    from piquet_table.signals import SignalGuard, Stopped
    from piquet_table.text import printable

    _tolerant_io()
    rules = rules_from_args(args)
    seed_given = args.seed is not None
    seed = resolve_seed(args)
    save = check_output_path(args.save, "--save") if args.save is not None else None
    if args.delay is not None:
        at_least("--delay", args.delay, 0)
        if not args.delay <= MAX_DELAY:
            raise CLIError(f"--delay must be at most {MAX_DELAY:g} seconds, got {args.delay:g}")
    if (args.delay is not None or args.step) and args.player is None:
        raise CLIError("--delay and --step pace a game between two agents: add --player SPEC")
    tty = _isatty()
    delay = args.delay
    if delay is None:
        delay = WATCH_DELAY if args.player is not None and tty and not args.step else 0.0
    game = Game(rules, seed=seat_seeds(seed)[0])  # dealt before the agents load: a signal
    try:  # while they do (the policy takes seconds) saves it, as dealt
        with SignalGuard() as guard:
            try:
                agents, _ = make_seats(args.opponent, rules, seed, args.player)
            except ImportError as err:
                raise CLIError(f"cannot load an agent: {err}") from None
            except ValueError as err:
                raise cli_error(err) from None
            except Stopped as err:
                guard.hold()
                print(err.reason)
                names = [printable(s) for s in (args.player or HUMAN, args.opponent)]
                status = err.exit_status
                if save is not None:
                    status = _save(save, game, names, print, seed) or status
                return status
            session = Session(
                game,
                agents,
                _style(args),
                status=terminal_status if tty else None,
                delay=delay,
                step=args.step,
                guard=guard,
            )
            if not seed_given:
                session.write(f"{seed_text(seed).capitalize()}.")
            status = session.run()
            guard.hold()  # a second Ctrl-C or kill must not cut the record short
            if save is not None:
                status = _save(save, game, list(session.names), session.write, seed) or status
    except BrokenPipeError:  # e.g. `piquet play --player random | head`
        _quiet_stdout()
        return 0
    if status == 129:  # the terminal hung up: Python's exit flush must not fail on it
        _quiet_stdout()
    return status


def _save(path: Path, game, names: list[str], write, seed: int) -> int:
    """Save the record (players ``names``) to ``path`` (or a fallback, said on stderr), saying
    where with ``write``; 0, or 1 if nothing could be written."""
    from piquet_env.game.record import save_record

    try:
        written = write_or_fall_back(
            path, lambda p: save_record(p, game, names, seed=seed), "--save", "play"
        )
    except OSError as err:
        print(f"piquet play: could not save the game record anywhere: {err}", file=sys.stderr)
        return 1
    done = "" if game.is_over else " (unfinished)"
    with contextlib.suppress(OSError):
        write(f"Game record saved to {written}{done}.")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from piquet_table.replay import run_replay
    from piquet_table.signals import SignalGuard

    _tolerant_io()
    at_least("--deal", args.deal, 1)
    try:
        with SignalGuard():  # kill and hang-up unwind too, so the terminal's mode is restored
            return run_replay(
                args.file, style=_style(args), show_all=args.all, start_deal=args.deal
            )
    except BrokenPipeError:  # e.g. `piquet replay FILE --all | head`
        _quiet_stdout()
        return 0


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that Python's exit flush cannot fail on a closed pipe or a
    terminal that hung up."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet play`` and ``piquet replay``."""
    p = sub.add_parser(
        "play",
        help="play a partie against an agent in the terminal",
        description="Play a whole partie of Piquet against an agent. Type `help` at any prompt "
        "for the commands. With --player an agent takes your seat and you watch, paced by "
        "--delay or --step.",
    )
    p.add_argument(
        "--opponent",
        default="random",
        metavar="SPEC",
        help=f"the agent to play against (default: random): {SPEC_HELP}",
    )
    add_rules_arguments(p)
    add_seed_argument(p)
    p.add_argument("--ascii", action="store_true", help="plain ASCII cards (TS, QH), no colour")
    p.add_argument(
        "--save",
        metavar="FILE",
        help="save the game record (JSON) to FILE, also when the game is cut short",
    )
    p.add_argument(
        "--player",
        metavar="SPEC",
        help="let an agent (in the forms of --opponent) take your seat and watch it play "
        "(no input needed)",
    )
    p.add_argument(
        "--delay",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"watching (--player): pause between moves (default: {WATCH_DELAY:g} on a "
        "terminal, 0 when the output is not one)",
    )
    p.add_argument(
        "--step",
        action="store_true",
        help="watching (--player): wait for Enter after each trick and at each deal's end",
    )
    p.set_defaults(func=_play)

    r = sub.add_parser(
        "replay",
        help="step through a saved game trick by trick",
        description="Replay a saved game record, showing both hands. Enter steps on, b goes "
        "back, d jumps to the next deal, a prints the rest, q quits, ? lists the keys. On a "
        "terminal each key acts as it is pressed; from a pipe or a file, one key per line.",
    )
    r.add_argument(
        "file", help="a game record (JSON) from `piquet play --save` or `piquet eval --save-games`"
    )
    r.add_argument("--all", action="store_true", help="print the whole game without pausing")
    r.add_argument(
        "--deal",
        type=int,
        default=1,
        metavar="N",
        help="start at the start of deal N (1-based), skipping the deals before",
    )
    r.add_argument("--ascii", action="store_true", help="plain ASCII cards (TS, QH), no colour")
    r.set_defaults(func=_replay)
