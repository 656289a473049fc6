"""The settings of an RLlib self-play run and the RLlib ``PPOConfig`` built from them.

:class:`RLlibConfig` holds every setting (``piquet train --backend rllib`` flags and ``--set``
keys). Like the built-in trainer's :class:`~piquet_training.settings.train.TrainConfig` it derives
from :class:`~piquet_training.settings.train.PPOSettings`: the settings both share are declared once
there (at RLlib's defaults here), read, checked and printed the same way (RLlib's own names are
accepted as aliases). :func:`algo_config` is the one place they are translated to RLlib's names,
building PPO on RLlib's current API stack over the piquet env (:mod:`piquet_training.rllib.env`)
with the action-masking module (:mod:`piquet_training.rllib.module`) and the self-play league
(:mod:`piquet_training.rllib.league`). Importing this module does not import Ray
(:func:`algo_config` does).

>>> RLlibConfig.from_dict({"lr": 1e-4, "iterations": 3}).learning_rate
0.0001
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from piquet_env.rules import Rules, make_rules
from piquet_training.settings.schema import (
    ConfigError,
    Rule,
    between,
    integer,
    one_of,
    setting,
)
from piquet_training.settings.train import PPOSettings

_CPUS = Rule(
    "empty (all) or an integer >= 1", lambda v: v is None or (isinstance(v, int) and v >= 1)
)


LEAGUE_SETTINGS = (
    "self_play_weight",
    "latest_weight",
    "pool_size",
    "win_rate_threshold",
    "min_games",
)
"""The settings of the PettingZoo league's self-play (``vector_env=false``)."""

RLLIB_TRAINING = {
    "learning_rate": "lr",
    "gamma": "gamma",
    "gae_lambda": "lambda_",
    "clip_coef": "clip_param",
    "ent_coef": "entropy_coeff",
    "max_grad_norm": "grad_clip",
    "train_batch_size": "train_batch_size_per_learner",
    "minibatch_size": "minibatch_size",
    "update_epochs": "num_epochs",
}
"""Each PPO setting's name in RLlib's ``PPOConfig.training``: the one translation table (and
``vf_coef``, whose loss RLlib writes without the half: :data:`RLLIB_LOSS`)."""

RLLIB_LOSS: dict[str, Any] = {"use_kl_loss": False, "vf_clip_param": math.inf}
"""RLlib's PPO loss made the built-in trainer's (:mod:`piquet_training.ppo.update`, CleanRL's):
no adaptive KL penalty (RLlib adds ``kl_coeff * KL(old || new)``, its coefficient growing
without bound while the KL stays above twice ``kl_target``) and the critic's squared error not
clipped (RLlib clamps it at ``vf_clip_param``, 10). RLlib's critic loss is ``vf_loss_coeff``
times the squared error where the built-in's is ``vf_coef`` times half of it, so
``vf_loss_coeff`` is ``vf_coef / 2``: one loss, and one global gradient norm to clip, in both."""


