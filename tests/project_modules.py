"""The project's packages and modules as the tests find them (one map, used by every test that
walks the source)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {
    "piquet_env": "piquet_env",
    "piquet_agents": "agents",
    "piquet_training": "training",
    "piquet_table": "training/table",
    "piquet_cli": "training/cli",
}
"""Installed import name -> repository folder (the table and the command sit inside the
``training/`` folder but are packages of their own, not part of ``piquet_training``)."""


def owner(path: Path) -> str:
    """The installed package whose folder holds ``path`` (the deepest folder that does)."""
    return max(
        (n for n, f in FOLDERS.items() if path.is_relative_to(ROOT / f)),
        key=lambda n: len(FOLDERS[n]),
    )


def project_modules() -> dict[str, Path]:
    """Every project module by its installed dotted name."""
    found = {}
    for name, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if owner(path) != name:
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([name, *parts])] = path
    return found
