"""Self-play training, evaluation and rating of Piquet policies: one package per system.

- :mod:`.settings`: every run's settings, read and checked once;
- :mod:`.ppo`: the built-in self-play trainer; :mod:`.rllib`: the same on Ray RLlib;
- :mod:`.evaluation`: duplicate matches, paired comparisons, the ladder, their statistics;
- :mod:`.exploit`: exploitability bounds (a plan, a trainer and a measure);
- :mod:`.benchmark`: the benchmark protocol and its runs; :mod:`.studies`: the scripts behind the
  results pages;
- beside them, what several use: :mod:`.run_folder` (a run's folder and its checks),
  :mod:`.run_log` (a run's CSV files), :mod:`.seeds` (every derived seed, named),
  :mod:`.warm_start`, :mod:`.exact`, :mod:`.memory`.

The command line (``piquet_cli``) and the tables (``piquet_table``) sit above this package and
are packages of their own. Everything here needs the ``train`` extra (``pip install -e
".[train]"`` from a clone): importing the package without it raises an ``ImportError`` that
names the missing modules and the extra.
"""

import os
from importlib.util import find_spec

SPIN_COUNT = "1000"
"""How long torch's idle OpenMP threads spin before they sleep (``GOMP_SPINCOUNT``), set when
this package is imported before torch and neither that nor ``OMP_WAIT_POLICY`` is set. With
libgomp's default (300,000), idle threads spinning on cores busy with other processes make
two-thread training many times slower than one thread; with 1,000 two threads are as fast as one
there, and faster on idle cores (docs/results/training.md)."""
if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT

TRAIN_EXTRA = ("torch", "tqdm", "rich", "matplotlib", "safetensors", "openskill")
"""Modules of the ``train`` extra that the training package imports."""

_missing = [name for name in TRAIN_EXTRA if find_spec(name) is None]
if _missing:
    raise ImportError(
        f"piquet_training needs the train extra (missing: {', '.join(_missing)}): "
        'pip install -e ".[train]"'
    )
