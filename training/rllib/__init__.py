"""Self-play training on Ray RLlib (the optional ``piquet-env[rllib]`` extra).

- :mod:`training.rllib.env`: the piquet PettingZoo env registered with RLlib via its
  PettingZoo wrapper;
- :mod:`training.rllib.module`: the action-masking RLModule holding the project's
  :class:`~agents.policy.ActorCritic`;
- :mod:`training.rllib.selfplay`: the league, ``main`` against frozen snapshots of itself;
- :mod:`training.rllib.train`: the PPO config, run loop, checkpoints and
  :func:`~training.rllib.train.export_policy` to the ``PolicyAgent`` format;
- :mod:`training.rllib.cli`: ``piquet train --backend rllib``.

Importing this package does not import Ray; its submodules do.
"""
