"""The settings of a training run: one loader for both backends, every value checked at parse time.

:class:`TrainConfig` holds every hyperparameter of ``piquet train`` (the built-in PPO);
:class:`piquet_training.rllib.algo.RLlibConfig` those of ``--backend rllib``. Both are
:class:`Settings` dataclasses and share everything else here: TOML files (``tomllib``, or ``tomli``
on Python 3.10), ``--set KEY=VALUE`` overrides, ``--show-config`` output (TOML, which
:func:`load_toml` reads back), and the checks. The same hyperparameter has the same name in both
(``learning_rate``, ``gae_lambda``, ``clip_coef``, ``ent_coef``, ``vf_coef``, ``max_grad_norm``,
``update_epochs``, ``updates``, ``mode``, ``torch_threads``); RLlib's own names (``lr``,
``lambda_``, ``clip_param``, ``entropy_coeff``, ``vf_loss_coeff``, ``grad_clip``, ``num_epochs``,
``iterations``, ``episode``, ``learner_threads``) are accepted as aliases of them, so old files and
checkpoints still load, and are translated back only where the RLlib ``PPOConfig`` is built.

Every field declares its range (:func:`setting`); a value out of range, of the wrong type, or an
unknown key raises :class:`ConfigError` naming the field (and the file or ``--set``), before any
work starts.

The embedded default (``TrainConfig()``) is the run ``piquet train`` makes with no arguments: a
behaviour-cloning warm start from the heuristic agent, then PPO self-play in partie mode on the
batched engine (512 parties per update against itself, its snapshots and the random agent), sized
to finish within 15 minutes on 2 CPU cores. ``training/long.toml`` is a longer recipe.

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
piquet_training.config.ConfigError: --set: clip_coef must be a number > 0, got -1.0
"""

from __future__ import annotations

import dataclasses
import math
import sys
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from piquet_env.game.state import MODES
from piquet_env.rewards import REWARDS

__all__ = [
    "ConfigError",
    "Settings",
    "TrainConfig",
    "apply_overrides",
    "load_toml",
    "replace_checked",
    "setting",
    "to_toml",
]


class ConfigError(ValueError):
    """A setting that is unknown, of the wrong type or out of range (the message names it)."""


# ------------------------------------------------------------------------------ rules of values


@dataclass(frozen=True)
class Rule:
    """What values a setting accepts: ``ok(value)`` and its description for error messages
    (``explain(value)``, when given, adds why a value was refused)."""

    description: str
    ok: Callable[[Any], bool]
    explain: Callable[[Any], str] | None = None


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def at_least(low: float, kind: str = "a number") -> Rule:
    """Finite and ``>= low``."""
    return Rule(f"{kind} >= {low:g}", lambda v: _finite(v) and v >= low)


def above(low: float, kind: str = "a number") -> Rule:
    """Finite and ``> low``."""
    return Rule(f"{kind} > {low:g}", lambda v: _finite(v) and v > low)


def between(low: float, high: float, *, open_low: bool = False) -> Rule:
    """Finite and in ``[low, high]`` (``(low, high]`` with ``open_low``)."""
    bracket = "(" if open_low else "["
    return Rule(
        f"a number in {bracket}{low:g}, {high:g}]",
        lambda v: _finite(v) and (v > low if open_low else v >= low) and v <= high,
    )


def integer(low: int, high: int | None = None) -> Rule:
    """An integer (not a bool) ``>= low`` (and ``<= high``)."""
    text = f"an integer >= {low}" if high is None else f"an integer in {low}..{high}"
    return Rule(
        text,
        lambda v: (
            isinstance(v, int)
            and not isinstance(v, bool)
            and v >= low
            and (high is None or v <= high)
        ),
    )


def one_of(*choices: str) -> Rule:
    """One of the given strings."""
    return Rule(f"one of {', '.join(map(repr, choices))}", lambda v: v in choices)


ANY = Rule("any value", lambda v: True)


def _positive_widths(v: Any) -> bool:
    return bool(v) and all(isinstance(h, int) and 0 < h <= 65536 for h in v)


