"""The package as a user installs it: a wheel built from the sources, installed in a fresh
virtual environment, run outside any checkout. The recipes are package data, so ``piquet train
--config wide`` works there (issue 37: the wheel shipped no TOML, and ``--config
training/settings/wide.toml`` worked only from a checkout).

The fresh environment gets its dependencies (torch...) from this one's site-packages, added as
plain path entries (so this environment's editable install of the project is not active there),
and the project itself only from the wheel.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(
    ".git", ".venv*", "runs", "site", ".site*", "build", "dist", "*.egg-info", "__pycache__",
    ".pytest_cache", ".ruff_cache", ".hypothesis", "shared",
)  # fmt: skip


def run(*argv: str | Path, cwd: Path, timeout: int = 600) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONNOUSERSITE": "1"},
    )
    assert done.returncode == 0, f"{argv}: {done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv holding the project's wheel (and this environment's dependencies)."""
    pytest.importorskip("setuptools", reason="building the wheel needs setuptools")
    tmp = tmp_path_factory.mktemp("wheel")
    src, wheels, venv = tmp / "src", tmp / "wheels", tmp / "venv"
    shutil.copytree(ROOT, src, ignore=SKIP, symlinks=True)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "--wheel-dir", wheels, src, cwd=tmp)  # fmt: skip
    (wheel,) = wheels.glob("piquet_env-*.whl")
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp)
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (purelib / "_dependencies.pth").write_text("\n".join(deps) + "\n")
    run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q",
        "--no-deps", wheel, cwd=tmp)  # fmt: skip
    return venv


@pytest.mark.slow
def test_the_recipes_are_listed_and_train_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    piquet, python = installed / "bin" / "piquet", installed / "bin" / "python"
    code = "import piquet_training; print(piquet_training.__file__)"
    where = run(python, "-c", code, cwd=tmp_path)
    assert where.startswith(str(installed)), where  # the wheel's, not the checkout's
    listed = run(piquet, "train", "--list-configs", cwd=tmp_path)
    for name in ("long", "wide", "wide-magnet", "classic", "classic-magnet"):
        assert f"\n{name} " in f"\n{listed}"
    assert str(installed) in listed
    shown = run(piquet, "train", "--config", "wide", "--show-config", cwd=tmp_path)
    assert "hidden = [512, 512]" in shown and 'out_dir = "runs/wide"' in shown
    sets = {
        "updates": 1, "bc_games": 8, "bc_epochs": 1, "num_envs": 8, "games_per_update": 8,
        "eval_every": 0, "final_eval_deals": 2, "eval_workers": 1, "mode": "deal",
        "eval_mode": "deal", "tensorboard": "false", "out_dir": tmp_path / "run",
    }  # fmt: skip
    argv = [piquet, "train", "--config", "wide", *(f"--set={k}={v}" for k, v in sets.items())]
    out = run(*argv, cwd=tmp_path)
    assert "outputs in" in out
    assert (tmp_path / "run" / "policy.safetensors").is_file()
    # the shipped policies, the current and the retired, are package data too
    code = (
        "from piquet_agents.registry import make_agent; from piquet_env.rules import make_rules; "
        "print(*(make_agent(s, make_rules(r)).name for s, r in (('baseline', 'standard'), "
        "('baseline@2026-11-30', 'standard'), ('baseline', 'classic'), "
        "('baseline@2026-12-01', 'classic'))))"
    )
    names = ["baseline", "baseline@2026-11-30", "baseline", "baseline@2026-12-01"]
    assert run(python, "-c", code, cwd=tmp_path).split() == names
