"""``piquet play`` and ``piquet replay``: play against an agent, and replay saved games, in the
terminal (see :mod:`piquet_training.tui.session` and :mod:`piquet_training.tui.replay`)."""

from __future__ import annotations

import argparse
import os
import sys

from piquet_training.tui.text import Style, want_color

from piquet_env.rules import make_rules


def _tolerant_io() -> None:
    """Undecodable bytes typed at a prompt become U+FFFD (answered as bad input), and characters
    the terminal cannot show are replaced, rather than crash the game."""
    for stream in (sys.stdin, sys.stdout):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


def _style(args: argparse.Namespace) -> Style:
    ascii_only = args.ascii or not _can_encode("♠♥♦♣·═─→✗")
    return Style(ascii=ascii_only, color=want_color(ascii_only))


def _can_encode(text: str) -> bool:
    try:
        text.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _play(args: argparse.Namespace) -> int:
    from piquet_training.tui.session import play

    _tolerant_io()
    try:
        rules = make_rules(args.rules, args.variant)
    except ValueError as err:
        print(f"piquet play: {err}", file=sys.stderr)
        return 2
    try:
        return play(
            args.opponent,
            rules,
            seed=args.seed,
            style=_style(args),
            save=args.save,
            player=args.player,
        )
    except (ValueError, FileNotFoundError, ImportError) as err:
        print(f"piquet play: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `piquet play --player random | head`
        _quiet_stdout()
        return 0
    except KeyboardInterrupt:  # before the game began, e.g. while a checkpoint loads
        print("\nInterrupted.", file=sys.stderr)
        return 130


def _replay(args: argparse.Namespace) -> int:
    from piquet_training.tui.replay import run_replay

    _tolerant_io()
    try:
        return run_replay(args.file, style=_style(args), show_all=args.all, start_deal=args.deal)
    except BrokenPipeError:  # e.g. `piquet replay FILE --all | head`
        _quiet_stdout()
        return 0


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that Python's exit flush cannot fail on a closed pipe."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet play`` and ``piquet replay``."""
    p = sub.add_parser(
        "play",
        help="play a partie against an agent in the terminal",
        description="Play a whole partie of Piquet against an agent. Type `help` "
        "at any prompt for the commands.",
    )
    p.add_argument(
        "--opponent",
        default="random",
        metavar="SPEC",
        help="the agent to play against: random, heuristic, mcts:N or a checkpoint "
        "path (default: random)",
    )
    p.add_argument("--rules", default="standard", help="rule set: standard or classic")
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        help="orbis, saison or normand (repeat for several)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed for the cut, the deals and the agents (default: fresh)",
    )
    p.add_argument("--ascii", action="store_true", help="plain ASCII cards (TS, QH), no colour")
    p.add_argument("--save", metavar="FILE", help="save the game record (JSON) to FILE")
    p.add_argument(
        "--player",
        metavar="SPEC",
        help="let an agent take your seat and watch it play (no input needed)",
    )
    p.set_defaults(func=_play)

    r = sub.add_parser(
        "replay",
        help="step through a saved game trick by trick",
        description="Replay a saved game record, showing both hands. Enter steps "
        "on, a prints the rest, q quits.",
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
        help="start at deal N (1-based), skipping the deals before",
    )
    r.add_argument("--ascii", action="store_true", help="plain ASCII cards (TS, QH), no colour")
    r.set_defaults(func=_replay)
