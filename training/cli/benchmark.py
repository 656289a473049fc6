"""``piquet benchmark AGENT --out result.json``: the benchmark protocol for one agent
(:mod:`piquet_training.benchmark.run`), its result file for the leaderboard.

.. code-block:: bash

    piquet benchmark runs/piquet/policy.safetensors --name my-policy --out my-policy.json
    piquet benchmark py:my_agent.py:make --out mine.json --workers 2
    piquet benchmark mcts:100 --out mcts100.json          # a search: not exploited
    piquet benchmark baseline --out b.json --resume       # continue a stopped run
    piquet benchmark --show-protocol                      # the protocol, as the file holds it
    piquet benchmark --check docs/results/benchmark/*.json   # what the leaderboard accepts
    piquet benchmark --upgrade old.json --out new.json    # a version-1 file to version 2

The protocol plays the agent against random, heuristic, mcts:100 and baseline (the policy it
named when the version was set: baseline@2026-11-30) on fixed duplicate deals and bounds its
exploitability with an exploiter of a fixed budget (not for searches); and measures its exact
NashConv under the small ``mini`` rules (version 2; not for searches); ``--protocol FILE`` runs a
changed protocol instead (its file is not a leaderboard row), and ``--upgrade OLD.json --out
NEW.json`` brings a version-1 file to version 2.
Unlike ``piquet bench`` (the engine's speed), this measures an agent's strength.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from piquet_agents.registry import SPEC_HELP
from piquet_cli.common import (
    CLIError,
    add_fanout_arguments,
    check_output_path,
    cli_error,
    fanout_from_args,
    run_folder,
    write_or_fall_back,
)
from piquet_env.untrusted import UntrustedError, parse_json, read_regular_file
from piquet_training.benchmark.protocol import PROTOCOL, BenchmarkError, Protocol
from piquet_training.benchmark.results import ResultFileError, check_result, read_result


def default_work(name: str) -> Path:
    """``runs/benchmark-<name>``, the name made a folder name."""
    return run_folder("benchmark", name)


def _protocol(path: str | None) -> Protocol:
    """The protocol of ``--protocol FILE`` (a ``protocol`` block as JSON), or the current one."""
    if path is None:
        return PROTOCOL
    try:
        data = parse_json(read_regular_file(path, 1 << 16, "a protocol").decode())
    except (UntrustedError, UnicodeDecodeError) as exc:
        raise CLIError(f"--protocol: {exc}") from None
    try:
        return Protocol.from_dict(data, where=f"--protocol {path}")
    except BenchmarkError as exc:
        raise cli_error(exc) from None


def pinned_notes(protocol: Protocol) -> list[str]:
    """A line for each name of ``protocol`` (an opponent, the exploit reference) that plays
    another agent than the name says today (:meth:`Protocol.spec`: ``baseline`` plays
    ``baseline@2026-11-30`` in versions 1 and 2)."""
    names = [m.opponent for m in protocol.matches] + [protocol.exploit.reference]
    return [
        f"note: {name!r} in protocol version {protocol.version} plays {protocol.spec(name)}, "
        f"the policy it named when the version was set"
        for name in dict.fromkeys(names)
        if name and protocol.spec(name) != name
    ]


def run(args: argparse.Namespace) -> int:
    """Run ``piquet benchmark`` with parsed ``args``; return the exit status."""
    if args.show_protocol:
        protocol = _protocol(args.protocol)
        print(json.dumps(protocol.to_dict(), indent=2))
        for note in pinned_notes(protocol):  # stdout stays the JSON --protocol reads
            print(note, file=sys.stderr)
        return 0
    if args.check:
        for path in args.check:
            try:
                d = read_result(path)
            except ResultFileError as exc:
                raise cli_error(exc) from None
            print(f"{path}: {d['agent']['name']}, protocol version {d['protocol']['version']}: ok")
        return 0
    if args.upgrade:
        return _upgrade(args)
    if not args.agent:
        raise CLIError("name the agent to benchmark (or --show-protocol, --check, --upgrade)")
    if not args.out:
        raise CLIError("give the result file: --out FILE.json")
    out = check_output_path(args.out, "--out")
    from piquet_training.benchmark.run import command_line, run_benchmark  # loads torch

    fanout = fanout_from_args(args)
    protocol = _protocol(args.protocol)
    name = args.name or args.agent
    work = Path(args.work) if args.work else default_work(name)
    check_output_path(work, "--work", directory=True)
    print(
        f"piquet benchmark {args.agent}: protocol version {protocol.version}, work folder {work}",
        flush=True,
    )
    try:
        result = run_benchmark(
            args.agent,
            work,
            protocol=protocol,
            name=name,
            workers=fanout.workers,
            ray=fanout.ray,
            exploit_it=args.exploit,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=not args.no_progress,
            command=command_line(args.argv),
        )
    except BenchmarkError as exc:
        raise cli_error(exc) from None
    check_result(result, "the result", official=args.protocol is None)

    def write(path: Path) -> None:
        path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")

    written = write_or_fall_back(out, write, "--out", "benchmark")
    print(f"result written to {written} ({result['run']['minutes']:.1f} min)")
    return 0


def _upgrade(args: argparse.Namespace) -> int:
    """``--upgrade OLD.json --out NEW.json``: a version-1 file brought to the current version by
    measuring what the new version adds (:func:`~piquet_training.benchmark.run.upgrade_result`)."""
    if args.agent or args.protocol:
        raise CLIError("--upgrade takes the file alone (the agent and protocol are in it)")
    if not args.out:
        raise CLIError("give the upgraded file: --out FILE.json (it may be the same file)")
    out = check_output_path(args.out, "--out")
    from piquet_training.benchmark.run import command_line, upgrade_result  # loads torch

    try:
        result = upgrade_result(args.upgrade, command=command_line(args.argv), echo=True)
    except BenchmarkError as exc:
        raise cli_error(exc) from None
    check_result(result, "the upgraded result")
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{args.upgrade} -> {out}: protocol version {PROTOCOL.version}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet benchmark``."""
    p = sub.add_parser(
        "benchmark",
        help="the benchmark protocol for one agent: its result file for the leaderboard",
        description=__doc__,
    )
    p.add_argument("agent", nargs="?", metavar="AGENT", help=f"the agent to run: {SPEC_HELP}")
    p.add_argument("--out", metavar="FILE", help="the result file to write (JSON)")
    p.add_argument("--name", metavar="NAME", help="the agent's label in the table (default: AGENT)")
    p.add_argument(
        "--work",
        metavar="DIR",
        help="folder of the run's matches and exploiter (default: runs/benchmark-NAME)",
    )
    add_fanout_arguments(p, "the matches and the exploit's final evaluation")
    p.add_argument(
        "--exploit",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="measure the exploitability bound, or not (default: yes, except for searches)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --work: its matches' pairs and its exploiter",
    )
    p.add_argument("--overwrite", action="store_true", help="replace the run in --work")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    p.add_argument(
        "--protocol",
        metavar="FILE",
        help="run a changed protocol (JSON, as --show-protocol prints it); its result is no "
        "leaderboard row",
    )
    p.add_argument(
        "--show-protocol", action="store_true", help="print the protocol as JSON and exit"
    )
    p.add_argument(
        "--check",
        nargs="+",
        metavar="FILE",
        help="check result files as the leaderboard does, and exit",
    )
    p.add_argument(
        "--upgrade",
        metavar="FILE",
        help="bring a version-1 result file to the current version (measuring the exact NashConv "
        "alone: the rest of the protocol is unchanged); write it to --out",
    )
    p.set_defaults(func=run)
