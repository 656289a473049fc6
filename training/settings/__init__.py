"""Every run's settings: how they are declared and checked, what they are, and where they come from.

- :mod:`.schema`: the machinery (a :class:`~piquet_training.settings.schema.Settings` dataclass,
  its rules, TOML, ``--set`` overrides and :class:`~piquet_training.settings.schema.ConfigError`);
- :mod:`.train`: the training settings, :class:`~piquet_training.settings.train.PPOSettings`
  shared by both backends and :class:`~piquet_training.settings.train.TrainConfig`, and the
  constants that the exploiter and the benchmark protocol share;
- :mod:`.recipes`: the shipped recipes (the ``*.toml`` files beside it), ``--config NAME``;
- :mod:`.backends`: which trainer wrote a run, and resuming it with the same one;
- :mod:`.resolve`: where a run's settings come from (resumed run, recipe, ``--set``, flags),
  one order for both backends and for a library caller.

Nothing here imports torch.
"""
