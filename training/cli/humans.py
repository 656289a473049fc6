"""``piquet humans DIR``: people's results against each agent, from the game records in DIR.

Reads the records that ``piquet play --save`` and ``piquet serve`` write (a person plays as
``human``) and prints, for each opponent, rule set and mode, the person's points per deal, win rate
and settled partie score with the 95% intervals ``piquet eval`` uses (see
:mod:`piquet_table.results`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from piquet_cli.common import CLIError, check_output_path, cli_error, write_or_fall_back


def _humans(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        raise CLIError(f"{folder}: not a directory of game records")
    if args.json:
        check_output_path(args.json, "--json")
    try:
        from piquet_table.results import summarize_folder
    except ImportError as err:
        raise cli_error(err) from None
    summary = summarize_folder(folder)
    for line in summary.lines(str(folder)):
        print(line)
    if args.json:

        def write(path: Path) -> None:
            path.write_text(json.dumps(summary.to_dict(), indent=2), encoding="utf-8")

        print(f"summary written to {write_or_fall_back(args.json, write, '--json', 'humans')}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet humans``."""
    p = sub.add_parser(
        "humans",
        help="people's results against each agent, from game records",
        description="Summarise the games people played (piquet play --save, piquet serve) in "
        "a folder of game records: for each opponent, the person's points per deal, win rate "
        "and settled partie score, with 95% confidence intervals as piquet eval reports them.",
    )
    p.add_argument("folder", metavar="DIR", help="a folder of game records (JSON)")
    p.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    p.set_defaults(func=_humans)
