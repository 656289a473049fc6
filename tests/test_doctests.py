"""Every docstring example in the project's packages runs (the modules are found, not listed)."""

from __future__ import annotations

import doctest
import importlib

import pytest

from tests.project_modules import project_modules

MODULES = [n for n, path in project_modules().items() if ">>>" in path.read_text()]
"""Dotted names of the project modules whose source holds a ``>>>`` example."""


def test_the_examples_are_found():
    assert {"piquet_env.cards", "piquet_agents.registry", "piquet_table.text"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{name} has a '>>>' that doctest does not run"
    assert failures == 0
