"""PPO with GAE over batched self-play: the training loop of ``piquet train``, top to bottom.

Modelled on CleanRL's ``ppo.py``: every hyperparameter is a field of
:class:`~piquet_training.config.TrainConfig`, and :func:`train` reads in order:

1. setup (:func:`setup`): seed everything, build the network, optimizer, opponent pool, collector
   and logger, and print the run's header;
2. start (:func:`start`): resume from a checkpoint, or warm-start by behaviour cloning of the
   heuristic (:func:`warm_start`) and evaluate the starting policy;
3. per update: anneal the learning rate, **collect** complete games (on the batched engine,
   :mod:`piquet_training.vector_collector`, or one object per game,
   :mod:`piquet_training.collector`), compute GAE **advantages**, run the clipped-PPO **update**
   over shuffled minibatches, then **log**, snapshot the learner into the pool, **evaluate** now
   and then, **checkpoint**; the time budget (:class:`Budget`) decides when to stop early;
4. finish (:func:`finish`): save the policy, evaluate it against ``eval_opponents`` over duplicate
   deals, draw the learning curve and write the summary (:func:`write_summary`).
"""

from __future__ import annotations

import json
import os
import random
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_agents.policy import PolicyAgent
from piquet_env.observation import encoder_for
from piquet_env.rules import make_rules
from piquet_training import optim_state
from piquet_training.collector import Collector, OpponentPool, Rollout
from piquet_training.compute import autocast, resolve_device, resolve_precision
from piquet_training.config import TrainConfig, to_toml
from piquet_training.imitation import behaviour_clone, collect_demonstrations
from piquet_training.run_log import Console, RunLogger, plot_learning_curve, summary_table
from piquet_training.vector_collector import VectorCollector


@dataclass
class TrainResult:
    """What a run produced: where, how long, how fast, and its final evaluations."""

    out_dir: Path
    updates: int
    env_steps: int
    seconds: float
    steps_per_s: float
    peak_rss_mib: float
    """Peak resident memory of the training process."""
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    worker_peak_rss_mib: float = 0.0
    """Peak resident memory of the largest evaluation worker process (0 if none ran)."""


