"""The benchmark protocol: one fixed set of measurements that any agent is run under the same way.

:data:`PROTOCOL` fixes everything a result depends on: the rules (``standard``), the mode
(``deal``), no variance reduction, and

- **matches**: duplicate-deal matches against ``random``, ``heuristic``, ``mcts:100`` and
  ``baseline``, each over a fixed number of pairs on the deals of one fixed seed: the agent's
  points per deal over each opponent, with its 95% interval, p and win rate;
- **exploit**: the lower bound on the agent's exploitability at a fixed budget (an exploiter
  trained by :mod:`piquet_training.exploit.exploiter` for a fixed number of env steps, one torch
  thread, then played against the agent on fresh duplicate deals beside ``baseline``'s edge on the
  same deals). It is skipped for searches (``mcts`` specs,
  :func:`~piquet_agents.registry.is_search`): an exploiter plays a search one game at a time at the
  search's own cost, and 12 M env steps against ``mcts:100`` would take 35–55 CPU-hours
  (docs/results/exploitability.md).

Its :attr:`Protocol.version` goes into every result file: a change to what is measured or how
makes a new version, and results of different versions are not compared. :func:`run_benchmark`
runs the protocol for an agent spec (``piquet benchmark AGENT --out result.json``) and returns the
result file's content (:mod:`piquet_training.benchmark.results` reads, checks and tabulates it);
:func:`benchmark_match` plays one of its matches for an agent object or spec. A match of the
agent against an opponent that is the same agent (``baseline`` against ``baseline``) is not
played: it is 0 by symmetry, and the file says so.

- **exact** (version 2 on): the agent's exact NashConv under the small, exactly solved ``mini``
  rules (the agent's spec built for them; :func:`exact_nashconv`), the ground truth the bound
  above can only approach. A search (no exact move probabilities) or an agent that does not
  play ``mini`` (a policy trained for other rules) is not measured, and the file says why.

The protocol itself, as data, is :mod:`piquet_training.benchmark.protocol`. :func:`upgrade_result`
brings a version-1 file to version 2 by measuring the exact NashConv alone: the rest of version 2
is version 1's.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import piquet_env
from piquet_agents.registry import is_search, make_agent, same_agent, spec_files
from piquet_env.files import file_sha256
from piquet_env.rules import make_rules
from piquet_training.benchmark.protocol import (
    EXACT_SEARCH_SKIP,
    PROTOCOL,
    PROTOCOL_V1,
    SEARCH_SKIP,
    SELF_SKIP,
    BenchmarkError,
    Match,
    Protocol,
)
from piquet_training.benchmark.work import (
    OnChunk,
    check_work_dir,
    exploiter_held,
    match_file,
    played_match,
)
from piquet_training.evaluation.duplicate import (
    AgentLike,
    DuplicateMatch,
    GameResult,
    MatchReport,
    evaluate,
    play_games,
    report,
)
from piquet_training.evaluation.executor import Fanout
from piquet_training.evaluation.paired import Edge
from piquet_training.exploit.exploiter import exploit
from piquet_training.exploit.plan import plan_exploit
from piquet_training.exploit.result import ExploitError
from piquet_training.settings.train import ConfigError


def benchmark_match(
    agent: AgentLike,
    opponent: str,
    protocol: Protocol = PROTOCOL,
    workers: int = 1,
    progress: bool = False,
    ray: str | None = None,
) -> MatchReport:
    """Play the protocol's match of ``agent`` (an agent object or spec) against ``opponent``:
    its pairs, its seed, the protocol's rules and mode; A is the agent. ``workers`` tasks at a
    time, in processes here or on Ray with ``ray`` (the same games)."""
    m = protocol.match(opponent)
    rules = make_rules(protocol.rules)
    return evaluate(
        agent,
        protocol.spec(m.opponent),
        rules,
        m.pairs,
        mode=protocol.mode,
        seed=m.seed,
        workers=workers,
        progress=progress,
        variance_reduction="baseline" if protocol.variance_reduction else None,
        ray=ray,
    )


def estimate(mean: float, low: float, high: float) -> dict[str, float]:
    """An estimate as the result file writes it."""
    return {"mean": mean, "ci_low": low, "ci_high": high}


def match_entry(rep: MatchReport, minutes: float) -> dict[str, Any]:
    """A played match as the result file's ``matches`` holds it."""
    p, w = rep.points, rep.wins
    return {
        "pairs": rep.n_pairs,
        "points_per_deal": estimate(p.mean, p.low, p.high),
        "p": p.p_value(0.0),
        "win_rate": estimate(w.mean, w.low, w.high),
        "minutes": round(minutes, 2),
    }


