"""Without the train extra the environment and the torch-free agents work, and whatever needs
torch says which extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

BLOCK = "import sys\nfor m in {mods}: sys.modules[m] = None\n"


def _run(code: str, mods: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCK.format(mods=mods) + code], capture_output=True, text=True
    )


def test_agents_without_torch_play_and_the_policy_names_the_extra():
    code = (
        "from piquet_agents import make_agent, play_game\n"
        "from piquet_env.game import Game\n"
        "seats = [make_agent('heuristic'), make_agent('random')]\n"
        "g = play_game(Game(seed=1, mode='deal'), seats)\n"
        "print(g.is_over)\n"
        "try:\n"
        "    import piquet_agents.policy\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = _run(code, ("torch", "safetensors"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "True"
    assert 'pip install "piquet-env[train]"' in lines[1]


@pytest.mark.parametrize("missing", ["torch", "openskill", "tqdm"])
def test_training_without_the_train_extra_names_it(missing):
    code = (
        "import importlib.util as u\n"
        "find = u.find_spec\n"
        f"u.find_spec = lambda n, *a: None if n == {missing!r} else find(n, *a)\n"
        "import piquet_training\n"
    )
    out = _run(code, (missing,))
    assert out.returncode == 1
    assert f"missing: {missing}" in out.stderr and "piquet-env[train]" in out.stderr
