"""The training loop of ``piquet train``, top to bottom: setup, start, the updates, finish.

:func:`train` reads in order:

1. **setup** (:func:`setup`): seed everything, build the network, optimizer, opponent pool,
   collector and logger;
2. **start** (:func:`start`): resume from a checkpoint (:mod:`piquet_training.ppo.resume`), or
   start from ``init_from``'s weights or a warm start by behaviour cloning of the heuristic
   (:func:`warm_start`), and evaluate the starting policy;
3. **per update**: anneal the learning rate, *collect* complete games (on the batched engine,
   :mod:`piquet_training.ppo.vector_collector`, or one object per game,
   :mod:`piquet_training.ppo.collector`), compute GAE *advantages* and run the clipped-PPO *update*
   (:mod:`piquet_training.ppo.update`), then *log*, snapshot the learner into the pool, *evaluate*
   now and then, *checkpoint*;
4. **finish** (:func:`finish`): save the policy, evaluate it against ``eval_opponents`` over
   duplicate deals, draw the learning curve and write the summary
   (:mod:`piquet_training.ppo.summary`).

A run's length is its number of updates: the same config gives the same policy on any machine
(bit for bit at the same ``torch_threads``). ``time_budget_minutes`` is only a cap
(:class:`TimeCap`): a run that reaches it stops, says how many of its updates it made and that
its policy is not the configured run's, and ``--resume`` finishes it exactly.
"""

from __future__ import annotations

import random
import resource
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_env.agent import Agent
from piquet_env.observation import encoder_for
from piquet_env.rules import Rules, make_rules
from piquet_training import seeds
from piquet_training.evaluation.executor import Fanout
from piquet_training.evaluation.greedy import evaluate_policy
from piquet_training.memory import ProcessMemory, largest, process_memory, release_free_memory
from piquet_training.ppo.chunks import ChunkedCollection, CollectorSpec
from piquet_training.ppo.collector import Collection, Collector, Rollout
from piquet_training.ppo.compute import resolve_device, resolve_precision
from piquet_training.ppo.console import Console
from piquet_training.ppo.curve import plot_learning_curve
from piquet_training.ppo.imitation import bc_batches, behaviour_clone, collect_demonstrations
from piquet_training.ppo.magnet import Magnet, scheduled
from piquet_training.ppo.pool import Opponent, OpponentPool, resolve_opponent
from piquet_training.ppo.resume import (
    RUN_FILES,
    check_resume_files,
    check_tensorboard_dir,
    restore_training_checkpoint,
    save_training_checkpoint,
)
from piquet_training.ppo.summary import update_row, write_summary
from piquet_training.ppo.update import PPOStep, gae, ppo_update
from piquet_training.ppo.vector_collector import VectorCollector
from piquet_training.run_folder import RunFolder
from piquet_training.run_log import RunLogger
from piquet_training.settings.train import TrainConfig, to_toml
from piquet_training.threads import spin_briefly

WARM_START_FILE = "bc.safetensors"
"""The warm-started policy a run saves in its folder before its first update (a policy file)."""


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
    memory: ProcessMemory | None = None
    """The training process's own memory at the end (:mod:`piquet_training.memory`)."""
    worker_memory: ProcessMemory | None = None
    """The final evaluation's worker process with the largest unique set, its own figures
    (``None`` if no worker ran)."""
    stopped_early: str = ""
    """Why the run made fewer updates than configured (empty if it made them all)."""
    train_seconds: float = 0.0
    """The run's training time over every sitting (a resumed run's earlier ones included): the
    ``train_seconds`` counter its checkpoints carry, as ``train.csv``'s ``minutes``."""
    split: dict[str, float] = field(default_factory=dict)
    """Where the training time went, in seconds over every sitting: ``collect`` (the chunks
    played, wherever they ran, and gathered), of it ``gather`` (the chunks' rows copied into the
    learner's store: the transfer's cost here), and ``update`` (advantages and PPO)."""


