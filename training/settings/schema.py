"""Typed, checked settings: the machinery behind every run config (no run's settings live here).

A settings class is a dataclass deriving from :class:`Settings` whose fields are declared with
:func:`setting`: a default, a :class:`Rule` of accepted values and any older names (aliases). The
same code then serves every such class: TOML files (``tomllib``, or ``tomli`` on Python 3.10) at
top level or one table deep (:func:`load_toml`), ``KEY=VALUE`` overrides parsed by the field's
type (:func:`apply_overrides`), TOML output (:func:`to_toml`, which :func:`load_toml` reads back)
and the checks. A value out of range, of the wrong type, or an unknown key raises
:class:`ConfigError` naming the field (and the file, or :data:`OVERRIDES`), before any work
starts.

A subclass may give an inherited field its own default without declaring it again, in
``DEFAULTS`` (the field keeps its rule, aliases and place): that is how the two training backends
share one declaration of each PPO setting (:class:`piquet_training.settings.train.PPOSettings`).

>>> from dataclasses import dataclass
>>> @dataclass
... class Demo(Settings):
...     width: int = setting(8, integer(1, 64), aliases=("size",))
>>> apply_overrides(Demo(), ["size=16"]).width
16
>>> @dataclass
... class Wide(Demo):
...     DEFAULTS = {"width": 32}
>>> Wide().width, Wide.field_names()
(32, ['width'])
>>> apply_overrides(Demo(), ["width=0"])
Traceback (most recent call last):
...
piquet_training.settings.schema.ConfigError: overrides: width must be an integer in 1..64, got 0
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
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

from piquet_env.errors import Message, Setting
from piquet_env.game.state import MODES
from piquet_env.untrusted import UntrustedError, read_regular_file

MAX_INT = 2**62
"""The largest integer a setting takes: within the 64-bit integers numpy and torch hold, with
room for the offsets the seed streams add (:mod:`piquet_training.seeds`); a seed of ``10**30``
would pass any rule of its own and fail deep in training."""

__all__ = [
    "ANY",
    "MAX_CONFIG_BYTES",
    "MAX_INT",
    "MODE",
    "OUTPUT_DIR",
    "OVERRIDES",
    "RULES_PRESET",
    "WIDTHS",
    "ConfigError",
    "Rule",
    "Settings",
    "above",
    "apply_overrides",
    "at_least",
    "between",
    "integer",
    "load_toml",
    "one_of",
    "replace_checked",
    "setting",
    "to_toml",
]


class ConfigError(ValueError):
    """A setting that is unknown, of the wrong type or out of range (the message names it)."""


OVERRIDES = Setting("overrides")
"""The source that errors name for :func:`apply_overrides`' ``KEY=VALUE`` strings."""


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
    """An integer (not a bool) ``>= low`` (and ``<= high``), never beyond :data:`MAX_INT`."""
    text = f"an integer >= {low}" if high is None else f"an integer in {low}..{high}"
    top = MAX_INT if high is None else min(high, MAX_INT)
    return Rule(
        text,
        lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= top,
        lambda v: "beyond 2^62" if isinstance(v, int) and v > MAX_INT else "",
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

MODE = one_of(*MODES)


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
    DEFAULTS: ClassVar[dict[str, Any]] = {}
    """This class's own defaults of fields it inherits (each keeps its rule, aliases and place)."""
    RETIRED: ClassVar[tuple[str, ...]] = ()
    """Aliases of settings that replaced an older one: read when alone, ignored beside the new
    name (older checkpoints hold both)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Turn ``DEFAULTS`` into redeclared fields before ``@dataclass`` reads the class."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("DEFAULTS", {})
        if not own:
            return
        inherited = {f.name: f for f in fields(cls)} if dataclasses.is_dataclass(cls) else {}
        annotations = dict(inspect.get_annotations(cls))
        for name, default in own.items():
            if name not in inherited:
                raise TypeError(f"{cls.__name__}.DEFAULTS: {name!r} is no inherited setting")
            base = inherited[name]
            annotations[name] = base.type
            meta = base.metadata
            setattr(cls, name, setting(default, meta["rule"], aliases=meta["aliases"]))
        cls.__annotations__ = annotations

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
    def from_dict(cls: type[S], d: dict[str, Any], *, source: str | Setting = "config") -> S:
        """Settings from :meth:`to_dict` output (or any subset, aliases allowed), checked."""
        if not isinstance(d, dict):
            raise ConfigError(
                Message(source, f": expected a table of settings, got {type(d).__name__}")
            )
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


def _check_rule(
    cfg: Settings, name: str, value: Any, *, source: str | Setting, label: str = ""
) -> None:
    """Raise :class:`ConfigError` unless ``value`` suits field ``name`` (called ``label``, the
    name the user wrote, in the message)."""
    rule: Rule = _field(type(cfg), name).metadata.get("rule", ANY)
    if not rule.ok(value):
        explained = rule.explain(value) if rule.explain is not None else ""
        why = f" ({explained})" if explained else ""
        raise ConfigError(
            Message(
                source,
                f": {label or name} must be {rule.description}, got {_cut(repr(value))}{why}",
            )
        )


def _field(cls: type, name: str) -> dataclasses.Field:
    return {f.name: f for f in fields(cls)}[name]


def _coerce(
    cls: type, key: str, value: Any, *, from_text: bool, source: str | Setting, label: str = ""
) -> Any:
    """Convert ``value`` to the declared type of field ``key``; ConfigError naming it."""
    kind = typing.get_type_hints(cls)[key]
    try:
        return _convert(kind, value, from_text)
    except (TypeError, ValueError) as exc:
        how = "text" if from_text else "value"
        raise ConfigError(
            Message(
                source,
                f": config key {label or repr(key)}: bad {how} {_cut(repr(value))} "
                f"({_cut(str(exc))})",
            )
        ) from None


def _cut(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters (a 5,000-digit value is never echoed whole)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        number = int(value)
        if not -MAX_INT <= number <= MAX_INT:
            raise ValueError("beyond 2^62")
        return number
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


def replace_checked(
    cfg: S, updates: dict[str, Any], *, source: str | Setting, from_text: bool = False
) -> S:
    """``cfg`` with ``updates`` (field names or aliases) converted to the fields' types and
    checked against their rules; ``source`` (a file, :data:`OVERRIDES`) is named in errors."""
    cls = type(cfg)
    names = set(cls.field_names())
    aliases = cls.aliases()
    changes: dict[str, Any] = {}
    # Canonical names first, so that a retired alias beside its field's new name is dropped.
    for key, value in sorted(updates.items(), key=lambda kv: kv[0] in aliases):
        name = aliases.get(key, key)
        if name not in names:
            raise ConfigError(
                Message(
                    source,
                    f": unknown config key {key!r} (known keys: {', '.join(sorted(names))})",
                )
            )
        if name in changes:
            if key in cls.RETIRED:
                continue
            raise ConfigError(Message(source, f": {name!r} is set twice (as {key!r} too)"))
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


MAX_CONFIG_BYTES = 1 << 20
"""The largest config file read (1 MiB; a recipe is some 2 KiB)."""


def load_toml(path: str | Path, base: S) -> S:
    """Settings from a TOML file, on top of ``base`` (the settings it changes).

    The file must be a regular file of at most :data:`MAX_CONFIG_BYTES` (a FIFO, a device such as
    a link to ``/dev/zero``, or a larger file is refused before it is read). Keys may sit at top
    level or one table deep (``[ppo]``); nested tables, unknown keys and bad values are
    :class:`ConfigError` naming the file and key.
    """
    path = Path(path)
    try:
        text = read_regular_file(path, MAX_CONFIG_BYTES, "a config file").decode("utf-8")
        doc = tomllib.loads(text)
    except UntrustedError as exc:
        if not os.path.lexists(path):
            raise ConfigError(f"config file {path} does not exist") from None
        raise ConfigError(f"config file {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} cannot be read: {exc}") from None
    except RecursionError:
        raise ConfigError(f"config file {path} is not valid TOML: nested too deeply") from None
    except ValueError as exc:  # TOMLDecodeError, or an integer of more digits than Python reads
        raise ConfigError(f"config file {path} is not valid TOML: {_cut(str(exc))}") from None
    flat: dict[str, Any] = {}
    for key, value in doc.items():
        items = value.items() if isinstance(value, dict) else [(key, value)]
        for k, v in items:
            if isinstance(v, dict) and k != "extra":
                raise ConfigError(f"{path}: table [{key}.{k}] is nested too deep")
            if k in flat:
                raise ConfigError(f"{path}: key {k!r} is set twice")
            flat[k] = v
    return replace_checked(base, flat, source=str(path))


def apply_overrides(cfg: S, overrides: Iterable[str]) -> S:
    """Apply ``key=value`` strings (``overrides``, the command line's ``--set``) to ``cfg``;
    returns a new config. Their errors name the source :data:`OVERRIDES`."""
    parsed = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(Message(OVERRIDES, f" expects key=value, got {item!r}"))
        parsed[key.strip()] = value.strip()
    return replace_checked(cfg, parsed, source=OVERRIDES, from_text=True)


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
