"""The layers point one way: piquet_env imports neither agents nor training, agents does not
import training, training imports neither the table nor the command, and no project module takes
part in an import cycle; the batched engine imports only what it runs on."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
import pytest

from tests.project_modules import FOLDERS, ROOT, project_modules

LAYER = {
    "piquet_env": 0,
    "piquet_agents": 1,
    "piquet_training": 2,
    "piquet_table": 3,
    "piquet_cli": 4,
}
MODULES = project_modules()


def _imports(name: str, path: Path) -> set[str]:
    """The project modules that ``name`` imports anywhere in its source (lazy imports included)."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            top = target.split(".")[0]
            if top in ("agents", "training") or target.startswith(
                ("piquet_training.cli", "piquet_training.table")
            ):
                raise AssertionError(
                    f"{name} imports {target!r}: use the installed name piquet_{top}"
                )
            if target in MODULES:
                out.add(target)
            elif top in FOLDERS:
                raise AssertionError(f"{name} imports {target!r}, which is no project module")
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down_the_layers(name):
    layer = LAYER[name.split(".")[0]]
    upward = sorted(t for t in GRAPH[name] if LAYER[t.split(".")[0]] > layer)
    assert not upward, f"{name} imports upper layers: {upward}"


def test_no_import_cycles():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(GRAPH):
        if node not in state:
            visit(node)


def _fresh_python(code: str) -> subprocess.CompletedProcess:
    """``code`` run in a fresh interpreter (nothing imported yet), from tests/."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT / "tests"
    )


def test_env_and_gym_adapter_load_no_agent_or_training_module():
    code = (
        "import sys, gymnasium\n"
        "import piquet_env.piquet_v0, piquet_env.adapters.gymnasium\n"
        "e = gymnasium.make('Piquet-v0'); e.reset(seed=0)\n"
        "e.step(int(e.unwrapped.action_masks().nonzero()[0][0]))\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "             ('agents', 'training', 'piquet_agents', 'piquet_training', 'torch'))\n"
        "print(bad)\n"
    )
    out = _fresh_python(code)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_pyproject_lists_every_package():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {n for n, p in MODULES.items() if p.name == "__init__.py"}
    assert set(conf["packages"]) == packages
    assert conf["package-dir"] == FOLDERS


VECTOR_RUNS_ON = (
    "piquet_env.cards",
    "piquet_env.rules",
    "piquet_env.combinations",
    "piquet_env.actions",
    "piquet_env.game",
    "piquet_env.observation",
    "piquet_env.rewards",
    "piquet_env.settings",
    "piquet_env.vector",
)


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("piquet_env.vector")))
def test_batched_engine_imports_only_what_it_runs_on(name):
    """No env, adapter, rendering or harness module under the batched engine (issue 27)."""
    other = sorted(t for t in GRAPH[name] if not t.startswith(VECTOR_RUNS_ON))
    assert not other, f"{name} imports {other}"


@pytest.mark.parametrize(
    "name", sorted(n for n in MODULES if not n.startswith("piquet_env.testing"))
)
def test_no_runtime_module_imports_the_harnesses(name):
    """The harnesses of piquet_env.testing are called by the CLI and the tests only."""
    harness = sorted(
        t
        for t in GRAPH[name]
        if t.startswith("piquet_env.testing") and not name.startswith("piquet_cli")
    )
    assert not harness, f"{name} imports {harness}"


def test_the_commands_without_a_network_start_without_torch():
    """``piquet play``, ``replay``, ``serve`` and ``bench`` build their own parser alone: none
    imports torch to start (it costs 2-3 s a start); neither does every parser together
    (``piquet --help``, issue 57, point 26); a run that trains does, which shows the check can
    fail."""
    pytest.importorskip("torch")
    code = (
        "import sys\n"
        "from piquet_cli import build_parser\n"
        "for command in ('play', 'replay', 'serve', 'bench'):\n"
        "    build_parser(command)\n"
        "print('torch' in sys.modules)\n"
        "build_parser()\n"
        "print('torch' in sys.modules)\n"
        "import piquet_training.exploit.plan\n"
        "print('torch' in sys.modules)\n"
    )
    out = _fresh_python(code)
    assert out.stdout.split() == ["False", "False", "True"], out.stdout + out.stderr


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["exploit", "--help"]])
def test_version_and_help_import_no_torch(argv):
    """Issue 57, point 26: ``piquet --version`` and ``--help`` imported torch (about 5 s and
    237 MB) through the exploit command's modules; in a fresh interpreter they load none."""
    code = (
        "import sys\n"
        "from piquet_cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('torch' in sys.modules, file=sys.stderr)\n"
    )
    out = _fresh_python(code)
    assert out.stderr.split()[-1:] == ["False"], out.stderr
    assert "piquet" in out.stdout


def _named_modules(path: Path) -> set[str]:
    """The project modules that ``path`` names in a string as something to import or run: an
    ``import_module``/``__import__`` argument or the word after ``-m`` in an argument list (an
    import the graph above cannot see, issue 49)."""
    found = set()
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.add(first.value)
        if isinstance(node, (ast.List, ast.Tuple)):
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            found.update(
                words[i + 1]
                for i, w in enumerate(words[:-1])
                if w == "-m" and isinstance(words[i + 1], str)
            )
    return {n for n in found if n.split(".")[0] in LAYER}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_names_a_higher_layer_in_a_string(name):
    """``importlib.import_module("piquet_cli")`` or ``[python, "-m", "piquet_cli", ...]`` in a
    lower layer is an upward import all the same."""
    layer = LAYER[name.split(".")[0]]
    upward = sorted(n for n in _named_modules(MODULES[name]) if LAYER[n.split(".")[0]] > layer)
    assert not upward, f"{name} names upper layers in a string: {upward}"


def test_the_string_check_sees_both_forms(tmp_path: Path):
    """The check of the test above can fail: it finds both forms in a module that has them."""
    f = tmp_path / "m.py"
    f.write_text(
        "import importlib, sys\n"
        "importlib.import_module('piquet_cli.train')\n"
        "cmd = [sys.executable, '-m', 'piquet_table.web', '--port', '1']\n"
    )
    assert _named_modules(f) == {"piquet_cli.train", "piquet_table.web"}


def test_reading_the_benchmark_protocol_imports_no_torch():
    """The protocol is data: reading it (and its exploit budget's settings) needs no torch."""
    code = (
        "import sys\n"
        "from piquet_training.benchmark.protocol import PROTOCOL\n"
        "PROTOCOL.exploit_config_base()\n"
        "print('torch' in sys.modules)\n"
    )
    out = _fresh_python(code)
    assert out.stdout.split() == ["False"], out.stdout + out.stderr


def test_piquet_solve_checks_its_folder_without_torch(tmp_path: Path):
    """``piquet solve`` is tabular: refusing a folder that holds a solve (a user error, exit 2,
    one line) loads no torch."""
    held = tmp_path / "s"
    held.mkdir()
    (held / "policy.npz").write_bytes(b"")
    argv = ["solve", "--rules", "mini[suits=2,ranks=2,hand_size=1]", "--iterations", "1"]
    code = (
        "import sys\n"
        "from piquet_cli import main\n"
        f"rc = main({[*argv, '--no-progress', '--out', str(held)]!r})\n"
        "print(rc, 'torch' in sys.modules)\n"
    )
    out = _fresh_python(code)
    assert out.stdout.split() == ["2", "False"], out.stdout + out.stderr
    assert "holds a run already (policy.npz): continue it with --resume" in out.stderr
