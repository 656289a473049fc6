"""Other ecosystems' views of the Piquet environment.

- :mod:`piquet_env.adapters.gymnasium`: a single-agent ``gymnasium.Env`` (:class:`PiquetGymEnv`)
  in which a learner plays one seat against any :class:`agents.base.Agent`, with an
  ``action_masks()`` method for sb3-contrib's MaskablePPO. Importing this package registers the
  Gymnasium ids ``Piquet-v0`` (whole partie) and ``PiquetDeal-v0`` (one deal).
"""

from piquet_env.adapters.gymnasium import PiquetGymEnv, register_gymnasium

register_gymnasium()

__all__ = ["PiquetGymEnv", "register_gymnasium"]
