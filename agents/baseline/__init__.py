"""The policy that ships with the package: agent spec ``baseline``.

``baseline.safetensors`` (next to this module, package data) is the policy of a ``piquet train``
run; its checkpoint metadata holds that run's full config (``meta["config"]``), the command that
produced it and how it was measured (``meta["baseline"]``), read by :func:`baseline_info`. It
loads like any checkpoint (:func:`piquet_agents.checkpoint.load_policy`: safetensors, header
checked, nothing unpickled). :func:`write_baseline` makes the file from a run's policy::

    python -m piquet_agents.baseline runs/piquet/policy.safetensors --command "piquet train"
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["BASELINE_PATH", "baseline_info", "write_baseline"]

BASELINE_PATH = Path(__file__).with_name("baseline.safetensors")
"""Where the shipped policy lies inside the installed package."""


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
