"""Other ecosystems' views of the Piquet environment.

- :mod:`piquet_env.adapters.gymnasium`: a single-agent ``gymnasium.Env`` (:class:`PiquetGymEnv`)
  in which a learner plays one seat against any :class:`piquet_env.agent.Agent`, with an
  ``action_masks()`` method for sb3-contrib's MaskablePPO. ``import piquet_env`` registers the
  Gymnasium ids ``Piquet-v0`` (whole partie) and ``PiquetDeal-v0`` (one deal).
- :mod:`piquet_env.adapters.openspiel`: Piquet as an OpenSpiel Python game (``python_piquet``;
  the ``openspiel`` extra).
- :mod:`piquet_env.adapters.rlcard`: Piquet as an RLCard environment (``rlcard.make("piquet")``,
  registered by ``import piquet_env``; the ``integrations`` extra), and RLCard's agents as the
  project's.
- :mod:`piquet_env.wrappers`: PettingZoo's classic-env wrappers with direct access
  to the raw env (used by :func:`piquet_env.piquet_v0.env`).
"""

from __future__ import annotations

import importlib
from typing import Any

from piquet_env.registration import GYMNASIUM_IDS as GYM_IDS
from piquet_env.registration import register_gymnasium

__all__ = ["GYM_IDS", "PiquetGymEnv", "register_gymnasium"]


def __getattr__(name: str) -> Any:
    if name == "PiquetGymEnv":
        return importlib.import_module("piquet_env.adapters.gymnasium").PiquetGymEnv
    raise AttributeError(f"module 'piquet_env.adapters' has no attribute {name!r}")
