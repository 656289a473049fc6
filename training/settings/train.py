"""The settings of a training run: the PPO settings both backends share, and the built-in's.

:class:`PPOSettings` declares, once each, the settings the two trainers share: the run's seed,
rules, mode, reward, output folder, length and threads, the network's shape and PPO's
hyperparameters. :class:`TrainConfig` (``piquet train``, the built-in PPO) and
:class:`piquet_training.rllib.algo.RLlibConfig` (``--backend rllib``) derive from it, each adding
its own settings and stating where its defaults differ (``DEFAULTS``). RLlib's own names (``lr``,
``lambda_``, ``clip_param``, ``entropy_coeff``, ``vf_loss_coeff``, ``grad_clip``, ``num_epochs``,
``iterations``, ``episode``, ``learner_threads``) are accepted as aliases, so old files and
checkpoints still load; they are translated back only where the RLlib ``PPOConfig`` is built.

How settings are read, checked and written (TOML, ``--set``, ``--show-config``) is
:mod:`piquet_training.settings.schema`, whose names are importable from here too.

The embedded default (``TrainConfig()``) is the run ``piquet train`` makes with no arguments: a
behaviour-cloning warm start from the heuristic agent, then PPO self-play in partie mode on the
batched engine (512 parties per update against itself, its snapshots and the random agent), sized
to finish within 15 minutes on 2 idle CPU cores. ``training/settings/long.toml`` is a longer recipe.

A TOML file sets fields by name, at top level or inside tables (table names only group keys)::

    seed = 3
    [ppo]
    learning_rate = 1e-4
    hidden = [128, 128]

``--set key=value`` overrides are applied after the file; values are parsed by the field's type
(``hidden=128,128``, ``tensorboard=false``).

>>> cfg = apply_overrides(TrainConfig(), ["updates=3", "hidden=64,64", "mode=deal"])
>>> cfg.updates, cfg.hidden, cfg.mode
(3, (64, 64), 'deal')
>>> apply_overrides(TrainConfig(), ["clip_coef=-1"])
Traceback (most recent call last):
...
piquet_training.settings.schema.ConfigError: overrides: clip_coef must be a number > 0, got -1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from piquet_env.rewards import REWARDS
from piquet_training.settings import schema as _settings
from piquet_training.settings.schema import (
    MODE,
    OUTPUT_DIR,
    RULES_PRESET,
    WIDTHS,
    ConfigError,
    Rule,
    S,
    Settings,
    above,
    apply_overrides,
    at_least,
    between,
    integer,
    one_of,
    replace_checked,
    setting,
    to_toml,
)

__all__ = [
    "ConfigError",
    "PPOSettings",
    "Settings",
    "TrainConfig",
    "apply_overrides",
    "load_toml",
    "replace_checked",
    "setting",
    "to_toml",
]


def load_toml(path: str | Path, base: S | None = None, cls: type[Settings] | None = None) -> Any:
    """Settings from a TOML file, on top of ``base`` (default: ``cls()``, or ``TrainConfig()``):
    :func:`piquet_training.settings.schema.load_toml` with the built-in trainer's config as
    default."""
    return _settings.load_toml(path, base if base is not None else (cls or TrainConfig)())


EXPLOIT_LEARNING_RATE = 3e-4
"""The exploiter's learning rate unless set (``piquet exploit`` and the benchmark protocol's
exploit budget): self-play's ``1e-3``, constant, knocked a converged starting policy about
(results: exploitability), ``1e-4`` and ``3e-4`` did not."""


def _ray_address(v: Any) -> bool:
    """Whether ``v`` is no Ray (``""``), ``local``, ``auto`` or ``ray://HOST:PORT``."""
    if v in ("", "local", "auto"):
        return True
    if isinstance(v, str) and v.startswith("ray://"):
        host, _, port = v[len("ray://") :].rpartition(":")
        return bool(host) and port.isdigit() and 0 < int(port) < 65536
    return False


RAY_ADDRESS = Rule("'', 'local', 'auto' or 'ray://HOST:PORT'", _ray_address)
"""Where a run's collectors run on Ray (``""``: not on Ray)."""