WIDTHS = Rule("a non-empty list of layer widths in 1..65536", _positive_widths)


def _rules_problem(v: Any) -> str:
    """Why ``v`` names no rules preset ("" if it names one)."""
    from piquet_env.rules import make_rules

    try:
        make_rules(v)
    except (ValueError, TypeError) as exc:
        return str(exc)
    return ""


RULES_PRESET = Rule(
    "a rules preset such as 'standard', 'classic' or 'classic+normand'",
    lambda v: not _rules_problem(v),
    _rules_problem,
)


def _output_dir(v: Any) -> bool:
    """Whether ``v`` names a directory that exists or can be made (no file in the way)."""
    if not isinstance(v, str) or not v.strip():
        return False
    path = Path(v)
    for p in (path, *path.parents):
        if p.exists():
            return p.is_dir()
    return True


OUTPUT_DIR = Rule("a directory path with no regular file in the way", _output_dir)


def setting(default: Any, rule: Rule = ANY, *, aliases: tuple[str, ...] = ()) -> Any:
    """A dataclass field with its accepted range (and any old names it is still read under)."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("mutable defaults are not settings")
    return dataclasses.field(default=default, metadata={"rule": rule, "aliases": aliases})


# ------------------------------------------------------------------------------ the loader

S = TypeVar("S", bound="Settings")


class Settings:
    """Base of the settings dataclasses: parsing, checking, TOML in and out."""

    NAME: ClassVar[str] = "config"
    """What the settings are called in messages."""
    RETIRED: ClassVar[tuple[str, ...]] = ()
    """Aliases of settings that replaced an older one: read when alone, ignored beside the new
    name (older checkpoints hold both)."""

    @classmethod
    def field_names(cls) -> list[str]:
        """Every field name, in declaration order."""
        return [f.name for f in fields(cls)]  # type: ignore[arg-type]

    @classmethod
    def aliases(cls) -> dict[str, str]:
        """Old or other-backend names accepted for each field: alias -> field name."""
        out = {}
        for f in fields(cls):  # type: ignore[arg-type]
            for alias in f.metadata.get("aliases", ()):
                out[alias] = f.name
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON/TOML-friendly dict of every field (tuples as lists)."""
        d = dataclasses.asdict(self)  # type: ignore[call-overload]
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    @classmethod
    def from_dict(cls: type[S], d: dict[str, Any], *, source: str = "config") -> S:
        """Settings from :meth:`to_dict` output (or any subset, aliases allowed), checked."""
        if not isinstance(d, dict):
            raise ConfigError(f"{source}: expected a table of settings, got {type(d).__name__}")
        return replace_checked(cls(), d, source=source).validate()

    def validate(self: S) -> S:
        """Check every field against its rule, then :meth:`check_together`; return ``self``."""
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            _check_rule(self, f.name, value, source=self.NAME)
        self.check_together()
        return self

    def check_together(self) -> None:
        """Checks that involve several fields (raise :class:`ConfigError`); none by default."""


def _check_rule(cfg: Settings, name: str, value: Any, *, source: str, label: str = "") -> None:
    """Raise :class:`ConfigError` unless ``value`` suits field ``name`` (called ``label``, the
    name the user wrote, in the message)."""
    rule: Rule = _field(type(cfg), name).metadata.get("rule", ANY)
    if not rule.ok(value):
        why = f" ({rule.explain(value)})" if rule.explain is not None else ""
        raise ConfigError(
            f"{source}: {label or name} must be {rule.description}, got {value!r}{why}"
        )


def _field(cls: type, name: str) -> dataclasses.Field:
    return {f.name: f for f in fields(cls)}[name]


def _coerce(
    cls: type, key: str, value: Any, *, from_text: bool, source: str, label: str = ""
) -> Any:
    """Convert ``value`` to the declared type of field ``key``; ConfigError naming it."""
    kind = typing.get_type_hints(cls)[key]
    try:
        return _convert(kind, value, from_text)
    except (TypeError, ValueError) as exc:
        how = "text" if from_text else "value"
        raise ConfigError(
            f"{source}: config key {label or repr(key)}: bad {how} {value!r} ({exc})"
        ) from None


