"""Exact figures for agents on a rule set small enough to enumerate: what ``piquet exploit
--exact`` and ``piquet solve`` compute (:mod:`piquet_env.exact` does the work).

- :func:`exact_report`: an agent spec's exact exploitability (the best response's value in each
  role and seat, NashConv), with the tree's counts and how long each stage took;
- :func:`solve`: CFR+ on the whole tree until a NashConv target (a fraction of the points range)
  or an iteration count, checked every so many iterations, its solution saved as a tabular policy
  (an agent spec) with its convergence log;
- :func:`tree_for`: the tree of a rule set, built once per process (a ``mini`` tree takes about a
  minute and 3 GB).
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from piquet_agents.registry import make_agent
from piquet_env.errors import Message, Setting
from piquet_env.exact import (
    CFRPlus,
    Exploitability,
    GameTree,
    TabularPolicy,
    build_tree,
    expected_value,
    exploitability,
    tabulate,
)
from piquet_env.exact.policy import (
    ExactPolicyError,
    cfr_checkpoint_rules,
    load_cfr_checkpoint,
    save_cfr_checkpoint,
)
from piquet_env.exact.tree import check_size
from piquet_env.files import write_text
from piquet_env.rules import Rules
from piquet_training.run_folder import RunFolder, RunFolderError

_TREES: dict[Rules, GameTree] = {}


def tree_for(rules: Rules, progress: Callable[[int, int], None] | None = None) -> GameTree:
    """The game tree of one deal under ``rules``, built on first use and kept for the process
    (refused, with the counts, for a rule set too large: :func:`piquet_env.exact.check_size`)."""
    if rules not in _TREES:
        _TREES.clear()  # one tree at a time: they are large
        _TREES[rules] = build_tree(rules, progress=progress)
    return _TREES[rules]


def points_range(tree: GameTree) -> float:
    """The spread of the deal's results: the best minus the worst terminal value for elder."""
    end = tree.value[tree.player < 0]
    return float(end.max() - end.min())


@dataclass
class ExactReport:
    """One agent's exact exploitability under one rule set (points per deal)."""

    target: str
    rules: str
    figures: Exploitability
    counts: dict[str, int]
    seconds: dict[str, float] = field(default_factory=dict)
    pure: str = ""
    """The spec of the one pure policy the figures are for, where ``target`` names a mixture
    (the plain ``heuristic``, reseeded every game in a match: ``heuristic:seed=N``); else ``""``."""

    def to_dict(self) -> dict[str, Any]:
        """The report for JSON."""
        return {
            "target": self.target,
            "rules": self.rules,
            "mode": "deal",
            **self.figures.to_dict(),
            "counts": self.counts,
            "seconds": self.seconds,
        }

    def summary(self) -> str:
        """The report as a few lines of text."""
        f, c = self.figures, self.counts
        took = ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        return "\n".join(
            [
                f"exact exploitability of {self.target} under {self.rules} (one deal: "
                f"{c['deals']:,} deals, {c['histories']:,} histories, "
                f"{c['infosets_elder'] + c['infosets_younger']:,} information states)",
                f"  against itself, elder makes {f.value:+.4f} points per deal",
                f"  a best elder against it makes {f.br_elder:+.4f}; a best younger "
                f"{f.br_younger:+.4f}",
                f"  a best response in either seat: {f.br_seat:+.4f} points per deal",
                f"  NashConv {f.nash_conv:.4f} (exploitability {f.exploitability:.4f})",
                f"  took {took}",
                *([pure_note(self.target, self.pure)] if self.pure else []),
            ]
        )


def pure_spec(spec: str, agent: object, seed: int) -> str:
    """The spec of the one pure policy an exact figure takes ``spec`` for, where ``spec`` is a
    mixture: the plain heuristic, reseeded every game in a match, is tabulated with the run's
    ``seed`` alone (``heuristic:seed=SEED``); ``""`` for any other agent."""
    from piquet_agents.heuristic import HeuristicAgent

    if isinstance(agent, HeuristicAgent) and not agent.fixed:
        return f"heuristic:seed={seed}"
    return ""


def pure_note(spec: str, pure: str) -> str:
    """The line that says which pure policy a mixture's exact figures are for."""
    return (
        f"  {spec} taken as {pure}, one pure policy (exact figures are for one; in a match the "
        f"plain {spec} is reseeded every game, a mixture of them)"
    )


