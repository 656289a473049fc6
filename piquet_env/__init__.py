"""piquet-env: Piquet as a reinforcement-learning environment.

The pure engine lives in :mod:`piquet_env.cards`, :mod:`piquet_env.rules`,
:mod:`piquet_env.combinations`, :mod:`piquet_env.actions` and :mod:`piquet_env.game`. The PettingZoo
environment lives in :mod:`piquet_env.piquet_v1` (PettingZoo's naming: environment name and
version; :mod:`piquet_env.piquet_v0` keeps the first version's infos); ``env`` and ``raw_env``
(version 0) are also importable from here, lazily, so that the engine alone needs no numpy, and so
are the env family's settings (:class:`~piquet_env.settings.EnvSettings`, :func:`env_settings`).

Importing this package registers the Gymnasium ids ``Piquet-v0`` and ``PiquetDeal-v0`` and the
PettingZoo ids ``piquet-v0`` and ``piquet-v1`` (:mod:`piquet_env.registration`), without importing
either library: ``import piquet_env`` is enough for ``gymnasium.make("Piquet-v0")``. The rules are
in the package: :func:`rules_document` returns them.
"""

from __future__ import annotations

import importlib
from typing import Any

from piquet_env import registration
from piquet_env.game import Game, Phase
from piquet_env.rules import CLASSIC, STANDARD, Rules, make_rules

__version__ = "0.1.0"
__all__ = [
    "CLASSIC",
    "STANDARD",
    "EnvSettings",
    "Game",
    "Phase",
    "Rules",
    "env",
    "env_settings",
    "make_rules",
    "raw_env",
    "rules_document",
]


def rules_document() -> str:
    """The rules contract (``RULES.md``, shipped inside the package) as Markdown text."""
    from importlib import resources  # not at import time: it costs more than the engine

    return resources.files(__name__).joinpath("RULES.md").read_text(encoding="utf-8")


_LAZY = {
    "env": "piquet_env.piquet_v0",
    "raw_env": "piquet_env.piquet_v0",
    "EnvSettings": "piquet_env.settings",
    "env_settings": "piquet_env.settings",
}
"""Names importable from here that need numpy, imported on first use."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        # import_module, not "from piquet_env import env", which would come back here and recurse
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'piquet_env' has no attribute {name!r}")


registration.install()
