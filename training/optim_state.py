"""An optimizer's state as safetensors tensors plus JSON, for the training checkpoints (resume).

:func:`optimizer_to_tensors` splits ``optimizer.state_dict()`` into tensors (stored with the
weights by :func:`piquet_agents.checkpoint.save_checkpoint`) and JSON-serializable metadata;
:func:`optimizer_from_tensors` puts them back. Nothing is pickled.
"""

from __future__ import annotations

from typing import Any

import torch


def optimizer_to_tensors(
    optimizer: torch.optim.Optimizer, prefix: str = "optim"
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer's ``state_dict`` into tensors and JSON (its param groups and any
    non-tensor per-parameter values)."""
    sd = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for idx, state in sd["state"].items():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{prefix}.{idx}.{key}"] = value
            else:
                scalars.setdefault(str(idx), {})[key] = value
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def optimizer_from_tensors(
    optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], meta: dict[str, Any]
) -> None:
    """Restore what :func:`optimizer_to_tensors` saved into ``optimizer``."""
    state: dict[int, dict[str, Any]] = {}
    for name, value in tensors.items():
        idx, key = name.split(".", 1)
        state.setdefault(int(idx), {})[key] = value
    for idx, values in meta.get("scalars", {}).items():
        state.setdefault(int(idx), {}).update(values)
    groups = [dict(g, betas=tuple(g["betas"])) if "betas" in g else g for g in meta["param_groups"]]
    optimizer.load_state_dict({"state": state, "param_groups": groups})