# ------------------------------------------------------------------------------ PPOSettings


def _specs_problem(v: Any) -> str:
    """Why ``v`` is not a list of agent specs ("" if it is one)."""
    if not isinstance(v, str) or not [s for s in v.split(",") if s.strip()]:
        return "no agent named"
    from piquet_agents.registry import make_agent

    try:
        for spec in v.split(","):
            if spec.strip():
                make_agent(spec.strip())
    except ValueError as exc:
        return str(exc)
    return ""


AGENT_SPECS = Rule(
    "comma-separated agent specs (random, heuristic, mcts:N or a checkpoint path)",
    lambda v: not _specs_problem(v),
    _specs_problem,
)


@dataclass
class PPOSettings(Settings):
    """The settings both training backends share, declared once: the built-in trainer's
    defaults here; :class:`TrainConfig` and ``RLlibConfig`` add their own settings and state
    where their defaults differ (``DEFAULTS``)."""

    NAME: ClassVar[str] = "PPO settings"

    # --- run ---------------------------------------------------------------------------------
    seed: int = setting(0, integer(0))
    """Seeds torch, numpy and python RNGs; every game seed derives from it."""
    rules: str = setting("standard", RULES_PRESET)
    """Rules preset with variants, e.g. ``"classic+normand"``."""
    mode: str = setting("partie", MODE, aliases=("episode",))
    """``"partie"`` (6 deals with rubicon settlement) or ``"deal"`` (single deals)."""
    reward: str = setting("deal_points", one_of(*REWARDS))
    """Reward mode (:mod:`piquet_env.rewards`): ``"deal_points"``, ``"result"`` or ``"win"``."""
    reward_scale: float = setting(0.02, above(0))
    """Reward per point of (own deal score - opponent's)."""
    out_dir: str = setting("runs/piquet", OUTPUT_DIR)
    """Directory for checkpoints, logs, the learning curve and the summary."""
    updates: int = setting(420, integer(0), aliases=("iterations",))
    """PPO updates, each collecting a batch and learning from it (the built-in trainer:
    ``games_per_update`` complete games; RLlib: ``train_batch_size`` env steps)."""
    checkpoint_every: int = setting(10, integer(1, 1_000_000))
    """Write ``checkpoints/latest.safetensors`` every this many updates (and at the end)."""
    torch_threads: int = setting(2, integer(1, 1024), aliases=("learner_threads",))
    """``torch.set_num_threads`` of the learner. The built-in trainer: self-play and the update
    (idle threads spin briefly: :data:`piquet_training.threads.SPIN_COUNT`); evaluation worker
    processes share these threads (at least one each), and evaluation in the run's process uses
    one. RLlib:
    the learner on the driver (env runners get one each from Ray). Runs match bit for bit only
    at the same thread count."""

    # --- network -----------------------------------------------------------------------------
    hidden: tuple[int, ...] = setting((256, 256), WIDTHS)
    """Hidden layer widths of the actor's MLP (and of the critic's)."""
    activation: str = setting("tanh", one_of("tanh", "relu"))
    """``"tanh"`` or ``"relu"``."""

    # --- PPO ---------------------------------------------------------------------------------
    learning_rate: float = setting(1e-3, above(0), aliases=("lr",))
    """Adam's step size. 1e-3 with one epoch learned more per env step than the earlier 3e-4 with
    two, whose steps were too small (docs/results/training.md)."""
    gamma: float = setting(1.0, between(0, 1, open_low=True))
    """The discount (1: none; deals and parties are short)."""
    gae_lambda: float = setting(0.8, between(0, 1), aliases=("lambda_",))
    """GAE's lambda."""
    update_epochs: int = setting(1, integer(1, 1000), aliases=("num_epochs",))
    """Passes over each rollout. One epoch over a fresh rollout each update learned as much per
    env step as two at the same learning rate, faster: each epoch costs about as much as the
    collection itself (docs/results/training.md)."""
    clip_coef: float = setting(0.2, above(0), aliases=("clip_param",))
    """PPO's clip on the probability ratio."""
    ent_coef: float = setting(0.001, at_least(0), aliases=("entropy_coeff",))
    """The entropy bonus's weight (the built-in trainer: at the start, under ``ent_schedule``)."""
    vf_coef: float = setting(0.5, at_least(0), aliases=("vf_loss_coeff",))
    """The value loss's weight."""
    max_grad_norm: float = setting(0.5, above(0), aliases=("grad_clip",))
    """The gradient's norm is clipped to this."""

    # --- the final evaluation ----------------------------------------------------------------
    final_eval_deals: int = setting(300, integer(0))
    """Duplicate pairs of games in the final evaluation (partie pairs: 12 deals each; 0: none)."""
    eval_mode: str = setting("partie", MODE)
    """Mode of the evaluation games: ``"partie"`` (the states the default run trains on) or
    ``"deal"``; either way the reported number is the mean point difference per deal."""
    eval_workers: int = setting(2, integer(1, 256))
    """Processes playing the final evaluation (each loads the saved policy)."""
    eval_opponents: str = setting("random,heuristic", AGENT_SPECS)
    """Comma-separated agent specs the policy is evaluated against (the built-in trainer's
    periodic evaluations too)."""