class TimeCap:
    """A cap on a run's wall time: ``minutes`` from the start of this process's run (0: none).

    It never changes what a run computes, only whether it goes on: :meth:`reached` says to stop
    before an update that would end past the cap.
    """

    def __init__(
        self, minutes: float, start: float, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.minutes = minutes
        self.deadline = start + 60 * minutes if minutes else float("inf")
        self.clock = clock

    def reached(self, next_update_s: float) -> bool:
        """Whether one more update of about ``next_update_s`` seconds would end past the cap."""
        return self.clock() + next_update_s > self.deadline


@dataclass
class Run:
    """Everything a training run holds while it runs (built by :func:`setup`)."""

    cfg: TrainConfig
    out_dir: Path
    rules: Rules
    model: ActorCritic
    optimizer: torch.optim.Optimizer
    pool: OpponentPool
    collector: Collector
    np_rng: np.random.Generator
    logger: RunLogger
    console: Console
    cap: TimeCap
    t_start: float
    precision: str = "fp32"
    """The update's resolved precision (:func:`~piquet_training.ppo.compute.resolve_precision`)."""
    magnet: Magnet | None = None
    """The policy the learner is pulled toward (``magnet``), if any."""
    chunked: ChunkedCollection | None = None
    """The vector collector's games by chunks, here or fanned out (``workers``, ``ray``)."""
    counters: dict[str, Any] = field(
        default_factory=lambda: {"update": 0, "env_steps": 0, "train_seconds": 0.0}
    )
    stopped_early: str = ""

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
            extra=self.magnet.state_tensors() if self.magnet is not None else None,
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
        self.logger.log_evaluation(
            kind,
            rows,
            update=c["update"],
            env_steps=c["env_steps"],
            minutes=c["train_seconds"] / 60,
        )
        self.console.evaluation(kind, c["update"], rows, time.perf_counter() - t0)
        release_free_memory()  # the games' garbage, before the next collection's peak
        return rows

    def exact(self) -> None:
        """The learner's exact NashConv, sampled and greedy (``exact_every``), logged and
        printed."""
        from piquet_training.exact import network_exploitability

        c = self.counters
        t0 = time.perf_counter()
        forms = network_exploitability(self.model, self.rules)
        seconds = time.perf_counter() - t0
        for form, figures in forms.items():
            self.logger.log_exact(
                {
                    "update": c["update"],
                    "env_steps": c["env_steps"],
                    "minutes": c["train_seconds"] / 60,
                    "form": form,
                    "nash_conv": figures.nash_conv,
                    "br_elder": figures.br_elder,
                    "br_younger": figures.br_younger,
                    "value_elder": figures.value,
                    "seconds": seconds,
                }
            )
        self.console.say(
            f"exact, update {c['update']}: NashConv {forms['sample'].nash_conv:.4f} sampled, "
            f"{forms['greedy'].nash_conv:.4f} greedy ({seconds:.0f} s)"
        )
        release_free_memory()


def setup(cfg: TrainConfig, *, echo: bool = True) -> Run:
    """Seed everything; build the network, optimizer, opponent pool, collector and logger."""
    t_start = time.perf_counter()
    cfg.validate()
    device = resolve_device(cfg.device)  # the one place (a DeviceError before anything is written)
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
    precision = resolve_precision(cfg.precision, device)
    model = ActorCritic(enc.size, enc.n_actions, cfg.hidden, cfg.activation, state_size)
    model = model.to(device).eval()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, eps=1e-5)
    weights, opponents = training_opponents(cfg, rules, device)
    pool = OpponentPool(model, weights, size=cfg.pool_size, opponents=opponents)
    collector = make_collector(
        cfg,
        rules,
        cfg.mode,
        np_rng,
        batched=cfg.collector == "vector",
        device=device,
        precision=precision,
    )
    chunked = None
    if isinstance(collector, VectorCollector):
        spec = CollectorSpec.of(collector.collection, pool, weights, precision, cfg.seed)
        chunked = ChunkedCollection(
            collector,
            spec,
            seed=cfg.seed,
            chunk_games=cfg.chunk_games,
            fanout=Fanout(cfg.workers, cfg.ray or None),
        )
    return Run(
        cfg=cfg,
        out_dir=out_dir,
        rules=rules,
        model=model,
        optimizer=optimizer,
        pool=pool,
        collector=collector,
        chunked=chunked,
        np_rng=np_rng,
        logger=RunLogger(out_dir, tensorboard=cfg.tensorboard),
        console=Console(cfg, echo=echo),
        cap=TimeCap(cfg.time_budget_minutes, t_start),
        t_start=t_start,
        precision=precision,
        magnet=Magnet(cfg.magnet, model, decay=cfg.magnet_ema) if cfg.magnet else None,
    )


def training_opponents(
    cfg: TrainConfig, rules: Rules, device: torch.device
) -> tuple[dict[str, float], dict[str, Opponent]]:
    """The opponent pool's weights and opponents of a run, each opponent an agent spec resolved
    by :func:`~piquet_training.ppo.pool.resolve_opponent`: ``opponent`` alone (labelled
    ``"target"``, frozen: the exploiter's target), or self-play and snapshots beside
    ``heuristic_weight``'s heuristic, ``random_weight``'s random agent and ``opponents``' specs."""
    if cfg.opponent:
        weights: dict[str, float] = {}
        wanted = [("target", cfg.opponent, 1.0)]
    else:
        weights = {"self": cfg.self_play_weight, "snapshot": cfg.snapshot_weight}
        wanted = [(spec, spec, weight) for spec, weight in cfg.agent_opponents()]
    opponents = {}
    for label, spec, weight in wanted:  # the specs first, then each resolved once
        opponents[label] = resolve_opponent(spec, rules, device=device, seed=cfg.seed)
        weights[label] = weight
    return weights, opponents


