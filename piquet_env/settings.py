"""The env family's one settings object: what game is played and how it pays, validated once.

Every environment of the family takes the same seven options, checked here and nowhere else, so
that a value is accepted or refused the same way by all of them: the AEC env
(:class:`piquet_env.piquet_v0.raw_env`), the Gymnasium adapter
(:class:`piquet_env.adapters.gymnasium.PiquetGymEnv`), the batched engine
(:class:`piquet_env.vector.BatchGame`) and its two envs (:class:`piquet_env.vector.PiquetVectorEnv`,
:class:`piquet_env.vector.SelfPlayEnv`). Each constructor takes ``settings=`` (an
:class:`EnvSettings`) or the options one by one, and builds the object with :func:`env_settings`;
options given beside ``settings`` replace its values. OpenSpiel's parameter specification is the
model: :data:`PARAMETERS` is the table of names, defaults and meanings, and
:meth:`EnvSettings.to_params` / :meth:`EnvSettings.from_params` the flat, JSON-ready form.

>>> s = env_settings(rules="classic", variants=["orbis"], mode="deal", reward="deal_points")
>>> s.rules.name, s.mode, s.reward_scale
('classic+orbis', 'deal', 1.0)
>>> EnvSettings.from_params(s.to_params()) == s
True
>>> env_settings(reward_scale="0.5")
Traceback (most recent call last):
...
piquet_env.rewards.RewardError: reward_scale must be a positive number, got '0.5'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Any

from piquet_env.game.state import MODES, resolve_mode, short_repr
from piquet_env.rewards import REWARDS, check_reward
from piquet_env.rules import STANDARD, Rules, make_rules

__all__ = ["PARAMETERS", "EnvSettings", "SettingsError", "env_settings"]


class SettingsError(ValueError):
    """An env option that does not exist, has the wrong type or is out of range; the message
    names the option."""


@dataclass(frozen=True)
class Parameter:
    """One option of the family: its default and what it means."""

    default: Any
    doc: str


PARAMETERS: Mapping[str, Parameter] = MappingProxyType(
    {
        "rules": Parameter("standard", "a preset name ('classic+orbis') or a Rules object"),
        "variants": Parameter((), "variants added to the rules: a list of names, or one name"),
        "mode": Parameter("partie", "'partie' (the whole partie) or 'deal' (one deal)"),
        "reward": Parameter("result", f"what a player is paid: one of {REWARDS}"),
        "reward_scale": Parameter(1.0, "a positive finite factor on every reward"),
        "dense": Parameter(False, "pay 'deal_points' after every move, not at each deal's end"),
        "settle_weight": Parameter(
            1.0, "under 'deal_points', the weight (>= 0) of the settlement's remainder"
        ),
    }
)
"""The options every env of the family takes, with their defaults (OpenSpiel's parameter
specification); ``episode`` is accepted too, as ``mode``'s former name."""


@dataclass(frozen=True)
class EnvSettings:
    """What game an environment plays and how it pays; build one with :func:`env_settings`.

    ``rules`` (a :class:`~piquet_env.rules.Rules`, variants applied), ``mode`` (``"partie"`` or
    ``"deal"``), ``reward`` (:data:`piquet_env.rewards.REWARDS`), ``reward_scale``, ``dense`` and
    ``settle_weight`` (see :mod:`piquet_env.rewards`). Constructing it directly validates the same
    way: a bad value raises a ``ValueError`` naming the option (:class:`SettingsError`, or
    :class:`~piquet_env.rewards.RewardError` for the four reward options, which
    :func:`piquet_env.rewards.check_reward` owns).
    """

    rules: Rules = STANDARD
    mode: str = "partie"
    reward: str = "result"
    reward_scale: float = 1.0
    dense: bool = False
    settle_weight: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.rules, Rules):
            raise SettingsError(
                f"rules must be a Rules object here (env_settings takes a name), got "
                f"{short_repr(self.rules)}"
            )
        _choice("mode", self.mode, MODES)
        check_reward(
            self.reward, scale=self.reward_scale, settle_weight=self.settle_weight, dense=self.dense
        )
        object.__setattr__(self, "reward_scale", float(self.reward_scale))
        object.__setattr__(self, "settle_weight", float(self.settle_weight))
        object.__setattr__(self, "dense", bool(self.dense))

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants of :attr:`rules`."""
        return self.rules.variants

    def to_params(self) -> dict[str, Any]:
        """The settings as flat JSON values, keyed as :data:`PARAMETERS` (``rules`` as its name,
        which holds the variants and any field set by hand; ``variants`` is left out)."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["rules"] = self.rules.name
        return out

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> EnvSettings:
        """Settings from :meth:`to_params`' form (any subset of :data:`PARAMETERS`, plus
        ``episode``); an unknown key is an error naming it."""
        if not isinstance(params, Mapping):
            raise SettingsError(f"params must be a mapping, got {short_repr(params)}")
        return env_settings(**dict(params))


def env_settings(
    settings: EnvSettings | None = None,
    *,
    rules: str | Rules | None = None,
    variants: str | Iterable[str] | None = None,
    mode: str | None = None,
    reward: str | None = None,
    reward_scale: float | None = None,
    dense: bool | None = None,
    settle_weight: float | None = None,
    episode: str | None = None,
    **unknown: Any,
) -> EnvSettings:
    """The :class:`EnvSettings` of ``settings`` with the options given replacing its values (or
    :data:`PARAMETERS`' defaults, without ``settings``). ``episode`` is ``mode``'s former name;
    an option that does not exist, or a value of the wrong type or out of range, raises
    ``ValueError`` naming it (see :class:`EnvSettings`)."""
    if unknown:
        raise SettingsError(
            f"unknown env option(s) {sorted(unknown)}; the options are {sorted(PARAMETERS)}"
        )
    if settings is not None and not isinstance(settings, EnvSettings):
        raise SettingsError(
            f"settings must be an EnvSettings (see env_settings), got {short_repr(settings)}"
        )
    base = settings if settings is not None else EnvSettings()
    changes: dict[str, Any] = {}
    if rules is not None or variants is not None:
        changes["rules"] = _rules(base.rules if rules is None else rules, variants)
    if mode is not None or episode is not None:
        try:
            mode = resolve_mode(mode, episode)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
    for name, value in (
        ("mode", mode),
        ("reward", reward),
        ("reward_scale", reward_scale),
        ("dense", dense),
        ("settle_weight", settle_weight),
    ):
        if value is not None:
            changes[name] = value
    return replace(base, **changes) if changes else base


def _rules(rules: object, variants: object) -> Rules:
    """``rules`` (a name or :class:`Rules`) with ``variants`` added, or a :class:`SettingsError`."""
    if not isinstance(rules, (str, Rules)):
        raise SettingsError(
            f"rules must be a preset name (such as 'classic+orbis') or a Rules object, got "
            f"{short_repr(rules)}"
        )
    if variants is None:
        variants = ()
    elif not isinstance(variants, str) and (
        isinstance(variants, Mapping)
        or not isinstance(variants, Iterable)
        or not all(isinstance(v, str) for v in variants)
    ):
        raise SettingsError(
            "variants must be a variant name or a list of names (such as ['orbis']), got "
            f"{short_repr(variants)}"
        )
    try:
        return make_rules(rules, variants)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise SettingsError(str(exc)) from None


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    """A :class:`SettingsError` unless ``value`` is one of the strings ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        raise SettingsError(f"{name} must be one of {allowed}, got {short_repr(value)}")
