"""Every docstring example in the three packages runs (the modules are found, not listed)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"piquet_env": "piquet_env", "piquet_agents": "agents", "piquet_training": "training"}
"""Installed import name -> repository folder."""


def _modules_with_examples() -> list[str]:
    """Dotted names of the project modules whose source holds a ``>>>`` example."""
    found = []
    for name, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if ">>>" not in path.read_text():
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append(".".join([name, *parts]))
    return found


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    assert {"piquet_env.cards", "piquet_agents.registry", "piquet_training.tui.text"} <= set(
        MODULES
    )


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{name} has a '>>>' that doctest does not run"
    assert failures == 0