def _convert(kind: Any, value: Any, from_text: bool) -> Any:
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in args:
        if value is None or (from_text and str(value).strip().lower() in ("", "none", "null")):
            return None
        kind = next(a for a in args if a is not type(None))
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
        if isinstance(value, str) and not from_text:
            raise ValueError("expected an integer")
        return int(value)
    if kind is float:
        if isinstance(value, bool) or (isinstance(value, str) and not from_text):
            raise ValueError("expected a number")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise ValueError("expected a string")
        return value
    if typing.get_origin(kind) is tuple:
        if isinstance(value, str):
            value = [v for v in value.replace("[", "").replace("]", "").split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ValueError("expected a list of integers")
        return tuple(_convert(int, v, from_text or isinstance(v, str)) for v in value)
    if typing.get_origin(kind) is dict or kind is dict:
        if not isinstance(value, dict):
            raise ValueError("expected a table")
        return dict(value)
    raise ValueError(f"cannot set a {kind} from a config")


def replace_checked(cfg: S, updates: dict[str, Any], *, source: str, from_text: bool = False) -> S:
    """``cfg`` with ``updates`` (field names or aliases) converted to the fields' types and
    checked against their rules; ``source`` (a file, ``--set``) is named in errors."""
    cls = type(cfg)
    names = set(cls.field_names())
    aliases = cls.aliases()
    changes: dict[str, Any] = {}
    # Canonical names first, so that a retired alias beside its field's new name is dropped.
    for key, value in sorted(updates.items(), key=lambda kv: kv[0] in aliases):
        name = aliases.get(key, key)
        if name not in names:
            raise ConfigError(
                f"{source}: unknown config key {key!r} (known keys: {', '.join(sorted(names))})"
            )
        if name in changes:
            if key in cls.RETIRED:
                continue
            raise ConfigError(f"{source}: {name!r} is set twice (as {key!r} too)")
        label = f"{key} ({name})" if key != name else ""
        changes[name] = _coerce(
            cls,
            name,
            value,
            from_text=from_text,
            source=source,
            label=f"{key!r} ({name})" if label else "",
        )
        _check_rule(cfg, name, changes[name], source=source, label=label)
    return dataclasses.replace(cfg, **changes)  # type: ignore[type-var]


def load_toml(path: str | Path, base: S | None = None, cls: type[Settings] | None = None) -> Any:
    """Settings from a TOML file, on top of ``base`` (default: ``cls()``, ``TrainConfig()``).

    Keys may sit at top level or one table deep (``[ppo]``); nested tables, unknown keys and bad
    values are :class:`ConfigError` naming the file and key.
    """
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    flat: dict[str, Any] = {}
    for key, value in doc.items():
        items = value.items() if isinstance(value, dict) else [(key, value)]
        for k, v in items:
            if isinstance(v, dict) and k != "extra":
                raise ConfigError(f"{path}: table [{key}.{k}] is nested too deep")
            if k in flat:
                raise ConfigError(f"{path}: key {k!r} is set twice")
            flat[k] = v
    if base is None:
        base = (cls or TrainConfig)()  # type: ignore[assignment]
    return replace_checked(base, flat, source=str(path))


def apply_overrides(cfg: S, overrides: Iterable[str]) -> S:
    """Apply ``key=value`` strings (from ``--set``) to ``cfg``; returns a new config."""
    parsed = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects key=value, got {item!r}")
        parsed[key.strip()] = value.strip()
    return replace_checked(cfg, parsed, source="--set", from_text=True)


def to_toml(cfg: Settings) -> str:
    """The settings as TOML text (:func:`load_toml` reads it back); ``None`` fields are left
    out (TOML has no null: absent means the default)."""
    lines = []
    tables = []
    for key, value in cfg.to_dict().items():
        if value is None:
            continue
        if isinstance(value, dict):
            if value:
                tables.append((key, value))
            continue
        lines.append(f"{key} = {_toml_value(value)}")
    for key, table in tables:
        lines.append(f"\n[{key}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


# ------------------------------------------------------------------------------ TrainConfig

MODE = one_of(*MODES)


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


AGENT_SPECS = Rule(
    "comma-separated agent specs (random, heuristic, mcts:N or a checkpoint path)",
    lambda v: not _specs_problem(v),
    _specs_problem,
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
class TrainConfig(Settings):
    """All settings of a training run (see the module docstring for how to override them)."""

    NAME: ClassVar[str] = "config"
    RETIRED: ClassVar[tuple[str, ...]] = ("max_minutes",)

    # --- run ---------------------------------------------------------------------------------
    seed: int = setting(0, integer(0))
    """Seeds torch, numpy and python RNGs; every game seed derives from it."""
    rules: str = setting("standard", RULES_PRESET)
    """Rules preset with variants, e.g. ``"classic+normand"``."""
    mode: str = setting("partie", MODE, aliases=("episode",))
    """``"partie"`` (6 deals with rubicon settlement) or ``"deal"`` (single deals)."""
    out_dir: str = setting("runs/piquet", OUTPUT_DIR)
    """Directory for checkpoints, logs, the learning curve and the summary."""
    updates: int = setting(420, integer(0), aliases=("iterations",))
    """PPO updates (each one collects ``games_per_update`` complete games)."""
    env_steps: int = setting(0, integer(0))
    """Stop after the update that brings the run to this many env steps (0: after ``updates``
    alone). Like ``updates``, a count: the run is the same on any machine."""
    time_budget_minutes: float = setting(0.0, at_least(0), aliases=("max_minutes",))
    """A cap on the run's wall time (0, the default: none). It never changes what the run
    computes: a run that would pass it stops before the next update, saying how many of its
    ``updates`` it made and that its policy is not the configured run's (``--resume`` finishes
    it exactly). (``max_minutes``, an older name, is read as this.)"""
    torch_threads: int = setting(2, integer(1, 1024), aliases=("learner_threads",))
    """``torch.set_num_threads`` for self-play and the update (idle threads spin briefly:
    :data:`piquet_training.SPIN_COUNT`). Evaluation worker processes share these threads (at
    least one each), and evaluation in the run's process uses one. Runs match bit for bit only at
    the same thread count."""
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
    (:mod:`piquet_training.compute`): ``"bf16"`` (autocast; weights and optimizer stay float32),
    ``"fp32"``, or ``"auto"``: bf16 where the device computes it natively (AVX512-BF16 or AMX
    CPUs, recent GPUs). Evaluation plays in float32."""

    # --- network -----------------------------------------------------------------------------
    hidden: tuple[int, ...] = setting((256, 256), WIDTHS)
    """Hidden layer widths of the actor's MLP (and of the critic's)."""
    activation: str = setting("tanh", one_of("tanh", "relu"))
    """``"tanh"`` or ``"relu"``."""
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
    reward: str = setting("deal_points", one_of(*REWARDS))
    """Reward mode (:mod:`piquet_env.rewards`): ``"deal_points"``, ``"result"`` or ``"win"``."""
    reward_scale: float = setting(0.02, above(0))
    """Reward per point of (own deal score - opponent's)."""
    dense_reward: bool = setting(True)
    """Under ``"deal_points"``: pay deal points as they are scored (leads, tricks, declarations)
    rather than all at the deal's end; the sum per deal is the same, the credit lands on the
    decision that earned it."""
    settle_weight: float = setting(0.25, at_least(0))
    """Under ``"deal_points"`` in partie mode: weight of the settlement's remainder (result minus
    the deals' differences: the 100 for winning and the rubicon) paid at the partie's end."""

    # --- PPO ---------------------------------------------------------------------------------
    learning_rate: float = setting(1e-3, above(0), aliases=("lr",))
    """Adam's step size. 1e-3 with one epoch learned more per env step than the earlier 3e-4 with
        two, whose steps were too small (docs/results/training.md)."""
    anneal_lr: bool = setting(True)
    """Decay the learning rate linearly to 0 over ``updates``."""
    gamma: float = setting(1.0, between(0, 1, open_low=True))
    gae_lambda: float = setting(0.8, between(0, 1), aliases=("lambda_",))
    update_epochs: int = setting(1, integer(1, 1000), aliases=("num_epochs",))
    """Passes over each rollout. One epoch over a fresh rollout each update learned as much per
    env step as two at the same learning rate, faster: each epoch costs about as much as the
        collection itself (docs/results/training.md)."""
    num_minibatches: int = setting(16, integer(1, 100_000))
    norm_adv: bool = setting(True)
    clip_coef: float = setting(0.2, above(0), aliases=("clip_param",))
    clip_vloss: bool = setting(False)
    ent_coef: float = setting(0.001, at_least(0), aliases=("entropy_coeff",))
    """The entropy bonus's weight (at the start, under ``ent_schedule``)."""
    ent_schedule: str = setting("constant", SCHEDULE)
    """How ``ent_coef`` changes over the run (:func:`piquet_training.magnet.scheduled`):
    ``constant``, ``linear`` to ``ent_coef_end``, or ``power`` (``ent_coef * (1 + update) **
    -ent_power``)."""
    ent_coef_end: float = setting(0.0, at_least(0))
    """``ent_coef`` at the run's end under the ``linear`` schedule."""
    ent_power: float = setting(0.5, at_least(0))
    """The exponent of the ``power`` schedule of ``ent_coef``."""
    vf_coef: float = setting(0.5, at_least(0), aliases=("vf_loss_coeff",))
    max_grad_norm: float = setting(0.5, above(0), aliases=("grad_clip",))
    target_kl: float = setting(0.0, at_least(0))

    # --- regularised self-play: a magnet (magnetic mirror descent) ---------------------------
    magnet: str = setting("", MAGNET)
    """The policy the learner is pulled toward by ``magnet_coef * KL(pi || magnet)``
    (:mod:`piquet_training.magnet`): empty (no pull), ``uniform`` (the uniform policy over the
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
    """Stop an update's epochs early once the approximate KL exceeds this (0: never)."""

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
    final_eval_deals: int = setting(300, integer(0))
    """Duplicate pairs of games in the final evaluation (partie pairs: 12 deals each; 0: none)."""
    eval_mode: str = setting("partie", MODE)
    """Mode of the evaluation games: ``"partie"`` (the states the default run trains on) or
    ``"deal"``; either way the reported number is the mean point difference per deal."""
    eval_workers: int = setting(2, integer(1, 256))
    """Processes playing the final evaluation (each loads the saved policy)."""
    eval_opponents: str = setting("random,heuristic", AGENT_SPECS)
    """Comma-separated agent specs the policy is evaluated against."""
    exact_every: int = setting(0, integer(0))
    """Measure the policy's exact NashConv (:mod:`piquet_env.exact`: sampled, as it trains, and
    greedy, as it plays by default) every this many updates, before the first and at the end,
    into ``exact.csv`` (0: never). Only for rules small enough to enumerate (``mini``); the game
    is one deal, whatever ``mode`` the run trains in."""
    checkpoint_every: int = setting(10, integer(1, 1_000_000))
    """Write ``checkpoints/latest.safetensors`` every this many updates (and at the end)."""

    def check_together(self) -> None:
        """Without a fixed ``opponent``, the opponent weights must have a positive sum; exact
        measurements need rules small enough to enumerate."""
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
        if self.opponent:
            return
        weights = (
            self.self_play_weight,
            self.heuristic_weight,
            self.snapshot_weight,
            self.random_weight,
        )
        if sum(weights) <= 0:
            raise ConfigError(
                f"{self.NAME}: at least one of self_play_weight, heuristic_weight, "
                f"snapshot_weight and random_weight must be positive"
            )
