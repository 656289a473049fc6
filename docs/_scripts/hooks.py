"""MkDocs hooks (mkdocs.yml ``hooks:``): the parts of the pages that are generated from the code.

A page asks for a generated part with a line of its own, ``<!-- generated: NAME -->``; the hook
puts the Markdown of :data:`GENERATORS` ``[NAME]`` there when the site is built, so the page cannot
drift from the code it describes:

- ``piquet_v0`` and ``piquet_v1``: the environments' module docstrings (PettingZoo documents its
  environments the same way), their observation index list replaced by ``observation``;
- ``observation`` and ``state``: the layouts, from :func:`piquet_env.observation.observation_layout`
  and :func:`~piquet_env.observation.state_layout`, for 32 and 33 cards;
- ``spaces``: the action, observation and state sizes of every preset;
- ``cli``: every subcommand's ``--help``, from :func:`piquet_cli.build_parser`.

An unknown name, or a command that cannot be documented because its extra is missing, is an
error (``mkdocs build --strict`` fails on it).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from griffe_rst import convert_roles

log = logging.getLogger("mkdocs.hooks.generated")
MARKER = re.compile(r"^<!-- generated: ([a-z0-9_]+) -->$", flags=re.M)
"""A page's request for a generated part, on a line of its own."""
OBS_ITEM = re.compile(r"^- \d+-\d+ `\w+`:.*(?:\n  .*)*\n?", flags=re.M)
"""One entry of the observation index list in the environment's docstring."""


def _no_scope(name: str) -> str:
    """Page text has no Python scope: only full paths resolve."""
    raise LookupError(name)


def _markdown(doc: str, shift: int = 1) -> str:
    """A module docstring as page Markdown: its title dropped, its headings ``shift`` levels
    down, its cross-reference roles as links."""
    text = textwrap.dedent(doc).strip()
    text = re.sub(r"\A# .*\n+", "", text)
    text = re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + shift) + " ", text, flags=re.M)
    return convert_roles(text, _no_scope)


def _layout_table(state: bool) -> str:
    from piquet_env.observation import encoder_for, observation_layout, state_layout
    from piquet_env.rules import STANDARD, make_rules

    def rows(rules):
        enc = encoder_for(rules)
        specs = state_layout(rules, enc.size) if state else observation_layout(rules)
        at = 0
        for spec in specs:
            yield spec, at
            at += spec.width

    head = "| 32 cards | 33 cards (`normand`) | field | width | meaning |\n|---|---|---|---|---|\n"
    lines = []
    for (spec, a), (joker, b) in zip(
        rows(STANDARD), rows(make_rules("standard+normand")), strict=True
    ):
        assert spec.name == joker.name
        scaled = f" (÷ {spec.scale:g}, at most {spec.high:g})" if spec.scale else ""
        lines.append(
            f"| {a}–{a + spec.width - 1} | {b}–{b + joker.width - 1} | `{spec.name}` "
            f"| {spec.width} | {spec.description}{scaled} |"
        )
    return head + "\n".join(lines) + "\n"


def observation() -> str:
    """The observation layout (``observation_layout``) as a table."""
    return _layout_table(state=False)


def state() -> str:
    """The full-state layout (``state_layout``) as a table."""
    return _layout_table(state=True)


def spaces() -> str:
    """Action, observation and state sizes of every preset."""
    from piquet_env.observation import encoder_for
    from piquet_env.rules import all_presets

    lines = [
        "| preset | actions | observation | state | deals | talon |",
        "|---|---|---|---|---|---|",
    ]
    for rules in all_presets():
        enc = encoder_for(rules)
        lines.append(
            f"| `{rules.name}` | `Discrete({enc.n_actions})` | `({enc.size},)` "
            f"| `({enc.state_size},)` | {rules.deals} | {rules.talon_size} |"
        )
    return "\n".join(lines) + "\n"


def _env_page(module_name: str) -> str:
    import importlib

    doc = importlib.import_module(module_name).__doc__ or ""
    if not OBS_ITEM.search(doc):
        return _markdown(doc, shift=1)
    start = OBS_ITEM.search(doc).start()
    items = list(OBS_ITEM.finditer(doc))
    end = items[-1].end()
    text = doc[:start] + "<!-- generated: observation -->\n" + doc[end:]
    return _markdown(text, shift=1).replace("<!-- generated: observation -->", observation())


def piquet_v0() -> str:
    """The docstring of :mod:`piquet_env.piquet_v0`, its index list as the layout table."""
    return _env_page("piquet_env.piquet_v0")


def piquet_v1() -> str:
    """The docstring of :mod:`piquet_env.piquet_v1`."""
    return _env_page("piquet_env.piquet_v1")


def _commands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, str]]:
    """(command line, help text) of ``parser`` and of each subcommand below it, in order."""
    yield prefix, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{prefix} {name}")


def cli() -> str:
    """Every ``piquet`` subcommand's ``--help``, a section each."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"  # argparse wraps to the terminal's width: the page's
    try:
        from piquet_cli import COMMANDS, build_parser
        from piquet_cli.common import missing

        for commands, needs, extra in COMMANDS.values():
            reason = missing(needs, extra)
            if reason:
                log.warning("the CLI reference lacks %s: %s", ", ".join(commands), reason)
        parts = []
        for line, text in _commands(build_parser(), "piquet"):
            level = "#" * min(2 + line.count(" "), 4)
            parts.append(f"{level} `{line}`\n\n```text\n{text.rstrip()}\n```\n")
        return "\n".join(parts)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


GENERATORS: dict[str, Callable[[], str]] = {
    "piquet_v0": piquet_v0,
    "piquet_v1": piquet_v1,
    "observation": observation,
    "state": state,
    "spaces": spaces,
    "cli": cli,
}
"""Generated parts by name (the ``NAME`` of ``<!-- generated: NAME -->``)."""


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    """Replace each ``<!-- generated: NAME -->`` line of a page by the generated part."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            log.warning("%s: no generated part named %r", page.file.src_uri, name)
            return match.group(0)
        return GENERATORS[name]()

    return MARKER.sub(one, markdown)
