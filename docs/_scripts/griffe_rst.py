"""A griffe extension: the reStructuredText the project's docstrings use, read as Markdown.

The docstrings are prose written for Sphinx's conventions (``:class:`Game```, ``literal``,
``text::`` before an indented literal block, ``>>>`` examples); mkdocstrings renders docstrings
as Markdown. This extension rewrites those three constructs when a package is loaded:

- a cross-reference role becomes an autorefs link, ``[`Game`][piquet_env.game.state.Game]``,
  its name resolved as Python would in the docstring's scope (griffe's ``Object.resolve``); one
  that resolves outside the project's packages (numpy, Gymnasium, RLlib...) becomes plain code,
  as the site fetches no other project's inventory. A project name that does not resolve is left
  as a link to itself, which ``mkdocs build --strict`` then reports as a missing reference;
- ``text::`` and its indented block become ``text:`` and a fenced block;
- a run of ``>>>`` lines with their output becomes a fenced ``pycon`` block.
"""

from __future__ import annotations

import re
import textwrap

import griffe

PROJECT = ("piquet_env", "piquet_agents", "piquet_training", "piquet_table", "piquet_cli")
"""The packages whose objects the API reference documents (link targets)."""
ROLE = re.compile(r":(?:py:)?(?:mod|class|func|meth|attr|data|exc|obj|const):`([^`]+)`")
"""A Sphinx cross-reference role: ``:class:`~a.B```, ``:meth:`title <a.B.c>```..."""


def split_role(text: str) -> tuple[str, str]:
    """The (shown text, target) of a role's content: ``~a.b.c`` shows ``c``, ``title <a.b>``
    shows ``title``, ``!a.b`` is no link (an empty target); trailing ``()`` is no part of the
    target."""
    explicit = re.fullmatch(r"(.*?)\s*<([^>]+)>", text, flags=re.S)
    if explicit:
        shown, target = explicit.group(1), explicit.group(2)
    elif text.startswith("~"):
        target = text[1:]
        shown = target.rsplit(".", 1)[-1]
    elif text.startswith("!"):
        return text[1:], ""
    else:
        shown = target = text
    return shown, target.removesuffix("()")


def in_project(path: str) -> bool:
    """Whether a dotted path names something in the project's packages."""
    return path.split(".", 1)[0] in PROJECT


def link(shown: str, target: str) -> str:
    """The Markdown of a role: an autorefs link to a project path, else plain code."""
    if target and in_project(target):
        return f"[`{shown}`][{target}]"
    return f"`{shown}`"


def convert_roles(text: str, resolve, canonical=lambda path: path) -> str:
    """Every role of ``text`` as Markdown; ``resolve(name)`` gives a name's full path in the
    docstring's scope (or raises griffe's ``NameResolutionError``), ``canonical(path)`` the path
    where the object is defined (the page that documents it)."""

    def one(match: re.Match[str]) -> str:
        shown, target = split_role(match.group(1))
        if target and not in_project(target):
            head, _, rest = target.partition(".")
            try:
                full = resolve(head)
            except (LookupError, griffe.NameResolutionError):
                full = None
            if full is not None:
                target = f"{full}.{rest}" if rest else full
            elif "." not in target:
                target = ""  # a bare name that is nothing in scope: shown as code
        return link(shown, canonical(target) if in_project(target) else target)

    return ROLE.sub(one, text)


def convert_blocks(text: str) -> str:
    """``text::`` literal blocks and ``>>>`` examples as fenced Markdown blocks."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>") and (not out or not out[-1].strip()):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += ["```pycon", *textwrap.dedent("\n".join(block)).split("\n"), "```"]
            continue
        if line.rstrip().endswith("::") and i + 1 < len(lines) and not lines[i + 1].strip():
            indent = len(line) - len(line.lstrip())
            j = i + 2
            block = []
            while j < len(lines) and (
                not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent
            ):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            if block:
                head = line.rstrip()[:-2].rstrip()
                if head.strip():
                    out.append(head + ":")
                out += ["", "```", *textwrap.dedent("\n".join(block)).split("\n"), "```", ""]
                i = j
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


class RestructuredText(griffe.Extension):
    """Rewrites the docstrings of the project's packages (see the module's docstring) and leaves
    each re-export (``piquet_env.game.Game``) to be documented where it is defined."""

    def __init__(self) -> None:
        super().__init__()
        self._busy = False

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        """Once the first project package is loaded, load the others (links cross them), then
        rewrite every docstring of all five."""
        if pkg.name not in PROJECT or self._busy:
            return
        self._busy = True
        collection = loader.modules_collection
        for name in PROJECT:
            if name not in collection.members:
                loader.load(name)
        for name in PROJECT:  # training/cli/ is the package piquet_cli, not piquet_training.cli
            package = collection.members[name]
            for sub in [m for m in package.members.values() if not m.is_alias and m.is_module]:
                if sub.filepath in [collection.members[n].filepath for n in PROJECT]:
                    del package.members[sub.name]
        loader.resolve_aliases(implicit=True, external=False)

        def canonical(path: str) -> str:
            try:
                return collection.get_member(path).canonical_path
            except (KeyError, ValueError, griffe.AliasResolutionError):
                return path

        for name in PROJECT:
            stack: list[griffe.Object] = [collection.members[name]]
            while stack:
                obj = stack.pop()
                if obj.docstring is not None:
                    text = convert_blocks(obj.docstring.value)
                    obj.docstring.value = convert_roles(text, obj.resolve, canonical)
                for member in obj.members.values():
                    if not member.is_alias:
                        stack.append(member)
                    elif in_project(member.target_path):
                        member.public = False  # documented at its definition
