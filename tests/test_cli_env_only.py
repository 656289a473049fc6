"""``piquet`` with the environment alone installed (``pip install -e .``: numpy, gymnasium,
pettingzoo): ``--help`` lists every command, ``bench``, ``play`` and ``replay`` work, and the
commands that need the train extra say so in one line and exit 2 (issue 28, point 7: they printed
a traceback).

Each run is a subprocess in which the train extra's modules (and Ray) cannot be imported, so this
runs in the full install as in the env-only one (``.ci/run``'s ``.venv-ci-min``), where nothing is
blocked because nothing is there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from piquet_cli.common import TRAIN_MODULES

ROOT = Path(__file__).resolve().parents[1]
BLOCKED = (*TRAIN_MODULES, "ray", "tensorboard")
RUN = """\
import runpy, sys
for name in {blocked!r}:
    sys.modules[name] = None  # `import name` raises ModuleNotFoundError, find_spec gives None
try:
    import torch
except ImportError:
    pass
else:
    raise SystemExit("the blocker let torch in")
sys.argv = ["piquet", *{argv!r}]
runpy.run_module("piquet_cli", run_name="__main__")
"""
NEEDS = "needs torch, tqdm, rich, matplotlib, safetensors, openskill: pip install -e '.[train]'"


def piquet(*argv: str, stdin: str = "") -> subprocess.CompletedProcess:
    """``piquet ARGV`` without the train extra."""
    return subprocess.run(
        [sys.executable, "-c", RUN.format(blocked=BLOCKED, argv=list(argv))],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=ROOT,
        env=dict(os.environ, PYTHONIOENCODING="utf-8", NO_COLOR="1"),
        timeout=120,
    )


def test_help_lists_every_command_and_says_which_need_the_train_extra() -> None:
    out = piquet("--help")
    assert out.returncode == 0, out.stderr
    listed: dict[str, str] = {}
    for line in out.stdout.splitlines():
        if line.startswith("    ") and line[4] != " ":  # a command (its help may wrap below)
            name = line.split()[0]
            listed[name] = line
        elif line.startswith("     ") and listed:
            listed[name] += " " + line.strip()
    assert list(listed) == [
        "bench", "eval", "ladder", "train", "exploit", "solve", "benchmark", "play", "replay",
        "serve", "humans",
    ]  # fmt: skip
    for name in ("eval", "ladder", "train", "exploit", "solve", "benchmark", "humans"):
        assert "(needs the train extra: pip install -e '.[train]')" in listed[name]
    assert "(needs the web extra: pip install -e '.[web]')" in listed["serve"]
    assert "measure the speed of the engine" in listed["bench"]
    assert "play a partie" in listed["play"]
    assert out.stderr == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["train"],
        ["train", "--help"],
        ["train", "--backend", "rllib", "--resume", "runs/x"],
        ["eval", "random", "heuristic", "--deals", "2"],
        ["eval", "--help"],
        ["ladder", "random", "heuristic"],
        ["benchmark", "random", "--out", "r.json"],
    ],
)
def test_a_command_that_needs_the_train_extra_says_so_in_one_line(argv: list[str]) -> None:
    out = piquet(*argv)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", f"piquet {argv[0]}: {NEEDS}\n")


def test_bench_play_and_replay_work(tmp_path: Path) -> None:
    bench = piquet("bench", "engine", "--seconds", "0.2", "--seed", "1")
    assert bench.returncode == 0, bench.stderr
    assert "decisions/s" in bench.stdout and "seed 1" in bench.stdout
    record = tmp_path / "game.json"
    play = piquet(
        "play", "--opponent", "heuristic", "--seed", "1", "--save", str(record), stdin="1\n" * 400
    )
    assert play.returncode == 0, play.stderr
    assert "wins the partie" in play.stdout and record.is_file()
    replay = piquet("replay", str(record), "--all")
    assert replay.returncode == 0, replay.stderr
    assert "Score sheet:" in replay.stdout
    help_text = piquet("play", "--help")
    assert help_text.returncode == 0 and "mcts:N:policy=PATH" in help_text.stdout


@pytest.mark.parametrize("spec", ["baseline", "mcts:20:policy=baseline"])
def test_an_agent_that_needs_torch_says_so(spec: str) -> None:
    out = piquet("play", "--opponent", spec, "--seed", "1")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        f"piquet play: agent spec {spec!r}: needs torch: pip install -e '.[train]'\n"
    )
