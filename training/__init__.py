"""Self-play training, evaluation and rating of Piquet policies: one package per system.

- :mod:`.settings`: every run's settings, read and checked once;
- :mod:`.ppo`: the built-in self-play trainer; :mod:`.rllib`: the same on Ray RLlib;
- :mod:`.evaluation`: duplicate matches, paired comparisons, the ladder, their statistics;
- :mod:`.exploit`: exploitability bounds (a plan, a trainer and a measure);
- :mod:`.benchmark`: the benchmark protocol and its runs; :mod:`.studies`: the scripts behind the
  results pages;
- beside them, what several use: :mod:`.run_folder` (a run's folder and its checks),
  :mod:`.run_log` (a run's CSV files), :mod:`.seeds` (every derived seed, named),
  :mod:`.threads` (how torch's idle threads wait), :mod:`.warm_start`, :mod:`.exact`,
  :mod:`.memory`.

The command line (``piquet_cli``) and the tables (``piquet_table``) sit above this package and
are packages of their own. Most modules here need the ``train`` extra (``pip install -e
".[train]"`` from a clone, :data:`TRAIN_EXTRA`); the statistics (:mod:`.evaluation.stats`), the
settings' machinery, :mod:`.run_folder`, :mod:`.seeds` and :mod:`.threads` do not. Importing
the package itself imports nothing and sets nothing (the OpenMP spin is :mod:`.threads`').
"""

TRAIN_EXTRA = ("torch", "tqdm", "rich", "matplotlib", "safetensors", "openskill")
"""Modules of the ``train`` extra that the training package's modules import."""
