"""PPO self-play on Ray RLlib: the config, the run loop, checkpoints and the policy export.

:func:`train` connects to Ray (a local instance by default, an existing cluster given its
address), builds PPO on RLlib's current API stack over the piquet env
(:mod:`training.rllib.env`) with the action-masking module (:mod:`training.rllib.module`) and
the self-play league (:mod:`training.rllib.selfplay`), then runs ``iterations`` training
iterations. Each iteration samples about ``train_batch_size`` env steps over
``num_env_runners`` env-runner actors (each stepping ``num_envs_per_env_runner`` envs) and
updates ``main`` on the driver.

Outputs in ``out_dir``:

- ``checkpoints/latest.safetensors``: every ``checkpoint_every`` iterations and at the end, a
  piquet checkpoint (:mod:`training.checkpoint`) holding ``main`` (as ``model.*``, so it also
  loads as a policy), every snapshot of the league (``snapshot.<id>.*``) and the iteration and
  env-step counters; ``--resume`` continues from it. The optimizer's moments are not saved: a
  resumed run restarts Adam from zero (one iteration of warm-up, nothing else is lost).
- ``policy.safetensors``: ``main`` exported as a ``PolicyAgent`` checkpoint
  (:func:`export_policy`), for ``piquet eval``, ``ladder`` and ``play``.
- ``metrics.jsonl``: one line per iteration (env steps, throughput, returns, league).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.policy import ActorCritic
from piquet_env.rules import Rules, make_rules
from training import checkpoint as ck
from training.rllib.env import ENV_NAME, register
from training.rllib.module import MaskedActorCriticModule
from training.rllib.selfplay import MAIN, SelfPlayCallback, mapping_fn, snapshot_ids

CHECKPOINT_KIND = "rllib"
"""``meta["trainer"]`` of checkpoints written here."""


@dataclass
class RLlibConfig:
    """Every setting of an RLlib self-play run (the CLI flags of ``piquet train --backend rllib``)."""

    # --- run ---------------------------------------------------------------------------------
    iterations: int = 20
    """Training iterations (each samples ``train_batch_size`` env steps, then updates)."""
    out_dir: str = "runs/rllib"
    """Directory for checkpoints, the exported policy and metrics."""
    seed: int = 0
    """Seeds torch on the driver and RLlib (env runners derive their env seeds from it)."""
    checkpoint_every: int = 5
    """Write ``checkpoints/latest.safetensors`` every this many iterations (and at the end)."""

    # --- Ray ---------------------------------------------------------------------------------
    address: str | None = None
    """Ray cluster address (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``); None: local."""
    num_env_runners: int = 1
    """Env-runner actors sampling in parallel (0: sample on the driver)."""
    num_envs_per_env_runner: int = 1
    """Environments each env runner steps together (one batched forward pass for all)."""
    num_cpus: int | None = None
    """CPUs of a local Ray instance (default: the machine's, at least ``num_env_runners``)."""

    # --- env ---------------------------------------------------------------------------------
    rules: str = "standard"
    """Rules preset with variants, e.g. ``"classic+normand"``."""
    episode: str = "deal"
    """``"deal"`` (one deal per episode) or ``"partie"``."""
    reward: str = "deal_points"
    """Env reward mode: ``"deal_points"`` or ``"result"``."""
    reward_scale: float = 0.01
    """Factor on every reward (deal points are tens)."""

    # --- network and PPO ---------------------------------------------------------------------
    hidden: tuple[int, ...] = (256, 256)
    activation: str = "tanh"
    lr: float = 3e-4
    gamma: float = 1.0
    lambda_: float = 0.95
    clip_param: float = 0.2
    entropy_coeff: float = 0.01
    vf_loss_coeff: float = 0.5
    grad_clip: float = 0.5
    train_batch_size: int = 4000
    minibatch_size: int = 256
    num_epochs: int = 4

    # --- self-play ---------------------------------------------------------------------------
    self_play_weight: float = 0.5
    """Share of episodes where ``main`` plays both seats; the rest it plays a snapshot."""
    latest_weight: float = 0.5
    """Share of snapshot games against the newest snapshot (the rest: uniform over the pool)."""
    pool_size: int = 8
    """Snapshots drawn from: the newest ``pool_size``."""
    win_rate_threshold: float = 0.55
    """``main``'s win rate against the newest snapshot that freezes a new one."""
    min_games: int = 200
    """Games against the newest snapshot needed before judging that win rate."""

    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form notes stored with checkpoints."""

    def validate(self) -> RLlibConfig:
        """Raise ``ValueError`` naming the first bad field; return ``self``."""
        make_rules(self.rules)
        checks = {
            "iterations": self.iterations >= 1, "checkpoint_every": self.checkpoint_every >= 1,
            "num_env_runners": self.num_env_runners >= 0,
            "num_envs_per_env_runner": self.num_envs_per_env_runner >= 1,
            "episode": self.episode in ("deal", "partie"),
            "reward": self.reward in ("deal_points", "result"),
            "reward_scale": self.reward_scale > 0, "lr": self.lr > 0,
            "gamma": 0 < self.gamma <= 1, "lambda_": 0 <= self.lambda_ <= 1,
            "train_batch_size": self.train_batch_size >= 1,
            "minibatch_size": 1 <= self.minibatch_size <= self.train_batch_size,
            "num_epochs": self.num_epochs >= 1,
            "self_play_weight": 0 <= self.self_play_weight <= 1,
            "latest_weight": 0 <= self.latest_weight <= 1, "pool_size": self.pool_size >= 1,
            "win_rate_threshold": 0 < self.win_rate_threshold <= 1,
            "min_games": self.min_games >= 1,
            "hidden": bool(self.hidden) and all(int(h) > 0 for h in self.hidden),
            "activation": self.activation in ("tanh", "relu"),
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"bad RLlib setting {name}={getattr(self, name)!r}")
        if self.num_cpus is not None and self.num_cpus < 1:
            raise ValueError(f"bad RLlib setting num_cpus={self.num_cpus!r}")
        return self

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable fields."""
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RLlibConfig:
        """Inverse of :meth:`to_dict` (unknown keys raise ``ValueError``)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"unknown RLlib setting(s) {unknown}")
        d = dict(d)
        if "hidden" in d:
            d["hidden"] = tuple(int(h) for h in d["hidden"])
        return cls(**d)

    @property
    def rules_obj(self) -> Rules:
        """The :class:`~piquet_env.rules.Rules` of :attr:`rules`."""
        return make_rules(self.rules)


@dataclass
class RLlibResult:
    """What :func:`train` returns."""

    out_dir: Path
    policy_path: Path
    iterations: int
    env_steps: int
    seconds: float
    steps_per_s: float
    snapshots: list[str]
    history: list[dict[str, Any]]


# --------------------------------------------------------------------------------- config


def algo_config(cfg: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of a run (current API stack, multi-agent self-play)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    register()
    spec = RLModuleSpec(module_class=MaskedActorCriticModule,
                        model_config={"hidden": list(cfg.hidden), "activation": cfg.activation})
    league = {"self_play_weight": cfg.self_play_weight, "latest_weight": cfg.latest_weight,
              "pool_size": cfg.pool_size}
    callback = functools.partial(SelfPlayCallback, win_rate_threshold=cfg.win_rate_threshold,
                                 min_games=cfg.min_games, **league)
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(ENV_NAME, env_config={"rules": cfg.rules, "episode": cfg.episode,
                                           "reward": cfg.reward, "reward_scale": cfg.reward_scale},
                     # RLlib's env checker steps random, unmasked actions (an illegal move ends
                     # the game); the env has its own PettingZoo API tests.
                     disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=cfg.num_env_runners,
                     num_envs_per_env_runner=cfg.num_envs_per_env_runner,
                     rollout_fragment_length="auto")
        .learners(num_learners=0)
        .multi_agent(policies={MAIN}, policy_mapping_fn=mapping_fn([], **league),
                     policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MAIN: spec}))
        .training(lr=cfg.lr, gamma=cfg.gamma, lambda_=cfg.lambda_, clip_param=cfg.clip_param,
                  entropy_coeff=cfg.entropy_coeff, vf_loss_coeff=cfg.vf_loss_coeff,
                  grad_clip=cfg.grad_clip, train_batch_size_per_learner=cfg.train_batch_size,
                  minibatch_size=cfg.minibatch_size, num_epochs=cfg.num_epochs)
        .callbacks(callback)
        .debugging(seed=cfg.seed)
    )


# --------------------------------------------------------------------------------- weights


def module_state(algorithm: Any, module_id: str) -> dict[str, torch.Tensor]:
    """The learner's weights of ``module_id`` as a torch state dict of the inner ActorCritic
    (keys ``trunk.0.weight``, ``policy_head.bias``, ...)."""
    state = algorithm.learner_group.get_state(components=f"learner/rl_module/{module_id}")
    weights = state["learner"]["rl_module"][module_id]
    return {k[len("model."):]: torch.as_tensor(np.asarray(v)) for k, v in weights.items()
            if k.startswith("model.")}


def set_module_state(algorithm: Any, module_id: str, weights: dict[str, torch.Tensor]) -> None:
    """Load an ActorCritic state dict into ``module_id`` on the learners and env runners."""
    state = {f"model.{k}": v.detach().cpu().numpy() for k, v in weights.items()}
    algorithm.set_state({"learner_group": {"learner": {"rl_module": {module_id: state}}}})


def network(cfg: RLlibConfig, weights: dict[str, torch.Tensor]) -> ActorCritic:
    """An :class:`~agents.policy.ActorCritic` of the run's architecture holding ``weights``."""
    rules = cfg.rules_obj
    from piquet_env.observation import encoder_for

    enc = encoder_for(rules)
    model = ActorCritic(enc.size, enc.n_actions, cfg.hidden, cfg.activation)
    model.load_state_dict(weights)
    return model.eval()


def export_policy(algorithm: Any, path: str | Path, cfg: RLlibConfig,
                  module_id: str = MAIN) -> Path:
    """Write module ``module_id`` of ``algorithm`` as a ``PolicyAgent`` checkpoint at ``path``
    (loadable with :meth:`agents.policy.PolicyAgent.load`); return the path."""
    model = network(cfg, module_state(algorithm, module_id))
    return ck.save_policy(path, model, cfg.rules_obj,
                          {"trainer": CHECKPOINT_KIND, **cfg.to_dict()})


def save_run_checkpoint(algorithm: Any, path: str | Path, cfg: RLlibConfig,
                        counters: dict[str, Any]) -> Path:
    """Write ``main``, every snapshot and ``counters`` to a piquet checkpoint at ``path``."""
    tensors = {f"model.{k}": v for k, v in module_state(algorithm, MAIN).items()}
    snaps = snapshot_ids(list(algorithm.config.policies))
    for sid in snaps:
        tensors.update({f"snapshot.{sid}.{k}": v
                        for k, v in module_state(algorithm, sid).items()})
    model = network(cfg, {k[len("model."):]: v for k, v in tensors.items()
                          if k.startswith("model.")})
    meta = ck.policy_meta(model, cfg.rules_obj, cfg.to_dict())
    meta.update(trainer=CHECKPOINT_KIND, snapshots=snaps, counters=counters)
    return ck.save_checkpoint(path, tensors, meta)


def restore_run_checkpoint(algorithm: Any, ckpt: ck.Checkpoint) -> dict[str, Any]:
    """Load ``main`` and the league of a checkpoint into a fresh ``algorithm``; return its
    counters."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    set_module_state(algorithm, MAIN, ckpt.section("model"))
    callback = algorithm.callbacks
    if isinstance(callback, list):  # pragma: no cover - RLlib may keep a list of callbacks
        callback = next(c for c in callback if isinstance(c, SelfPlayCallback))
    for sid in ckpt.meta.get("snapshots", []):
        if sid not in algorithm.config.policies:
            league = [*snapshot_ids(list(algorithm.config.policies)), sid]
            algorithm.add_module(
                module_id=sid,
                module_spec=RLModuleSpec.from_module(algorithm.get_module(MAIN)),
                new_agent_to_module_mapping_fn=mapping_fn(
                    league, self_play_weight=callback.self_play_weight,
                    latest_weight=callback.latest_weight, pool_size=callback.pool_size),
                new_should_module_be_updated=[MAIN])
        set_module_state(algorithm, sid, ckpt.section(f"snapshot.{sid}"))
    return dict(ckpt.meta.get("counters", {}))


# --------------------------------------------------------------------------------- Ray


def init_ray(cfg: RLlibConfig) -> bool:
    """Connect to ``cfg.address`` or start a local Ray instance; return whether we started or
    connected (and so must shut it down). Already-initialized Ray is reused as is."""
    import ray

    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if cfg.address:
        ray.init(address=cfg.address, ignore_reinit_error=True)
    else:
        cpus = cfg.num_cpus or max(os.cpu_count() or 1, cfg.num_env_runners)
        ray.init(num_cpus=cpus, include_dashboard=False, ignore_reinit_error=True)
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


def train(cfg: RLlibConfig, *, resume: str | Path | None = None,
          log: Callable[[str], None] | None = print) -> RLlibResult:
    """Run RLlib PPO self-play for ``cfg`` (or continue the run in ``resume``); see the module
    docstring for outputs. Ray is started (or connected to) and shut down here unless it was
    already initialized by the caller."""
    start_it, counters = 0, {}
    ckpt = None
    if resume is not None:
        path = Path(resume)
        ckpt = ck.read_checkpoint(path / ck.LATEST_FILE if path.is_dir() else path,
                                  rules=cfg.rules_obj)
        if ckpt.meta.get("trainer") != CHECKPOINT_KIND:
            raise ck.CheckpointError(f"{resume} is not an RLlib training checkpoint")
    cfg.validate()
    torch.manual_seed(cfg.seed)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    import ray

    owns_ray = init_ray(cfg)
    algorithm = None
    try:
        algorithm = algo_config(cfg).build_algo()
        if ckpt is not None:
            counters = restore_run_checkpoint(algorithm, ckpt)
            start_it = int(counters.get("iteration", 0))
        env_steps = int(counters.get("env_steps", 0))
        history: list[dict[str, Any]] = []
        t_run = time.perf_counter()
        steps_run = 0
        with open(out / "metrics.jsonl", "a", encoding="utf-8") as metrics:
            for it in range(start_it, cfg.iterations):
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
                    log(f"iter {it + 1}/{cfg.iterations}: {row['env_steps']} env steps in "
                        f"{row['seconds']:.1f}s ({row['env_steps_per_s']:,.0f}/s), main return "
                        f"{row['main_return_mean']:+.3f}, snapshots {row['snapshots']}, win rate "
                        f"vs newest {row['win_rate_vs_latest']:.2f}")
                counters = {"iteration": it + 1, "env_steps": env_steps}
                if (it + 1) % cfg.checkpoint_every == 0 or it + 1 == cfg.iterations:
                    save_run_checkpoint(algorithm, out / ck.LATEST_FILE, cfg, counters)
        seconds = time.perf_counter() - t_run
        if ckpt is not None and start_it >= cfg.iterations:
            save_run_checkpoint(algorithm, out / ck.LATEST_FILE, cfg, counters)
        policy = export_policy(algorithm, out / ck.POLICY_FILE, cfg)
        snaps = snapshot_ids(list(algorithm.config.policies))
    finally:
        if algorithm is not None:
            algorithm.stop()
        if owns_ray:
            ray.shutdown()
    return RLlibResult(out, policy, int(counters.get("iteration", start_it)), env_steps, seconds,
                       steps_run / seconds if seconds > 0 else 0.0, snaps, history)
