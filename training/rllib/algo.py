"""The settings of an RLlib self-play run and the RLlib ``PPOConfig`` built from them.

:class:`RLlibConfig` holds every setting (``piquet train --backend rllib`` flags and ``--set``
keys); :func:`algo_config` turns it into PPO on RLlib's current API stack over the piquet env
(:mod:`piquet_training.rllib.env`) with the action-masking module
(:mod:`piquet_training.rllib.module`) and the self-play league
(:mod:`piquet_training.rllib.league`). Importing this module does not import Ray
(:func:`algo_config` does).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

from piquet_env.rules import Rules, make_rules


@dataclass
class RLlibConfig:
    """Every setting of an RLlib self-play run (the CLI flags of ``piquet train --backend
    rllib``)."""

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
    """Ray cluster address (``"auto"``, ``"HOST:6379"``, anything ``ray.init`` takes); None:
    start a local Ray instance."""
    num_env_runners: int = 1
    """Env-runner actors sampling in parallel (0: sample on the driver)."""
    num_envs_per_env_runner: int = 8
    """Environments each env runner steps together (one batched forward pass for all)."""
    learner_threads: int = 1
    """Torch threads of the learner on the driver (env runners get one each from Ray). More
    than one pays only on an otherwise idle machine with spare cores."""
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
    """``main``'s win rate against the newest snapshot that freezes a new one (0: freeze one
    every iteration once ``min_games`` were played against the newest)."""
    min_games: int = 200
    """Games against the newest snapshot needed before judging that win rate."""

    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form notes stored with checkpoints."""

    def validate(self) -> RLlibConfig:
        """Raise ``ValueError`` naming the first bad field; return ``self``."""
        make_rules(self.rules)
        checks = {
            "iterations": self.iterations >= 1,
            "checkpoint_every": self.checkpoint_every >= 1,
            "num_env_runners": self.num_env_runners >= 0,
            "num_envs_per_env_runner": self.num_envs_per_env_runner >= 1,
            "learner_threads": self.learner_threads >= 1,
            "episode": self.episode in ("deal", "partie"),
            "reward": self.reward in ("deal_points", "result"),
            "reward_scale": self.reward_scale > 0,
            "lr": self.lr > 0,
            "gamma": 0 < self.gamma <= 1,
            "lambda_": 0 <= self.lambda_ <= 1,
            "train_batch_size": self.train_batch_size >= 1,
            "minibatch_size": 1 <= self.minibatch_size <= self.train_batch_size,
            "num_epochs": self.num_epochs >= 1,
            "self_play_weight": 0 <= self.self_play_weight <= 1,
            "latest_weight": 0 <= self.latest_weight <= 1,
            "pool_size": self.pool_size >= 1,
            "win_rate_threshold": 0 <= self.win_rate_threshold <= 1,
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


# --------------------------------------------------------------------------------- config


def algo_config(cfg: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of a run (current API stack, multi-agent self-play)."""
    from piquet_training.rllib.env import ENV_NAME, register
    from piquet_training.rllib.league import MAIN, SelfPlayCallback, mapping_fn
    from piquet_training.rllib.module import MaskedActorCriticModule
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

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
                "episode": cfg.episode,
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
            lr=cfg.lr,
            gamma=cfg.gamma,
            lambda_=cfg.lambda_,
            clip_param=cfg.clip_param,
            entropy_coeff=cfg.entropy_coeff,
            vf_loss_coeff=cfg.vf_loss_coeff,
            grad_clip=cfg.grad_clip,
            train_batch_size_per_learner=cfg.train_batch_size,
            minibatch_size=cfg.minibatch_size,
            num_epochs=cfg.num_epochs,
        )
        .callbacks(callback)
        .debugging(seed=cfg.seed)
    )
