"""Self-play training, evaluation and rating of Piquet policies, and the ``piquet`` command line.

Everything here needs the ``train`` extra (``pip install "piquet-env[train]"``): importing the
package without it raises an ``ImportError`` that names the missing modules and the extra.
"""

from importlib.util import find_spec

TRAIN_EXTRA = ("torch", "tqdm", "rich", "matplotlib", "safetensors", "openskill")
"""Modules of the ``train`` extra that the training package imports."""

_missing = [name for name in TRAIN_EXTRA if find_spec(name) is None]
if _missing:
    raise ImportError(
        f"piquet_training needs the train extra (missing: {', '.join(_missing)}): "
        'pip install "piquet-env[train]"'
    )
