"""The settings of an RLlib self-play run and the RLlib ``PPOConfig`` built from them.

:class:`RLlibConfig` holds every setting (``piquet train --backend rllib`` flags and ``--set``
keys). It is a :class:`~piquet_training.config.Settings` like the built-in trainer's
:class:`~piquet_training.config.TrainConfig`: the same loader, checks and ``--show-config``
format, and the same names for the same hyperparameters (RLlib's own names are accepted as
aliases). :func:`algo_config` is the one place they are translated to RLlib's names, building PPO
on RLlib's current API stack over the piquet env (:mod:`piquet_training.rllib.env`) with the
action-masking module (:mod:`piquet_training.rllib.module`) and the self-play league
(:mod:`piquet_training.rllib.league`). Importing this module does not import Ray
(:func:`algo_config` does).

>>> RLlibConfig.from_dict({"lr": 1e-4, "iterations": 3}).learning_rate
0.0001
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, ClassVar

from piquet_env.rewards import REWARDS
from piquet_env.rules import Rules, make_rules
from piquet_training.config import (
    MODE,
    OUTPUT_DIR,
    RULES_PRESET,
    WIDTHS,
    ConfigError,
    Rule,
    Settings,
    above,
    at_least,
    between,
    integer,
    one_of,
    setting,
)

_CPUS = Rule(
    "empty (all) or an integer >= 1", lambda v: v is None or (isinstance(v, int) and v >= 1)
)


@dataclass
class RLlibConfig(Settings):
    """Every setting of an RLlib self-play run (the CLI flags of ``piquet train --backend
    rllib``)."""

    NAME: ClassVar[str] = "RLlib config"

    # --- run ---------------------------------------------------------------------------------
    updates: int = setting(20, integer(1, 10_000_000), aliases=("iterations",))
    """Training iterations (each samples ``train_batch_size`` env steps, then updates)."""
    out_dir: str = setting("runs/rllib", OUTPUT_DIR)
    """Directory for checkpoints, the exported policy and metrics."""
    seed: int = setting(0, integer(0))
    """Seeds torch on the driver and RLlib (env runners derive their env seeds from it)."""
    checkpoint_every: int = setting(5, integer(1, 1_000_000))
    """Write ``checkpoints/latest.safetensors`` every this many iterations (and at the end)."""

    # --- Ray ---------------------------------------------------------------------------------
    address: str | None = setting(None)
    """Ray cluster address (``"auto"``, ``"HOST:6379"``, anything ``ray.init`` takes); None:
    start a local Ray instance."""
    num_env_runners: int = setting(1, integer(0, 100_000))
    """Env-runner actors sampling in parallel (0: sample on the driver)."""
    num_envs_per_env_runner: int = setting(8, integer(1, 100_000))
    """Environments each env runner steps together (one batched forward pass for all)."""
    torch_threads: int = setting(1, integer(1, 1024), aliases=("learner_threads",))
    """Torch threads of the learner on the driver (env runners get one each from Ray). More
    than one pays only on an otherwise idle machine with spare cores."""
    num_cpus: int | None = setting(None, _CPUS)
    """CPUs of a local Ray instance (default: the machine's, at least ``num_env_runners``)."""

    # --- env ---------------------------------------------------------------------------------
    rules: str = setting("standard", RULES_PRESET)
    """Rules preset with variants, e.g. ``"classic+normand"``."""
    mode: str = setting("deal", MODE, aliases=("episode",))
    """Episodes: ``"deal"`` (one deal each) or ``"partie"``."""
    reward: str = setting("deal_points", one_of(*REWARDS))
    """Env reward mode (:mod:`piquet_env.rewards`): ``"deal_points"``, ``"result"`` or
    ``"win"``."""
    reward_scale: float = setting(0.01, above(0))
    """Factor on every reward (deal points are tens)."""

    # --- network and PPO ---------------------------------------------------------------------
    hidden: tuple[int, ...] = setting((256, 256), WIDTHS)
    activation: str = setting("tanh", one_of("tanh", "relu"))
    learning_rate: float = setting(3e-4, above(0), aliases=("lr",))
    gamma: float = setting(1.0, between(0, 1, open_low=True))
    gae_lambda: float = setting(0.95, between(0, 1), aliases=("lambda_",))
    clip_coef: float = setting(0.2, above(0), aliases=("clip_param",))
    ent_coef: float = setting(0.01, at_least(0), aliases=("entropy_coeff",))
    vf_coef: float = setting(0.5, at_least(0), aliases=("vf_loss_coeff",))
    max_grad_norm: float = setting(0.5, above(0), aliases=("grad_clip",))
    train_batch_size: int = setting(4000, integer(1, 100_000_000))
    minibatch_size: int = setting(256, integer(1, 100_000_000))
    update_epochs: int = setting(4, integer(1, 1000), aliases=("num_epochs",))

    # --- self-play ---------------------------------------------------------------------------
    self_play_weight: float = setting(0.5, between(0, 1))
    """Share of episodes where ``main`` plays both seats; the rest it plays a snapshot."""
    latest_weight: float = setting(0.5, between(0, 1))
    """Share of snapshot games against the newest snapshot (the rest: uniform over the pool)."""
    pool_size: int = setting(8, integer(1, 1000))
    """Snapshots drawn from: the newest ``pool_size``."""
    win_rate_threshold: float = setting(0.55, between(0, 1))
    """``main``'s win rate against the newest snapshot that freezes a new one (0: freeze one
    every iteration once ``min_games`` were played against the newest)."""
    min_games: int = setting(200, integer(1, 100_000_000))
    """Games against the newest snapshot needed before judging that win rate."""

    extra: dict[str, Any] = field(
        default_factory=dict, metadata={"rule": Rule("a table", lambda v: isinstance(v, dict))}
    )
    """Free-form notes stored with checkpoints (a table)."""

    def check_together(self) -> None:
        """A minibatch cannot be larger than the batch."""
        if self.minibatch_size > self.train_batch_size:
            raise ConfigError(
                f"{self.NAME}: minibatch_size ({self.minibatch_size}) must be at most "
                f"train_batch_size ({self.train_batch_size})"
            )

    @property
    def rules_obj(self) -> Rules:
        """The :class:`~piquet_env.rules.Rules` of :attr:`rules`."""
        return make_rules(self.rules)


# --------------------------------------------------------------------------------- config


def algo_config(cfg: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of a run (current API stack, multi-agent self-play): the one place
    where the settings' names become RLlib's (``learning_rate`` -> ``lr``, ``gae_lambda`` ->
    ``lambda_``, ``clip_coef`` -> ``clip_param``, ``ent_coef`` -> ``entropy_coeff``, ``vf_coef`` ->
    ``vf_loss_coeff``, ``max_grad_norm`` -> ``grad_clip``, ``update_epochs`` -> ``num_epochs``,
    ``mode`` -> the env's ``mode``)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from piquet_training.rllib.env import ENV_NAME, register
    from piquet_training.rllib.league import MAIN, SelfPlayCallback, mapping_fn
    from piquet_training.rllib.module import MaskedActorCriticModule

    register()
    spec = RLModuleSpec(
        module_class=MaskedActorCriticModule,
        model_config={"hidden": list(cfg.hidden), "activation": cfg.activation},
    )
    league = {
        "self_play_weight": cfg.self_play_weight,
        "latest_weight": cfg.latest_weight,
        "pool_size": cfg.pool_size,
    }
    callback = functools.partial(
        SelfPlayCallback,
        win_rate_threshold=cfg.win_rate_threshold,
        min_games=cfg.min_games,
        **league,
    )
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(
            ENV_NAME,
            env_config={
                "rules": cfg.rules,
                "mode": cfg.mode,
                "reward": cfg.reward,
                "reward_scale": cfg.reward_scale,
            },
            # RLlib's env checker steps random, unmasked actions (an illegal move ends
            # the game); the env has its own PettingZoo API tests.
            disable_env_checking=True,
        )
        .framework("torch")
        .env_runners(
            num_env_runners=cfg.num_env_runners,
            num_envs_per_env_runner=cfg.num_envs_per_env_runner,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=0)
        .multi_agent(
            policies={MAIN}, policy_mapping_fn=mapping_fn([], **league), policies_to_train=[MAIN]
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MAIN: spec}))
        .training(
            lr=cfg.learning_rate,
            gamma=cfg.gamma,
            lambda_=cfg.gae_lambda,
            clip_param=cfg.clip_coef,
            entropy_coeff=cfg.ent_coef,
            vf_loss_coeff=cfg.vf_coef,
            grad_clip=cfg.max_grad_norm,
            train_batch_size_per_learner=cfg.train_batch_size,
            minibatch_size=cfg.minibatch_size,
            num_epochs=cfg.update_epochs,
        )
        .callbacks(callback)
        .debugging(seed=cfg.seed)
    )
