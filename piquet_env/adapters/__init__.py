"""Other ecosystems' views of the Piquet environment.

- :mod:`piquet_env.adapters.gymnasium`: a single-agent ``gymnasium.Env`` (:class:`PiquetGymEnv`)
  in which a learner plays one seat against any :class:`piquet_env.players.Player`, with an
  ``action_masks()`` method for sb3-contrib's MaskablePPO. Importing this package registers the
  Gymnasium ids ``Piquet-v0`` (whole partie) and ``PiquetDeal-v0`` (one deal).
- :mod:`piquet_env.wrappers`: PettingZoo's classic-env wrappers with direct access
  to the raw env (used by :func:`piquet_env.piquet_v0.env`).
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium

__all__ = ["PiquetGymEnv", "register_gymnasium"]

GYM_IDS = {"Piquet-v0": {}, "PiquetDeal-v0": {"episode": "deal"}}
"""Gymnasium ids registered by this package, with their default options."""


def register_gymnasium() -> None:
    """Register :data:`GYM_IDS` with Gymnasium (once)."""
    for env_id, kwargs in GYM_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id, entry_point="piquet_env.adapters.gymnasium:PiquetGymEnv", kwargs=kwargs
            )


def __getattr__(name: str) -> Any:
    if name == "PiquetGymEnv":
        return importlib.import_module("piquet_env.adapters.gymnasium").PiquetGymEnv
    raise AttributeError(f"module 'piquet_env.adapters' has no attribute {name!r}")


register_gymnasium()
