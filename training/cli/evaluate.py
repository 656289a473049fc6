"""``piquet eval`` and ``piquet ladder``: duplicate-deal matches and round-robin ladders.

An agent spec is any form of :data:`piquet_agents.registry.SPEC_HELP` (``random``,
``heuristic``, ``mcts:200:c=0.7:time=0.5``, ``baseline``, ``mcts:200:policy=baseline``, the path
of a policy checkpoint...).

.. code-block:: bash

    piquet eval heuristic random --deals 2000 --workers 2
    piquet eval mcts:200 heuristic --deals 500 --mode partie --json out.json
    piquet eval --compare a.json b.json      # two reports' edges, paired on the same deals
    piquet ladder random heuristic mcts:100 --deals 200 --out ladder/
    piquet ladder random heuristic mcts:100 --deals 200 --out ladder/ --resume  # after a stop
    piquet ladder heuristic baseline --deals 100 --neighbour-deals 500 --neighbour-max-deals 4000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from piquet_agents.registry import SPEC_HELP
from piquet_cli.common import (
    CLIError,
    add_fanout_arguments,
    add_rules_arguments,
    add_seed_argument,
    at_least,
    check_output_path,
    cli_error,
    fanout_from_args,
    join_cluster,
    parse_specs,
    require,
    resolve_seed,
    rules_from_args,
    seed_text,
    write_or_fall_back,
)
from piquet_env.rules import Rules
from piquet_training.evaluation.duplicate import (
    MODES,
    DuplicateMatch,
    MatchReport,
    evaluate_match,
    report,
)
from piquet_training.evaluation.ladder.run import LadderResult, run_ladder
from piquet_training.evaluation.paired import ReportError, compare_reports
from piquet_training.evaluation.record import (
    RECORD_FILE,
    LadderRecordError,
    MatchRecord,
    play_recorded,
)


def _common(p: argparse.ArgumentParser, deals_help: str) -> None:
    p.add_argument("--deals", type=int, default=200, metavar="N", help=deals_help)
    p.add_argument(
        "--mode",
        choices=MODES,
        default="deal",
        help="deal: each game is one deal; partie: a whole partie (default: deal)",
    )
    add_rules_arguments(p)
    add_fanout_arguments(p)
    add_seed_argument(p)
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument(
        "--variance-reduction",
        nargs="?",
        const="baseline",
        default=None,
        metavar="VALUE",
        help="subtract the talon's luck at each elder's draw, measured by the critic of policy "
        "VALUE (default when given without one: baseline, the rules' shipped policy): the same "
        "games, an unbiased estimate of the same points per deal with a narrower interval "
        "(piquet_training.evaluation.variance; the plain estimate is printed beside it)",
    )


def _prepare(args: argparse.Namespace, specs: list[str]) -> Rules:
    """Check every input before any game is played: counts, rules, seed, agent specs."""
    if not args.no_progress:
        require(["tqdm"])
    at_least("--deals", args.deals, 1)
    args.fanout = fanout_from_args(args, join=False)  # joined once the flags are checked
    from piquet_training.evaluation.duplicate.play import check_save_dir

    try:  # before any work: the match would refuse it only once it starts
        check_save_dir(getattr(args, "save_games", None), args.fanout)
    except ValueError as exc:
        raise cli_error(exc) from None
    rules = rules_from_args(args)
    resolve_seed(args)
    parse_specs(specs, rules)
    if args.variance_reduction is not None:
        from piquet_training.evaluation.variance import VarianceReductionError, correction_for

        try:
            correction_for(args.variance_reduction, rules)  # loaded once: the games use it
        except VarianceReductionError as exc:
            raise CLIError(f"--variance-reduction: {exc}") from None
    join_cluster(args.fanout)
    return rules


def _check_exact(args: argparse.Namespace, rules: Rules, specs: list[str]) -> None:
    """``--exact`` needs single deals, rules small enough and agents with exact policies."""
    from piquet_agents.registry import make_agent
    from piquet_env.exact import TreeError, check_size
    from piquet_env.exact.policy import BatchExactAgent, ExactAgent

    if args.mode != "deal":
        raise CLIError("--exact computes single deals: use --mode deal (the default)")
    try:
        check_size(rules)
    except TreeError as exc:
        raise cli_error(exc, "--exact: ") from None
    for spec in specs:
        agent = make_agent(spec, rules)
        if not isinstance(agent, (ExactAgent, BatchExactAgent)):
            raise CLIError(
                f"--exact: {spec!r} has no exact action probabilities (a search's moves depend "
                "on its random playouts)"
            )


MATCH_ONLY = ("deals", "mode", "rules", "variant", "workers", "ray", "seed", "save_games", "exact")
MATCH_ONLY += ("json", "variance_reduction", "record", "resume", "overwrite")
"""``piquet eval``'s options for playing a match, refused beside ``--compare``."""