@dataclass
class RLlibConfig(PPOSettings):
    """Every setting of an RLlib self-play run (the CLI flags of ``piquet train --backend
    rllib``): the shared :class:`~piquet_training.settings.train.PPOSettings` at the built-in
    trainer's defaults (its recipe: partie mode, PPO's settings, the reward) but for the run's
    length, folder, checkpoints and threads, and RLlib's own. Before 2026-12-05 they were
    RLlib's PPO defaults (deal mode, ``learning_rate`` 3e-4, 4 epochs of 4,000 decisions in
    minibatches of 256, ``ent_coef`` 0.01, ``gae_lambda`` 0.95, ``reward_scale`` 0.01, the
    observation's critic, 20 iterations)."""

    NAME: ClassVar[str] = "RLlib config"
    DEFAULTS: ClassVar[dict[str, Any]] = {
        "updates": 190,
        "out_dir": "runs/rllib",
        "checkpoint_every": 5,
        "torch_threads": 1,
    }

    # --- Ray ---------------------------------------------------------------------------------
    address: str | None = setting(None)
    """Ray cluster address (``"auto"``, ``"HOST:6379"``, anything ``ray.init`` takes); None:
    start a local Ray instance."""
    num_env_runners: int = setting(1, integer(0, 100_000))
    """Env-runner actors sampling in parallel (0: sample on the driver)."""
    num_envs_per_env_runner: int = setting(256, integer(1, 100_000))
    """Games each env runner steps together (one batched forward pass for all): on the batched
    engine (``vector_env``) RLlib's cost is per game and step, the engine's per step, so many
    games a runner pay; the league's PettingZoo envs are one game object each."""
    num_cpus: int | None = setting(None, _CPUS)
    """CPUs of a local Ray instance (default: the machine's, at least ``num_env_runners``)."""
    vector_env: bool = setting(True)
    """The env runners step the batched engine, ``num_envs_per_env_runner`` games as arrays
    with the opponent inside (:class:`~piquet_training.rllib.vector_env.TargetVectorEnv`): the
    exploiter's target, or in self-play the learner itself as of its last update (the target
    :data:`~piquet_training.rllib.vector_env.SELF`). False: the PettingZoo env, one game object
    per env: the exploiter's :class:`~piquet_training.rllib.exploit.TargetSeatEnv`, and in
    self-play the league of frozen snapshots (:mod:`piquet_training.rllib.league`, whose
    settings below apply to it only)."""
    self_play: str = setting("inside", one_of("inside", "both"))
    """Self-play on the batched engine (``vector_env``): ``"inside"``, the learner against
    itself as of its last update inside the env
    (:class:`~piquet_training.rllib.vector_env.TargetVectorEnv`, RLlib's single-agent env
    runners), only the learner's seat a trajectory; ``"both"``, both seats agents of one
    module ``main`` (:class:`~piquet_training.rllib.both_seats.BothSeatsVectorEnv`, RLlib's
    multi-agent env runners), both seats' moves trajectories."""

    critic: str = setting("state", one_of("obs", "state"))
    """``"state"`` (the built-in trainer's default): an asymmetric critic, a separate MLP over
    the full-information state (both hands, the talon; the actor never sees it), which only the
    batched env gives (``vector_env``; the PettingZoo league needs ``"obs"``). ``"obs"``: the
    value head shares the actor's trunk and reads the observation. The exploiter takes its
    start checkpoint's."""

    # --- PPO (besides the shared settings) -----------------------------------------------------
    train_batch_size: int = setting(54_212, integer(1, 100_000_000))
    """The learner's decisions an iteration (RLlib's env steps of its module): by default the
    built-in trainer's update, the learner's decisions in 512 parties of the standard rules
    (:func:`~piquet_training.rllib.exploit.update_decisions`; about twice as many moves are
    played, the opponent's included)."""
    minibatch_size: int = setting(3_388, integer(1, 100_000_000))
    """The learner's decisions in an SGD minibatch (at most ``train_batch_size``): by default a
    sixteenth of the batch, as the built-in trainer's 16 minibatches."""

    # --- warm start --------------------------------------------------------------------------
    bc_games: int = setting(1000, integer(0))
    """The built-in trainer's warm start before the first iteration (self-play training): the
    heuristic's decisions in this many heuristic-vs-heuristic games imitated, at the run's
    widths, the network then copied into the learner (:func:`~piquet_training.warm_start.
    warm_start_policy`, as ``piquet train``'s own ``bc_games``); 0: fresh weights."""

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
        """A run makes at least one iteration; a minibatch cannot be larger than the batch; the
        league's settings are given only to the league (``vector_env=false``)."""
        if self.vector_env:
            league = [
                name
                for name in LEAGUE_SETTINGS
                if getattr(self, name) != self.__dataclass_fields__[name].default
            ]
            if league:
                raise ConfigError(
                    f"{self.NAME}: {', '.join(league)} set the PettingZoo league's self-play, "
                    "and vector_env is true (the opponent inside the batched env is the learner "
                    "as of its last update): set vector_env=false to train in the league"
                )
        if self.critic == "state" and not self.vector_env:
            raise ConfigError(
                f"{self.NAME}: critic='state' (the default) reads the full-information state, "
                "which only the batched env gives: set vector_env=true, or critic='obs'"
            )
        if self.self_play == "both" and not self.vector_env:
            raise ConfigError(
                f"{self.NAME}: self_play='both' steps the batched engine: set vector_env=true "
                "(the league plays both seats of its own when self_play_weight > 0)"
            )
        if self.updates < 1:
            raise ConfigError(f"{self.NAME}: updates must be at least 1, got {self.updates}")
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


def ppo_config(cfg: RLlibConfig) -> Any:
    """RLlib's ``PPOConfig`` of a run without its env, modules or callbacks (current API stack,
    torch, actions as sampled, the env runners, one local learner, PPO's settings, the seed):
    the one place where
    the settings' names become RLlib's (``learning_rate`` -> ``lr``, ``gae_lambda`` ->
    ``lambda_``, ``clip_coef`` -> ``clip_param``, ``ent_coef`` -> ``entropy_coeff``, ``vf_coef``
    -> ``vf_loss_coeff`` halved, ``max_grad_norm`` -> ``grad_clip``, ``update_epochs`` ->
    ``num_epochs``), and its loss the built-in's (:data:`RLLIB_LOSS`)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .framework("torch")
        # Discrete actions: nothing to unsquash or clip (RLlib would deep-copy every action
        # batch to do it, a sixth of the batched env runner's time).
        .environment(normalize_actions=False, clip_actions=False)
        .env_runners(
            num_env_runners=cfg.num_env_runners,
            num_envs_per_env_runner=cfg.num_envs_per_env_runner,
            rollout_fragment_length="auto",
        )
        .learners(num_learners=0)
        .training(
            **{theirs: getattr(cfg, ours) for ours, theirs in RLLIB_TRAINING.items()},
            vf_loss_coeff=cfg.vf_coef / 2,
            **RLLIB_LOSS,
        )
        .debugging(seed=cfg.seed)
    )


def module_spec(cfg: RLlibConfig) -> Any:
    """The ``RLModuleSpec`` of the action-masking module at the run's widths and activation."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from piquet_training.rllib.module import MaskedActorCriticModule

    return RLModuleSpec(
        module_class=MaskedActorCriticModule,
        model_config={
            "hidden": list(cfg.hidden),
            "activation": cfg.activation,
            "critic": cfg.critic,
        },
    )


