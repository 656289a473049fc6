"""PPO with GAE over batched self-play: the training loop of ``piquet train``, top to bottom.

Modelled on CleanRL's ``ppo.py``: every hyperparameter is a field of
:class:`~piquet_training.config.TrainConfig`, and :func:`train` reads in order:

1. seed everything, build the network, optimizer, opponent pool and collector;
2. resume from a checkpoint, or warm-start by behaviour cloning of the heuristic;
3. per update: anneal the learning rate, collect complete games (:mod:`piquet_training.collector`),
   compute GAE advantages, run clipped-PPO epochs over shuffled minibatches, log, snapshot the
   learner into the pool, evaluate now and then, checkpoint;
4. at the end: save the policy, evaluate it against random and heuristic over duplicate deals,
   draw the learning curve, write the summary and report the peak resident memory.
"""

from __future__ import annotations

import json
import os
import random
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_agents.policy import PolicyAgent
from piquet_training import optim_state
from piquet_training.collector import Collector, OpponentPool, Rollout, critic_state_size
from piquet_training.config import TrainConfig, to_toml
from piquet_training.imitation import behaviour_clone, collect_demonstrations
from piquet_training.run_log import RunLogger, plot_learning_curve, summary_table

from piquet_env.observation import encoder_for
from piquet_env.rules import make_rules