def run_compare(path_a: str, path_b: str) -> int:
    """``--compare A.json B.json``: report A's edge minus report B's, paired on their deals."""
    try:
        c = compare_reports(path_a, path_b)
    except ReportError as exc:
        raise cli_error(exc) from None
    for path, r in ((path_a, c.a), (path_b, c.b)):
        vr = f", variance-reduced by {r.variance_reduction}" if r.variance_reduction else ""
        print(f"{path}: {r.agent_a} − {r.agent_b}, points per deal: {r.edge.text()}{vr}")
    print(f"A − B ({c.what()}), points per deal paired on the same deals: {c.diff.text()}")
    return 0


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file (through links, or one path twice)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one is missing: only the same path could name it
        return False


def _check_record(args: argparse.Namespace) -> None:
    """``--record FILE``, before any work: writable, and not an existing file unless
    ``--resume`` (continue it) or ``--overwrite`` (replace it): a new match starts its record
    empty, and an earlier record (or any other file) must not be lost to a forgotten flag."""
    check_output_path(args.record, "--record")
    if args.resume and args.overwrite:
        raise CLIError("give --resume or --overwrite, not both")
    if not args.resume and not args.overwrite and os.path.lexists(args.record):
        raise CLIError(
            f"--record {args.record}: exists; continue its match with --resume, replace it "
            "with --overwrite, or give another file"
        )


def run_eval(args: argparse.Namespace) -> int:
    """Run ``piquet eval``: print the match summary, optionally write JSON and game logs."""
    if args.compare:
        if args.agent_a or args.agent_b:
            raise CLIError("give A and B (a match) or --compare A.json B.json, not both")
        given = [d for d, v in args.match_defaults.items() if getattr(args, d) != v]
        if given:
            flags = ", ".join("--" + d.replace("_", "-") for d in given)
            raise CLIError(f"{flags}: for a match, not for --compare (the reports hold theirs)")
        return run_compare(*args.compare)
    if not args.agent_b:
        raise CLIError("give A and B, the two agents to play (or --compare A.json B.json)")
    if args.record and args.json and _same_file(args.record, args.json):
        raise CLIError(f"--record and --json name one file, {args.record}: give two files")
    if args.json:
        check_output_path(args.json, "--json")
    if args.save_games:
        check_output_path(args.save_games, "--save-games", directory=True)
    if args.resume and not args.record:
        raise CLIError("--resume needs --record FILE, the record of the run to continue")
    if args.record:
        _check_record(args)
    elif args.overwrite:
        raise CLIError("--overwrite needs --record FILE, the record to replace")
    rules = _prepare(args, [args.agent_a, args.agent_b])
    if args.exact:
        _check_exact(args, rules, [args.agent_a, args.agent_b])
    match = DuplicateMatch(
        args.agent_a, args.agent_b, rules, args.deals, args.mode, args.seed, 0,
        args.variance_reduction,
    )  # fmt: skip
    rep = _play_eval(args, match)
    print(rep.summary())
    print(f"  {seed_text(args.seed)}")
    doc = rep.to_dict(games=True)
    if args.exact:
        from piquet_agents.registry import make_agent
        from piquet_training.exact import exact_difference, pure_note, pure_spec

        truth = exact_difference(args.agent_a, args.agent_b, rules, seed=args.seed)
        for spec in dict.fromkeys((args.agent_a, args.agent_b)):
            pure = pure_spec(spec, make_agent(spec, rules, seed=args.seed), args.seed)
            if pure:
                print(pure_note(spec, pure))
        p = rep.points
        covered = p.low <= truth <= p.high
        print(
            f"  exact expected points per deal ({args.agent_a} − {args.agent_b}): {truth:+.4f}; "
            f"the interval [{p.low:+.2f}, {p.high:+.2f}] "
            f"{'covers' if covered else 'does not cover'} it"
        )
        doc["exact"] = {"points_per_deal": truth, "covered": covered}
    if args.json:

        def write(path: Path) -> None:
            path.write_text(json.dumps(doc, indent=2), encoding="utf-8")

        written = write_or_fall_back(args.json, write, "--json", "eval")
        print(f"report written to {written}")
    return 0


