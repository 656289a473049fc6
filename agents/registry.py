"""Build agents from short text specs, as the command line and the evaluation workers do.

Specs: ``random``, ``heuristic``, ``mcts`` or ``mcts:ITERATIONS`` (optionally followed by
``:key=value`` options of :class:`~piquet_agents.mcts.MCTSAgent`, e.g. ``mcts:400:c=0.5`` or
``mcts:0:time=0.2``), ``mcts:N:policy=PATH`` (the search guided by a trained policy,
:class:`~piquet_agents.guided_search.GuidedSearchAgent`, options ``batch``, ``mix`` and
``margin``; ``policy=baseline`` for the shipped one), ``baseline`` (the policy shipped in the
package, :mod:`piquet_agents.baseline`), or the path of a policy checkpoint or run directory
(loaded by :meth:`piquet_agents.policy.PolicyAgent.load`). A spec that cannot be built raises
:class:`AgentSpecError` saying ``agent spec '<spec>': <what is wrong>``.

>>> from piquet_env.rules import STANDARD
>>> make_agent("random", STANDARD, seed=1).name
'random'
>>> make_agent("mcts:50", STANDARD).name
'mcts:50'
>>> make_agent("mcts:-3", STANDARD)
Traceback (most recent call last):
...
piquet_agents.registry.AgentSpecError: agent spec 'mcts:-3': iterations must be a positive ...
"""

from __future__ import annotations

import math
import os

from piquet_env.agent import Agent
from piquet_env.rules import Rules

SPEC_FORMS = (
    "random, heuristic, mcts[:ITERATIONS[:OPTION=VALUE...]] (mcts:N:policy=PATH for the search "
    "guided by a policy), baseline or a checkpoint path"
)
"""The forms of a spec, as error messages list them."""
MCTS_OPTIONS = {"c": "c", "time": "time_limit", "rollout": "rollout", "scale": "scale"}
"""Options of an ``mcts`` spec and the :class:`~piquet_agents.mcts.MCTSAgent` argument each
sets."""
GUIDED_OPTIONS = ("policy", "batch", "mix", "margin")
"""Options of an ``mcts:N:policy=PATH`` spec (the search guided by a trained policy,
:class:`~piquet_agents.guided_search.GuidedSearchAgent`), each its argument of that name."""
REMOVED_GUIDED_OPTIONS = {
    "search": "the search is the flat one (search=tree gained nothing on its policy)",
    "playout": "the playouts are the policy's own (playout=heuristic gained nothing)",
    "exchange": "the exchange is searched card by card (exchange=plan and exchange=value gained "
    "nothing; mcts:N plans whole discards)",
    "c": "it was the PUCT constant of search=tree",
    "depth": "it cut the tree of search=tree",
    "scale": "it weighed values against c in search=tree; the flat search compares values only "
    "with each other",
}
"""Options the guided search once had, each with why it went: forms that gained nothing on their
policy in the README's measurements, and their settings."""
_ITERATIONS_RULE = "iterations must be a positive integer (or 0 with a time=SECONDS option)"


class AgentSpecError(ValueError):
    """An agent spec that names no agent, or whose options or checkpoint are unusable; the message
    names the spec and what is wrong."""

    def __init__(self, spec: object, reason: str) -> None:
        super().__init__(f"agent spec {spec!r}: {reason}")
        self.spec = spec
        self.reason = reason


def _number(spec: str, key: str, text: str, low: float, strict: bool) -> float:
    """A finite option value above ``low`` (``strict``) or at least ``low``."""
    try:
        value = float(text)
    except ValueError:
        raise AgentSpecError(spec, f"option {key}={text!r} is not a number") from None
    bound = f"> {low:g}" if strict else f">= {low:g}"
    if not math.isfinite(value) or value < low or (strict and value == low):
        raise AgentSpecError(spec, f"option {key} must be a finite number {bound}, got {text!r}")
    return value