# ------------------------------------------------------------------------------ TrainConfig


def _spec_problem(v: Any) -> str:
    """Why ``v`` is neither empty nor one agent spec ("" if it is either)."""
    if v == "":
        return ""
    if not isinstance(v, str) or "," in v:
        return "one agent spec (or empty)"
    return _specs_problem(v)


AGENT_SPEC_OR_NONE = Rule(
    "empty or one agent spec (random, heuristic, mcts:N, baseline or a checkpoint path)",
    lambda v: not _spec_problem(v),
    _spec_problem,
)


def weighted_specs(text: str) -> list[tuple[str, float]]:
    """``[(spec, weight), ...]`` of an ``opponents`` setting (``"SPEC@WEIGHT,..."``); a
    ``ValueError`` says what is malformed.

    >>> weighted_specs("mcts:50@0.1, baseline:sample@0.25")
    [('mcts:50', 0.1), ('baseline:sample', 0.25)]
    """
    out: list[tuple[str, float]] = []
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        spec, at, weight = item.rpartition("@")
        if not at or not spec.strip():
            raise ValueError(f"{item!r} is not SPEC@WEIGHT")
        try:
            value = float(weight)
        except ValueError:
            raise ValueError(f"{item!r}: the weight {weight!r} is not a number") from None
        if not (value >= 0 and value < float("inf")):
            raise ValueError(f"{item!r}: the weight must be a finite number >= 0")
        spec = spec.strip()
        if spec.lower() in ("heuristic", "random"):
            raise ValueError(f"{item!r}: {spec} has its own setting, {spec.lower()}_weight")
        if spec in (s for s, _ in out):
            raise ValueError(f"{item!r}: {spec} is named twice")
        out.append((spec, value))
    return out


def _weighted_problem(v: Any) -> str:
    """Why ``v`` is not an ``opponents`` setting ("" if it is one)."""
    if not isinstance(v, str):
        return "a string"
    try:
        pairs = weighted_specs(v)
    except ValueError as exc:
        return str(exc)
    return _specs_problem(",".join(s for s, _ in pairs)) if pairs else ""


WEIGHTED_SPECS = Rule(
    "empty or comma-separated SPEC@WEIGHT entries (an agent spec and its share of games)",
    lambda v: not _weighted_problem(v),
    _weighted_problem,
)


INIT_FROM = Rule(
    "empty or an existing checkpoint file or run directory",
    lambda v: isinstance(v, str) and (v == "" or Path(v).exists()),
)


MAGNET = Rule(
    "empty, uniform, ema or an existing policy file",
    lambda v: isinstance(v, str) and (v in ("", "uniform", "ema") or Path(v).is_file()),
)
SCHEDULE = one_of("constant", "linear", "power")


