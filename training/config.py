"""Every hyperparameter of ``piquet train`` in one dataclass, overridable from TOML and the CLI.

The embedded default (``TrainConfig()``) is the run ``piquet train`` makes with no arguments: a
behaviour-cloning warm start from the heuristic agent, then PPO self-play in partie mode, sized to
finish within 15 minutes on 2 CPU cores.

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
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class TrainConfig:
    """All settings of a training run (see the module docstring for how to override them)."""

    # --- run ---------------------------------------------------------------------------------
    seed: int = 0
    """Seeds torch, numpy and python RNGs; every game seed derives from it."""
    rules: str = "standard"
    """Rules preset with variants, e.g. ``"classic+normand"``."""
    mode: str = "partie"
    """``"partie"`` (6 deals with rubicon settlement) or ``"deal"`` (single deals)."""
    out_dir: str = "runs/piquet"
    """Directory for checkpoints, logs, the learning curve and the summary."""
    updates: int = 150
    """PPO updates (each one collects ``games_per_update`` complete games)."""
    max_minutes: float = 8.0
    """Stop PPO early after this many minutes of wall time (0: no limit). Final evaluation
    follows."""
    time_budget_minutes: float = 14.0
    """Wall-time budget of the whole run (0: none). PPO stops early enough for the final
    evaluation to fit, at the speed measured by the evaluation before the first update, and the
    final evaluation shrinks (to no fewer than 20 pairs) if time is short, e.g. on a busy
    machine."""
    torch_threads: int = 1
    """``torch.set_num_threads`` for the run. One thread is fastest for the small batched forward
    passes of self-play, and avoids thread oversubscription when other processes share the cores."""
    progress: bool = True
    """Show a progress bar."""
    tensorboard: bool = True
    """Write TensorBoard event files under ``out_dir/tb``."""

    # --- network -----------------------------------------------------------------------------
    hidden: tuple[int, ...] = (256, 256)
    """Hidden layer widths of the actor's MLP (and of the critic's)."""
    activation: str = "tanh"
    """``"tanh"`` or ``"relu"``."""
    critic: str = "state"
    """``"state"``: an asymmetric critic, a separate MLP over the full-information state (both
    hands, the talon; training only, the actor never sees it), which takes most of the luck of
    the deal out of the advantages. ``"obs"``: the value head shares the actor's trunk."""

    # --- self-play ---------------------------------------------------------------------------
    num_envs: int = 64
    """Games advancing together (one forward pass serves all of them)."""
    games_per_update: int = 64
    """Complete games collected per update (rollouts always start from fresh games)."""
    self_play_weight: float = 0.3
    """Share of games where the learner plays both seats."""
    heuristic_weight: float = 0.5
    """Share of games against the heuristic agent."""
    snapshot_weight: float = 0.15
    """Share of games against a past snapshot of the learner (self-play if the pool is empty)."""
    random_weight: float = 0.05
    """Share of games against the random agent."""
    snapshot_every: int = 10
    """Add a snapshot of the learner to the opponent pool every this many updates."""
    pool_size: int = 6
    """Most snapshots kept in the pool (oldest dropped first)."""
    reward_scale: float = 0.02
    """Reward per point of (own deal score - opponent's)."""
    dense_reward: bool = True
    """Pay deal points as they are scored (leads, tricks, declarations) rather than all at the
    deal's end; the sum per deal is the same, the credit lands on the decision that earned it."""
    settle_weight: float = 0.25
    """Partie mode: weight of the settlement bonus (result minus the deals' differences: the 100
    for winning and the rubicon) added as reward at the partie's end."""

    # --- PPO ---------------------------------------------------------------------------------
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 over ``updates``."""
    gamma: float = 1.0
    gae_lambda: float = 0.8
    update_epochs: int = 4
    num_minibatches: int = 4
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = False
    ent_coef: float = 0.001
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float = 0.0
    """Stop an update's epochs early once the approximate KL exceeds this (0: never)."""

    # --- behaviour-cloning warm start ----------------------------------------------------------
    init_from: str = ""
    """Start from the weights of this checkpoint (file or run directory) instead of a warm start
    (the architecture must match)."""
    bc_games: int = 1000
    """Heuristic-vs-heuristic games whose decisions are imitated before PPO (0: no warm start)."""
    bc_mode: str = "deal"
    """Mode of the warm-start games (deals give more varied positions per second)."""
    bc_epochs: int = 8
    bc_learning_rate: float = 1e-3
    bc_batch_size: int = 256

    # --- evaluation and checkpoints ------------------------------------------------------------
    eval_every: int = 25
    """Evaluate against random and heuristic every this many updates (0: only at the end)."""
    eval_deals: int = 30
    """Duplicate pairs of games (in ``eval_mode``) per periodic evaluation, also run before the
    first update."""
    final_eval_deals: int = 300
    """Duplicate pairs of games in the final evaluation (partie pairs: 12 deals each)."""
    eval_mode: str = "partie"
    """Mode of the evaluation games: ``"partie"`` (the states the default run trains on) or
    ``"deal"``; either way the reported number is the mean point difference per deal."""
    eval_workers: int = 2
    """Processes playing the final evaluation (each loads the saved policy)."""
    eval_opponents: str = "random,heuristic"
    """Comma-separated agent specs the policy is evaluated against."""
    checkpoint_every: int = 10
    """Write ``checkpoints/latest.safetensors`` every this many updates (and at the end)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON/TOML-friendly dict of every field."""
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        """Build a config from :meth:`to_dict` output (or any subset); unknown keys are errors."""
        return _replace_checked(cls(), d, source="config")

    def validate(self) -> TrainConfig:
        """Raise ``ValueError`` naming the first inconsistent setting; return self."""
        from piquet_env.rules import make_rules

        make_rules(self.rules)
        checks = [
            (
                self.mode in ("partie", "deal"),
                f"mode must be 'partie' or 'deal', not {self.mode!r}",
            ),
            (self.bc_mode in ("partie", "deal"), "bc_mode must be 'partie' or 'deal'"),
            (self.eval_mode in ("partie", "deal"), "eval_mode must be 'partie' or 'deal'"),
            (self.activation in ("tanh", "relu"), "activation must be tanh or relu"),
            (self.critic in ("state", "obs"), "critic must be 'state' or 'obs'"),
            (all(h > 0 for h in self.hidden) and self.hidden, "hidden must be positive widths"),
            (self.updates >= 0, "updates must be >= 0"),
            (self.num_envs > 0 and self.games_per_update > 0, "num_envs and games_per_update > 0"),
            (self.num_minibatches > 0 and self.update_epochs > 0, "minibatches and epochs > 0"),
            (
                min(
                    self.self_play_weight,
                    self.heuristic_weight,
                    self.snapshot_weight,
                    self.random_weight,
                )
                >= 0,
                "opponent weights must be >= 0",
            ),
            (
                self.self_play_weight
                + self.heuristic_weight
                + self.snapshot_weight
                + self.random_weight
                > 0,
                "at least one opponent weight must be positive",
            ),
            (
                0 < self.gamma <= 1 and 0 <= self.gae_lambda <= 1,
                "gamma in (0,1], gae_lambda in [0,1]",
            ),
            (self.torch_threads > 0, "torch_threads must be positive"),
            (self.eval_workers > 0, "eval_workers must be positive"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        return self


_HINTS: dict[str, Any] | None = None


def _field_types() -> dict[str, Any]:
    global _HINTS
    if _HINTS is None:
        _HINTS = typing.get_type_hints(TrainConfig)
    return _HINTS


def _coerce(key: str, value: Any, *, from_text: bool) -> Any:
    """Convert ``value`` to the type of field ``key``; raise ValueError naming the key."""
    kind = _field_types()[key]
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true or false")
        if kind is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError("expected an integer")
            return int(value)
        if kind is float:
            if isinstance(value, bool):
                raise ValueError("expected a number")
            return float(value)
        if kind is str:
            if not isinstance(value, str):
                raise ValueError("expected a string")
            return value
        # tuple[int, ...]
        if isinstance(value, str):
            value = [v for v in value.replace("[", "").replace("]", "").split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ValueError("expected a list of integers")
        return tuple(int(v) for v in value)
    except (TypeError, ValueError) as exc:
        how = "text" if from_text else "value"
        raise ValueError(f"config key {key!r}: bad {how} {value!r} ({exc})") from None


def _replace_checked(
    cfg: TrainConfig, updates: dict[str, Any], *, source: str, from_text: bool = False
) -> TrainConfig:
    names = {f.name for f in fields(TrainConfig)}
    changes = {}
    for key, value in updates.items():
        if key not in names:
            raise ValueError(
                f"{source}: unknown config key {key!r} (known keys: {', '.join(sorted(names))})"
            )
        changes[key] = _coerce(key, value, from_text=from_text)
    return dataclasses.replace(cfg, **changes)


def load_toml(path: str | Path, base: TrainConfig | None = None) -> TrainConfig:
    """Config from a TOML file, on top of ``base`` (default: the embedded default).

    Keys may sit at top level or one table deep (``[ppo]``); nested tables and unknown keys are
    errors naming the file and key.
    """
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config file {path} is not valid TOML: {exc}") from None
    flat: dict[str, Any] = {}
    for key, value in doc.items():
        items = value.items() if isinstance(value, dict) else [(key, value)]
        for k, v in items:
            if isinstance(v, dict):
                raise ValueError(f"{path}: table [{key}.{k}] is nested too deep")
            if k in flat:
                raise ValueError(f"{path}: key {k!r} is set twice")
            flat[k] = v
    return _replace_checked(base or TrainConfig(), flat, source=str(path))


def apply_overrides(cfg: TrainConfig, overrides: Iterable[str]) -> TrainConfig:
    """Apply ``key=value`` strings (from ``--set``) to ``cfg``; returns a new config."""
    parsed = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--set expects key=value, got {item!r}")
        parsed[key.strip()] = value.strip()
    return _replace_checked(cfg, parsed, source="--set", from_text=True)


def to_toml(cfg: TrainConfig) -> str:
    """The config as TOML text (``load_toml`` reads it back)."""
    lines = []
    for key, value in cfg.to_dict().items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str):
            text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        elif isinstance(value, list):
            text = "[" + ", ".join(str(v) for v in value) + "]"
        else:
            text = repr(value)
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"
