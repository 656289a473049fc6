"""The examples in the engine's docstrings run (python -m doctest would say the same)."""

import doctest
import importlib

import pytest

MODULES = [
    "piquet_env.cards",
    "piquet_env.rules",
    "piquet_env.combinations",
    "piquet_env.actions",
    "piquet_env.game.state",
    "piquet_env.game.scoring",
    "piquet_env.observation",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{name} has no docstring example"
    assert failures == 0
