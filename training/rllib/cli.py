"""Deprecated: ``piquet train --backend rllib``'s command line moved to
:mod:`piquet_cli.train_rllib` (the commands live in ``piquet_cli``). Its names are still read
here, with a :class:`DeprecationWarning`, and ``python -m piquet_training.rllib.cli`` still runs
it."""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

_NEW = "piquet_cli.train_rllib"


def __getattr__(name: str) -> Any:
    """The moved module's ``name``, with a deprecation warning."""
    warnings.warn(
        f"piquet_training.rllib.cli is deprecated: import {name} from {_NEW}",
        DeprecationWarning,
        stacklevel=2,
    )
    # Imported by name: the training layer does not import the command layer (tests/test_layering).
    return getattr(importlib.import_module(_NEW), name)


if __name__ == "__main__":
    warnings.warn(
        f"python -m piquet_training.rllib.cli is deprecated: python -m {_NEW}",
        DeprecationWarning,
        stacklevel=1,
    )
    sys.exit(importlib.import_module(_NEW).main())
