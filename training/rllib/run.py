"""PPO self-play on Ray RLlib: connecting to Ray, the run loop, its outputs.

:func:`train` connects to Ray (a local instance by default, an existing cluster given its
address) and builds PPO on RLlib's current API stack: by default (``vector_env``) the learner
against itself inside the batched env (:class:`~piquet_training.rllib.vector_env.
TargetVectorEnv`), else over the PettingZoo env (:mod:`piquet_training.rllib.env`) with the
self-play league (:mod:`piquet_training.rllib.league`), the action-masking module
(:mod:`piquet_training.rllib.module`) either way. It first copies the built-in trainer's warm
start into the learner (``bc_games``, as ``piquet train``'s; 0: fresh weights), then runs
``updates`` training iterations. Each iteration samples about ``train_batch_size`` of the
learner's decisions over ``num_env_runners`` env-runner actors (each stepping
``num_envs_per_env_runner`` games) and updates ``main`` on the driver.

Outputs in ``out_dir``:

- ``checkpoints/latest.safetensors``: every ``checkpoint_every`` iterations and at the end, a
  piquet checkpoint (:mod:`piquet_agents.checkpoint`) holding ``main`` (as ``model.*``, so it also
  loads as a policy), every snapshot of the league (``snapshot.<id>.*``) and the iteration and
  env-step counters, and ``main``'s optimizer state; ``--resume`` continues from it (RLlib's
  internal counters and smoothed metrics restart; the env runners are reseeded,
  :func:`~piquet_training.seeds.resumed`).
- ``policy.safetensors``: ``main`` exported as a ``PolicyAgent`` checkpoint
  (:func:`export_policy`), for ``piquet eval``, ``ladder`` and ``play``.
- ``metrics.jsonl``: one line per iteration (env steps, throughput, returns, league, the
  learner's losses).
- ``eval.csv``: the final evaluation, as the built-in trainer's (``final_eval_deals``
  duplicate pairs of the greedy policy against each of ``eval_opponents`` in ``eval_mode``,
  dealt from :func:`~piquet_training.seeds.final_eval`, on ``eval_workers`` processes), in its
  columns; after Ray is shut down, so the evaluation has the machine's cores.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from piquet_agents import checkpoint as ck
from piquet_training import seeds
from piquet_training.rllib.algo import RLlibConfig, algo_config
from piquet_training.rllib.export import (
    CHECKPOINT_KIND,
    export_policy,
    restore_run_checkpoint,
    save_run_checkpoint,
    set_start,
)
from piquet_training.rllib.league import MAIN, snapshot_ids
from piquet_training.rllib.vector_env import refresh_self
from piquet_training.run_folder import RunFolder
from piquet_training.run_log import EVAL_CSV, RunLogger
from piquet_training.settings.backends import check_resume
from piquet_training.threads import spin_briefly

RUN_FILES = (ck.LATEST_FILE, ck.POLICY_FILE, EVAL_CSV)
"""What an RLlib run leaves in its folder that a new run there must not replace."""
METRICS_JSONL = "metrics.jsonl"
"""The run's per-iteration rows (one JSON object a line), appended to by a resumed run."""

__all__ = ["RLlibConfig", "RLlibResult", "export_policy", "init_ray", "iterate", "train"]


@dataclass
class RLlibResult:
    """What :func:`train` returns."""

    out_dir: Path
    policy_path: Path
    """The exported ``PolicyAgent`` checkpoint (``out_dir/policy.safetensors``)."""
    iterations: int
    """Iterations done in all (a resumed run counts the earlier ones)."""
    env_steps: int
    """Env steps sampled in all (a resumed run counts the earlier ones)."""
    seconds: float
    """Wall time of this call's training loop (checkpoints included)."""
    steps_per_s: float
    """Env steps of this call per second of its training loop."""
    snapshots: list[str]
    """The league's snapshots at the end, oldest first."""
    history: list[dict[str, Any]]
    """This call's per-iteration rows (as in ``metrics.jsonl``)."""
    finals: list[dict[str, Any]] = field(default_factory=list)
    """The final evaluation's rows, one per opponent (as in ``eval.csv``; none when
    ``final_eval_deals`` is 0)."""

    @property
    def steady_steps_per_s(self) -> float:
        """Env steps per second over the iterations after the first (which warms up); sampling
        and learning together, as :attr:`steps_per_s`."""
        rows = self.history[1:] or self.history
        seconds = sum(r["seconds"] for r in rows)
        return sum(r["env_steps"] for r in rows) / seconds if seconds > 0 else 0.0


# --------------------------------------------------------------------------------- Ray