def _parse_guided(spec: str, parts: list[str], rules: Rules | None, seed: int | None) -> Agent:
    """``mcts:N:policy=PATH`` with options ``batch``, ``mix`` and ``margin`` (``:KEY=VALUE``
    each): the search guided by a policy."""
    from piquet_agents.guided_search import GuidedSearchAgent

    kwargs: dict[str, object] = {}
    for opt in parts[2:]:
        key, sep, value = opt.partition("=")
        key = key.strip().lower()
        if sep and key in REMOVED_GUIDED_OPTIONS:
            raise AgentSpecError(
                spec, f"option {key} was removed: {REMOVED_GUIDED_OPTIONS[key]}; drop it"
            )
        if not sep or key not in GUIDED_OPTIONS:
            raise AgentSpecError(
                spec,
                f"bad option {opt!r}; with policy= the options are "
                f"{', '.join(k + '=VALUE' for k in GUIDED_OPTIONS)}",
            )
        if key in kwargs:
            raise AgentSpecError(spec, f"option {key} given twice")
        if key == "policy":
            kwargs[key] = value.strip()
        elif key == "batch":
            if not value.strip().isdigit() or int(value) < 1:
                raise AgentSpecError(
                    spec, f"option batch must be a positive integer, got {value!r}"
                )
            kwargs[key] = int(value)
        else:  # mix or margin
            kwargs[key] = _number(spec, key, value, 0.0, strict=False)
            if key == "mix" and float(kwargs[key]) > 1:  # type: ignore[arg-type]
                raise AgentSpecError(spec, f"option mix must be a number in [0, 1], got {value!r}")
    text = parts[1].strip() if len(parts) > 1 else ""
    if not text.isdigit() or int(text) < 1:
        raise AgentSpecError(
            spec, f"with policy= iterations must be a positive integer, got {text!r}"
        )
    path = _policy_path(str(kwargs.pop("policy")))
    if not os.path.exists(path):
        raise AgentSpecError(spec, f"policy: no checkpoint file or run directory at {path!r}")
    try:
        return GuidedSearchAgent.load(path, int(text), rules=rules, seed=seed, name=spec, **kwargs)
    except ValueError as exc:  # CheckpointError, or a network of the wrong size
        raise AgentSpecError(spec, f"cannot use the policy: {exc}") from exc


def _parse_mcts(spec: str, seed: int | None, rules: Rules | None = None) -> Agent:
    from piquet_agents.mcts import ROLLOUT_POLICIES, MCTSAgent

    parts = spec.split(":")
    if any(p.strip().lower().startswith("policy=") for p in parts[2:]):
        return _parse_guided(spec, parts, rules, seed)
    kwargs: dict[str, object] = {}
    for opt in parts[2:]:
        key, sep, value = opt.partition("=")
        key = key.strip().lower()
        if not sep or key not in MCTS_OPTIONS:
            raise AgentSpecError(
                spec,
                f"bad option {opt!r}; options are {', '.join(k + '=VALUE' for k in MCTS_OPTIONS)}",
            )
        arg = MCTS_OPTIONS[key]
        if arg in kwargs:
            raise AgentSpecError(spec, f"option {key} given twice")
        if key == "rollout":
            if value not in ROLLOUT_POLICIES:
                raise AgentSpecError(
                    spec, f"option rollout must be one of {ROLLOUT_POLICIES}, got {value!r}"
                )
            kwargs[arg] = value
        else:
            kwargs[arg] = _number(spec, key, value, 0.0, strict=key != "c")
    iterations = 200
    if len(parts) > 1 and parts[1].strip() != "":
        text = parts[1].strip()
        try:
            iterations = int(text)
        except ValueError:
            raise AgentSpecError(spec, f"{_ITERATIONS_RULE}, got {text!r}") from None
        if iterations < 0 or (iterations == 0 and "time_limit" not in kwargs):
            raise AgentSpecError(spec, f"{_ITERATIONS_RULE}, got {text!r}")
    try:
        return MCTSAgent(iterations=iterations, seed=seed, name=spec, **kwargs)  # type: ignore[arg-type]
    except ValueError as exc:  # pragma: no cover - every option was checked above
        raise AgentSpecError(spec, str(exc)) from None