def env_config_of(cfg: RLlibConfig) -> dict[str, Any]:
    """The piquet env's options of the settings (``rules``, ``mode``, ``reward``,
    ``reward_scale``)."""
    return {
        "rules": cfg.rules,
        "mode": cfg.mode,
        "reward": cfg.reward,
        "reward_scale": cfg.reward_scale,
    }


def vector_config(cfg: RLlibConfig, target: str) -> Any:
    """The RLlib ``PPOConfig`` of one learner against ``target`` inside the batched env
    (:class:`~piquet_training.rllib.vector_env.TargetVectorEnv`, given to RLlib's single-agent
    env runners through Gymnasium's vector entry point, ``num_envs_per_env_runner`` games
    each): :func:`ppo_config` with the action-masking module (RLlib's default module, ``main``
    to :mod:`~piquet_training.rllib.export`) and the callback that counts every move applied
    as an env step. Self-play is the target :data:`~piquet_training.rllib.vector_env.SELF`,
    with the callback that keeps it equal to the learner."""
    from piquet_training.rllib import vector_env

    callbacks = [vector_env.moves_callback()]
    if target == vector_env.SELF:
        callbacks.append(vector_env.self_play_callback())
    env_config = {**env_config_of(cfg), "target": target, "critic_state": cfg.critic == "state"}
    if target == vector_env.SELF:
        env_config.update(hidden=list(cfg.hidden), activation=cfg.activation)
    return (
        ppo_config(cfg)
        .environment(
            vector_env.register(),
            env_config=env_config,
            disable_env_checking=True,  # random unmasked actions would be illegal
        )
        .env_runners(gym_env_vectorize_mode="vector_entry_point")
        .rl_module(rl_module_spec=module_spec(cfg))
        .callbacks(callbacks)
    )


def both_config(cfg: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of self-play with both seats learning on the batched engine
    (:class:`~piquet_training.rllib.both_seats.BothSeatsVectorEnv`, built by RLlib's
    multi-agent env runner subclass :class:`~piquet_training.rllib.both_seats.
    BothSeatsEnvRunner`, ``num_envs_per_env_runner`` games each): :func:`ppo_config` with both
    agents mapped to the module ``main`` (:func:`module_spec`), the only one, trained on both
    seats' moves (with ``critic="state"`` the env gives its asymmetric critic each game's
    full-information state from the seat to act), and the callback that logs every move
    applied."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from piquet_training.rllib import both_seats, vector_env
    from piquet_training.rllib.league import MAIN

    return (
        ppo_config(cfg)
        .environment(
            both_seats.register(),
            env_config={**env_config_of(cfg), "critic_state": cfg.critic == "state"},
            disable_env_checking=True,  # random unmasked actions would be illegal
        )
        .env_runners(env_runner_cls=both_seats.BothSeatsEnvRunner)
        .multi_agent(
            policies={MAIN}, policy_mapping_fn=both_seats.main_module, policies_to_train=[MAIN]
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MAIN: module_spec(cfg)}))
        .callbacks([vector_env.moves_callback()])
    )


def algo_config(cfg: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of a self-play run: with ``cfg.vector_env`` (the default) the
    learner against itself inside the batched env (:func:`vector_config`, the target
    ``"self"``), or with ``cfg.self_play="both"`` both seats learning on it
    (:func:`both_config`); else multi-agent over the PettingZoo env, :func:`ppo_config` with
    the module ``main`` (:func:`module_spec`) and the league's callback, the env options from the
    settings (:func:`env_config_of`)."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from piquet_training.rllib.vector_env import SELF

    if cfg.vector_env and cfg.self_play == "both":
        return both_config(cfg)
    if cfg.vector_env:
        return vector_config(cfg, SELF)

    from piquet_training.rllib.env import ENV_NAME, register
    from piquet_training.rllib.league import MAIN, SelfPlayCallback, mapping_fn

    register()
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
        ppo_config(cfg)
        .environment(
            ENV_NAME,
            env_config=env_config_of(cfg),
            # RLlib's env checker steps random, unmasked actions (an illegal move ends
            # the game); the env has its own PettingZoo API tests.
            disable_env_checking=True,
        )
        .multi_agent(
            policies={MAIN}, policy_mapping_fn=mapping_fn([], **league), policies_to_train=[MAIN]
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MAIN: module_spec(cfg)}))
        .callbacks(callback)
    )
