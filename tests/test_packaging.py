"""Packaging that coexists: installed names, dependencies, extras, package data, registration.

The package installs ``piquet_env``, ``piquet_agents`` and ``piquet_training`` (from the folders
``piquet_env/``, ``agents/``, ``training/``) and no generic top-level name: a user's own
``agents/`` or ``training/`` folder, or openai-agents' ``agents`` package, and ours do not shadow
each other. Each check runs in a fresh interpreter whose working directory is a temporary project.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from piquet_env import registration

REPO = Path(__file__).resolve().parents[1]


def run(code: str, cwd: Path) -> str:
    """Run ``code`` in a fresh interpreter in ``cwd`` (first on its sys.path); its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    """A user's RL project with its own ``agents/`` and ``training/`` packages."""
    for name in ("agents", "training"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"WHOSE = 'user {name}'\n")
    return tmp_path


def test_a_users_agents_and_training_folders_and_ours_coexist(user_project):
    out = run(
        "import agents, training\n"
        "assert agents.WHOSE == 'user agents' and training.WHOSE == 'user training'\n"
        "from piquet_env.adapters.gymnasium import PiquetGymEnv\n"
        "env = PiquetGymEnv(mode='deal'); env.reset(seed=0)\n"
        "import piquet_env, gymnasium\n"
        "gymnasium.make('Piquet-v0').reset(seed=0)\n"
        "import importlib.util\n"
        "if importlib.util.find_spec('torch'):\n"
        "    from piquet_agents import make_agent\n"
        "    make_agent('heuristic', env.rules)\n"
        "    import piquet_cli\n"
        "import agents as again\n"
        "assert again.WHOSE == 'user agents'\n"
        "print('ok')\n",
        user_project,
    )
    assert out.strip() == "ok"


def _openai_agents_installed() -> bool:
    """Whether ``agents`` imports from site-packages outside the repository (openai-agents)."""
    code = "import importlib.util as u; s = u.find_spec('agents'); print(s.origin if s else '')"
    origin = subprocess.run(
        [sys.executable, "-c", code], cwd="/", capture_output=True, text=True, timeout=60
    ).stdout.strip()
    return "site-packages" in origin


@pytest.mark.skipif(
    not _openai_agents_installed(),
    reason="openai-agents is not installed (CI installs it to check coexistence)",
)
def test_openai_agents_and_ours_coexist(tmp_path):
    out = run(
        "from agents import Agent, Runner\n"
        "import piquet_agents, piquet_env\n"
        "from piquet_env import piquet_v1\n"
        "e = piquet_v1.env(); e.reset(seed=0)\n"
        "from agents import Agent as again\n"
        "assert again is Agent\n"
        "print(Agent.__module__.split('.')[0], piquet_agents.__name__)\n",
        tmp_path,
    )
    assert out.split() == ["agents", "piquet_agents"]


def test_no_generic_top_level_names_are_installed(tmp_path):
    """Outside the repository, ``agents`` and ``training`` are not ours (absent, or another
    distribution's), while our three names import."""
    out = run(
        "import importlib.util as u\n"
        "for name in ('agents', 'training', 'piquet_env', 'piquet_agents', 'piquet_training'):\n"
        "    s = u.find_spec(name)\n"
        "    print(name, s.origin if s else None)\n",
        tmp_path,
    )
    origins = dict(line.split(" ", 1) for line in out.strip().splitlines())
    for name in ("agents", "training"):
        assert origins[name] == "None" or not origins[name].startswith(str(REPO / name))
    assert origins["piquet_agents"] == str(REPO / "agents" / "__init__.py") or (
        "site-packages" in origins["piquet_agents"]
    )
    for name in ("piquet_env", "piquet_training"):
        assert origins[name] != "None"


def test_env_only_dependencies_and_extras():
    meta = importlib.metadata.metadata("piquet-env")
    core = {
        r.split(";")[0].split(">")[0].split("=")[0].strip()
        for r in meta.get_all("Requires-Dist")
        if "extra ==" not in r
    }
    assert core == {"numpy", "gymnasium", "pettingzoo"}
    extras = set(meta.get_all("Provides-Extra"))
    assert {"train", "render", "rllib", "openspiel", "integrations", "agilerl", "test"} <= extras
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("torch") and 'extra == "train"' in r for r in requires)
    assert any(r.startswith("pettingzoo>=1.24.3") for r in requires)
    assert meta["License-Expression"] == "MIT"


def test_package_data_rules_and_typing():
    import piquet_env

    text = piquet_env.rules_document()
    assert text.startswith("#") and "settle" in text.lower()
    assert (REPO / "piquet_env" / "RULES.md").read_text(encoding="utf-8") == text
    from importlib.util import find_spec

    for package in ("piquet_env", "piquet_agents", "piquet_training"):
        # find_spec locates a package without running it (piquet_training needs the train extra)
        assert (Path(find_spec(package).origin).parent / "py.typed").is_file()
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


