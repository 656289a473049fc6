"""The documentation site (docs/, built by ``mkdocs build --strict`` in .ci/run) against the code.

- Every ```python block of every page runs, as the README's do (tests/test_readme.py). A block
  that needs an optional extra says so on the line before it, ``<!-- docs-test: needs MODULE -->``
  (skipped, naming the module, where it is missing); a block that is a whole script, run as
  ``python FILE.py`` would run it (its ``if __name__ == "__main__":`` part, worker processes
  that import it), says ``<!-- docs-test: script -->`` (or ``script needs MODULE``) and runs in a
  fresh interpreter from a file of its own; a block that includes code tested elsewhere
  (``--8<-- "tests/...:section"``) must name a section that exists there.
- The API reference (docs/reference/*.md) holds a ``::: module`` for every public module of the
  five packages, and nothing else; every public module, class, function and method has a
  docstring (public as the reference's renderer, griffe, decides it: no underscore, listed in
  ``__all__`` where a module has one).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project_modules import FOLDERS, ROOT, project_modules

DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_scripts" not in p.parts)
BLOCK = re.compile(
    r"(?:^<!-- docs-test: (?P<marker>[^>]*?) -->\n)?^```python[^\n]*\n(?P<code>.*?)^```",
    flags=re.S | re.M,
)
"""A Python block of a page, with the marker line before it if there is one."""
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^":]+)(?::(?P<section>[\w-]+))?"$')
"""A pymdownx.snippets include line: a file, or a named section of it."""


def _blocks() -> list:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for i, m in enumerate(BLOCK.finditer(text)):
            line = text.count("\n", 0, m.start("code")) + 1
            script = (m.group("marker") or "").startswith("script")
            found.append(
                pytest.param(
                    page,
                    line,
                    m.group("marker"),
                    m.group("code"),
                    id=f"{page.relative_to(DOCS)}:{line}:{i}",
                    marks=[pytest.mark.slow] if script else [],  # started first under xdist
                )
            )
    return found


BLOCKS = _blocks()


def test_the_pages_have_examples():
    assert len(BLOCKS) >= 15
    assert {p.name for p in PAGES} >= {"index.md", "getting-started.md", "environment.md"}


@pytest.mark.parametrize(("page", "line", "marker", "code"), BLOCKS)
def test_page_example_runs(page, line, marker, code, tmp_path):
    lines = code.strip().splitlines()
    includes = [SNIPPET.match(s) for s in lines]
    if all(includes):
        for inc in includes:
            target = ROOT / inc.group("path")
            assert target.is_file(), f"{page.name}:{line}: no file {inc.group('path')}"
            if inc.group("section"):
                assert f"# --8<-- [start:{inc.group('section')}]" in target.read_text(), (
                    f"{page.name}:{line}: no section {inc.group('section')} in {target.name}"
                )
        return
    script = False
    if marker:
        script = marker == "script" or marker.startswith("script ")
        verb, _, rest = marker.removeprefix("script").strip().partition(" ")
        assert (script and not verb) or (verb == "needs" and rest), (
            f"{page.name}:{line}: unknown marker {marker!r}"
        )
        for module in rest.split():
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"needs {module} (an optional extra), not installed")
    source = "\n" * (line - 1) + code  # tracebacks point at the page's own lines
    if script:
        _run_script(source, page, line, tmp_path)
        return
    exec(compile(source, str(page), "exec"), {"__name__": "docs_example"})


def _run_script(source: str, page: Path, line: int, where: Path) -> None:
    """Run ``source`` as ``python FILE.py`` in a fresh interpreter, in an empty folder."""
    path = where / f"{page.stem.replace('-', '_')}_{line}.py"
    path.write_text(source, encoding="utf-8")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, str(path)], cwd=where, capture_output=True, text=True, env=env, timeout=900
    )
    tail = done.stderr[-3000:]
    assert done.returncode == 0, f"{page.name}:{line}: exit {done.returncode}\n{tail}"


# ---------------------------------------------------------------------------- API reference


def _packages() -> dict:
    """The five packages as griffe loads them (statically, nothing imported)."""
    griffe = pytest.importorskip("griffe", reason="the docs extra is not installed")
    loader = griffe.GriffeLoader()
    return {name: loader.load(name) for name in FOLDERS}


def _public(obj) -> bool:
    return not any(part.startswith("_") for part in obj.path.split(".")) and obj.is_public


MODULES = set(project_modules())
"""The installed modules (griffe reads ``training/cli/`` as ``piquet_training.cli``, but it is
the package ``piquet_cli``)."""


def _walk(obj):
    """Every public module, class and function (methods included) at and below ``obj``,
    aliases (re-exports) left out: they are documented where they are defined."""
    for member in obj.members.values():
        if member.is_alias or not _public(member):
            continue
        if member.is_module and member.path not in MODULES:
            continue
        if member.is_module or member.is_class or member.is_function:
            yield member
        if member.is_module or member.is_class:
            yield from _walk(member)


@pytest.fixture(scope="module")
def objects() -> list:
    found = []
    for pkg in _packages().values():
        found.append(pkg)
        found += list(_walk(pkg))
    return found


def _documented_modules() -> dict[str, Path]:
    named = {}
    for page in sorted((DOCS / "reference").glob("*.md")):
        for name in re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), flags=re.M):
            assert name not in named, f"{name} is in both {named.get(name)} and {page.name}"
            named[name] = page
    return named


def test_the_api_reference_lists_every_public_module(objects):
    modules = {o.path for o in objects if o.is_module}
    listed = set(_documented_modules())
    assert "piquet_env.observation" in modules and "piquet_cli" in modules
    assert not modules - listed, f"missing from docs/reference/: {sorted(modules - listed)}"
    assert not listed - modules, f"not public modules: {sorted(listed - modules)}"


def test_every_public_object_has_a_docstring(objects):
    missing = sorted(o.path for o in objects if not (o.docstring and o.docstring.value.strip()))
    assert not missing, f"public objects without a docstring: {missing}"


def test_the_cli_page_names_every_command():
    """The CLI page's opening lists every subcommand of ``piquet`` (issue 50: it omitted
    ``solve``), and says where each is explained."""
    from piquet_cli import COMMANDS

    text = (DOCS / "cli.md").read_text(encoding="utf-8").split("<!-- generated: cli -->")[0]
    listing, explained = text.split("Where each command is explained")
    names = [c for commands, _, _ in COMMANDS.values() for c in commands]
    assert "solve" in names and len(names) == 11
    assert [c for c in names if f"`{c}`" not in listing] == []
    assert [c for c in names if f"`{c}`" not in explained] == []


def test_each_results_page_opens_with_its_current_figures():
    """Issue 50: the results pages read like lab notebooks. Each (but the index) has a headline
    table, "Current figures", each row with its date, then everything else under "History"; every
    number of the headline table is one the page's history states (no figure made up, none
    lost: the history keeps the text as it was)."""
    number = re.compile(r"\d[\d,]*(?:\.\d+)?")
    pages = sorted(p for p in (DOCS / "results").glob("*.md") if p.name != "index.md")
    assert len(pages) == 12
    for page in pages:
        text = page.read_text(encoding="utf-8")
        sections = [line for line in text.splitlines() if line.startswith("## ")]
        assert sections == ["## Current figures", "## History"], page.name
        head, history = text.split("## History")
        if "<!-- generated: benchmark_runs -->" in history:  # the runs, from the result files
            from piquet_training.benchmark.results import runs_table

            history += runs_table(sorted((DOCS / "results" / "benchmark").glob("*.json")))
        rows = [r for r in head.splitlines() if r.startswith("| ") and "---" not in r][1:]
        assert rows, page.name
        for row in rows:
            what, figure, date, _ = [c.strip() for c in row.strip("|").split(" | ")]
            assert re.fullmatch(r"2026-1[12]-\d\d", date), (page.name, what, date)
            plain = re.sub(r"`[^`]*`|\[[^]]*\]\([^)]*\)", "", figure)  # names, links
            missing = [n for n in number.findall(plain) if n not in history]
            assert not missing, (page.name, what, missing)