@dataclass
class TrainConfig(PPOSettings):
    """All settings of a training run (see the module docstring for how to override them)."""

    NAME: ClassVar[str] = "config"
    RETIRED: ClassVar[tuple[str, ...]] = ("max_minutes",)

    # --- run (besides PPOSettings': seed, rules, mode, reward, out_dir, updates ...) -----------
    env_steps: int = setting(0, integer(0))
    """Stop after the update that brings the run to this many env steps (0: after ``updates``
    alone). Like ``updates``, a count: the run is the same on any machine."""
    time_budget_minutes: float = setting(0.0, at_least(0), aliases=("max_minutes",))
    """A cap on the run's wall time (0, the default: none). It never changes what the run
    computes: a run that would pass it stops before the next update, saying how many of its
    ``updates`` it made and that its policy is not the configured run's (``--resume`` finishes
    it exactly). (``max_minutes``, an older name, is read as this.)"""
    progress: bool = setting(True)
    """Show a progress bar (otherwise a line per evaluation and every few minutes)."""
    tensorboard: bool = setting(True)
    """Write TensorBoard event files under ``out_dir/tb``."""
    device: str = setting("cpu", one_of("cpu", "cuda", "auto"))
    """Where the networks run: ``"cpu"``, ``"cuda"`` (a GPU; ``--device cuda``) or ``"auto"``
    (CUDA when available). The games always run on the CPU (the batched engine is numpy). On a
    GPU, sampling uses CUDA's random stream, so a resumed run matches only on the same device."""
    precision: str = setting("auto", one_of("auto", "fp32", "bf16"))
    """Precision of the training forward passes, acting in self-play and the update
    (:mod:`piquet_training.ppo.compute`): ``"bf16"`` (autocast; weights and optimizer stay float32),
    ``"fp32"``, or ``"auto"``: bf16 where the device computes it natively (AVX512-BF16 or AMX
    CPUs, recent GPUs). Evaluation plays in float32."""

    # --- network -----------------------------------------------------------------------------
    critic: str = setting("state", one_of("state", "obs"))
    """``"state"``: an asymmetric critic, a separate MLP over the full-information state (both
    hands, the talon; training only, the actor never sees it), which takes most of the luck of
    the deal out of the advantages. ``"obs"``: the value head shares the actor's trunk."""

    # --- self-play ---------------------------------------------------------------------------
    collector: str = setting("vector", one_of("vector", "game"))
    """``"vector"``: the games of an update run together on the batched engine
    (:mod:`piquet_env.vector`), every network move of a step in one forward pass; games against
    the heuristic are played one object per game beside them. ``"game"``: one
    :class:`~piquet_env.game.Game` per game throughout (the earlier collector)."""
    num_envs: int = setting(512, integer(1, 100_000))
    """Games advancing together (one forward pass serves all of them): with the vector collector
    the update's games are played in batches of this many slots, each slot one whole game. 512
    collects faster per env step than 256 (each step's fixed cost serves twice the games)."""
    games_per_update: int = setting(512, integer(1, 1_000_000))
    """Complete games collected per update (rollouts always start from fresh games). 512
    parties with 16 minibatches learned as much per env step as 256 with 8
    (docs/results/training.md)."""
    chunk_games: int = setting(512, integer(1, 1_000_000))
    """Games per collection chunk: an update's games are cut into chunks of this many, each
    played from a seed of its own (the run's seed, the update, the chunk), so a chunk gives the
    same rows wherever it is collected (:mod:`piquet_training.ppo.chunks`). It changes what a
    run computes (which games are dealt): it is saved with the run; ``workers`` and ``ray`` do
    not. The default is one chunk an update (smaller batches collect slower: 256 cost the
    default run a fifth of its speed here); to share an update among N collectors, give
    ``games_per_update / N`` or less. Vector collector only."""
    workers: int = setting(1, integer(1, 4096))
    """Collectors playing an update's chunks at once: 1, this process (the default, needing
    nothing); more, that many local processes, or Ray tasks with ``ray``. Where the chunks run
    changes nothing the run computes: the same ``train.csv`` and weights, bit for bit."""
    ray: str = setting("", RAY_ADDRESS)
    """Collect on Ray: ``"local"`` (a Ray instance started here), ``"auto"`` (the cluster this
    machine belongs to) or ``"ray://HOST:PORT"``; empty: no Ray. The learner stays here."""
    self_play_weight: float = setting(0.6, at_least(0))
    """Share of games where the learner plays both seats."""
    heuristic_weight: float = setting(0.0, at_least(0))
    """Share of games against the heuristic agent. It cannot act in batch (its games are many times
        slower than the batched ones), and 30% of games against it did not help the default run
    (docs/results/training.md), so the default gives it none: it is the warm start's teacher and
    the evaluation's yardstick."""
    snapshot_weight: float = setting(0.35, at_least(0))
    """Share of games against a past snapshot of the learner (self-play if the pool is empty)."""
    random_weight: float = setting(0.05, at_least(0))
    """Share of games against the random agent."""
    opponents: str = setting("", WEIGHTED_SPECS)
    """More opponents beside those above: comma-separated ``SPEC@WEIGHT`` entries, each an agent
    spec (``mcts:50``, ``heuristic:seed=3``, ``baseline``, a checkpoint path...) and its share of
    games, e.g. ``"baseline@0.1,mcts:50@0.05"``. A policy plays in batched passes as its agent
    plays (greedily, or sampled with ``:sample``); the random agent in batch too; any other agent
    one game object per game, at its own cost. (``heuristic`` and ``random`` have their own
    weights above.)"""
    opponent: str = setting("", AGENT_SPEC_OR_NONE)
    """One fixed opponent for every game, an agent spec (empty: the pool above). The learner
    then trains to beat it alone, as an exploiter does (``piquet exploit``): a policy opponent
    (a checkpoint, ``baseline``) acts greedily in batched passes, as a greedy
    :class:`~piquet_agents.policy.PolicyAgent`; any other agent is played one game object per
    game beside the batch, at its own cost. The other opponent weights are then ignored."""
    snapshot_every: int = setting(10, integer(0))
    """Add a snapshot of the learner to the opponent pool every this many updates (0: never)."""
    pool_size: int = setting(6, integer(1, 1000))
    """Most snapshots kept in the pool (oldest dropped first)."""
    dense_reward: bool = setting(True)
    """Under ``"deal_points"``: pay deal points as they are scored (leads, tricks, declarations)
    rather than all at the deal's end; the sum per deal is the same, the credit lands on the
    decision that earned it."""
    settle_weight: float = setting(0.25, at_least(0))
    """Under ``"deal_points"`` in partie mode: weight of the settlement's remainder (result minus
    the deals' differences: the 100 for winning and the rubicon) paid at the partie's end."""

    # --- PPO ---------------------------------------------------------------------------------
    anneal_lr: bool = setting(True)
    """Decay the learning rate linearly to 0 over ``updates``."""
    num_minibatches: int = setting(16, integer(1, 100_000))
    norm_adv: bool = setting(True)
    clip_vloss: bool = setting(False)
    ent_schedule: str = setting("constant", SCHEDULE)
    """How ``ent_coef`` changes over the run (:func:`piquet_training.ppo.magnet.scheduled`):
    ``constant``, ``linear`` to ``ent_coef_end``, or ``power`` (``ent_coef * (1 + update) **
    -ent_power``)."""
    ent_coef_end: float = setting(0.0, at_least(0))
    """``ent_coef`` at the run's end under the ``linear`` schedule."""
    ent_power: float = setting(0.5, at_least(0))
    """The exponent of the ``power`` schedule of ``ent_coef``."""
    target_kl: float = setting(0.0, at_least(0))
    """Stop an update's epochs early once the approximate KL exceeds this (0: never)."""

    # --- regularised self-play: a magnet (magnetic mirror descent) ---------------------------
    magnet: str = setting("", MAGNET)
    """The policy the learner is pulled toward by ``magnet_coef * KL(pi || magnet)``
    (:mod:`piquet_training.ppo.magnet`): empty (no pull), ``uniform`` (the uniform policy over the
    legal actions), ``ema`` (an exponential moving average of the learner's parameters,
    EMAgnet) or a policy file (frozen)."""
    magnet_coef: float = setting(0.0, at_least(0))
    """The pull's weight (at the start, under ``magnet_schedule``; 0: no pull)."""
    magnet_schedule: str = setting("constant", SCHEDULE)
    """How ``magnet_coef`` changes over the run: ``constant``, ``linear`` to
    ``magnet_coef_end``, or ``power`` (``magnet_coef * (1 + update) ** -magnet_power``)."""
    magnet_coef_end: float = setting(0.0, at_least(0))
    """``magnet_coef`` at the run's end under the ``linear`` schedule."""
    magnet_power: float = setting(0.5, at_least(0))
    """The exponent of the ``power`` schedule of ``magnet_coef``."""
    magnet_ema: float = setting(0.99, between(0, 1))
    """The ``ema`` magnet's decay per update: ``ema <- magnet_ema * ema + (1 - magnet_ema) *
    theta`` after each update."""

    # --- behaviour-cloning warm start ----------------------------------------------------------
    init_from: str = setting("", INIT_FROM)
    """Start from the weights of this checkpoint (file or run directory) instead of a warm start
    (the architecture must match)."""
    bc_games: int = setting(1000, integer(0))
    """Heuristic-vs-heuristic games whose decisions are imitated before PPO (0: no warm start)."""
    bc_mode: str = setting("deal", MODE)
    """Mode of the warm-start games (deals give more varied positions per second)."""
    bc_epochs: int = setting(8, integer(1, 10_000))
    bc_learning_rate: float = setting(1e-3, above(0))
    bc_batch_size: int = setting(256, integer(1, 1_000_000))

    # --- evaluation and checkpoints ------------------------------------------------------------
    eval_every: int = setting(50, integer(0))
    """Evaluate against ``eval_opponents`` every this many updates, and before the first (0:
    only at the end)."""
    eval_deals: int = setting(30, integer(1, 1_000_000))
    """Duplicate pairs of games (in ``eval_mode``) per periodic evaluation, also run before the
    first update."""
    exact_every: int = setting(0, integer(0))
    """Measure the policy's exact NashConv (:mod:`piquet_env.exact`: sampled, as it trains, and
    greedy, as it plays by default) every this many updates, before the first and at the end,
    into ``exact.csv`` (0: never). Only for rules small enough to enumerate (``mini``); the game
    is one deal, whatever ``mode`` the run trains in."""

    def check_together(self) -> None:
        """Without a fixed ``opponent``, the opponent weights must have a positive sum; exact
        measurements need rules small enough to enumerate; only the vector collector fans out."""
        if self.exact_every:
            from piquet_env.exact import TreeError, check_size
            from piquet_env.rules import make_rules

            try:
                check_size(make_rules(self.rules))
            except TreeError as exc:
                raise ConfigError(f"{self.NAME}: exact_every: {exc}") from None
        if self.magnet_coef and not self.magnet:
            raise ConfigError(
                f"{self.NAME}: magnet_coef > 0 needs a magnet (uniform, ema or a file)"
            )
        if (self.workers > 1 or self.ray) and self.collector != "vector":
            raise ConfigError(
                f"{self.NAME}: workers and ray fan the vector collector's chunks out; "
                f"collector = {self.collector!r} collects in this process only"
            )
        if self.opponent:
            return
        weights = (
            self.self_play_weight,
            self.snapshot_weight,
            *(w for _, w in self.agent_opponents()),
        )
        if sum(weights) <= 0:
            raise ConfigError(
                f"{self.NAME}: at least one of self_play_weight, heuristic_weight, "
                f"snapshot_weight, random_weight and the opponents' weights must be positive"
            )

    def agent_opponents(self) -> list[tuple[str, float]]:
        """The agent opponents of the pool as ``(spec, weight)``, in draw order: the heuristic,
        the random agent, then ``opponents``' entries."""
        return [
            ("heuristic", self.heuristic_weight),
            ("random", self.random_weight),
            *weighted_specs(self.opponents),
        ]