def fixed_opponent(
    spec: str, rules: Rules, device: torch.device, seed: int
) -> tuple[ActorCritic, bool] | Callable[[], Agent]:
    """Deprecated (:func:`~piquet_training.ppo.pool.resolve_opponent` gives an
    :class:`~piquet_training.ppo.pool.Opponent`): a policy's frozen network and whether it
    plays greedily, else a factory of the agent."""
    warnings.warn(
        "fixed_opponent is deprecated: use piquet_training.ppo.pool.resolve_opponent",
        DeprecationWarning,
        stacklevel=2,
    )
    opponent = resolve_opponent(spec, rules, device=device, seed=seed)
    if opponent.network is not None:
        return opponent.network, opponent.greedy
    assert opponent.make is not None
    return opponent.make


def make_collector(
    cfg: TrainConfig,
    rules: Rules,
    mode: str,
    rng: np.random.Generator,
    *,
    batched: bool = False,
    device: torch.device | None = None,
    precision: str = "fp32",
) -> Collector:
    """The self-play collector of ``cfg`` for games in ``mode``: on the batched engine
    (:class:`~piquet_training.ppo.vector_collector.VectorCollector`, its value pass on ``device``,
    the CPU by default, in ``precision``) when ``batched``, else one
    :class:`~piquet_env.game.Game` per game (:class:`~piquet_training.ppo.collector.Collector`)."""
    collection = Collection.of(cfg, rules, mode)
    if batched:
        return VectorCollector(
            collection, rng, device=device or torch.device("cpu"), precision=precision
        )
    return Collector(collection, rng)


def collect(run: Run) -> Rollout:
    """One update's games: ``games_per_update`` complete games against the pool's opponents
    (on the batched engine: by chunks, here or fanned out, :mod:`piquet_training.ppo.chunks`)."""
    games = run.cfg.games_per_update
    if run.chunked is not None:
        return run.chunked.collect(run.pool, run.counters["update"], games)
    return run.collector.collect(games, run.pool)


def start(run: Run, resume: str | Path | None) -> None:
    """Resume from a checkpoint; or start from ``init_from``'s weights or a warm start, then
    evaluate the starting policy and write the first checkpoint."""
    cfg, model = run.cfg, run.model
    if resume is not None:
        path = Path(resume)
        latest = path / ck.LATEST_FILE if path.is_dir() else path
        ckpt = ck.read_checkpoint(latest, rules=run.rules, arch=model.arch())
        run.counters = restore_training_checkpoint(ckpt, model, run.optimizer, run.pool, run.np_rng)
        if run.magnet is not None and run.magnet.state_tensors():
            try:
                run.magnet.load_tensors(ckpt.section("magnet"))
            except RuntimeError as exc:  # missing or misshapen weights
                raise ck.CheckpointError(
                    f"{ckpt.path}: magnet: the EMA magnet's weights cannot be restored "
                    f"({str(exc)[:160]})",
                    path=ckpt.path,
                    field="magnet",
                ) from None
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
        return
    run.logger.truncate(0, keep_start=False)
    if cfg.init_from:
        init = ck.read_checkpoint(cfg.init_from, rules=run.rules, arch=model.arch())
        model.load_state_dict(init.section("model"))
        run.console.say(f"initial weights from {cfg.init_from}")
    elif cfg.bc_games > 0:
        warm_start(run)
    run.checkpoint()
    if cfg.exact_every:
        run.exact()
    if cfg.eval_every:  # where PPO starts from (the warm start's policy)
        run.console.say(
            f"evaluating the starting policy ({cfg.eval_deals} pairs vs {cfg.eval_opponents})..."
        )
        run.evaluate("start", cfg.eval_deals, seed=seeds.START_EVAL)


