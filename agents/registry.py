"""Build agents from short text specs, as the command line and the evaluation workers do.

Specs: ``random``, ``heuristic``, ``mcts`` or ``mcts:ITERATIONS`` (optionally followed by
``:key=value`` options of :class:`~piquet_agents.mcts.MCTSAgent`, e.g. ``mcts:400:c=0.5`` or
``mcts:0:time=0.2``), or the path of a policy checkpoint or run directory (loaded by
:meth:`piquet_agents.policy.PolicyAgent.load`).

>>> from piquet_env.rules import STANDARD
>>> make_agent("random", STANDARD, seed=1).name
'random'
>>> make_agent("mcts:50", STANDARD).name
'mcts:50'
"""

from __future__ import annotations

import os

from piquet_agents.base import Agent

from piquet_env.rules import Rules

BUILTIN = ("random", "heuristic", "mcts")
_MCTS_OPTIONS = {"c": float, "time": float, "rollout": str, "scale": float}


def _parse_mcts(spec: str, seed: int | None) -> Agent:
    from piquet_agents.mcts import MCTSAgent

    parts = spec.split(":")
    kwargs: dict[str, object] = {}
    if len(parts) > 1 and parts[1] != "":
        try:
            kwargs["iterations"] = int(parts[1])
        except ValueError:
            raise ValueError(
                f"agent spec {spec!r}: iterations {parts[1]!r} is not an integer "
                f"(expected mcts:ITERATIONS, e.g. mcts:200)"
            ) from None
    for opt in parts[2:]:
        key, sep, value = opt.partition("=")
        if not sep or key not in _MCTS_OPTIONS:
            raise ValueError(
                f"agent spec {spec!r}: bad option {opt!r}; options are "
                f"{', '.join(k + '=...' for k in _MCTS_OPTIONS)}"
            )
        try:
            kwargs["time_limit" if key == "time" else key] = _MCTS_OPTIONS[key](value)
        except ValueError:
            raise ValueError(
                f"agent spec {spec!r}: option {key}={value!r} is not a "
                f"{_MCTS_OPTIONS[key].__name__}"
            ) from None
    return MCTSAgent(seed=seed, name=spec, **kwargs)


def make_agent(spec: str, rules: Rules | None = None, seed: int | None = None) -> Agent:
    """An agent from its spec (see the module docstring); ``seed`` seeds its randomness.

    ``rules`` must match a checkpoint's rules. Raises ``ValueError`` naming the spec when it is
    neither a known agent nor an existing checkpoint file or run directory.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    head = spec.split(":")[0].lower()
    if head == "random" and spec.lower() == "random":
        from piquet_agents.random_agent import RandomAgent

        return RandomAgent(seed=seed)
    if head == "heuristic" and spec.lower() == "heuristic":
        from piquet_agents.heuristic import HeuristicAgent

        return HeuristicAgent(seed=seed)
    if head == "mcts" and not os.path.exists(spec):
        return _parse_mcts(spec, seed)
    if os.path.exists(spec):
        try:
            from piquet_agents.policy import PolicyAgent
        except ImportError as e:
            raise ValueError(
                f"agent spec {spec!r} is a checkpoint, but policy agents are unavailable ({e})"
            ) from e
        # PolicyAgent.load checks the rules and raises CheckpointError (a ValueError) for a
        # missing, corrupt or mismatched checkpoint.
        return PolicyAgent.load(spec, rules=rules, seed=seed)
    raise ValueError(
        f"unknown agent spec {spec!r}: expected random, heuristic, mcts:ITERATIONS "
        f"or the path of an existing checkpoint"
    )