def exact_report(
    target: str,
    rules: Rules,
    *,
    seed: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> ExactReport:
    """The exact exploitability of the agent ``target`` (any spec whose agent has exact action
    probabilities: random, heuristic, a policy or its ``:sample`` form, a tabular file) under
    ``rules``, seeded with ``seed`` (the heuristic's plans)."""
    start = time.perf_counter()
    check_size(rules)
    agent = make_agent(target, rules, seed=seed)
    pure = pure_spec(target, agent, seed)
    built = time.perf_counter()
    tree = tree_for(rules, progress=(lambda d, n: progress("tree", d, n)) if progress else None)
    tree_s = time.perf_counter() - built
    t0 = time.perf_counter()
    policy = tabulate(
        tree, agent, progress=(lambda d, n: progress("policy", d, n)) if progress else None
    )
    t1 = time.perf_counter()
    figures = exploitability(tree, policy)
    t2 = time.perf_counter()
    return ExactReport(
        target=target,
        rules=rules.name,
        figures=figures,
        counts=tree.counts(),
        seconds={
            "tree": round(tree_s, 2),
            "policy": round(t1 - t0, 2),
            "best responses": round(t2 - t1, 2),
            "total": round(t2 - start, 2),
        },
        pure=pure,
    )


class StageBars:
    """:func:`exact_report`'s ``progress(stage, done, total)`` shown as one tqdm bar per stage
    (building the tree, tabulating the policy) on stderr; a context manager that closes them."""

    def __init__(self) -> None:
        self._bars: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        """``done`` of ``total`` of ``stage``."""
        from tqdm import tqdm

        bar = self._bars.get(stage)
        if bar is None:
            for done_stage in self._bars.values():  # one stage at a time
                done_stage.close()
            bar = self._bars[stage] = tqdm(total=total, desc=stage, dynamic_ncols=True)
        bar.update(done - bar.n)

    def __enter__(self) -> StageBars:
        return self

    def __exit__(self, *exc: object) -> None:
        for bar in self._bars.values():
            bar.close()


def network_exploitability(model: Any, rules: Rules) -> dict[str, Exploitability]:
    """The exact exploitability of a network (:class:`~piquet_agents.network.ActorCritic`) in
    both forms it plays, from one pass over the information states: ``"sample"`` (its masked
    softmax, as it trains and as ``PATH:sample`` plays) and ``"greedy"`` (its most probable
    legal action, as ``PATH`` plays)."""
    import torch

    from piquet_env.exact.policy import info_observations, probs_on_slots

    tree = tree_for(rules)
    sample, greedy = np.zeros(tree.n_slots), np.zeros(tree.n_slots)
    device = next(model.parameters()).device
    model.eval()
    with torch.no_grad():
        for infos, obs, mask in info_observations(tree):
            logits = model.logits(
                torch.from_numpy(obs).to(device), torch.from_numpy(mask.astype(np.int8)).to(device)
            ).cpu()
            soft = torch.softmax(logits.double(), dim=-1).numpy()
            hard = np.zeros_like(soft)
            hard[np.arange(len(hard)), logits.argmax(-1).numpy()] = 1.0
            for policy, probs in ((sample, soft), (greedy, hard)):
                slots, values = probs_on_slots(tree, infos, probs)
                policy[slots] = values
    return {"sample": exploitability(tree, sample), "greedy": exploitability(tree, greedy)}


def exact_policy(spec: str, rules: Rules, seed: int = 0) -> np.ndarray:
    """The agent ``spec`` as a policy of the tree of ``rules`` (its exact action
    probabilities at every information state)."""
    return tabulate(tree_for(rules), make_agent(spec, rules, seed=seed))


def exact_difference(
    a: str | np.ndarray, b: str | np.ndarray, rules: Rules, seed: int = 0
) -> float:
    """The exact expected points per deal of ``a`` over ``b`` in a duplicate pair of single
    deals (each deal played twice, seats swapped: half of ``a`` as elder against ``b`` and half
    of ``b`` as elder against ``a``), what ``piquet eval A B --mode deal`` estimates. ``a`` and
    ``b`` are agent specs or policies of the tree."""
    tree = tree_for(rules)
    pa = exact_policy(a, rules, seed) if isinstance(a, str) else a
    pb = exact_policy(b, rules, seed) if isinstance(b, str) else b
    return 0.5 * (expected_value(tree, pa, pb) - expected_value(tree, pb, pa))


def exact_ratings(specs: list[str], rules: Rules, seed: int = 0) -> dict[str, Any]:
    """The exact head-to-head matrix of agents (:func:`exact_difference` for every pair) and the
    ratings it gives: the least-squares fit ``d(a, b) = r[a] - r[b]`` with the ratings summing to
    zero, the ladder's points-rating model without noise (for a full round robin, each agent's
    mean difference against all the others, itself counted as 0)."""
    policies = {s: exact_policy(s, rules, seed) for s in specs}
    matrix = {
        a: {
            b: (exact_difference(policies[a], policies[b], rules) if a != b else 0.0) for b in specs
        }
        for a in specs
    }
    ratings = {a: float(np.mean([matrix[a][b] for b in specs])) for a in specs}
    return {"matrix": matrix, "ratings": ratings}


@dataclass
class SolveResult:
    """What :func:`solve` made: the solution's figures and the convergence log."""

    rules: str
    iterations: int
    figures: Exploitability
    points_range: float
    seconds: float
    tree_seconds: float
    counts: dict[str, int]
    log: list[dict[str, float]]
    policy_path: str

    def to_dict(self) -> dict[str, Any]:
        """The result for JSON (the log too)."""
        out = asdict(self)
        out["figures"] = self.figures.to_dict()
        out["nash_conv_fraction"] = self.figures.nash_conv / self.points_range
        return out


CHECKPOINT_FILE = "solve-checkpoint.npz"
"""The solver's checkpoint in a solve folder (:func:`solve`'s ``checkpoint_every``)."""
SOLVE_FILES = ("policy.npz", CHECKPOINT_FILE)
"""The files that say a solve folder holds a solve (its result or its checkpoint)."""


def solve(
    rules: Rules,
    out: Path,
    *,
    iterations: int,
    check_every: int = 25,
    until: float = 0.0,
    progress: Callable[[int, float, float], None] | None = None,
    checkpoint_every: int = 100,
    resume: bool = False,
    overwrite: bool = False,
    on_iteration: Callable[[int], None] | None = None,
) -> SolveResult:
    """CFR+ on the whole tree of ``rules``: at most ``iterations`` iterations, the average
    strategy's NashConv computed every ``check_every``; with ``until > 0`` it stops at the first
    check where NashConv is at most ``until`` times the points range. Writes ``policy.npz`` (the
    solution, an agent spec), ``nashconv.csv`` and ``solve.json`` into ``out``; ``progress(it,
    nash_conv, seconds)`` after each check, ``on_iteration(it)`` after each iteration.

    Every ``checkpoint_every`` iterations (0: never) and at the end, the solver's state and the
    log so far are saved to ``out/solve-checkpoint.npz`` (atomically); ``resume`` continues from
    it, bit for bit: the same strategy as a run never stopped.

    The folder is checked before any work (:class:`~piquet_training.run_folder.RunFolder`): a new
    solve refuses one that holds a solve (:data:`SOLVE_FILES`) unless ``overwrite``, and a
    resumed one needs its checkpoint, of ``rules``, at most at ``iterations``
    (:class:`~piquet_training.run_folder.RunFolderError`, :class:`ExactPolicyError`)."""
    folder = RunFolder(out, holds=SOLVE_FILES)
    folder.check_writable((*SOLVE_FILES, "nashconv.csv", "solve.json"))
    if resume and overwrite:
        raise RunFolderError(
            Message("give ", Setting("resume"), " or ", Setting("overwrite"), ", not both"),
            path=out,
        )
    if resume:  # a checkpoint of other rules, or past the iterations, is refused before the tree
        _check_resume(rules, out / CHECKPOINT_FILE, iterations)
    else:
        folder.check_fresh(overwrite=overwrite)
    folder.create()
    t0 = time.perf_counter()
    tree = tree_for(rules)
    tree_s = time.perf_counter() - t0
    spread = points_range(tree)
    solver, log = _solver_to_start(tree, out / CHECKPOINT_FILE, resume, iterations)
    figures = exploitability(tree, solver.average)
    stopped = bool(until and log and log[-1]["iteration"] == solver.iterations)
    stopped = stopped and log[-1]["nash_conv"] <= until * spread  # a resumed run that had met it
    while solver.iterations < iterations and not stopped:
        solver.run(1)
        if on_iteration is not None:
            on_iteration(solver.iterations)
        if solver.iterations % check_every == 0 or solver.iterations == iterations:
            figures = exploitability(tree, solver.average)
            log.append(
                {
                    "iteration": solver.iterations,
                    "seconds": round(solver.seconds, 3),
                    "nash_conv": figures.nash_conv,
                    "value_elder": figures.value,
                }
            )
            if progress is not None:
                progress(solver.iterations, figures.nash_conv, solver.seconds)
            stopped = bool(until and figures.nash_conv <= until * spread)
        if checkpoint_every and solver.iterations % checkpoint_every == 0:
            save_cfr_checkpoint(solver, out / CHECKPOINT_FILE, log=log)
    save_cfr_checkpoint(solver, out / CHECKPOINT_FILE, log=log)
    table = TabularPolicy.from_tree(
        tree,
        solver.average,
        solver="CFR+",
        iterations=solver.iterations,
        nash_conv=figures.nash_conv,
        value_elder=figures.value,
    )
    path = table.save(out / "policy.npz")
    with open(out / "nashconv.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["iteration", "seconds", "nash_conv", "value_elder"])
        writer.writeheader()
        writer.writerows(log)
    result = SolveResult(
        rules=rules.name,
        iterations=solver.iterations,
        figures=figures,
        points_range=spread,
        seconds=round(solver.seconds, 2),
        tree_seconds=round(tree_s, 2),
        counts=tree.counts(),
        log=log,
        policy_path=str(path),
    )
    write_text(out / "solve.json", json.dumps(result.to_dict(), indent=2) + "\n")
    return result


_LOG_FIELDS = ("iteration", "seconds", "nash_conv", "value_elder")


def _check_resume(rules: Rules, checkpoint: Path, iterations: int) -> None:
    """What a resume can check from the checkpoint's metadata alone, before any tree is built:
    that there is one, of ``rules``, at most at iteration ``iterations``
    (:class:`ExactPolicyError` otherwise)."""
    if not checkpoint.is_file() and not checkpoint.is_symlink():
        raise ExactPolicyError(
            Message(
                "cannot resume (",
                Setting("resume"),
                f"): {checkpoint.parent} holds no solve to continue",
                path=checkpoint.parent,
            )
        )
    theirs, meta = cfr_checkpoint_rules(checkpoint)
    if theirs != rules:
        raise ExactPolicyError(
            Message(
                f"cannot resume: {checkpoint} is a solve of {theirs.name!r}, not of "
                f"{rules.name!r}: give ",
                Setting("rules", theirs.name),
                f", or solve {rules.name} in another folder",
                path=checkpoint,
            )
        )
    done = meta.get("iterations")
    if isinstance(done, int) and not isinstance(done, bool) and done > iterations:
        raise _past(checkpoint, done, iterations)


def _solver_to_start(
    tree: GameTree, checkpoint: Path, resume: bool, iterations: int
) -> tuple[CFRPlus, list[dict[str, float]]]:
    """A fresh solver and log, or with ``resume`` the checkpoint's (checked: its log one entry
    per check, each of numbers, none past its iterations); :class:`ExactPolicyError` otherwise."""
    if not resume:
        return CFRPlus(tree), []
    _check_resume(tree.rules, checkpoint, iterations)
    solver, meta = load_cfr_checkpoint(tree, checkpoint)
    log = meta.get("log")
    ok = isinstance(log, list) and len(log) <= solver.iterations
    for entry in log if ok else ():
        ok = ok and isinstance(entry, dict) and set(entry) == set(_LOG_FIELDS)
        ok = ok and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in entry.values()
        )
        ok = ok and 0 < entry["iteration"] <= solver.iterations
    if not ok:
        raise ExactPolicyError(f"{checkpoint}: its log is not a list of NashConv checks")
    if solver.iterations > iterations:
        raise _past(checkpoint, solver.iterations, iterations)
    return solver, log


def _past(checkpoint: Path, done: int, iterations: int) -> ExactPolicyError:
    """A resumed solve whose checkpoint is past the iterations asked for."""
    return ExactPolicyError(
        Message(
            f"cannot resume: {checkpoint} is at iteration {done}, past ",
            Setting("iterations", iterations),
            path=checkpoint,
        )
    )