def warm_start(run: Run) -> None:
    """Behaviour cloning: imitate the heuristic's decisions in ``bc_games`` games, then save the
    warm-started policy as :data:`WARM_START_FILE`."""
    from piquet_agents.heuristic import HeuristicAgent

    cfg = run.cfg
    t0 = time.perf_counter()
    run.console.say(
        f"warm start: recording {cfg.bc_games} heuristic-vs-heuristic {cfg.bc_mode}s to imitate..."
    )
    demo_collector = make_collector(cfg, run.rules, cfg.bc_mode, run.np_rng)
    console = run.console
    console.open_step("warm start: games", cfg.bc_games, "games")
    try:
        demos = collect_demonstrations(
            demo_collector, cfg.bc_games, HeuristicAgent, progress=console.step
        )
    finally:
        console.close_progress()
    console.say(
        f"warm start: fitting {len(demos):,} decisions ({cfg.bc_epochs} epochs), "
        f"recorded in {time.perf_counter() - t0:.0f} s..."
    )
    console.open_step("warm start: fitting", bc_batches(len(demos), cfg), "batches")
    try:
        stats = behaviour_clone(run.model, demos, cfg, run.np_rng, progress=console.step)
    finally:
        console.close_progress()
    run.counters["bc_seconds"] = time.perf_counter() - t0
    run.logger.log_event(0, 0, "warm_start")
    run.console.say(
        f"warm start: imitated {len(demos):,} heuristic decisions from {cfg.bc_games} "
        f"{cfg.bc_mode}s in {run.counters['bc_seconds']:.0f} s (accuracy "
        f"{100 * stats['bc/accuracy']:.1f}%)"
    )
    ck.save_policy(run.out_dir / WARM_START_FILE, run.model, run.rules, cfg.to_dict())
    del demos, demo_collector
    release_free_memory()  # the recorded games: 600 MiB resident otherwise, under PPO's peak


def train(
    cfg: TrainConfig,
    *,
    resume: str | Path | None = None,
    overwrite: bool = False,
    echo: bool = True,
) -> TrainResult:
    """Run (or, with ``resume``, continue) a training run; see the module docstring. A new run
    refuses a folder that holds one unless ``overwrite``
    (:meth:`~piquet_training.run_folder.RunFolder.check_fresh`); a resumed run's files are
    checked before anything is trained (:func:`check_resume_files`). The worker processes it
    starts spin their idle threads briefly (:func:`~piquet_training.threads.spin_briefly`). The
    run trains on ``torch_threads`` threads; the caller's thread count is restored at the end."""
    spin_briefly()
    if resume is not None:
        check_resume_files(cfg.out_dir, tensorboard=cfg.tensorboard)
    else:
        RunFolder(Path(cfg.out_dir), holds=RUN_FILES).check_fresh(overwrite=overwrite)
        check_tensorboard_dir(cfg.out_dir, tensorboard=cfg.tensorboard)
    threads = torch.get_num_threads()
    try:
        run = setup(cfg, echo=echo)
        try:
            return _train(run, resume)
        finally:
            if run.chunked is not None:
                run.chunked.close()  # the collectors' processes, a Ray instance started here
    finally:
        torch.set_num_threads(threads)  # a library call leaves the process as it found it


def _train(run: Run, resume: str | Path | None) -> TrainResult:
    """:func:`train` once the run is set up."""
    cfg = run.cfg
    run.console.header(run.out_dir, resumed=resume is not None, precision=run.precision)
    start(run, resume)
    c = run.counters
    if cfg.env_steps:
        run.console.open_progress(c["env_steps"], cfg.env_steps, unit="step")
    else:
        run.console.open_progress(c["update"], cfg.updates)
    loop_start = time.perf_counter() - c["train_seconds"]
    here, done_here, update_s = time.perf_counter(), 0, 0.0  # this process's time per update
    while not _made(c, cfg):
        if run.cap.reached(update_s):
            run.stopped_early = (
                f"the time cap (time_budget_minutes = {cfg.time_budget_minutes:g}) was reached "
                f"after {_done(c, cfg)}: this is not the configured run (resuming "
                f"{run.out_dir} finishes it exactly)"
            )
            run.console.close_progress()
            run.console.say(f"stopping: {run.stopped_early}")
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
        # update (the entropy bonus and the magnet's pull as their schedules set them)
        ent_coef, magnet_coef = _coefficients(cfg, c["update"])
        step = PPOStep.of(cfg, ent_coef=ent_coef, magnet_coef=magnet_coef)
        stats = ppo_update(
            run.model,
            run.optimizer,
            batch,
            advantages,
            returns,
            step,
            run.np_rng,
            run.precision,
            magnet=run.magnet,
        )
        stats["ent_coef"] = ent_coef
        if run.magnet is not None:
            run.magnet.follow(run.model)
            stats["magnet_coef"] = magnet_coef
        # log, snapshot, evaluate, checkpoint
        c["collect_seconds"] = c.get("collect_seconds", 0.0) + collect_s
        if run.chunked is not None:
            c["gather_seconds"] = c.get("gather_seconds", 0.0) + run.chunked.gather_seconds
            run.chunked.gather_seconds = 0.0
        c["update_seconds"] = c.get("update_seconds", 0.0) + time.perf_counter() - t0 - collect_s
        c["update"] += 1
        c["env_steps"] += batch.env_steps
        c["train_seconds"] = time.perf_counter() - loop_start
        lr = run.optimizer.param_groups[0]["lr"]
        release_free_memory()  # the update's garbage: 230 MiB more peak by update 40 otherwise
        row = update_row(c, lr, batch, stats, time.perf_counter() - t0, collect_s)
        run.logger.log_update(row)
        run.console.progress(row)
        update = c["update"]
        if cfg.snapshot_every and update % cfg.snapshot_every == 0:
            run.pool.add_snapshot(update)
        last = _made(c, cfg)
        if cfg.eval_every and update % cfg.eval_every == 0 and not last:
            run.evaluate("periodic", cfg.eval_deals, seed=seeds.periodic_eval(update))
        if cfg.exact_every and (update % cfg.exact_every == 0 or last):
            run.exact()
        if update % cfg.checkpoint_every == 0 or last:
            run.checkpoint()
        done_here += 1
        update_s = (time.perf_counter() - here) / done_here  # evaluations and saves included
    run.console.close_progress()
    return finish(run)


