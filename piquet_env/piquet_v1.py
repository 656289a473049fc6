"""
# Piquet, version 1

The PettingZoo AEC environment of :mod:`piquet_env.piquet_v0` (same options, spaces, rewards and
rendering: its docstring documents them) with infos that array-based libraries can hold:
``infos[agent]`` is ``{"action_mask": mask}``, an int8 array of the action space's size (the
legal actions of the agent to act, zeros for the other), with the same key and shape at every
step. The human-readable names, phase and deal breakdown of v0's infos come back with
``info_names=True``, or at any time from ``raw_env.readable_info(agent)``.

| Import             | `from piquet_env import piquet_v1`                                     |
|--------------------|------------------------------------------------------------------------|
| Actions            | Discrete                                                               |
| Parallel API       | No                                                                     |
| Agents             | `agents = ['player_0', 'player_1']`                                    |
| Action Values      | Discrete(35), Discrete(36) under `normand`                              |
| Observation Shape  | (433,), (442,) under `normand`                                         |

Importing :mod:`piquet_env` registers it with PettingZoo's registry as ``piquet-v1``.

## Version history

- v1: infos hold only ``action_mask`` (fixed shape) unless ``info_names=True``; the names, phase
  and deal breakdown are available from ``readable_info(agent)``.
- v0: first release (infos with strings, lists and dicts).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pettingzoo import AECEnv

from piquet_env import piquet_v0, wrappers

__all__ = ["env", "raw_env"]


class raw_env(piquet_v0.raw_env):
    """The Piquet AEC environment, version 1: v0's class with :attr:`version` 1 (array infos)."""

    metadata: ClassVar[dict[str, Any]] = {**piquet_v0.raw_env.metadata, "name": "piquet_v1"}
    version: ClassVar[int] = 1


def env(**kwargs: Any) -> AECEnv:
    """:class:`raw_env` in PettingZoo's classic wrappers, as :func:`piquet_env.piquet_v0.env`."""
    return wrappers.wrap(raw_env(**kwargs), piquet_v0.ILLEGAL_REWARD)