def init_ray(cfg: RLlibConfig) -> bool:
    """Connect to ``cfg.address``, or start a new local Ray instance (even when a cluster runs on
    this machine: joining it takes ``address="auto"``); return whether we started or connected
    (and so must shut it down). Already-initialized Ray is reused as is."""
    import ray

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if cfg.address:
        ray.init(address=cfg.address, ignore_reinit_error=True)
    else:
        cpus = cfg.num_cpus or max(os.cpu_count() or 1, cfg.num_env_runners)
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, ignore_reinit_error=True)
    return True


# --------------------------------------------------------------------------------- run loop


@dataclass
class Iterations:
    """What :func:`iterate` did: the counters at the end (``iteration``, ``env_steps``,
    ``seconds`` over every sitting), this sitting's rows, why it stopped early (``""``: it did
    not), and this sitting's wall time and env steps in its training iterations."""

    counters: dict[str, Any]
    history: list[dict[str, Any]]
    stopped_early: str
    seconds: float
    steps: int
    policy: Path

    @property
    def steps_per_s(self) -> float:
        """This sitting's env steps per second of training."""
        return self.steps / self.seconds if self.seconds > 0 else 0.0


def build_algorithm(config_of: Callable[[RLlibConfig], Any], cfg: RLlibConfig, done: int) -> Any:
    """The RLlib algorithm of ``config_of(cfg)``, seeded for a run ``done`` iterations in
    (:func:`~piquet_training.seeds.resumed`: a resumed run's env runners must not replay the
    deals of the run's start), torch seeded the same way."""
    seed = seeds.resumed(cfg.seed, done)
    torch.manual_seed(seed)
    return config_of(dataclasses.replace(cfg, seed=seed)).build_algo()


def iterate(
    algorithm: Any,
    cfg: RLlibConfig,
    counters: dict[str, Any],
    *,
    row_of: Callable[[dict[str, Any], float], dict[str, Any]],
    until: Callable[[dict[str, Any]], str | None],
    after: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
) -> Iterations:
    """The one RLlib run loop, of self-play training and of the exploiter: before each iteration
    ``until(counters)`` says whether to go on (``None``), or to stop (``""``: done; a reason:
    stopped early); each iteration's row (``row_of(result, seconds)``, its ``env_steps`` the
    iteration's) is appended to ``metrics.jsonl`` and handed to ``after(row, counters)``; the
    run's checkpoint is saved every ``cfg.checkpoint_every`` iterations and at the end, and
    ``main`` exported as the run's policy."""
    out = Path(cfg.out_dir)
    counters = {"iteration": 0, "env_steps": 0, "seconds": 0.0, **counters}
    before, t0 = float(counters["seconds"]), time.perf_counter()
    history: list[dict[str, Any]] = []
    stopped, seconds, steps = "", 0.0, 0
    with open(out / METRICS_JSONL, "a", encoding="utf-8") as metrics:
        while True:
            counters["seconds"] = before + time.perf_counter() - t0
            verdict = until(counters)
            if verdict is not None:
                stopped = verdict
                break
            t_it = time.perf_counter()
            result = algorithm.train()
            it_seconds = time.perf_counter() - t_it
            row = row_of(result, it_seconds)
            counters["iteration"] += 1
            counters["env_steps"] += int(row["env_steps"])
            counters["seconds"] = before + time.perf_counter() - t0
            row.update(iteration=counters["iteration"], env_steps_total=counters["env_steps"])
            row.update(learner_row(result))
            seconds += it_seconds
            steps += int(row["env_steps"])
            history.append(row)
            metrics.write(json.dumps(strict_json(row), allow_nan=False) + "\n")
            metrics.flush()
            if after is not None:
                after(row, counters)
            if counters["iteration"] % cfg.checkpoint_every == 0:
                save_run_checkpoint(algorithm, out / ck.LATEST_FILE, cfg, counters)
    counters["seconds"] = before + time.perf_counter() - t0
    save_run_checkpoint(algorithm, out / ck.LATEST_FILE, cfg, counters)
    policy = export_policy(algorithm, out / ck.POLICY_FILE, cfg)
    return Iterations(counters, history, stopped, seconds, steps, policy)


