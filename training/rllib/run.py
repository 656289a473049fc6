"""PPO self-play on Ray RLlib: connecting to Ray, the run loop, its outputs.

:func:`train` connects to Ray (a local instance by default, an existing cluster given its
address), builds PPO on RLlib's current API stack over the piquet env
(:mod:`piquet_training.rllib.env`) with the action-masking module
(:mod:`piquet_training.rllib.module`) and the self-play league
(:mod:`piquet_training.rllib.league`), then runs ``updates`` training iterations. Each iteration
samples about ``train_batch_size`` env steps over ``num_env_runners`` env-runner actors (each
stepping ``num_envs_per_env_runner`` envs) and updates ``main`` on the driver.

Outputs in ``out_dir``:

- ``checkpoints/latest.safetensors``: every ``checkpoint_every`` iterations and at the end, a
  piquet checkpoint (:mod:`piquet_agents.checkpoint`) holding ``main`` (as ``model.*``, so it also
  loads as a policy), every snapshot of the league (``snapshot.<id>.*``) and the iteration and
  env-step counters, and ``main``'s optimizer state; ``--resume`` continues from it (RLlib's
  internal counters and smoothed metrics restart; the env runners are reseeded with
  ``seed + RESEED * iterations done``).
- ``policy.safetensors``: ``main`` exported as a ``PolicyAgent`` checkpoint
  (:func:`export_policy`), for ``piquet eval``, ``ladder`` and ``play``.
- ``metrics.jsonl``: one line per iteration (env steps, throughput, returns, league).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from piquet_agents import checkpoint as ck
from piquet_training.rllib.algo import RLlibConfig, algo_config
from piquet_training.rllib.export import (
    CHECKPOINT_KIND,
    export_policy,
    restore_run_checkpoint,
    save_run_checkpoint,
)
from piquet_training.rllib.league import MAIN, snapshot_ids
from piquet_training.settings.backends import check_resume

RESEED = 1_000_003
"""A run resumed after ``k`` iterations seeds RLlib with ``seed + RESEED * k``."""

__all__ = ["RLlibConfig", "RLlibResult", "export_policy", "init_ray", "train"]


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


def _summary(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    from ray.rllib.utils.metrics import (
        ENV_RUNNER_RESULTS,
        EPISODE_LEN_MEAN,
        NUM_ENV_STEPS_SAMPLED,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
    )

    runners = result.get(ENV_RUNNER_RESULTS, {})
    steps = int(runners.get(NUM_ENV_STEPS_SAMPLED, 0))
    league = result.get("league", {})
    returns = runners.get("module_episode_returns_mean", {})
    return {
        "iteration": int(result.get("training_iteration", 0)),
        "env_steps": steps,
        "env_steps_lifetime": int(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)),
        "seconds": round(seconds, 3),
        "env_steps_per_s": round(steps / seconds, 1) if seconds > 0 else 0.0,
        "episode_len_mean": float(runners.get(EPISODE_LEN_MEAN, float("nan"))),
        "main_return_mean": float(returns.get(MAIN, float("nan"))),
        "snapshots": int(league.get("snapshots", 0)),
        "win_rate_vs_latest": float(league.get("win_rate_vs_latest", float("nan"))),
        "snapshot_added": league.get("added", ""),
    }


def _print(line: str) -> None:
    print(line, flush=True)


def train(
    cfg: RLlibConfig,
    *,
    resume: str | Path | None = None,
    log: Callable[[str], None] | None = _print,
) -> RLlibResult:
    """Run RLlib PPO self-play for ``cfg`` (or continue the run in ``resume``, a run directory
    or checkpoint file); see the module docstring for outputs. ``log`` gets one line per
    iteration (None: quiet). Ray is started (or connected to) and shut down here unless the
    caller initialized it. Raises :class:`~piquet_agents.checkpoint.CheckpointError` for a bad
    ``resume`` and ``ConnectionError`` when ``cfg.address`` cannot be joined."""
    start_it, counters = 0, {}
    ckpt = None
    if resume is not None:
        path = Path(resume)
        ckpt = ck.read_checkpoint(
            path / ck.LATEST_FILE if path.is_dir() else path, rules=cfg.rules_obj
        )
        check_resume(ckpt, CHECKPOINT_KIND, resume)
    cfg.validate()
    torch.manual_seed(cfg.seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.torch_threads)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    import ray

    owns_ray = init_ray(cfg)
    algorithm = None
    try:
        done = int(ckpt.meta.get("counters", {}).get("iteration", 0)) if ckpt else 0
        # a resumed run's env runners must not replay the deals of the run's start
        algorithm = algo_config(
            dataclasses.replace(cfg, seed=cfg.seed + RESEED * done)
        ).build_algo()
        if ckpt is not None:
            counters = restore_run_checkpoint(algorithm, ckpt)
            start_it = int(counters.get("iteration", 0))
        env_steps = int(counters.get("env_steps", 0))
        history: list[dict[str, Any]] = []
        t_run = time.perf_counter()
        steps_run = 0
        with open(out / "metrics.jsonl", "a", encoding="utf-8") as metrics:
            for it in range(start_it, cfg.updates):
                t0 = time.perf_counter()
                result = algorithm.train()
                row = _summary(result, time.perf_counter() - t0)
                row["iteration"] = it + 1
                env_steps += row["env_steps"]
                steps_run += row["env_steps"]
                history.append(row)
                metrics.write(json.dumps(row) + "\n")
                metrics.flush()
                if log:
                    log(
                        f"iter {it + 1}/{cfg.updates}: {row['env_steps']} env steps in "
                        f"{row['seconds']:.1f}s ({row['env_steps_per_s']:,.0f}/s), main return "
                        f"{row['main_return_mean']:+.3f}, snapshots {row['snapshots']}, win rate "
                        f"vs newest {row['win_rate_vs_latest']:.2f}"
                    )
                counters = {"iteration": it + 1, "env_steps": env_steps}
                if (it + 1) % cfg.checkpoint_every == 0 or it + 1 == cfg.updates:
                    save_run_checkpoint(algorithm, out / ck.LATEST_FILE, cfg, counters)
        seconds = time.perf_counter() - t_run
        if ckpt is not None and start_it >= cfg.updates:
            save_run_checkpoint(algorithm, out / ck.LATEST_FILE, cfg, counters)
        policy = export_policy(algorithm, out / ck.POLICY_FILE, cfg)
        snaps = snapshot_ids(list(algorithm.config.policies))
    finally:
        if algorithm is not None:
            algorithm.stop()
        if owns_ray:
            ray.shutdown()
        torch.set_num_threads(threads)
    return RLlibResult(
        out,
        policy,
        int(counters.get("iteration", start_it)),
        env_steps,
        seconds,
        steps_run / seconds if seconds > 0 else 0.0,
        snaps,
        history,
    )