@dataclass
class TrainResult:
    """What a run produced: where, how long, how fast, and its final evaluations."""

    out_dir: Path
    updates: int
    env_steps: int
    seconds: float
    steps_per_s: float
    peak_rss_mib: float
    evaluations: list[dict[str, Any]] = field(default_factory=list)


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
) -> dict[str, float]:
    """Clipped-PPO epochs over shuffled minibatches of one rollout; returns mean statistics."""
    obs, masks = torch.from_numpy(batch.obs), torch.from_numpy(batch.masks)
    actions, old_logp = torch.from_numpy(batch.actions), torch.from_numpy(batch.logprobs)
    adv_all, ret_all = torch.from_numpy(advantages), torch.from_numpy(returns)
    old_values = torch.from_numpy(batch.values)
    states = None if batch.states is None else torch.from_numpy(batch.states)
    n = len(batch)
    mb_size = max(1, n // cfg.num_minibatches)
    model.train()
    sums: dict[str, float] = {}
    count = 0
    for _epoch in range(cfg.update_epochs):
        perm = torch.from_numpy(rng.permutation(n))
        kls = []
        for start in range(0, n, mb_size):
            idx = perm[start : start + mb_size]
            logp, entropy, value = model.evaluate_actions(
                obs[idx], masks[idx], actions[idx], None if states is None else states[idx]
            )
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
        snapshot.load_state_dict(model.state_dict())
        agent: PolicyAgent | str = PolicyAgent(snapshot, rules, greedy=True, name="policy")
        workers = 1
    else:
        agent = model
    rows = []
    # Worker processes start a fresh torch: give it the run's thread count (batch-1 inference
    # gains nothing from more, and oversubscribed cores make it many times slower).
    saved = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(cfg.torch_threads)
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
    """Everything :func:`train` needs to continue exactly where it stopped."""
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


def restore_training_checkpoint(
    ckpt: ck.Checkpoint,
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    pool: OpponentPool,
    np_rng: np.random.Generator,
) -> dict[str, Any]:
    """Load what :func:`save_training_checkpoint` wrote; return the counters."""
    train = ckpt.meta.get("train")
    if train is None:
        raise ck.CheckpointError("this checkpoint holds a policy only, not a training state")
    model.load_state_dict(ckpt.section("model"))
    optim_state.optimizer_from_tensors(optimizer, ckpt.section("optim"), train["optimizer"])
    pool.snapshots.clear()
    pool.snapshot_updates.clear()
    for j, update in enumerate(train["pool_updates"]):
        pool.add_snapshot(update)
        pool.snapshots[-1].load_state_dict(ckpt.section(f"pool{j}"))
    torch.set_rng_state(ckpt.tensors["rng.torch"])
    np_rng.bit_generator.state = train["numpy_rng"]
    version, internal, gauss = train["python_rng"]
    random.setstate((version, tuple(internal), gauss))
    return train["counters"]


# ---------------------------------------------------------------------------- the loop


def train(cfg: TrainConfig, *, resume: str | Path | None = None, echo: bool = True) -> TrainResult:
    """Run (or, with ``resume``, continue) a training run; see the module docstring."""
    say = print if echo else (lambda *a, **k: None)
    t_start = time.perf_counter()
    cfg.validate()
    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.toml").write_text(to_toml(cfg))

    # 1. Seeding and setup.
    torch.set_num_threads(cfg.torch_threads)
    random.seed(cfg.seed)
    np_rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    rules = make_rules(cfg.rules)
    enc = encoder_for(rules)
    state_size = critic_state_size(rules) if cfg.critic == "state" else 0
    model = ActorCritic(enc.size, enc.n_actions, cfg.hidden, cfg.activation, state_size).eval()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, eps=1e-5)
    pool = OpponentPool(
        model,
        {
            "self": cfg.self_play_weight,
            "snapshot": cfg.snapshot_weight,
            "heuristic": cfg.heuristic_weight,
            "random": cfg.random_weight,
        },
        size=cfg.pool_size,
    )
    collector = Collector(
        rules,
        cfg.mode,
        cfg.num_envs,
        np_rng,
        reward_scale=cfg.reward_scale,
        settle_weight=cfg.settle_weight,
        dense_reward=cfg.dense_reward,
        record_states=state_size > 0,
    )
    logger = RunLogger(out_dir, tensorboard=cfg.tensorboard)
    latest = out_dir / ck.LATEST_FILE
    counters: dict[str, Any] = {"update": 0, "env_steps": 0, "train_seconds": 0.0}

    # 2. Resume, or warm-start by imitating the heuristic.
    if resume is not None:
        ckpt = ck.read_checkpoint(
            Path(resume) / ck.LATEST_FILE if Path(resume).is_dir() else resume, rules=rules
        )
        if ckpt.meta.get("arch") != model.arch():
            raise ck.CheckpointError(
                f"{resume}: network {ckpt.meta.get('arch')} differs from "
                f"the config's {model.arch()}"
            )
        counters = restore_training_checkpoint(ckpt, model, optimizer, pool, np_rng)
        say(
            f"resumed from {resume} at update {counters['update']}, "
            f"{counters['env_steps']:,} env steps"
        )
    elif cfg.init_from:
        init = ck.read_checkpoint(cfg.init_from, rules=rules)
        if init.meta.get("arch") != model.arch():
            raise ck.CheckpointError(
                f"{cfg.init_from}: network {init.meta.get('arch')} differs "
                f"from the config's {model.arch()}"
            )
        model.load_state_dict(init.section("model"))
        say(f"initial weights from {cfg.init_from}")
    elif cfg.bc_games > 0:
        t0 = time.perf_counter()
        from piquet_agents.heuristic import HeuristicAgent

        demo_collector = Collector(
            rules,
            cfg.bc_mode,
            cfg.num_envs,
            np_rng,
            reward_scale=cfg.reward_scale,
            settle_weight=cfg.settle_weight,
            dense_reward=cfg.dense_reward,
            record_states=state_size > 0,
        )
        demos = collect_demonstrations(demo_collector, cfg.bc_games, HeuristicAgent)
        stats = behaviour_clone(
            model,
            demos,
            epochs=cfg.bc_epochs,
            learning_rate=cfg.bc_learning_rate,
            batch_size=cfg.bc_batch_size,
            gamma=cfg.gamma,
            vf_coef=cfg.vf_coef,
            rng=np_rng,
        )
        counters["bc_seconds"] = time.perf_counter() - t0
        say(
            f"warm start: imitated {len(demos):,} heuristic decisions from {cfg.bc_games} "
            f"{cfg.bc_mode}s in {counters['bc_seconds']:.0f} s (accuracy "
            f"{100 * stats['bc/accuracy']:.1f}%)"
        )
        del demos
        ck.save_policy(out_dir / "bc.safetensors", model, rules, cfg.to_dict())
    if resume is None:
        save_training_checkpoint(latest, model, optimizer, pool, cfg, np_rng, counters)
        if cfg.eval_every:  # where PPO starts from (the warm start's policy)
            t0 = time.perf_counter()
            for r in evaluate_policy(model, cfg, cfg.eval_deals, seed=10_000):
                logger.log_eval({"update": 0, "env_steps": 0, "minutes": 0.0, **r})
            counters["eval_s_per_pair"] = (time.perf_counter() - t0) / cfg.eval_deals

    def budget_left() -> float:
        """Seconds left of ``time_budget_minutes`` (infinite without a budget)."""
        if not cfg.time_budget_minutes:
            return float("inf")
        return 60 * cfg.time_budget_minutes - (time.perf_counter() - t_start)

    # Time kept for the final evaluation (at the measured speed) and the closing writes.
    reserve = counters.get("eval_s_per_pair", 0.0) * cfg.final_eval_deals + 20.0
    last_update_s = 0.0

    # 3. The PPO loop.
    progress = None
    if cfg.progress:
        from tqdm import tqdm

        progress = tqdm(total=cfg.updates, initial=counters["update"], desc="ppo", unit="upd")
    loop_start = time.perf_counter() - counters["train_seconds"]
    while counters["update"] < cfg.updates:
        if cfg.max_minutes and (time.perf_counter() - loop_start) > 60 * cfg.max_minutes:
            say(f"stopping after {cfg.max_minutes} minutes (max_minutes)")
            break
        if budget_left() < reserve + last_update_s:
            say(
                f"stopping to keep the final evaluation within time_budget_minutes "
                f"({cfg.time_budget_minutes})"
            )
            break
        update = counters["update"]
        if cfg.anneal_lr:
            optimizer.param_groups[0]["lr"] = cfg.learning_rate * (1 - update / cfg.updates)
        t0 = time.perf_counter()
        batch = collector.collect(cfg.games_per_update, pool.matchup)
        t_collect = time.perf_counter() - t0
        advantages, returns = gae(
            batch.rewards, batch.values, batch.dones, cfg.gamma, cfg.gae_lambda
        )
        stats = ppo_update(model, optimizer, batch, advantages, returns, cfg, np_rng)
        counters["update"] = update = update + 1
        counters["env_steps"] += batch.env_steps
        counters["train_seconds"] = time.perf_counter() - loop_start
        row: dict[str, Any] = {
            "update": update,
            "env_steps": counters["env_steps"],
            "minutes": counters["train_seconds"] / 60,
            "steps_per_s": batch.env_steps / (time.perf_counter() - t0),
            "collect_steps_per_s": batch.env_steps / t_collect,
            "samples": len(batch),
            "lr": optimizer.param_groups[0]["lr"],
            **stats,
        }
        for label in ("heuristic", "random", "snapshot"):
            pts = batch.points.get(label)
            row[f"train_vs_{label}"] = float(np.mean(pts)) if pts else ""
        logger.log_update(row)
        if progress is not None:
            progress.update(1)
            progress.set_postfix(
                steps_s=f"{row['steps_per_s']:.0f}",
                kl=f"{stats['approx_kl']:.3f}",
                vs_heur=(
                    f"{row['train_vs_heuristic']:+.1f}" if row["train_vs_heuristic"] != "" else "-"
                ),
            )
        if cfg.snapshot_every and update % cfg.snapshot_every == 0:
            pool.add_snapshot(update)
        if cfg.eval_every and update % cfg.eval_every == 0 and update < cfg.updates:
            for r in evaluate_policy(model, cfg, cfg.eval_deals, seed=10_000 + update):
                logger.log_eval(
                    {
                        "update": update,
                        "env_steps": counters["env_steps"],
                        "minutes": counters["train_seconds"] / 60,
                        **r,
                    }
                )
        if update % cfg.checkpoint_every == 0 or update == cfg.updates:
            save_training_checkpoint(latest, model, optimizer, pool, cfg, np_rng, counters)
        last_update_s = time.perf_counter() - t0
    if progress is not None:
        progress.close()
    save_training_checkpoint(latest, model, optimizer, pool, cfg, np_rng, counters)
    ck.save_policy(out_dir / ck.POLICY_FILE, model, rules, cfg.to_dict())
    train_seconds = counters["train_seconds"]
    steps_per_s = counters["env_steps"] / train_seconds if train_seconds else 0.0

    # 4. Final evaluation, learning curve, summary.
    n_final = cfg.final_eval_deals
    per_pair = counters.get("eval_s_per_pair", 0.0)
    if n_final and per_pair and budget_left() < per_pair * n_final + 20.0:
        n_final = max(min(n_final, 20), int((budget_left() - 20.0) / per_pair))
        say(f"final evaluation shortened to {n_final} pairs to fit time_budget_minutes")
    finals = (
        evaluate_policy(
            str(out_dir / ck.POLICY_FILE), cfg, n_final, seed=cfg.seed + 1, workers=cfg.eval_workers
        )
        if n_final
        else []
    )
    for r in finals:
        logger.log_eval(
            {
                "update": counters["update"],
                "env_steps": counters["env_steps"],
                "minutes": train_seconds / 60,
                **r,
            }
        )
    logger.close()
    plot_learning_curve(out_dir)
    peak = (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    ) / 1024
    seconds = time.perf_counter() - t_start
    lines = [
        f"# piquet train: {out_dir}",
        "",
        f"- rules {cfg.rules}, mode {cfg.mode}, seed {cfg.seed}",
        f"- {counters['update']} PPO updates, {counters['env_steps']:,} env steps in "
        f"{train_seconds / 60:.1f} min of PPO ({steps_per_s:,.0f} env steps/s)",
        f"- wall time {seconds / 60:.1f} min, peak resident memory {peak:,.0f} MiB",
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
    (out_dir / "summary.md").write_text("\n".join(lines))
    say("\n".join(lines[2:]))
    for r in finals:
        say(r["summary"])
    return TrainResult(
        out_dir,
        counters["update"],
        counters["env_steps"],
        seconds,
        steps_per_s,
        peak,
        [{k: v for k, v in r.items() if k != "summary"} for r in finals],
    )
