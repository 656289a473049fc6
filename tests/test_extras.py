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
    assert 'pip install -e ".[train]"' in lines[1]


def test_training_without_the_train_extra_names_what_is_missing():
    """The package imports without the extra (it imports nothing); the trainer, which needs it,
    names the missing module (``piquet`` names the extra: tests/test_cli_env_only.py)."""
    code = "import piquet_training\nimport piquet_training.ppo.trainer\n"
    out = _run(code, ("torch",))
    assert out.returncode == 1
    assert "import of torch halted" in out.stderr.splitlines()[-1]


def test_the_command_names_the_train_extra_as_the_training_package_does():
    """``piquet`` decides what is missing without importing :mod:`piquet_training`, from its own
    copy of the list; the two stay the same, and so do ``bench``'s default batch sizes."""
    import piquet_training
    from piquet_cli import COMMANDS, build_parser
    from piquet_cli.bench import SIZES
    from piquet_cli.common import TRAIN_MODULES
    from piquet_env.testing.batch_speed import SIZES as BATCH_SIZES

    assert TRAIN_MODULES == piquet_training.TRAIN_EXTRA
    assert SIZES == BATCH_SIZES
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == [name for names, _, _ in COMMANDS.values() for name in names]


def test_an_import_error_that_is_no_missing_extra_is_not_hidden(monkeypatch):
    import piquet_cli

    def broken(name):
        raise ImportError(f"a bug in {name}")

    monkeypatch.setattr(piquet_cli.importlib, "import_module", broken)
    with pytest.raises(ImportError, match="a bug in piquet_cli.bench"):
        piquet_cli.build_parser()


def test_the_table_s_statistics_need_no_train_extra():
    """``piquet_table``'s results import the statistics of :mod:`piquet_training.evaluation.stats`
    with the train extra hidden: the training package's own import needs nothing of it."""
    code = (
        "import piquet_table.results, piquet_training.evaluation.stats as s\n"
        "print(s.__name__, 'torch' in sys.modules and sys.modules['torch'] is not None)"
    )
    out = _run(code, ("torch", "tqdm", "rich", "matplotlib", "safetensors", "openskill", "ray"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["piquet_training.evaluation.stats", "False"]


def test_importing_the_training_package_has_no_side_effects():
    """``import piquet_training`` changes no environment variable and imports no module of the
    train extra."""
    code = (
        "import os\n"
        "before = dict(os.environ)\n"
        "import piquet_training\n"
        "print(dict(os.environ) == before, 'torch' in sys.modules)"
    )
    out = _run(code, ())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]