def _play_eval(args: argparse.Namespace, match: DuplicateMatch) -> MatchReport:
    """The match, played where ``--workers``/``--ray`` say; with ``--record`` each chunk kept as
    it is played and, with ``--resume``, the recorded pairs taken instead of played."""
    progress = not args.no_progress
    if not args.record:
        return evaluate_match(
            match, fanout=args.fanout, progress=progress, save_dir=args.save_games
        )
    try:
        record = MatchRecord(Path(args.record), resume=args.resume)
    except LadderRecordError as exc:
        raise cli_error(exc, "--resume: ") from None
    key = record.key_of(match)
    held = 0 if key is None else len(record.recorded(key))
    if args.resume:
        print(f"--resume: {held} of {match.pairs} pairs taken from {args.record}", flush=True)
    if args.save_games and held:
        print("  (the taken pairs' game logs are where the earlier run wrote them)", flush=True)
    name_a, name_b = match.names
    games = play_recorded(
        match, record, fanout=args.fanout, progress=progress, desc=f"{name_a} vs {name_b}",
        each_chunk=True, save_dir=args.save_games,
    )  # fmt: skip
    vr = match.variance_reduction or ""
    return report(games, name_a, name_b, match.rules, match.mode, match.seed, vr)


def run_ladder_cmd(args: argparse.Namespace) -> int:
    """Run ``piquet ladder``: play the round robin, print the ranking and head-to-head matrix,
    write ladder.json and ladder.png."""
    out = check_output_path(args.out, "--out", directory=True)
    require(["openskill", "matplotlib"])  # the ratings and the picture, needed after the games
    if len(args.agents) < 2:
        raise CLIError("a ladder needs at least two agents")
    if len(set(args.agents)) != len(args.agents):
        raise CLIError(f"ladder agents must be distinct, got {args.agents}")
    if args.neighbour_deals is not None and args.neighbour_deals <= args.deals:
        raise CLIError(
            f"--neighbour-deals must exceed --deals ({args.deals}), got {args.neighbour_deals}"
        )
    if args.neighbour_max_deals is not None:
        if args.neighbour_deals is None:
            raise CLIError("--neighbour-max-deals needs --neighbour-deals (the first look)")
        if args.neighbour_max_deals <= args.neighbour_deals:
            raise CLIError(
                f"--neighbour-max-deals must exceed --neighbour-deals ({args.neighbour_deals}), "
                f"got {args.neighbour_max_deals}"
            )
    rules = _prepare(args, args.agents)
    if args.exact:
        _check_exact(args, rules, args.agents)
    try:
        record = MatchRecord(out / RECORD_FILE, resume=args.resume)
    except LadderRecordError as exc:
        raise cli_error(exc, "--resume: ") from None
    res = run_ladder(
        args.agents,
        rules,
        args.deals,
        args.mode,
        args.seed,
        args.fanout.workers,
        progress=not args.no_progress,
        neighbour_pairs=args.neighbour_deals or 0,
        neighbour_max=args.neighbour_max_deals or 0,
        record=record,
        on_match=_print_match,
        variance_reduction=args.variance_reduction,
        ray=args.fanout.ray,
    )
    print(res.summary())
    print(f"  {seed_text(args.seed)}")
    if args.exact:
        res.exact = _print_exact_ladder(res, rules, args.seed)
    json_path, png_path = write_ladder(res, out)
    print(f"ladder written to {json_path} and {png_path}")
    return 0


def _print_exact_ladder(res: LadderResult, rules: Rules, seed: int) -> dict:
    """The exact ratings beside the ladder's (``--exact``), and whether each interval holds its
    agent's exact rating; return them for ``ladder.json``
    (:attr:`~piquet_training.evaluation.ladder.data.LadderData.exact`)."""
    from piquet_training.evaluation.ladder.stats import Z95
    from piquet_training.exact import exact_ratings

    exact = exact_ratings(res.agents, rules, seed=seed)
    exact["holds"] = {}
    print("exact ratings (points per deal against an average agent of the ladder):")
    for agent in sorted(res.agents, key=lambda a: -exact["ratings"][a]):
        rating, se = res.points[agent]
        truth = exact["ratings"][agent]
        held = exact["holds"][agent] = bool(abs(rating - truth) <= Z95 * se)
        print(
            f"  {agent:<28} exact {truth:+.3f}; the ladder's {rating:+.3f} ± {Z95 * se:.3f} "
            f"({'holds it' if held else 'misses it'})"
        )
    return exact


