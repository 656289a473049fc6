"""Self-play training on Ray RLlib (the optional ``rllib`` extra: ``pip install -e '.[rllib]'``).

- :mod:`piquet_training.rllib.env`: the piquet PettingZoo env registered with RLlib via its
  PettingZoo wrapper;
- :mod:`piquet_training.rllib.module`: the action-masking RLModule holding the project's
  :class:`~piquet_agents.policy.ActorCritic`;
- :mod:`piquet_training.rllib.league`: the league, ``main`` against frozen snapshots of itself;
- :mod:`piquet_training.rllib.run`: the PPO config, run loop, checkpoints and
  :func:`~piquet_training.rllib.run.export_policy` to the ``PolicyAgent`` format;
- :mod:`piquet_training.rllib.exploit`: the exploiter (``piquet exploit --backend rllib``), a
  best response to a target played inside each env;
- :mod:`piquet_training.rllib.vector_env`: the exploiter's env on the batched engine, N games
  as arrays with the target inside, for RLlib's single-agent env runners;
- :mod:`piquet_training.rllib.both_seats`: both seats learning on the batched engine, N games
  as arrays for RLlib's multi-agent env runners (``self_play="both"``).

``piquet train --backend rllib``'s command line is :mod:`piquet_cli.train_rllib`.

Importing this package does not import Ray; its submodules do.
"""