def gae(
    rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, gamma: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """Generalized advantage estimates and returns over contiguous, complete trajectories
    (``dones[t]`` marks each trajectory's last step; nothing is bootstrapped past it).

    >>> adv, ret = gae(np.array([0., 1.]), np.array([.5, .5]), np.array([0, 1], bool), 1., 1.)
    >>> adv.tolist(), ret.tolist()
    ([0.5, 0.5], [1.0, 1.0])
    """
    advantages = np.zeros(len(rewards), dtype=np.float32)
    last = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        if dones[t]:
            next_value, last = 0.0, 0.0
        else:
            next_value = float(values[t + 1])
        delta = float(rewards[t]) + gamma * next_value - float(values[t])
        last = delta + gamma * lam * last
        advantages[t] = last
    return advantages, advantages + values


def ppo_update(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    batch: Rollout,
    advantages: np.ndarray,
    returns: np.ndarray,
    cfg: TrainConfig,
    rng: np.random.Generator,
    precision: str = "fp32",
) -> dict[str, float]:
    """Clipped-PPO epochs over shuffled minibatches of one rollout; returns mean statistics.
    ``precision`` (``"fp32"`` or ``"bf16"``, :mod:`piquet_training.compute`) is that of the
    forward passes and losses."""
    dev = next(model.parameters()).device

    def tensor(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).to(dev)

    obs, masks = tensor(batch.obs), tensor(batch.masks)
    actions, old_logp = tensor(batch.actions), tensor(batch.logprobs)
    adv_all, ret_all = tensor(advantages), tensor(returns)
    old_values = tensor(batch.values)
    states = None if batch.states is None else tensor(batch.states)
    n = len(batch)
    mb_size = max(1, n // cfg.num_minibatches)
    model.train()
    sums: dict[str, float] = {}
    count = 0
    for _epoch in range(cfg.update_epochs):
        perm = torch.from_numpy(rng.permutation(n)).to(dev)
        kls = []
        for start in range(0, n, mb_size):
            idx = perm[start : start + mb_size]
            with autocast(dev, precision):
                logp, entropy, value = model.evaluate_actions(
                    obs[idx], masks[idx], actions[idx], None if states is None else states[idx]
                )
            logp, entropy, value = logp.float(), entropy.float(), value.float()
            log_ratio = logp - old_logp[idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()  # the k3 estimator
                clipfrac = ((ratio - 1.0).abs() > cfg.clip_coef).float().mean()
            adv = adv_all[idx]
            if cfg.norm_adv and len(idx) > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(
                -adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
            ).mean()
            if cfg.clip_vloss:
                clipped = old_values[idx] + (value - old_values[idx]).clamp(
                    -cfg.clip_coef, cfg.clip_coef
                )
                v_loss = (
                    0.5
                    * torch.max((value - ret_all[idx]) ** 2, (clipped - ret_all[idx]) ** 2).mean()
                )
            else:
                v_loss = 0.5 * ((value - ret_all[idx]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - cfg.ent_coef * entropy_loss + cfg.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            for key, val in (
                ("policy_loss", pg_loss),
                ("value_loss", v_loss),
                ("entropy", entropy_loss),
                ("approx_kl", approx_kl),
                ("clipfrac", clipfrac),
            ):
                sums[key] = sums.get(key, 0.0) + val.item()
            count += 1
            kls.append(approx_kl.item())
        if cfg.target_kl and np.mean(kls) > cfg.target_kl:
            break
    model.eval()
    stats = {k: v / max(count, 1) for k, v in sums.items()}
    var_y = float(np.var(returns))
    stats["explained_variance"] = (
        float("nan") if var_y == 0 else 1 - float(np.var(returns - batch.values)) / var_y
    )
    return stats


def evaluate_policy(
    model: ActorCritic | str, cfg: TrainConfig, n_pairs: int, seed: int, workers: int = 1
) -> list[dict[str, Any]]:
    """Duplicate-deal matches of the greedy policy against ``cfg.eval_opponents`` (agent specs,
    by default random and heuristic) in ``cfg.eval_mode``, reporting the mean point difference
    per deal with its 95% interval (``n_pairs`` pairs of games; a partie pair plays 6 deals
    twice). ``model`` may be a saved policy's path, which ``workers`` processes then load."""
    from piquet_training.evaluation.duplicate import evaluate

    rules = make_rules(cfg.rules)
    if isinstance(model, ActorCritic):
        snapshot = ActorCritic.from_arch(model.arch())
        snapshot.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
        agent: PolicyAgent | str = PolicyAgent(snapshot, rules, greedy=True, name="policy")
        workers = 1
    else:
        agent = model
    rows = []
    # Worker processes start a fresh torch: give each its share of the run's threads (batch-1
    # inference gains nothing from more, and oversubscribed cores make it many times slower).
    # In this process, one thread: batch-1 inference on two was 12x slower on busy cores.
    saved, saved_threads = os.environ.get("OMP_NUM_THREADS"), torch.get_num_threads()
    os.environ["OMP_NUM_THREADS"] = str(max(1, cfg.torch_threads // workers))
    torch.set_num_threads(1)
    try:
        for opponent in [o.strip() for o in cfg.eval_opponents.split(",") if o.strip()]:
            rep = evaluate(
                agent, opponent, rules, n_pairs, mode=cfg.eval_mode, seed=seed, workers=workers
            )
            pts = rep.points
            rows.append(
                {
                    "opponent": opponent,
                    "n_pairs": n_pairs,
                    "n_deals": rep.n_deals,
                    "mean_diff": pts.mean,
                    "ci_low": pts.low,
                    "ci_high": pts.high,
                    "win_rate": rep.win_rate,
                    "significant": pts.excludes(0.0),
                    "summary": rep.summary().replace(rep.agent_a, "policy"),
                }
            )
    finally:
        torch.set_num_threads(saved_threads)
        if saved is None:
            del os.environ["OMP_NUM_THREADS"]
        else:
            os.environ["OMP_NUM_THREADS"] = saved
    return rows


# ---------------------------------------------------------------------------- checkpoint state


def save_training_checkpoint(
    path: Path,
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    pool: OpponentPool,
    cfg: TrainConfig,
    np_rng: np.random.Generator,
    counters: dict[str, Any],
) -> None:
    """Everything :func:`train` needs to continue exactly where it stopped (stale temporary files
    of an earlier, killed save are removed first)."""
    remove_stale_temporaries(path.parent)
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    opt_tensors, opt_meta = optim_state.optimizer_to_tensors(optimizer)
    tensors.update(opt_tensors)
    for j, snap in enumerate(pool.snapshots):
        tensors.update({f"pool{j}.{k}": v for k, v in snap.state_dict().items()})
    tensors["rng.torch"] = torch.get_rng_state()
    meta = ck.policy_meta(model, make_rules(cfg.rules), cfg.to_dict())
    meta["train"] = {
        "counters": counters,
        "optimizer": opt_meta,
        "pool_updates": pool.snapshot_updates,
        "numpy_rng": np_rng.bit_generator.state,
        "python_rng": json.loads(json.dumps(random.getstate())),
    }
    ck.save_checkpoint(path, tensors, meta)


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Delete the temporary files a killed checkpoint save leaves in ``directory``
    (``<name>.safetensors.<random>.tmp``); return them."""
    stale = sorted(directory.glob("*.safetensors.*.tmp")) if directory.is_dir() else []
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


_COUNTERS = {"update": int, "env_steps": int, "train_seconds": float}
_OPTIONAL_COUNTERS = ("bc_seconds", "eval_s_per_pair", "collect_seconds", "update_seconds")


def _bad(ckpt: ck.Checkpoint, field: str, problem: str) -> ck.CheckpointError:
    return ck.CheckpointError(f"{ckpt.path}: {field}: {problem}", path=ckpt.path, field=field)


def _checked_counters(ckpt: ck.Checkpoint, counters: Any) -> dict[str, Any]:
    """The training counters of a checkpoint, each a non-negative number of the right kind."""
    if not isinstance(counters, dict):
        raise _bad(ckpt, "train.counters", "missing or not a table")
    out = dict(counters)
    for name, kind in [*_COUNTERS.items(), *((n, float) for n in _OPTIONAL_COUNTERS)]:
        if name not in counters:
            if name in _COUNTERS:
                raise _bad(ckpt, f"train.counters.{name}", "missing")
            continue
        value = counters[name]
        ok_type = isinstance(value, int) if kind is int else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok_type or not np.isfinite(value) or value < 0:
            raise _bad(ckpt, f"train.counters.{name}", f"expected a count >= 0, got {value!r}")
    return out


def restore_training_checkpoint(
    ckpt: ck.Checkpoint,
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    pool: OpponentPool,
    np_rng: np.random.Generator,
) -> dict[str, Any]:
    """Load what :func:`save_training_checkpoint` wrote; return the counters. Every part that is
    missing or malformed raises :class:`~piquet_agents.checkpoint.CheckpointError` naming the
    file and the field."""
    train = ckpt.meta.get("train")
    if not isinstance(train, dict):
        raise _bad(ckpt, "train", "this checkpoint holds a policy only, not a training state")
    counters = _checked_counters(ckpt, train.get("counters"))
    steps = [
        ("model", lambda: model.load_state_dict(ckpt.section("model"))),
        (
            "train.optimizer",
            lambda: optim_state.optimizer_from_tensors(
                optimizer, ckpt.section("optim"), train["optimizer"]
            ),
        ),
        ("train.pool_updates", lambda: _restore_pool(ckpt, pool, train["pool_updates"])),
        ("rng.torch", lambda: torch.set_rng_state(ckpt.tensors["rng.torch"])),
        ("train.numpy_rng", lambda: _set_numpy_state(np_rng, train["numpy_rng"])),
        ("train.python_rng", lambda: _set_python_state(train["python_rng"])),
    ]
    for field_name, restore in steps:
        try:
            restore()
        except ck.CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as exc:
            problem = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise _bad(ckpt, field_name, f"cannot be restored ({problem[:200]})") from None
    return counters


def _restore_pool(ckpt: ck.Checkpoint, pool: OpponentPool, updates: Any) -> None:
    if not isinstance(updates, list) or not all(
        isinstance(u, int) and not isinstance(u, bool) for u in updates
    ):
        raise TypeError(f"expected a list of update numbers, got {str(updates)[:80]}")
    pool.snapshots.clear()
    pool.snapshot_updates.clear()
    for j, update in enumerate(updates):
        pool.add_snapshot(update)
        pool.snapshots[-1].load_state_dict(ckpt.section(f"pool{j}"))


def _set_numpy_state(np_rng: np.random.Generator, state: Any) -> None:
    if (
        not isinstance(state, dict)
        or state.get("bit_generator") != type(np_rng.bit_generator).__name__
    ):
        raise ValueError(f"not a {type(np_rng.bit_generator).__name__} state")
    np_rng.bit_generator.state = state


def _set_python_state(state: Any) -> None:
    version, internal, gauss = state
    if not isinstance(internal, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) for x in internal
    ):
        raise TypeError("the Mersenne Twister state must be a list of integers")
    random.setstate((version, tuple(internal), gauss))


# ---------------------------------------------------------------------------- the time budget


class Budget:
    """The run's one time limit: ``time_budget_minutes`` of wall time from the start of this
    process's run, warm start and final evaluation included (0: none).

    PPO stops before an update that would leave less than the final evaluation's reserve (its
    measured duration plus a margin for the closing writes), and :meth:`updates_in_reach` gives
    the progress bar the update the run will really end at.
    """

    MARGIN_S = 20.0
    """Seconds kept for saving, plotting and the summary."""

    def __init__(
        self, minutes: float, start: float, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.minutes = minutes
        self.deadline = start + 60 * minutes if minutes else float("inf")
        self.reserve = self.MARGIN_S
        self.clock = clock

    def left(self) -> float:
        """Seconds left (infinite without a budget)."""
        return self.deadline - self.clock()

    def keep_for_final(self, eval_s_per_pair: float, pairs: int) -> None:
        """Reserve the final evaluation's expected time."""
        self.reserve = eval_s_per_pair * pairs + self.MARGIN_S

    def allows(self, next_update_s: float) -> bool:
        """Whether one more update of about ``next_update_s`` seconds fits before the reserve."""
        return self.left() >= self.reserve + next_update_s

    def updates_in_reach(self, done: int, planned: int, update_s: float) -> int:
        """The update the run will end at: ``planned``, or fewer if the budget runs out first at
        ``update_s`` seconds per update."""
        if self.deadline == float("inf") or update_s <= 0:
            return planned
        fit = int(max(0.0, self.left() - self.reserve) / update_s)
        return min(planned, done + fit)


# ---------------------------------------------------------------------------- the loop


@dataclass
class Run:
    """Everything a training run holds while it runs (built by :func:`setup`)."""

    cfg: TrainConfig
    out_dir: Path
    rules: Any
    model: ActorCritic
    optimizer: torch.optim.Optimizer
    pool: OpponentPool
    collector: Collector | VectorCollector
    np_rng: np.random.Generator
    logger: RunLogger
    console: Console
    budget: Budget
    t_start: float
    precision: str = "fp32"
    """The update's resolved precision (:func:`~piquet_training.compute.resolve_precision`)."""
    counters: dict[str, Any] = field(
        default_factory=lambda: {"update": 0, "env_steps": 0, "train_seconds": 0.0}
    )

    @property
    def latest(self) -> Path:
        """The training checkpoint's path."""
        return self.out_dir / ck.LATEST_FILE

    def checkpoint(self) -> None:
        """Write the training checkpoint."""
        save_training_checkpoint(
            self.latest,
            self.model,
            self.optimizer,
            self.pool,
            self.cfg,
            self.np_rng,
            self.counters,
        )

    def evaluate(self, kind: str, n_pairs: int, seed: int, workers: int = 1) -> list[dict]:
        """Evaluate the greedy policy (the saved policy file for ``kind="final"``), log the rows
        and print them."""
        t0 = time.perf_counter()
        subject: ActorCritic | str = self.model
        if kind == "final":
            subject = str(self.out_dir / ck.POLICY_FILE)
        rows = evaluate_policy(subject, self.cfg, n_pairs, seed=seed, workers=workers)
        c = self.counters
        for r in rows:
            self.logger.log_eval(
                {
                    "update": c["update"],
                    "env_steps": c["env_steps"],
                    "minutes": c["train_seconds"] / 60,
                    "kind": kind,
                    **r,
                }
            )
        self.console.evaluation(kind, c["update"], rows, time.perf_counter() - t0)
        return rows


def setup(cfg: TrainConfig, *, echo: bool = True) -> Run:
    """Seed everything; build the network, optimizer, opponent pool, collector and logger."""
    t_start = time.perf_counter()
    cfg.validate()
    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.toml").write_text(to_toml(cfg))
    torch.set_num_threads(cfg.torch_threads)
    random.seed(cfg.seed)
    np_rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    rules = make_rules(cfg.rules)
    enc = encoder_for(rules)
    state_size = enc.state_size if cfg.critic == "state" else 0
    device = resolve_device(cfg.device)
    precision = resolve_precision(cfg.precision, device)
    model = ActorCritic(enc.size, enc.n_actions, cfg.hidden, cfg.activation, state_size)
    model = model.to(device).eval()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, eps=1e-5)
    weights = {
        "self": cfg.self_play_weight,
        "snapshot": cfg.snapshot_weight,
        "heuristic": cfg.heuristic_weight,
        "random": cfg.random_weight,
    }
    pool = OpponentPool(model, weights, size=cfg.pool_size)
    return Run(
        cfg=cfg,
        out_dir=out_dir,
        rules=rules,
        model=model,
        optimizer=optimizer,
        pool=pool,
        collector=make_collector(
            cfg, rules, cfg.mode, np_rng, batched=cfg.collector == "vector", precision=precision
        ),
        np_rng=np_rng,
        logger=RunLogger(out_dir, tensorboard=cfg.tensorboard),
        console=Console(cfg, echo=echo),
        budget=Budget(cfg.time_budget_minutes, t_start),
        t_start=t_start,
        precision=precision,
    )


def make_collector(
    cfg: TrainConfig,
    rules: Any,
    mode: str,
    rng: np.random.Generator,
    *,
    batched: bool = False,
    precision: str = "fp32",
) -> Collector | VectorCollector:
    """The self-play collector of ``cfg`` for games in ``mode``: on the batched engine
    (:class:`~piquet_training.vector_collector.VectorCollector`, its value pass in ``precision``)
    when ``batched``, else one :class:`~piquet_env.game.Game` per game
    (:class:`~piquet_training.collector.Collector`)."""
    kwargs: dict[str, Any] = dict(
        reward=cfg.reward,
        reward_scale=cfg.reward_scale,
        settle_weight=cfg.settle_weight,
        dense_reward=cfg.dense_reward,
        record_states=cfg.critic == "state",
    )
    if batched:
        return VectorCollector(
            rules,
            mode,
            cfg.num_envs,
            rng,
            device=resolve_device(cfg.device),
            precision=precision,
            **kwargs,
        )
    return Collector(rules, mode, cfg.num_envs, rng, **kwargs)


def collect(run: Run) -> Rollout:
    """One update's games: ``games_per_update`` complete games against the pool's opponents."""
    if isinstance(run.collector, VectorCollector):
        return run.collector.collect(run.cfg.games_per_update, run.pool)
    return run.collector.collect(run.cfg.games_per_update, run.pool.matchup)


def start(run: Run, resume: str | Path | None) -> None:
    """Resume from a checkpoint; or start from ``init_from``'s weights or a warm start, then
    evaluate the starting policy and write the first checkpoint."""
    cfg, model = run.cfg, run.model
    if resume is not None:
        path = Path(resume)
        ckpt = ck.read_checkpoint(path / ck.LATEST_FILE if path.is_dir() else path, rules=run.rules)
        _check_arch(ckpt, model, resume)
        run.counters = restore_training_checkpoint(ckpt, model, run.optimizer, run.pool, run.np_rng)
        c = run.counters
        dropped = run.logger.truncate(c["update"])
        run.logger.log_event(c["update"], c["env_steps"], "resume")
        run.console.say(
            f"resumed from {resume} at update {c['update']}, {c['env_steps']:,} env steps"
            + (
                f" ({dropped} log rows after that update dropped: they are redone)"
                if dropped
                else ""
            )
        )
    else:
        run.logger.truncate(0, keep_start=False)
        if cfg.init_from:
            init = ck.read_checkpoint(cfg.init_from, rules=run.rules)
            _check_arch(init, model, cfg.init_from)
            model.load_state_dict(init.section("model"))
            run.console.say(f"initial weights from {cfg.init_from}")
        elif cfg.bc_games > 0:
            warm_start(run)
        run.checkpoint()
        if cfg.eval_every:  # where PPO starts from (the warm start's policy)
            run.console.say(
                f"evaluating the starting policy ({cfg.eval_deals} pairs vs "
                f"{cfg.eval_opponents})..."
            )
            t0 = time.perf_counter()
            run.evaluate("start", cfg.eval_deals, seed=10_000)
            run.counters["eval_s_per_pair"] = (time.perf_counter() - t0) / cfg.eval_deals
    run.budget.keep_for_final(run.counters.get("eval_s_per_pair", 0.0), cfg.final_eval_deals)


def _check_arch(ckpt: ck.Checkpoint, model: ActorCritic, source: str | Path) -> None:
    if ckpt.meta.get("arch") != model.arch():
        raise ck.CheckpointError(
            f"{source}: arch: network {ckpt.meta.get('arch')} differs from the config's "
            f"{model.arch()}",
            path=ckpt.path,
            field="arch",
        )


def warm_start(run: Run) -> None:
    """Behaviour cloning: imitate the heuristic's decisions in ``bc_games`` games, then save the
    warm-started policy as ``bc.safetensors``."""
    from piquet_agents.heuristic import HeuristicAgent

    cfg = run.cfg
    t0 = time.perf_counter()
    run.console.say(
        f"warm start: recording {cfg.bc_games} heuristic-vs-heuristic {cfg.bc_mode}s to imitate..."
    )
    demo_collector = make_collector(cfg, run.rules, cfg.bc_mode, run.np_rng)
    demos = collect_demonstrations(demo_collector, cfg.bc_games, HeuristicAgent)
    run.console.say(
        f"warm start: fitting {len(demos):,} decisions ({cfg.bc_epochs} epochs), "
        f"recorded in {time.perf_counter() - t0:.0f} s..."
    )
    stats = behaviour_clone(
        run.model,
        demos,
        epochs=cfg.bc_epochs,
        learning_rate=cfg.bc_learning_rate,
        batch_size=cfg.bc_batch_size,
        gamma=cfg.gamma,
        vf_coef=cfg.vf_coef,
        rng=run.np_rng,
    )
    run.counters["bc_seconds"] = time.perf_counter() - t0
    run.logger.log_event(0, 0, "warm_start")
    run.console.say(
        f"warm start: imitated {len(demos):,} heuristic decisions from {cfg.bc_games} "
        f"{cfg.bc_mode}s in {run.counters['bc_seconds']:.0f} s (accuracy "
        f"{100 * stats['bc/accuracy']:.1f}%)"
    )
    ck.save_policy(run.out_dir / "bc.safetensors", run.model, run.rules, cfg.to_dict())


def update_row(
    run: Run, batch: Rollout, stats: dict[str, float], seconds: float, collect_s: float
) -> dict[str, Any]:
    """The ``train.csv`` row of the update just done."""
    c = run.counters
    n_traj = int(batch.dones.sum())
    row: dict[str, Any] = {
        "update": c["update"],
        "env_steps": c["env_steps"],
        "minutes": c["train_seconds"] / 60,
        "steps_per_s": batch.env_steps / seconds,
        "collect_steps_per_s": batch.env_steps / collect_s,
        "samples": len(batch),
        "lr": run.optimizer.param_groups[0]["lr"],
        "train_return": float(batch.rewards.sum()) / n_traj if n_traj else "",
        **stats,
    }
    for label in ("heuristic", "random", "snapshot"):
        pts = batch.points.get(label)
        row[f"train_vs_{label}"] = float(np.mean(pts)) if pts else ""
    return row


def train(cfg: TrainConfig, *, resume: str | Path | None = None, echo: bool = True) -> TrainResult:
    """Run (or, with ``resume``, continue) a training run; see the module docstring."""
    run = setup(cfg, echo=echo)
    run.console.header(run.out_dir, resumed=resume is not None, precision=run.precision)
    start(run, resume)
    c, budget = run.counters, run.budget
    run.console.open_progress(c["update"], cfg.updates)
    loop_start = time.perf_counter() - c["train_seconds"]
    here, done_here = time.perf_counter(), 0  # this process's share, for the time per update
    update_s = 0.0
    while c["update"] < cfg.updates:
        if not budget.allows(update_s):
            run.console.stopping(time.perf_counter() - run.t_start, cfg.time_budget_minutes)
            break
        if cfg.anneal_lr:
            run.optimizer.param_groups[0]["lr"] = cfg.learning_rate * (
                1 - c["update"] / cfg.updates
            )
        t0 = time.perf_counter()
        # collect
        batch = collect(run)
        collect_s = time.perf_counter() - t0
        # advantages
        advantages, returns = gae(
            batch.rewards, batch.values, batch.dones, cfg.gamma, cfg.gae_lambda
        )
        # update
        stats = ppo_update(
            run.model, run.optimizer, batch, advantages, returns, cfg, run.np_rng, run.precision
        )
        # log, evaluate, checkpoint
        c["collect_seconds"] = c.get("collect_seconds", 0.0) + collect_s
        c["update_seconds"] = c.get("update_seconds", 0.0) + time.perf_counter() - t0 - collect_s
        c["update"] += 1
        c["env_steps"] += batch.env_steps
        c["train_seconds"] = time.perf_counter() - loop_start
        row = update_row(run, batch, stats, time.perf_counter() - t0, collect_s)
        run.logger.log_update(row)
        done_here += 1
        update_s = (time.perf_counter() - here) / done_here  # evaluations and saves included
        run.console.progress(row, budget.updates_in_reach(c["update"], cfg.updates, update_s))
        update = c["update"]
        if cfg.snapshot_every and update % cfg.snapshot_every == 0:
            run.pool.add_snapshot(update)
        if cfg.eval_every and update % cfg.eval_every == 0 and update < cfg.updates:
            run.evaluate("periodic", cfg.eval_deals, seed=10_000 + update)
        if update % cfg.checkpoint_every == 0 or update == cfg.updates:
            run.checkpoint()
        update_s = (time.perf_counter() - here) / done_here
    run.console.close_progress()
    return finish(run)


def finish(run: Run) -> TrainResult:
    """Save the checkpoint and the policy, run the final evaluation (shortened to fit the time
    budget), draw the learning curve and write the summary."""
    cfg, c = run.cfg, run.counters
    run.checkpoint()
    ck.save_policy(run.out_dir / ck.POLICY_FILE, run.model, run.rules, cfg.to_dict())
    finals = []
    n_final = final_pairs(run)
    if n_final:
        run.console.say(
            f"final evaluation: {n_final} pairs vs {cfg.eval_opponents} "
            f"({cfg.eval_workers} worker{'s' if cfg.eval_workers > 1 else ''})..."
        )
        finals = run.evaluate("final", n_final, seed=cfg.seed + 1, workers=cfg.eval_workers)
    run.logger.close()
    plot_learning_curve(run.out_dir)
    # ru_maxrss is in KiB; the children's is the largest single worker's, not a sum.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    seconds = time.perf_counter() - run.t_start
    train_seconds = c["train_seconds"]
    steps_per_s = c["env_steps"] / train_seconds if train_seconds else 0.0
    write_summary(run, finals, seconds, steps_per_s, peak, worker_peak)
    return TrainResult(
        run.out_dir,
        c["update"],
        c["env_steps"],
        seconds,
        steps_per_s,
        peak,
        [{k: v for k, v in r.items() if k != "summary"} for r in finals],
        worker_peak,
    )


def final_pairs(run: Run) -> int:
    """Pairs of the final evaluation: ``final_eval_deals``, fewer (not under 20) if the time
    budget cannot fit them at the measured speed."""
    n = run.cfg.final_eval_deals
    per_pair = run.counters.get("eval_s_per_pair", 0.0)
    left = run.budget.left()
    if n and per_pair and left < per_pair * n + Budget.MARGIN_S:
        n = max(min(n, 20), int((left - Budget.MARGIN_S) / per_pair))
        run.console.say(f"final evaluation shortened to {n} pairs to fit time_budget_minutes")
    return n


def time_split(counters: dict[str, Any]) -> str:
    """Where the PPO time went: self-play collection, the update (advantages included), and the
    rest (evaluations, checkpoints, snapshots, logging), as shares of ``train_seconds``.

    >>> time_split({"train_seconds": 10.0, "collect_seconds": 4.0, "update_seconds": 5.0})
    'PPO time: collection 40%, update 50%, evaluations and checkpoints 10%'
    """
    total = counters.get("train_seconds", 0.0)
    if not total:
        return "PPO time: none"
    collect = counters.get("collect_seconds", 0.0)
    update = counters.get("update_seconds", 0.0)
    rest = max(0.0, total - collect - update)
    return (
        f"PPO time: collection {100 * collect / total:.0f}%, update {100 * update / total:.0f}%, "
        f"evaluations and checkpoints {100 * rest / total:.0f}%"
    )


def write_summary(
    run: Run,
    finals: list[dict[str, Any]],
    seconds: float,
    steps_per_s: float,
    peak: float,
    worker_peak: float = 0.0,
) -> None:
    """Write ``summary.md`` and print it."""
    cfg, c = run.cfg, run.counters
    lines = [
        f"# piquet train: {run.out_dir}",
        "",
        f"- rules {cfg.rules}, mode {cfg.mode}, seed {cfg.seed}; device {cfg.device}, "
        f"precision {run.precision}",
        f"- {c['update']} PPO updates, {c['env_steps']:,} env steps in "
        f"{c['train_seconds'] / 60:.1f} min of PPO ({steps_per_s:,.0f} env steps/s)",
        f"- wall time {seconds / 60:.1f} min, peak resident memory {peak:,.0f} MiB"
        + (f" (each evaluation worker at most {worker_peak:,.0f} MiB)" if worker_peak else ""),
        f"- {time_split(c)}",
        "",
    ]
    if finals:
        lines += [
            f"Final evaluation (greedy policy, duplicate deals, {cfg.eval_mode} mode; "
            f"points per deal):",
            "",
            summary_table(finals),
            "",
        ]
    (run.out_dir / "summary.md").write_text("\n".join(lines))
    run.console.say("\n".join(lines[2:]))
    for r in finals:
        run.console.say(r["summary"])