def spec_files(spec: str) -> list[str]:
    """The checkpoint files an agent spec loads, as :func:`make_agent` would resolve them (the
    shipped file for ``baseline``, a run directory's policy file): none for ``random``,
    ``heuristic`` and the plain ``mcts``. What identifies a trained agent beyond its spec.

    >>> spec_files("mcts:100")
    []
    >>> [os.path.basename(f) for f in spec_files("mcts:200:policy=baseline")]
    ['baseline.safetensors']
    """
    from piquet_agents.checkpoint import resolve

    spec = spec.strip()
    if spec.lower().split(":")[0] == "mcts" and not os.path.exists(spec):
        for part in spec.split(":")[2:]:
            key, _, value = part.partition("=")
            if key.strip().lower() == "policy":
                return [str(resolve(_policy_path(value.strip())))]
        return []
    path = _policy_path(spec, case=False)
    return [str(resolve(path))] if os.path.exists(path) else []


def _policy_path(text: str, case: bool = True) -> str:
    """The checkpoint path a policy is named by: the shipped file for ``baseline`` (unless a file
    of that name exists here; ``case=False`` accepts any case), else ``text`` itself."""
    name = text if case else text.lower()
    if name == "baseline" and not os.path.exists(text):
        from piquet_agents.baseline import BASELINE_PATH

        return str(BASELINE_PATH)
    return text


def make_agent(spec: str, rules: Rules | None = None, seed: int | None = None) -> Agent:
    """An agent from its spec (see the module docstring); ``seed`` seeds its randomness.

    ``rules`` must match a checkpoint's rules. Raises :class:`AgentSpecError` (a ``ValueError``)
    naming the spec and what is wrong: an unknown name, a bad ``mcts`` iteration count or option,
    a path with no checkpoint, or a checkpoint that cannot be used (its
    :class:`~piquet_agents.checkpoint.CheckpointError` is the cause).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(spec, f"expected a non-empty string: {SPEC_FORMS}")
    if rules is not None and not isinstance(rules, Rules):
        raise AgentSpecError(spec, f"rules must be a Rules object, got {type(rules).__name__}")
    spec = spec.strip()
    low = spec.lower()
    if low == "random":
        from piquet_env.agent import RandomAgent

        return RandomAgent(seed=seed)
    if low == "heuristic":
        from piquet_agents.heuristic import HeuristicAgent

        return HeuristicAgent(seed=seed)
    if low == "baseline" and not os.path.exists(spec):
        from piquet_agents.baseline import BASELINE_PATH
        from piquet_agents.policy import PolicyAgent

        try:
            return PolicyAgent.load(BASELINE_PATH, rules=rules, seed=seed, name="baseline")
        except ValueError as exc:
            raise AgentSpecError(spec, f"cannot use the shipped policy: {exc}") from exc
    if low.split(":")[0] == "mcts" and not os.path.exists(spec):
        return _parse_mcts(spec, seed, rules)
    if os.path.exists(spec):
        try:
            from piquet_agents.policy import PolicyAgent
        except ImportError as exc:
            raise AgentSpecError(
                spec, f"a checkpoint, but policy agents are unavailable ({exc})"
            ) from exc
        try:
            return PolicyAgent.load(spec, rules=rules, seed=seed)
        except ValueError as exc:  # CheckpointError, or a network of the wrong size
            raise AgentSpecError(spec, f"cannot use the checkpoint: {exc}") from exc
    if os.sep in spec or "/" in spec or spec.endswith(".safetensors"):
        raise AgentSpecError(spec, "no checkpoint file or run directory at this path")
    raise AgentSpecError(spec, f"not an agent name nor an existing path; expected {SPEC_FORMS}")
