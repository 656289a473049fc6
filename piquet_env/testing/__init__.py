"""Harnesses, kept apart from what they measure (as ``pettingzoo.test`` is).

- :mod:`.difftest`: the batched engine against :class:`~piquet_env.game.Game`, step by step
  (``python -m piquet_env.testing.difftest``).
- :mod:`.env_speed`: the bare engine and the PettingZoo env, agent-steps per second and memory
  (``piquet bench env``).
- :mod:`.batch_speed`: the batched engine beside them (``piquet bench vector``).
- :mod:`.exact_bench`: the exact solver on a whole small game: counts, time per stage, CFR+
  (``python -m piquet_env.testing.exact_bench``).

How fast ``piquet serve`` answers is measured beside the server, by ``piquet_cli.web_speed``.

Nothing in the engine, the env, the batched engine or the tables imports this package.
"""
