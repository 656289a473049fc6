"""piquet-env: Piquet as a reinforcement-learning environment.

The pure engine lives in :mod:`piquet_env.cards`, :mod:`piquet_env.rules`,
:mod:`piquet_env.combinations`, :mod:`piquet_env.actions` and :mod:`piquet_env.game`. The PettingZoo
environment lives in :mod:`piquet_env.piquet_v0` (PettingZoo's naming: environment name and
version); ``env`` and ``raw_env`` are also importable from here, lazily, so that the engine alone
needs no numpy.
"""

from __future__ import annotations

import importlib
from typing import Any

from piquet_env.game import Game, Phase
from piquet_env.rules import CLASSIC, STANDARD, Rules, make_rules

__version__ = "0.1.0"
__all__ = ["CLASSIC", "STANDARD", "Game", "Phase", "Rules", "env", "make_rules", "raw_env"]


def __getattr__(name: str) -> Any:
    if name in ("env", "raw_env"):
        # import_module, not "from piquet_env import env", which would come back here and recurse
        module = importlib.import_module("piquet_env.piquet_v0")
        return getattr(module, name)
    raise AttributeError(f"module 'piquet_env' has no attribute {name!r}")
