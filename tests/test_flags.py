"""The library speaks in values, the command line in flags: library errors name settings by the
library's names (:class:`piquet_env.errors.Setting`), ``piquet_cli.flags`` is the one map that
writes them as flags, no library module raises an error whose text spells a flag, and the
commands still name their flags."""

from __future__ import annotations

import ast
import pickle
import re

import pytest

from piquet_cli import main
from piquet_cli.common import cli_error
from piquet_cli.flags import flag, reason
from piquet_env.errors import Message, Setting, message_of
from tests.project_modules import project_modules

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
"""A command-line flag in a string."""


def test_a_message_reads_in_the_library_names_and_renders_in_flags():
    msg = Message("use ", Setting("rules", "mini"), " or ", Setting("resume"), path="/x")
    err = ValueError(msg)
    assert str(err) == "use rules='mini' or resume"
    assert message_of(err) is msg and msg.settings == (Setting("rules", "mini"), Setting("resume"))
    assert reason("solve", err) == "use --rules mini or --resume"
    back = pickle.loads(pickle.dumps(err))  # errors cross process and Ray boundaries
    assert message_of(back) == msg and message_of(back).path == "/x"
    assert message_of(ValueError("plain")) is None and reason(None, ValueError("plain")) == "plain"


@pytest.mark.parametrize(
    ("command", "setting", "text"),
    [
        ("eval", Setting("pairs"), "--deals"),
        ("exploit", Setting("pairs"), "--eval-deals"),
        ("exploit", Setting("target"), "TARGET"),
        ("train", Setting("overrides"), "--set"),
        ("train", Setting("tensorboard", False), "--set tensorboard=false"),
        ("eval", Setting("ray", "local"), "--ray local"),
        ("benchmark", Setting("work_dir"), "--work"),
        ("solve", Setting("iterations", 10), "--iterations 10"),
    ],
)
def test_the_one_map_of_settings_to_flags(command, setting, text):
    assert flag(setting, command) == text


def test_a_wrapped_error_keeps_its_settings():
    err = cli_error(ValueError(Message("use ", Setting("rules", "mini"))), "--exact: ")
    assert str(err) == "--exact: use rules='mini'"
    assert reason("eval", err) == "--exact: use --rules mini"


def _raised_strings(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for sub in ast.walk(node.exc):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    yield node.lineno, sub.value


def test_no_library_error_spells_a_flag():
    """Below the command line, no raised error's text names a flag: it names a setting."""
    found = []
    for name, path in project_modules().items():
        if name.startswith("piquet_cli") or ".studies." in name or ".testing." in name:
            continue  # the command line, and scripts with command lines of their own
        for line, text in _raised_strings(ast.parse(path.read_text())):
            if FLAG.search(text):
                found.append(f"{name}:{line}: {text!r}")
    assert not found, "\n".join(found)


def test_the_commands_still_name_their_flags(tmp_path, capsys):
    assert main(["solve", "--rules", "standard"]) == 2
    assert capsys.readouterr().err.endswith("; use --rules mini\n")
    cfg = tmp_path / "bad"
    assert main(["train", "--set", "clip_coef=-1", "--set", f"out_dir={cfg}"]) == 2
    assert capsys.readouterr().err == (
        "piquet train: --set: clip_coef must be a number > 0, got -1.0\n"
    )
