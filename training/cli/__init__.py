"""The ``piquet`` command line: one subcommand per module, each module adding its own parser.

Every module listed in :data:`COMMANDS` exposes ``add_parser(subparsers)``, which registers its
subcommand and sets ``func`` (called with the parsed arguments, returning an exit status). What the
subcommands share (the parser class, ``--rules``/``--variant``/``--seed``, :class:`CLIError`, output
path checks) lives in :mod:`piquet_cli.common`; :func:`main` turns every user error into
``piquet COMMAND: REASON`` on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from piquet_cli.common import Parser, run_command
from piquet_env import __version__

COMMANDS = (
    "piquet_cli.bench",
    "piquet_cli.evaluate",
    "piquet_cli.train",
    "piquet_cli.play",
    "piquet_cli.serve",
    "piquet_cli.humans",
)
"""Modules that each contribute one subcommand (in help order)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = Parser(prog="piquet", description="Piquet: engine, agents, training.")
    parser.add_argument("--version", action="version", version=f"piquet {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``piquet`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return run_command(args.command, args.func, args)


if __name__ == "__main__":
    sys.exit(main())
