"""The policies that ship with the package: agent spec ``baseline``, one per rule set.

A policy is tied to one rule set (its observation and action sizes, and what the rules reward),
so ``baseline`` is a file per rule set, next to this module (package data): :data:`BASELINES`
maps a rule set's name (:attr:`piquet_env.rules.Rules.name`) to its file, and
:func:`baseline_path` gives the file of the rules in use, or says which rule sets have one.
A policy that ``baseline`` no longer names stays in the package as ``baseline@TAG``
(:data:`RETIRED`, TAG the date it began shipping), so that what was measured against it can be
played again: the benchmark's opponent is one (:mod:`piquet_training.benchmark.protocol`).
Each file is the policy of a ``piquet train`` run; its checkpoint metadata holds that run's full
config (``meta["config"]``), the command that produced it and how it was measured
(``meta["baseline"]``), read by :func:`baseline_info`. It loads like any checkpoint
(:func:`piquet_agents.checkpoint.load_policy`: safetensors, header checked, nothing unpickled).
:func:`write_baseline` makes the file from a run's policy::

    python -m piquet_agents.baseline runs/classic-magnet/policy.safetensors \\
        --command "piquet train --config classic-magnet" \\
        --out agents/baseline/classic.safetensors
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piquet_env.rules import Rules

__all__ = ["BASELINES", "BASELINE_PATH", "RETIRED", "NoBaselineError", "baseline_info"]
__all__ += ["baseline_path", "write_baseline"]

_HERE = Path(__file__).parent

BASELINES: dict[str, Path] = {
    "standard": _HERE / "baseline.safetensors",
    "classic": _HERE / "classic.safetensors",
}
"""The shipped policy of each rule set that has one, by the rule set's name: the recipes are
``training/settings/wide-magnet.toml`` (standard) and ``training/settings/classic-magnet.toml``
(classic)."""

BASELINE_PATH = BASELINES["standard"]
"""The standard rules' shipped policy (the default rules)."""

RETIRED: dict[str, dict[str, Path]] = {
    "2026-11-30": {"standard": _HERE / "retired" / "standard-2026-11-30.safetensors"},
    "2026-12-01": {"classic": _HERE / "retired" / "classic-2026-12-01.safetensors"},
}
"""The policies ``baseline`` named before, kept for what was measured against them: by tag (the
date each began shipping), then by rule set, as :data:`BASELINES`; agent spec ``baseline@TAG``."""


class NoBaselineError(ValueError):
    """The rules in use have no shipped policy (the message lists the rule sets that have one)."""


def baseline_path(rules: Rules | None = None, tag: str | None = None) -> Path:
    """The shipped policy of ``rules`` (default: the standard rules), or with ``tag`` the retired
    one of that tag (:data:`RETIRED`); :class:`NoBaselineError` naming the rule sets that have
    one, or the tags there are.

    >>> baseline_path().name
    'baseline.safetensors'
    >>> baseline_path(tag="2026-11-30").name
    'standard-2026-11-30.safetensors'
    """
    name = "standard" if rules is None else rules.name
    files = BASELINES
    what = "shipped baseline"
    if tag is not None:
        if tag not in RETIRED:
            raise NoBaselineError(
                f"no retired baseline tagged {tag!r}; tags: {', '.join(RETIRED) or 'none'}"
            )
        files, what = RETIRED[tag], f"baseline@{tag}"
    path = files.get(name)
    if path is None or not path.is_file():
        have = ", ".join(k for k, p in files.items() if p.is_file())
        raise NoBaselineError(f"no {what} for the rules {name!r}; rule sets with one: {have}")
    return path


def baseline_info(path: str | Path = BASELINE_PATH) -> dict[str, Any]:
    """The shipped checkpoint's metadata (rules, architecture, training config, command)."""
    from piquet_agents.checkpoint import read_checkpoint

    return dict(read_checkpoint(path).meta)


def write_baseline(
    policy: str | Path, command: str, note: str = "", out: str | Path = BASELINE_PATH
) -> Path:
    """Copy the policy of checkpoint ``policy`` to ``out`` with ``command`` (how it was trained)
    and ``note`` (how it was measured) added to its metadata under ``"baseline"``."""
    from piquet_agents.checkpoint import policy_meta, read_checkpoint, save_checkpoint
    from piquet_agents.policy import PolicyAgent

    agent = PolicyAgent.load(policy)
    meta = policy_meta(agent.model, agent.rules, read_checkpoint(policy).meta.get("config"))
    meta["baseline"] = {"command": command, "note": note, "source": Path(policy).name}
    tensors = {f"model.{k}": v for k, v in agent.model.state_dict().items()}
    return save_checkpoint(out, tensors, meta)


def main(argv: list[str] | None = None) -> int:
    """``python -m piquet_agents.baseline POLICY --command CMD [--note TEXT] [--out FILE]``."""
    p = argparse.ArgumentParser(description=write_baseline.__doc__)
    p.add_argument("policy")
    p.add_argument("--command", required=True)
    p.add_argument("--note", default="")
    p.add_argument("--out", default=str(BASELINE_PATH))
    args = p.parse_args(argv)
    print(write_baseline(args.policy, args.command, args.note, args.out))
    return 0