def test_import_piquet_env_is_light_and_registers_lazily(tmp_path):
    out = run(
        "import sys, piquet_env\n"
        "heavy = [m for m in ('numpy', 'gymnasium', 'pettingzoo', 'torch') if m in sys.modules]\n"
        "print(heavy)\n",
        tmp_path,
    )
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    "order",
    [
        "import piquet_env\nimport gymnasium\nimport pettingzoo\n",
        "import gymnasium\nimport pettingzoo\nimport piquet_env\n",
        "import gymnasium\nimport piquet_env\nimport pettingzoo\n",
    ],
)
def test_ids_are_registered_whatever_the_import_order(tmp_path, order):
    code = order + (
        "env = gymnasium.make('Piquet-v0', mode='deal')\n"
        "obs, info = env.reset(seed=0)\n"
        "assert obs.shape == (433,) and info['action_mask'].any()\n"
        "assert gymnasium.spec('PiquetDeal-v0').kwargs == {'mode': 'deal'}\n"
        "if hasattr(pettingzoo, 'make'):\n"
        "    for name in ('piquet-v0', 'piquet-v1'):\n"
        "        e = pettingzoo.make('aec', name); e.reset(seed=0)\n"
        "        assert e.unwrapped.metadata['name'] == name.replace('-', '_')\n"
        "print('ok')\n"
    )
    assert run(code, tmp_path).strip() == "ok"


def test_registration_tables():
    assert set(registration.GYMNASIUM_IDS) == {"Piquet-v0", "PiquetDeal-v0"}
    assert registration.PETTINGZOO_IDS == {
        "piquet-v0": "piquet_env.piquet_v0:env",
        "piquet-v1": "piquet_env.piquet_v1:env",
    }
    assert registration.RLCARD_IDS == {"piquet": "piquet_env.adapters.rlcard:PiquetRLCardEnv"}


def test_missing_extras_name_the_extra_to_install(tmp_path):
    out = run(
        "import sys\n"
        "sys.modules['matplotlib'] = None\n"
        "sys.modules['matplotlib.figure'] = None\n"
        "sys.modules['matplotlib.backends.backend_agg'] = None\n"
        "sys.modules['pyspiel'] = None\n"
        "from piquet_env import piquet_v1\n"
        "e = piquet_v1.raw_env(render_mode='rgb_array'); e.reset(seed=0)\n"
        "try:\n"
        "    e.render()\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
        "try:\n"
        "    import piquet_env.adapters.openspiel\n"
        "except ImportError as exc:\n"
        "    print(exc)\n",
        tmp_path,
    )
    lines = out.strip().splitlines()
    assert len(lines) == 2
    assert 'pip install -e ".[render]"' in lines[0]
    assert 'pip install -e ".[openspiel]"' in lines[1]


def test_no_two_paths_differ_only_in_case():
    """A checkout on macOS or Windows (case-insensitive file systems) holds every file: no two
    paths of the project are the same but for case (docs/rules.md and docs/RULES.md were)."""
    seen: dict[str, str] = {}
    skip = {".git", "runs", "site", "build", "dist", "shared", "__pycache__"}
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith((".venv", ".site"))]
        for name in dirs + files:
            path = os.path.relpath(os.path.join(folder, name), REPO)
            other = seen.setdefault(path.lower(), path)
            assert other == path, f"{other} and {path} differ only in case"


def test_the_citation_and_the_urls_are_the_packages():
    """CITATION.cff, pyproject's [project.urls] and mkdocs.yml's site_url/repo_url name the same
    version and addresses; the docs' BibTeX the same version."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    import piquet_env

    def fields(text: str, sep: str) -> dict[str, str]:
        pairs = (line.split(sep, 1) for line in text.splitlines() if sep in line)
        return {k.strip(): v.strip().strip('"') for k, v in pairs if k[:1].isalpha()}

    cff = fields((REPO / "CITATION.cff").read_text(encoding="utf-8"), ": ")
    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    site = fields((REPO / "mkdocs.yml").read_text(), ": ")
    assert cff["cff-version"] == "1.2.0" and cff["version"] == piquet_env.__version__
    assert cff["repository-code"] == urls["Repository"] == site["repo_url"]
    assert cff["url"] == urls["Documentation"] == site["site_url"]
    bibtex = (REPO / "docs" / "citing.md").read_text(encoding="utf-8")
    assert f"version = {{{piquet_env.__version__}}}" in bibtex
    assert f"url     = {{{site['repo_url']}}}" in bibtex