def _coefficients(cfg: TrainConfig, update: int) -> tuple[float, float]:
    """This update's entropy bonus and magnet pull, as their schedules set them."""
    ent = scheduled(
        cfg.ent_schedule, cfg.ent_coef, cfg.ent_coef_end, cfg.ent_power, update, cfg.updates
    )
    pull = scheduled(
        cfg.magnet_schedule,
        cfg.magnet_coef,
        cfg.magnet_coef_end,
        cfg.magnet_power,
        update,
        cfg.updates,
    )
    return ent, pull


def _made(c: dict[str, Any], cfg: TrainConfig) -> bool:
    """Whether the run has made its length: its ``updates``, or its ``env_steps`` if set."""
    return c["update"] >= cfg.updates or bool(cfg.env_steps and c["env_steps"] >= cfg.env_steps)


def _done(c: dict[str, Any], cfg: TrainConfig) -> str:
    """How far a run got, in the unit it is counted in."""
    if cfg.env_steps:
        return f"{c['env_steps']:,} of {cfg.env_steps:,} env steps"
    return f"{c['update']} of {cfg.updates} updates"


def finish(run: Run) -> TrainResult:
    """Save the checkpoint and the policy, run the final evaluation, draw the learning curve and
    write the summary."""
    cfg, c = run.cfg, run.counters
    run.checkpoint()
    ck.save_policy(run.out_dir / ck.POLICY_FILE, run.model, run.rules, cfg.to_dict())
    finals = []
    if cfg.final_eval_deals:
        run.console.say(
            f"final evaluation: {cfg.final_eval_deals} pairs vs {cfg.eval_opponents} "
            f"({cfg.eval_workers} worker{'s' if cfg.eval_workers > 1 else ''})..."
        )
        finals = run.evaluate(
            "final", cfg.final_eval_deals, seed=seeds.final_eval(cfg.seed), workers=cfg.eval_workers
        )
    run.logger.close()
    plot_learning_curve(run.out_dir)
    # ru_maxrss is in KiB. Workers' own figures come from the workers (RUSAGE_CHILDREN would
    # carry this process's resident set at the fork into theirs).
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    memory = process_memory()
    worker = largest([m for r in finals for m in r.get("worker_memory", [])])
    seconds = time.perf_counter() - run.t_start
    train_seconds = c["train_seconds"]
    steps_per_s = c["env_steps"] / train_seconds if train_seconds else 0.0
    lines = write_summary(
        run.out_dir,
        cfg,
        c,
        precision=run.precision,
        finals=finals,
        seconds=seconds,
        steps_per_s=steps_per_s,
        peak=peak,
        memory=memory,
        worker_memory=worker,
        stopped_early=run.stopped_early,
    )
    for line in lines:
        run.console.say(line)
    return TrainResult(
        run.out_dir,
        c["update"],
        c["env_steps"],
        seconds,
        steps_per_s,
        peak,
        [{k: v for k, v in r.items() if k not in ("summary", "worker_memory")} for r in finals],
        memory,
        worker,
        run.stopped_early,
        train_seconds,
        {
            "collect": c.get("collect_seconds", 0.0),
            "gather": c.get("gather_seconds", 0.0),
            "update": c.get("update_seconds", 0.0),
        },
    )
