"""The ``piquet`` command line: one subcommand per module, each module adding its own parser.

Every module listed in :data:`COMMANDS` exposes ``add_parser(subparsers)``, which registers its
subcommand and sets ``func`` (called with the parsed arguments, returning an exit status). What the
subcommands share (the parser class, ``--rules``/``--variant``/``--seed``, :class:`CLIError`, output
path checks) lives in :mod:`piquet_cli.common`; :func:`main` turns every user error into
``piquet COMMAND: REASON`` on stderr with exit status 2. With the environment alone installed
(no ``train`` extra), the commands that need it are still listed, and say what to install when
run.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Sequence

from piquet_cli.common import TRAIN_MODULES, CLIError, Parser, missing, run_command
from piquet_env import __version__
from piquet_table.web import WEB_EXTRA
from piquet_training.threads import spin_briefly

WEB_MODULES = (*TRAIN_MODULES, *WEB_EXTRA)
"""The modules of the ``web`` extra (with the ``train`` extra it includes)."""
COMMANDS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "piquet_cli.bench": (("bench",), (), ""),
    "piquet_cli.evaluate": (("eval", "ladder"), TRAIN_MODULES, "train"),
    "piquet_cli.train": (("train",), TRAIN_MODULES, "train"),
    "piquet_cli.exploit": (("exploit",), TRAIN_MODULES, "train"),
    "piquet_cli.solve": (("solve",), TRAIN_MODULES, "train"),
    "piquet_cli.benchmark": (("benchmark",), TRAIN_MODULES, "train"),
    "piquet_cli.play": (("play", "replay"), (), ""),
    "piquet_cli.serve": (("serve",), WEB_MODULES, "web"),
    "piquet_cli.humans": (("humans",), TRAIN_MODULES, "train"),
}
"""Modules that each contribute subcommands (in help order): the subcommands' names, the modules
the module needs to be imported and the extra that brings them. Where one is missing (the
environment alone installed) the commands are still listed, and say what to install when run."""


def _unavailable(reason: str, args: argparse.Namespace) -> int:
    """The ``func`` of a command that cannot run here: a user error saying what to install."""
    raise CLIError(reason)


def _add_unavailable(
    sub: argparse._SubParsersAction, names: Sequence[str], reason: str, extra: str
) -> None:
    """Register ``names`` as commands that only say ``reason`` (what to install), whatever follows
    them, ``--help`` included; ``piquet --help`` lists them as needing ``extra``."""
    for name in names:
        p = sub.add_parser(
            name,
            help=f"(needs the {extra} extra: pip install -e '.[{extra}]')",
            add_help=False,
            prefix_chars="\0",  # no option of its own: --help too is left to the command
        )
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=functools.partial(_unavailable, reason))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered; the commands of a module that needs
    a missing extra (the environment alone installed) are listed, and say what to install. With
    ``command`` (one of the subcommands), only the module of that command is imported and
    registered: ``piquet play`` need not import torch for ``piquet train``'s parser."""
    parser = Parser(prog="piquet", description="Piquet: engine, agents, training.")
    parser.add_argument("--version", action="version", version=f"piquet {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (commands, needs, extra) in COMMANDS.items():
        if command is not None and command not in commands:
            continue
        reason = missing(needs, extra)
        if reason:
            _add_unavailable(sub, commands, reason, extra)
        else:
            importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``piquet`` console script. Before any command loads torch, its idle
    OpenMP threads are told to spin briefly (:func:`~piquet_training.threads.spin_briefly`)."""
    spin_briefly()
    typed = list(sys.argv[1:] if argv is None else argv)
    if typed == ["--version"]:  # no command's parser needed: nothing heavy is imported
        print(f"piquet {__version__}")
        return 0
    known = {c for commands, _, _ in COMMANDS.values() for c in commands}
    # the command's own parser alone where the first word names one (the top-level parser has no
    # option that takes a value): the others' imports (torch, for most) are not paid for
    parser = build_parser(typed[0] if typed and typed[0] in known else None)
    args = parser.parse_args(typed)
    args.argv = typed  # the command as typed
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return run_command(args.command, args.func, args)


if __name__ == "__main__":
    sys.exit(main())
