"""The shipped recipes: ``piquet train`` configurations installed with the package.

The TOML files beside this module (``wide.toml``, ``wide-magnet.toml``, ``classic.toml``...) are
package data, so ``piquet train --config wide`` works from an install as from a checkout (where
``--config training/settings/wide.toml`` names the same file); ``piquet train --list-configs`` lists
them with the first sentence of each file's opening comment.

>>> "wide" in recipe_names()
True
>>> resolve_config("wide").name
'wide.toml'
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from piquet_training.settings.train import ConfigError


def _folder() -> Path:
    """The folder of the installed recipes (this package's own)."""
    return Path(str(resources.files(__package__)))


def recipe_names() -> list[str]:
    """The shipped recipes' names (their files' stems), sorted."""
    return sorted(p.stem for p in _folder().glob("*.toml"))


def describe(name: str) -> str:
    """The first sentence of a recipe's opening comment."""
    lines = []
    for line in recipe_path(name).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#") or not line.strip("# "):
            break
        lines.append(line.lstrip("#").strip())
    text = " ".join(lines)
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def recipe_path(name: str) -> Path:
    """The file of the shipped recipe ``name``; :class:`ConfigError` naming the recipes if there
    is none of that name."""
    if name in recipe_names():
        return _folder() / f"{name}.toml"
    names = ", ".join(recipe_names()) or f"none (none installed in {_folder()})"
    raise ConfigError(
        f"no config file {name!r} and no shipped recipe of that name; the recipes are {names}"
    )


def resolve_config(text: str) -> Path:
    """What ``--config TEXT`` names: an existing file, else the shipped recipe ``TEXT``
    (``wide`` or ``wide.toml``); :class:`ConfigError` if neither."""
    path = Path(text)
    if path.exists() or path.parent != Path("."):
        return path  # a file (load_toml says what is wrong with it), or a path that names one
    return recipe_path(text.removesuffix(".toml"))


def listing() -> str:
    """What ``piquet train --list-configs`` prints: each recipe, its description and file."""
    names = recipe_names()
    if not names:  # pragma: no cover - an install that lost its package data
        return f"no recipes installed in {_folder()}"
    width = max(map(len, names))
    rows = [f"{n:<{width}}  {describe(n)}\n{'':<{width}}  ({recipe_path(n)})" for n in names]
    return "\n".join(rows)
