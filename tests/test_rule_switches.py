"""Every rule switch has both halves: each :class:`~piquet_env.rules.Rules` field is read by the
engine (``piquet_env/game/``) and by the batched engine (``piquet_env/vector/``), directly or
through a ``Rules`` property derived from it, or it is listed here as engine-independent with the
reason. The differential test keeps the two halves equal; this test keeps either from being
forgotten when a switch is added (the development page's checklist)."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from piquet_env.rules import VARIANT_CHANGES, Rules, all_presets, make_rules

ROOT = Path(__file__).resolve().parents[1] / "piquet_env"
ENGINES = {"game": ROOT / "game", "vector": ROOT / "vector"}

ENGINE_INDEPENDENT = {
    "base": "the rule set's name (read for messages): its switches are the other fields",
    "variants": "the variants' names (read for messages): what they change is in other fields",
}
"""Fields that change nothing an engine does, and why."""


def _rules_properties() -> dict[str, set[str]]:
    """Each property of :class:`Rules` and the fields (or other properties) it reads."""
    tree = ast.parse((ROOT / "rules.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Rules")
    out = {}
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and any(
            isinstance(d, ast.Name) and d.id in ("property", "cached_property")
            for d in node.decorator_list
        ):
            out[node.name] = {
                a.attr
                for a in ast.walk(node)
                if isinstance(a, ast.Attribute)
                and isinstance(a.value, ast.Name)
                and a.value.id == "self"
            }
    return out


PROPERTIES = _rules_properties()


def _fields_of(name: str) -> set[str]:
    """The fields a field or property name stands for (a property: what it reads, transitively)."""
    if name not in PROPERTIES:
        return {name}
    return set().union(*(_fields_of(n) for n in PROPERTIES[name])) if PROPERTIES[name] else set()


def _rules_reads(folder: Path) -> set[str]:
    """The ``Rules`` fields read in ``folder``: attributes of anything named ``rules`` (a
    variable, an argument, ``self.rules``), properties resolved to their fields."""
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Attribute):
                continue
            owner = node.value
            if (isinstance(owner, ast.Name) and owner.id == "rules") or (
                isinstance(owner, ast.Attribute) and owner.attr == "rules"
            ):
                names.add(node.attr)
    return set().union(*(_fields_of(n) for n in names)) if names else set()


READS = {engine: _rules_reads(folder) for engine, folder in ENGINES.items()}
FIELDS = [f.name for f in fields(Rules)]
SWITCHES = [f for f in FIELDS if f not in ENGINE_INDEPENDENT]


def test_the_engine_independent_fields_are_fields():
    assert set(ENGINE_INDEPENDENT) <= set(FIELDS)


@pytest.mark.parametrize("field", SWITCHES)
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_every_rule_switch_is_read_by_both_engines(engine, field):
    assert field in READS[engine], (
        f"Rules.{field} is read nowhere in piquet_env/{engine}/: a rule switch needs both halves "
        "(game/ and vector/), or a line in ENGINE_INDEPENDENT saying why it needs neither"
    )


def test_the_guard_sees_reads_through_properties():
    # n_cards is derived from joker: reading it counts as reading the switch.
    assert "joker" in _fields_of("n_cards")
    assert _fields_of("younger_part") >= {"joker"}


def test_variants_are_a_table_and_every_subset_is_a_preset():
    presets = all_presets()
    assert len(presets) == 2 * 2 ** len(VARIANT_CHANGES)
    assert len({r.name for r in presets}) == len(presets)
    for name, changes in VARIANT_CHANGES.items():
        for base in ("standard", "classic"):
            r = make_rules(base, [name])
            for field, value in changes.items():
                assert getattr(r, field) == value, (name, field)
    # Variants change disjoint fields, so they combine in any order.
    changed = [set(c) for c in VARIANT_CHANGES.values()]
    assert sum(map(len, changed)) == len(set().union(*changed))