def _print_match(m: MatchReport) -> None:
    """One line per finished match of a ladder, as it ends."""
    p = m.points
    mark = "*" if p.excludes(0.0) else ""
    print(
        f"  {m.agent_a} vs {m.agent_b}: {p.mean:+.2f} [{p.low:+.2f}, {p.high:+.2f}]{mark} "
        f"points per deal, {m.n_pairs} pairs",
        flush=True,
    )


def write_ladder(res: LadderResult, out: Path) -> tuple[Path, Path]:
    """Write ``ladder.json`` and ``ladder.png`` into ``out``, each falling back to a temporary
    folder (and saying so) if it cannot be written there; return the paths written."""
    json_path = write_or_fall_back(out / "ladder.json", res.write_json, "--out", "ladder")
    png_path = write_or_fall_back(out / "ladder.png", res.plot, "--out", "ladder")
    return json_path, png_path


def _exact_flag(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--exact",
        action="store_true",
        help=f"{what} (a rule set small enough: --rules mini; agents with exact policies)",
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet eval`` and ``piquet ladder``."""
    p = sub.add_parser(
        "eval",
        help="duplicate-deal match of agent A against agent B (or two reports compared)",
        description="Play N duplicate pairs (each deal twice, seats swapped) and report points "
        "per deal, win rate and (partie mode) the settled score, with 95% confidence intervals "
        "and a verdict. With --compare A.json B.json, play nothing: two reports of the same "
        "deals, their points per deal compared pair by pair.",
    )
    p.add_argument("agent_a", metavar="A", nargs="?", help=f"the agent to judge: {SPEC_HELP}")
    p.add_argument("agent_b", metavar="B", nargs="?", help="its opponent, in the same forms as A")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A.json", "B.json"),
        help="instead of a match: report A's edge minus report B's, paired on their deals (two "
        "--json reports of the same --seed, --deals, --rules and --mode; e.g. two agents, each "
        "against one opponent)",
    )
    _common(p, "duplicate pairs to play (each pair is 2 games; default: 200)")
    p.add_argument("--save-games", metavar="DIR", help="write each game's JSON log into DIR")
    _exact_flag(p, "the exact expected points per deal by full traversal, beside the estimate")
    p.add_argument("--json", metavar="FILE", help="write the report (with every game) as JSON")
    p.add_argument(
        "--record",
        metavar="FILE",
        help="append each chunk of pairs to FILE (matches.jsonl's form) as it is played, so that "
        "a run stopped in the middle can be resumed with --resume",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="with --record FILE: take the pairs FILE holds from an earlier run of this match "
        "(the same agents, files, rules, mode and seed) and play only the others",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="with --record FILE: replace FILE if it exists (without --resume or --overwrite, an "
        "existing FILE is refused, so that no record is lost)",
    )
    p.set_defaults(func=run_eval, match_defaults={d: p.get_default(d) for d in MATCH_ONLY})

    q = sub.add_parser(
        "ladder",
        help="round-robin ladder with points ratings",
        description="Every pair of agents plays a duplicate-deal match; prints the ranking "
        "(by points rating: points per deal against an average agent of the ladder, fitted to "
        "every match; openskill beside it) and the head-to-head matrix, and writes them to "
        "DIR/ladder.json and DIR/ladder.png.",
    )
    q.add_argument("agents", nargs="+", metavar="AGENT", help=f"two or more agents: {SPEC_HELP}")
    _common(q, "duplicate pairs per pairing (default: 200)")
    q.add_argument(
        "--neighbour-deals",
        type=int,
        default=None,
        metavar="M",
        help="then extend the matches between neighbours of the ranking to M duplicate pairs "
        "each, where agents close in strength need them, and judge the new neighbours when the "
        "ranking changes (default: none)",
    )
    q.add_argument(
        "--neighbour-max-deals",
        type=int,
        default=None,
        metavar="MAX",
        help="and double the pairs of a neighbours' match that does not separate them, up to "
        "MAX, until it does; judged at every look at 0.05 shared out over the looks "
        "(default: one look, at M)",
    )
    q.add_argument("--out", default="ladder", metavar="DIR", help="output folder (default: ladder)")
    _exact_flag(q, "the exact ratings by full traversal, beside the ladder's")
    q.add_argument(
        "--resume",
        action="store_true",
        help=f"take the games recorded in DIR/{RECORD_FILE} by an earlier run of this ladder "
        "instead of playing them again (only for the same agents, checkpoints, rules, mode and "
        "seed); without it the record starts anew",
    )
    q.set_defaults(func=run_ladder_cmd)


if __name__ == "__main__":
    from piquet_cli import main

    sys.exit(main(["eval", *sys.argv[1:]]))