def _edge(e: Edge | None) -> dict[str, float] | None:
    return None if e is None else {**estimate(e.mean, e.ci_low, e.ci_high), "p": e.p}


def _git(*args: str) -> str:
    """``git ARGS`` in the package's folder, or "" (no git, not a checkout)."""
    if shutil.which("git") is None:
        return ""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def run_info(command: str, minutes: float = 0.0) -> dict[str, Any]:
    """The ``run`` block: the date (UTC), the command, the package version, the commit (and
    whether the checkout's tracked files had changes) where run from a checkout, Python, torch,
    the machine and ``minutes``. Taken when the run starts: the code that runs is the code there
    then."""
    import torch

    commit = _git("rev-parse", "--short=7", "HEAD")
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "command": command,
        "package_version": piquet_env.__version__,
        "commit": commit or None,
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no")) if commit else None,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "minutes": round(minutes, 2),
    }


def run_benchmark(
    spec: str,
    work_dir: str | os.PathLike,
    *,
    protocol: Protocol = PROTOCOL,
    name: str | None = None,
    workers: int = 1,
    ray: str | None = None,
    exploit_it: bool | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    echo: bool = True,
    command: str = "",
) -> dict[str, Any]:
    """Run ``protocol`` for the agent ``spec`` and return the result file's content.

    ``work_dir`` holds the exploiter's run (``exploit/``); ``name`` labels the agent (default:
    the spec); ``workers`` tasks at a time play the matches and the exploit's final evaluation,
    in processes here or on Ray with ``ray`` (:class:`~piquet_training.evaluation.executor.Fanout`;
    the results do not depend on either); ``exploit_it`` forces the exploit on (``True``) or off
    (``False``; default: off for searches only); ``resume`` continues a stopped exploiter run,
    ``overwrite`` replaces one; ``command`` is recorded as the command that made the file.
    """
    t0 = time.perf_counter()
    fanout = Fanout(workers, ray)
    info = run_info(command)
    rules = make_rules(protocol.rules)
    try:
        make_agent(spec, rules)
    except ValueError as exc:
        raise BenchmarkError(str(exc)) from None
    work = Path(work_dir)
    if exploit_it is None:
        exploit_it = not is_search(spec)
    skip_reason = "" if exploit_it else (SEARCH_SKIP if is_search(spec) else "not asked for")
    check_work_dir(work, resume=resume, overwrite=overwrite)
    files = agent_files(spec, rules)
    matches: dict[str, Any] = {}
    earlier = 0.0  # minutes a resumed run's parts took in earlier sittings
    for m in protocol.matches:
        opponent = protocol.spec(m.opponent)  # the agent the protocol's name plays
        if same_agent(spec, opponent, make_rules(protocol.rules)):
            matches[m.opponent] = {"skipped": SELF_SKIP}
            if echo:
                print(f"  {spec} vs {opponent}: {SELF_SKIP}", flush=True)
            continue
        t = time.perf_counter()
        rep, minutes = _played_match(spec, m, protocol, work, files, fanout, progress)
        earlier += _earlier(minutes, t)
        matches[m.opponent] = match_entry(rep, minutes)
        if echo:
            p = rep.points
            print(
                f"  {spec} vs {opponent}: {p.mean:+.2f} [{p.low:+.2f}, {p.high:+.2f}] points "
                f"per deal, {m.pairs} pairs ({matches[m.opponent]['minutes']:.1f} min)",
                flush=True,
            )
    bound: dict[str, Any] = {"skipped": skip_reason}
    if exploit_it:
        t = time.perf_counter()
        bound = _exploit(spec, rules, protocol, work, resume, fanout, echo, progress)
        earlier += _earlier(bound["minutes"], t)
    exact = exact_nashconv(spec, protocol, echo=echo)
    info["minutes"] = round((time.perf_counter() - t0) / 60 + earlier, 2)
    return {
        "protocol": protocol.to_dict(),
        "agent": {"name": name or spec, "spec": spec, "files": files},
        "matches": matches,
        "exploit": bound,
        "exact_nashconv": exact,
        "run": info,
    }