def strict_json(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with each float that is not finite (a win rate not measured yet, a loss of an
    iteration without an update) as ``None``: ``metrics.jsonl`` is strict JSON, which ``jq``
    and other readers take (Python's own writes ``NaN``, which they refuse).

    >>> strict_json({"a": float("nan"), "b": 1.5, "c": "x"})
    {'a': None, 'b': 1.5, 'c': 'x'}
    """
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}


LEARNER_STATS = {
    "policy_loss": "policy_loss",
    "vf_loss": "value_loss",
    "entropy": "entropy",
    "vf_explained_var": "explained_variance",
}
"""The learner's figures an iteration's row of ``metrics.jsonl`` gives, RLlib's name to the
built-in ``train.csv``'s."""


def learner_row(result: dict[str, Any]) -> dict[str, float]:
    """The learned module's figures of one iteration's ``result`` under the built-in trainer's
    names (:data:`LEARNER_STATS`; its ``value_loss`` half RLlib's squared error, as the
    built-in's), for ``main`` in the league or RLlib's one module in the vector run; none when
    the iteration did not update it."""
    from ray.rllib.core import DEFAULT_MODULE_ID
    from ray.rllib.utils.metrics import LEARNER_RESULTS

    learners = result.get(LEARNER_RESULTS, {})
    stats = learners.get(MAIN) or learners.get(DEFAULT_MODULE_ID) or {}
    row = {ours: float(stats[theirs]) for theirs, ours in LEARNER_STATS.items() if theirs in stats}
    if "value_loss" in row:
        row["value_loss"] /= 2
    return row


class Summary:
    """Each iteration's row of ``metrics.jsonl`` from RLlib's training result. Its env steps are
    every move applied, both seats', as the built-in trainer counts them: RLlib's own count in
    the league (each seat's decision is an env step there), the moves the batched env reports
    in the vector run (RLlib counts only the learner's decisions there)."""

    def __init__(self, vector: bool) -> None:
        self.vector = vector
        self.lifetime = 0

    def __call__(self, result: dict[str, Any], seconds: float) -> dict[str, Any]:
        """The row of one iteration's ``result`` that took ``seconds``."""
        from ray.rllib.utils.metrics import (
            ENV_RUNNER_RESULTS,
            EPISODE_LEN_MEAN,
            EPISODE_RETURN_MEAN,
            NUM_ENV_STEPS_SAMPLED,
        )

        from piquet_training.rllib.vector_env import moves_sampled

        runners = result.get(ENV_RUNNER_RESULTS, {})
        if self.vector:
            now = moves_sampled(result)
            steps, self.lifetime = now - self.lifetime, now
        else:
            steps = int(runners.get(NUM_ENV_STEPS_SAMPLED, 0))
            self.lifetime += steps
        league = result.get("league", {})
        returns = runners.get("module_episode_returns_mean", {})
        # the league's per module; a single-agent run's (the vector env's) for its one module
        main_return = returns.get(MAIN, runners.get(EPISODE_RETURN_MEAN, float("nan")))
        return {
            "iteration": int(result.get("training_iteration", 0)),
            "env_steps": steps,
            "env_steps_lifetime": self.lifetime,
            "seconds": round(seconds, 3),
            "env_steps_per_s": round(steps / seconds, 1) if seconds > 0 else 0.0,
            "episode_len_mean": float(runners.get(EPISODE_LEN_MEAN, float("nan"))),
            "main_return_mean": float(main_return),
            "snapshots": int(league.get("snapshots", 0)),
            "win_rate_vs_latest": float(league.get("win_rate_vs_latest", float("nan"))),
            "snapshot_added": league.get("added", ""),
        }


def _print(line: str) -> None:
    print(line, flush=True)


def warm_start(cfg: RLlibConfig, out: Path, *, echo: bool) -> Path:
    """The built-in trainer's warm start for ``cfg`` (its rules, mode, seed, ``bc_games``, at
    its widths) made in ``out``'s ``warm_start/``: the path of the policy imitated."""
    from piquet_training.settings.train import TrainConfig
    from piquet_training.warm_start import warm_start_policy

    bc = TrainConfig(
        rules=cfg.rules, mode=cfg.mode, seed=cfg.seed, bc_games=cfg.bc_games, torch_threads=1
    )
    return warm_start_policy(bc, out, hidden=cfg.hidden, activation=cfg.activation, echo=echo)


def train(
    cfg: RLlibConfig,
    *,
    resume: str | Path | None = None,
    overwrite: bool = False,
    log: Callable[[str], None] | None = _print,
) -> RLlibResult:
    """Run RLlib PPO self-play for ``cfg`` (or continue the run in ``resume``, a run directory
    or checkpoint file); see the module docstring for outputs. A new run refuses a folder that
    holds one (:class:`~piquet_training.run_folder.RunFolder`) unless ``overwrite``. ``log``
    gets one line per iteration (None: quiet). Ray is started (or connected to) and shut down
    here unless the caller initialized it. Raises
    :class:`~piquet_training.run_folder.RunFolderError` for a folder that cannot take the run,
    :class:`~piquet_agents.checkpoint.CheckpointError` for a bad ``resume`` and
    ``ConnectionError`` when ``cfg.address`` cannot be joined. The processes it starts spin their
    idle threads briefly (:func:`~piquet_training.threads.spin_briefly`)."""
    spin_briefly()
    folder = RunFolder(Path(cfg.out_dir), holds=RUN_FILES)
    folder.check_writable((METRICS_JSONL, *RUN_FILES))
    ckpt = None
    if resume is not None:
        path = Path(resume)
        ckpt = ck.read_checkpoint(
            path / ck.LATEST_FILE if path.is_dir() else path, rules=cfg.rules_obj
        )
        check_resume(ckpt, CHECKPOINT_KIND, resume)
    else:
        folder.check_fresh(overwrite=overwrite)
    cfg.validate()
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.torch_threads)
    out = folder.create()
    import ray

    start = ""
    if ckpt is None and cfg.bc_games > 0:
        start = str(warm_start(cfg, out, echo=log is not None))
    owns_ray = init_ray(cfg)
    algorithm = None
    try:
        done = int(ckpt.meta.get("counters", {}).get("iteration", 0)) if ckpt else 0
        algorithm = build_algorithm(algo_config, cfg, done)
        counters: dict[str, Any] = {}
        set_start(algorithm, start)
        if cfg.vector_env and cfg.self_play == "inside" and start:  # the opponent, as the learner
            refresh_self(algorithm)
        if ckpt is not None:
            counters = dict(restore_run_checkpoint(algorithm, ckpt))
            if cfg.vector_env and cfg.self_play == "inside":  # the opponent: the learner restored
                refresh_self(algorithm)

        def after(row: dict[str, Any], c: dict[str, Any]) -> None:
            if log:
                opponents = (
                    "both seats learning (main's return is both seats', zero)"
                    if cfg.vector_env and cfg.self_play == "both"
                    else "opponent: itself as of the last update"
                    if cfg.vector_env
                    else f"snapshots {row['snapshots']}, win rate vs newest "
                    f"{row['win_rate_vs_latest']:.2f}"
                )
                log(
                    f"iter {c['iteration']}/{cfg.updates}: {row['env_steps']} env steps in "
                    f"{row['seconds']:.1f}s ({row['env_steps_per_s']:,.0f}/s), main return "
                    f"{row['main_return_mean']:+.3f}, {opponents}"
                )

        ran = iterate(
            algorithm,
            cfg,
            counters,
            row_of=Summary(cfg.vector_env),
            until=lambda c: "" if c["iteration"] >= cfg.updates else None,
            after=after,
        )
        snaps = snapshot_ids(list(algorithm.config.policies))
    finally:
        if algorithm is not None:
            algorithm.stop()
        if owns_ray:
            ray.shutdown()
        torch.set_num_threads(threads)
    return RLlibResult(
        out,
        ran.policy,
        int(ran.counters["iteration"]),
        int(ran.counters["env_steps"]),
        ran.seconds,
        ran.steps_per_s,
        snaps,
        ran.history,
        final_evaluation(cfg, ran, log=log),
    )


def final_evaluation(
    cfg: RLlibConfig, ran: Iterations, *, log: Callable[[str], None] | None = _print
) -> list[dict[str, Any]]:
    """The built-in trainer's final evaluation of the run's exported policy
    (:func:`~piquet_training.evaluation.greedy.evaluate_policy`: ``cfg.final_eval_deals`` pairs
    against each of ``cfg.eval_opponents`` in ``cfg.eval_mode``, dealt from
    :func:`~piquet_training.seeds.final_eval`), its rows appended to ``eval.csv`` in the built-in
    trainer's columns (``update``: the iterations done) and logged; none when
    ``final_eval_deals`` is 0."""
    if not cfg.final_eval_deals:
        return []
    from piquet_training.evaluation.greedy import evaluate_policy

    if log:
        log(
            f"final evaluation: {cfg.final_eval_deals} pairs vs {cfg.eval_opponents} "
            f"({cfg.eval_mode} mode, {cfg.eval_workers} worker(s))..."
        )
    c = ran.counters
    rows = evaluate_policy(
        str(ran.policy),
        cfg,
        cfg.final_eval_deals,
        seed=seeds.final_eval(cfg.seed),
        workers=cfg.eval_workers,
    )
    RunLogger(cfg.out_dir, tensorboard=False).log_evaluation(
        "final",
        rows,
        update=int(c["iteration"]),
        env_steps=int(c["env_steps"]),
        minutes=float(c["seconds"]) / 60,
    )
    for row in rows:
        if log:
            log(row["summary"])
    return [{k: v for k, v in r.items() if k not in ("summary", "worker_memory")} for r in rows]
