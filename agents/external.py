"""Agents written elsewhere, named by a spec: ``py:MODULE:FACTORY`` or ``py:FILE.py:FACTORY``.

The spec imports ``MODULE`` (a dotted name on ``sys.path``) or runs ``FILE.py`` as a module, then
calls its ``FACTORY(rules, seed)``, which returns an :class:`~piquet_env.agent.Agent` (an object
with ``name``, ``reset(seed)`` and ``act(turn)``). Options after it, ``:KEY=VALUE`` each, are
passed as keyword arguments, their values as strings: ``py:my_agent.py:make:weights=w.pt``
calls ``make(rules, seed, weights="w.pt")`` (a value may hold ``:``; it runs up to the next
``:KEY=``). Every command that takes an agent spec then
takes the agent: ``piquet eval py:my_agent.py:make baseline``, ``piquet benchmark``, ``piquet
ladder``, ``piquet exploit``, and evaluation workers, which rebuild it from the spec in each
process. The spec runs the code it names, as ``python FILE.py`` would: name only code you trust.

The file or module is what identifies the agent beyond its spec (:func:`source_file`, which the
ladder's record checksums as it does a checkpoint).

>>> from piquet_env.rules import STANDARD
>>> make_external("py:no_such_module_xyz:make", STANDARD)
Traceback (most recent call last):
...
piquet_agents.external.ExternalAgentError: cannot import 'no_such_module_xyz': No module named ...

(:func:`piquet_agents.registry.make_agent` raises it as its ``AgentSpecError``, naming the spec.)
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
import sys
from types import ModuleType

from piquet_env.agent import Agent
from piquet_env.rules import Rules

PREFIX = "py:"
"""How an external agent's spec starts."""
FORM = "py:MODULE:FACTORY or py:FILE.py:FACTORY, then :KEY=VALUE options"
"""The forms of the spec, as help texts write them."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class ExternalAgentError(ValueError):
    """A ``py:`` spec that builds no agent; the message says what is wrong (the registry names
    the spec before it)."""


def is_external(spec: str) -> bool:
    """Whether ``spec`` has the ``py:`` form (case-insensitive).

    >>> is_external("py:my_agent.py:make"), is_external("heuristic")
    (True, False)
    """
    return isinstance(spec, str) and spec.strip()[: len(PREFIX)].lower() == PREFIX


_OPTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _split(spec: str) -> tuple[str, str, dict[str, str]]:
    """``(MODULE or FILE, FACTORY, options)`` of a ``py:`` spec; :class:`ExternalAgentError` if
    malformed. FACTORY is the first ``:``-separated part that is a Python name after a valid
    MODULE or FILE (a path may hold ``:``, as ``C:/...``) with nothing or options after it; an
    option's value runs up to the next ``:KEY=``."""
    parts = spec.strip()[len(PREFIX) :].split(":")
    for i in range(1, len(parts)):
        where, factory, rest = ":".join(parts[:i]).strip(), parts[i].strip(), parts[i + 1 :]
        if not _NAME.fullmatch(factory) or (rest and not _OPTION.match(rest[0].strip())):
            continue
        if not (where.endswith(".py") or _DOTTED.fullmatch(where)):
            continue
        options: dict[str, str] = {}
        key = ""
        for part in rest:
            if _OPTION.match(part.strip()):
                key, _, value = part.strip().partition("=")
                if key in options:
                    raise ExternalAgentError(f"option {key} given twice")
                options[key] = value
            else:  # a value holding ':' (C:/weights)
                options[key] += ":" + part
        return where, factory, options
    raise ExternalAgentError(
        f"expected {FORM}, FACTORY a Python name, MODULE a dotted name or FILE a .py file"
    )


def source_file(spec: str) -> str | None:
    """The file a ``py:`` spec runs (its ``.py`` file, or the module's source file), or None if it
    cannot be found without importing it (or the spec is malformed)."""
    try:
        where, _, _ = _split(spec)
    except ExternalAgentError:
        return None
    if where.endswith(".py"):
        return os.path.abspath(where) if os.path.isfile(where) else None
    try:
        found = importlib.util.find_spec(where)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None)
    return origin if origin and os.path.isfile(origin) else None


def _load_file(path: str) -> ModuleType:
    """Run ``path`` once per process as a module of its own (a name made from its path, so two
    files of the same name do not collide), kept in ``sys.modules``."""
    if not os.path.isfile(path):
        raise ExternalAgentError(f"no Python file at {path!r}")
    full = os.path.abspath(path)
    digest = hashlib.sha256(full.encode()).hexdigest()[:12]
    name = f"piquet_external_{re.sub(r'[^A-Za-z0-9_]', '_', os.path.basename(full)[:-3])}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    found = importlib.util.spec_from_file_location(name, full)
    if found is None or found.loader is None:  # pragma: no cover - a .py file always loads
        raise ExternalAgentError(f"cannot load {path!r} as Python")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module
    try:
        found.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def make_external(spec: str, rules: Rules | None = None, seed: int | None = None) -> Agent:
    """The agent of a ``py:`` spec: its module imported (or file run), ``FACTORY(rules, seed)``
    called, the result checked to be an :class:`~piquet_env.agent.Agent`.

    Raises :class:`ExternalAgentError` saying what is wrong: a malformed spec, no such file or
    module, an error while importing it (its message), no ``FACTORY`` there or not a callable,
    the call failing, or something returned that is no agent.
    """
    from piquet_env.rules import STANDARD

    where, factory, options = _split(spec)
    try:
        module = _load_file(where) if where.endswith(".py") else importlib.import_module(where)
    except ExternalAgentError:
        raise
    except ModuleNotFoundError as exc:
        raise ExternalAgentError(f"cannot import {where!r}: {exc}") from exc
    except Exception as exc:
        reason = f"importing {where!r} failed: {type(exc).__name__}: {exc}"
        raise ExternalAgentError(reason) from exc
    make = getattr(module, factory, None)
    if make is None:
        raise ExternalAgentError(f"{where!r} has no {factory!r}")
    if not callable(make):
        raise ExternalAgentError(f"{where}:{factory} is not callable")
    call = f"{factory}(rules, seed{''.join(f', {k}=...' for k in options)})"
    try:
        agent = make(rules if rules is not None else STANDARD, seed, **options)
    except Exception as exc:
        raise ExternalAgentError(f"{call} failed: {type(exc).__name__}: {exc}") from exc
    missing = [attr for attr in ("name", "reset", "act") if not hasattr(agent, attr)]
    if missing or not callable(agent.act) or not callable(agent.reset):
        raise ExternalAgentError(
            f"{call} returned {type(agent).__name__}, not an agent "
            f"(it needs name, reset(seed) and act(turn); missing: {', '.join(missing) or 'none'})",
        )
    return agent