def exact_nashconv(spec: str, protocol: Protocol = PROTOCOL, echo: bool = False) -> Any:
    """The ``exact_nashconv`` block of the result file: ``None`` where the protocol does not
    measure it (version 1); ``{"skipped": REASON}`` for a search or an agent that does not play
    the protocol's exact rules; else ``{"rules", "value", "command"}``, the agent's exact
    NashConv under those rules and the command that gives the same figure."""
    if protocol.exact is None:
        return None
    if is_search(spec):
        return {"skipped": EXACT_SEARCH_SKIP}
    from piquet_env.exact.policy import ExactPolicyError
    from piquet_training.exact import exact_report

    name, seed = protocol.exact.rules, protocol.exact.seed
    rules = make_rules(name)
    try:
        make_agent(spec, rules, seed=seed)
    except ValueError as exc:
        return {"skipped": f"the agent does not play {name}: {exc}"}
    if echo:
        print(f"  {spec}: the exact NashConv under {name}...", flush=True)
    try:
        figures = exact_report(spec, rules, seed=seed).figures
    except ExactPolicyError as exc:
        return {"skipped": f"no exact move probabilities under {name}: {exc}"}
    if echo:
        print(f"  {spec}: exact NashConv {figures.nash_conv:.4f} under {name}", flush=True)
    command = (
        f"piquet exploit {shlex.quote(spec)} --rules {shlex.quote(name)} --exact --seed {seed}"
    )
    return {"rules": name, "value": figures.nash_conv, "command": command}


def upgrade_result(
    path: str | os.PathLike,
    *,
    source: Protocol = PROTOCOL_V1,
    target: Protocol = PROTOCOL,
    command: str = "piquet benchmark --upgrade",
    echo: bool = False,
) -> dict[str, Any]:
    """A result file of protocol ``source`` (version 1) brought to ``target`` (version 2), whose
    only addition is the exact NashConv: it is measured for the file's agent, everything else is
    kept, and ``exact_nashconv.upgraded_from`` names the file's version and SHA-256 and holds the
    upgrade's own ``run`` block (its ``command``, date, commit, minutes). The agent's
    files must be the very ones the file was made with (their SHA-256); a :class:`BenchmarkError`
    says what does not fit."""
    from piquet_training.benchmark.results import ResultFileError, read_result

    try:
        d = read_result(path, official=False)
    except ResultFileError as exc:
        raise BenchmarkError(str(exc)) from None
    if d["protocol"] != source.to_dict():
        raise BenchmarkError(
            f"{path}: not a file of protocol version {source.version} as this package runs it"
        )
    if dataclasses.replace(target, version=source.version, exact=None) != source:
        raise BenchmarkError(
            f"protocol version {target.version} changes more than the exact NashConv: "
            "run it anew (piquet benchmark AGENT)"
        )
    spec = d["agent"]["spec"]
    rules = make_rules(target.rules)
    try:
        now = agent_files(spec, rules)
    except ValueError as exc:
        raise BenchmarkError(f"{path}: agent {spec!r}: {exc}") from None
    then = d["agent"]["files"]
    if now != then:
        raise BenchmarkError(
            f"{path}: agent {spec!r}: its files are not those the file was made with "
            f"(SHA-256 then {then}, now {now})"
        )
    started = time.monotonic()
    run = run_info(command)
    exact = exact_nashconv(spec, target, echo=echo)
    run["minutes"] = round((time.monotonic() - started) / 60, 2)
    origin = {"version": source.version, "sha256": file_sha256(str(path)), "run": run}
    exact["upgraded_from"] = origin
    return {**d, "protocol": target.to_dict(), "exact_nashconv": exact}


def _earlier(minutes: float, since: float) -> float:
    """Of a part's ``minutes`` over every sitting, those before this sitting's, which began at
    ``since`` (``time.perf_counter``)."""
    return max(0.0, minutes - (time.perf_counter() - since) / 60)


def _played_match(
    spec: str,
    m: Match,
    protocol: Protocol,
    work: Path,
    files: list[dict[str, str]],
    fanout: Fanout,
    progress: bool,
) -> tuple[MatchReport, float]:
    """The protocol's match ``m`` of ``spec``, continued from and recorded in the work folder
    (:mod:`piquet_training.benchmark.work`): its report and the minutes its pairs took."""
    rules = make_rules(protocol.rules)
    opponent = protocol.spec(m.opponent)
    vr = "baseline" if protocol.variance_reduction else None
    header = {
        "agent": spec,
        "files": files,
        "opponent": m.opponent,
        "rules": protocol.rules,
        "mode": protocol.mode,
        "seed": m.seed,
        "pairs": m.pairs,
        "variance_reduction": vr,
    }

    def play(start: int, n: int, on_chunk: OnChunk) -> list[GameResult]:
        match = DuplicateMatch(spec, opponent, rules, n, protocol.mode, m.seed, start, vr)
        return play_games(match, fanout=fanout, on_chunk=on_chunk)  # one fan-out, saved by chunk

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=m.pairs, desc=f"{spec} vs {m.opponent}", unit="pair", smoothing=0.05)
    try:
        path = match_file(work, m.opponent)
        games, minutes = played_match(path, header, m.pairs, play, bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    return report(games, spec, opponent, rules, protocol.mode, m.seed, vr or ""), minutes


def agent_files(spec: str, rules: Any) -> list[dict[str, str]]:
    """The files ``spec`` loads under ``rules``, each ``{"name", "sha256"}``: the result file's
    ``agent.files``."""
    files = spec_files(spec, rules)
    return [{"name": os.path.basename(f), "sha256": file_sha256(f)} for f in files]


def _exploit(
    spec: str,
    rules: Any,
    protocol: Protocol,
    work: Path,
    resume: bool,
    fanout: Fanout,
    echo: bool,
    progress: bool,
) -> dict[str, Any]:
    """The protocol's exploit of ``spec``: the ``exploit`` block of the result file."""
    budget = protocol.exploit
    base = dataclasses.replace(protocol.exploit_config_base(), tensorboard=False, progress=progress)
    try:
        plan = plan_exploit(
            spec,
            rules,
            work / "exploit",
            steps=budget.env_steps,
            mode=protocol.mode,
            seed=budget.seed,
            eval_every=budget.eval_every,
            periodic_deals=budget.periodic_pairs,
            reference=protocol.spec(budget.reference) if budget.reference else "none",
            base=base,
            baseline=protocol.spec("baseline"),
            pairs=budget.eval_pairs,
            fanout=fanout,
            resume=resume and exploiter_held(work),
            overwrite=True,  # the work folder is the benchmark's own (work.py decides its reuse)
            echo=echo,
        )
    except (ExploitError, ConfigError) as exc:
        raise BenchmarkError(str(exc)) from None
    cfg, reference = plan.cfg, plan.reference
    res = exploit(plan)
    if echo:
        print(res.summary(), flush=True)
    return {
        "env_steps": res.env_steps,
        "pairs": res.edge.pairs,
        "edge": _edge(res.edge),
        "reference": budget.reference if reference else None,
        "reference_edge": _edge(res.reference),
        "gain_over_reference": _edge(res.gain),
        "minutes": round(res.minutes, 2),
        "config": _portable_config(cfg.to_dict()),
    }


def _portable_config(config: dict[str, Any]) -> dict[str, Any]:
    """The exploiter's settings as the result file records them: without the work folder and
    where its games were collected (``workers``, ``ray``: nothing they change is in the result),
    and its starting weights by file name and SHA-256 instead of this machine's path."""
    config = {k: v for k, v in config.items() if k not in ("out_dir", "workers", "ray")}
    if config.get("init_from"):
        path = config["init_from"]
        config["init_from"] = os.path.basename(path)
        config["init_from_sha256"] = file_sha256(path)
    return config


def command_line(argv: list[str]) -> str:
    """The command ``piquet ARGV`` as a shell would take it, for the result file."""
    return "piquet " + shlex.join(argv)
