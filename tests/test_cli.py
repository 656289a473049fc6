"""The ``piquet`` command line as one program: shared arguments, one error format and exit status,
help text, output-path checks (``piquet_cli.common`` and ``piquet bench``)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from piquet_cli import build_parser, main
from piquet_cli.common import (
    CLIError,
    HelpFormatter,
    Parser,
    add_seed_argument,
    check_output_path,
    plain_text,
    resolve_seed,
    run_command,
    write_or_fall_back,
)
from piquet_env import __version__


def _run(argv, capsys):
    """``main(argv)`` as a user sees it: the exit status (SystemExit included) and the output."""
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_version(capsys):
    rc, out, _ = _run(["--version"], capsys)
    assert rc == 0 and out == f"piquet {__version__}\n"


@pytest.mark.parametrize(
    "argv, reason",
    [
        (["bench", "engine", "--rules", "bogus"], "unknown rules preset 'bogus'"),
        (["bench", "env", "--variant", "rubicon"], "unknown variant 'rubicon'"),
        (["bench", "engine", "--seconds", "-1"], "--seconds must be a positive number, got -1"),
        (["bench", "engine", "--seconds", "0"], "--seconds must be a positive number, got 0"),
        (["bench", "engine", "--seconds", "nan"], "--seconds must be a positive number, got nan"),
        (["bench", "engine", "--seconds", "inf"], "--seconds must be a positive number, got inf"),
        (["bench", "engine", "--seed", "-2"], "--seed must be 0 or more, got -2"),
    ],
)
def test_bench_user_errors_are_one_line_and_exit_2(argv, reason, capsys):
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and out == ""
    assert err.startswith(f"piquet bench: {reason}") and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv, reason",
    [
        (["bench"], "the following arguments are required: TARGET"),
        (["bench", "vectors"], "argument TARGET: invalid choice: 'vectors'"),
        (["bench", "engine", "--seconds", "abc"], "argument --seconds: invalid float value"),
        (["eval", "--compare", "a.json"], "argument --compare: expected 2 arguments"),
        (["eval", "random", "random", "--deals", "x"], "argument --deals: invalid int value"),
        (["ladder", "random", "random", "--mode", "set"], "argument --mode: invalid choice"),
    ],
)
def test_argparse_errors_are_worded_the_same_way(argv, reason, capsys):
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and out == ""
    usage, line = err.strip().splitlines()[0], err.strip().splitlines()[-1]
    assert usage.startswith(f"usage: piquet {argv[0]} ")
    assert line.startswith(f"piquet {argv[0]}: {reason}")


def test_bench_usage_names_the_target_as_its_required_message_does(capsys):
    _run(["bench"], capsys)
    rc, out, _ = _run(["bench", "--help"], capsys)
    assert rc == 0
    assert out.startswith("usage: piquet bench [-h]") and "TARGET" in out.split("\n\n")[0]
    description = out.split("\n\n")[1]
    assert description.startswith("Measure speed: the engines with random legal play")


def test_the_same_rules_error_is_worded_the_same_in_every_command(capsys, tmp_path):
    reasons = set()
    for argv in (
        ["bench", "engine", "--rules", "bogus"],
        ["eval", "random", "random", "--rules", "bogus"],
        ["ladder", "random", "heuristic", "--rules", "bogus", "--out", str(tmp_path / "l")],
        ["play", "--rules", "bogus"],
    ):
        rc, _, err = _run(argv, capsys)
        assert rc == 2
        prefix = f"piquet {argv[0]}: "
        assert err.startswith(prefix)
        reasons.add(err[len(prefix) :])
    assert len(reasons) == 1


ADOPTED = ("bench", "eval", "ladder", "play")
"""Subcommands built on the shared --rules/--variant/--seed of cli.common."""


@pytest.mark.parametrize("name", ADOPTED)
def test_shared_options_look_the_same_everywhere(name):
    parser = _subcommands()[name]
    opts = {a.dest: a for a in parser._actions}
    assert (opts["rules"].metavar, opts["rules"].default) == ("NAME", "standard")
    assert (opts["variant"].metavar, opts["variant"].default) == ("NAME", [])
    assert (opts["seed"].metavar, opts["seed"].default) == ("N", None)
    assert "default: a fresh seed, printed" in opts["seed"].help


def test_every_option_of_every_command_has_help_without_rest_markup():
    for name, parser in _subcommands().items():
        text = parser.format_help()
        assert "``" not in text and ":mod:" not in text and ":func:" not in text, name
        assert "%%" not in text, name
        for action in parser._actions:
            assert action.help, f"piquet {name}: {action.option_strings or action.dest} has no help"


@pytest.mark.parametrize(
    ("command", "flag"), [("play", "--opponent"), ("eval", "A"), ("ladder", "AGENT")]
)
def test_every_agent_spec_form_is_in_the_help(command, flag):
    """The forms come from the registry (``baseline`` and the guided search were missing)."""
    from piquet_agents.registry import FORMS

    parser = _subcommands()[command]
    action = next(a for a in parser._actions if flag in (*a.option_strings, a.metavar))
    text = " ".join(action.help.split())
    for form, what in FORMS:
        assert f"{form} ({what})" in text
    for name in ("random", "heuristic", "mcts", "baseline"):
        assert name in text
    assert "mcts:N:policy=PATH" in " ".join(parser.format_help().split())


def test_eval_help_says_95_percent_confidence():
    assert "95% confidence" in " ".join(_subcommands()["eval"].format_help().split())


def test_plain_text_and_the_formatter():
    assert plain_text(":func:`~a.b.c` and ``x`` and `y`") == "a.b.c and x and y"
    fmt = HelpFormatter("prog", width=30)
    text = fmt._fill_text("one two three four five six seven\n\n    keep   this  line", 30, "")
    assert text == "one two three four five six\nseven\n\n    keep   this  line"


def test_parser_strips_rest_even_with_another_formatter():
    p = Parser(prog="x", description="``piquet`` :mod:`m`", formatter_class=argparse.HelpFormatter)
    p.add_argument("--a", help="see ``b``")
    text = p.format_help()
    assert "piquet m" in text and "see b" in text and "`" not in text


def test_resolve_seed_draws_once_and_keeps_a_given_one():
    p = Parser(prog="x")
    add_seed_argument(p)
    args = p.parse_args([])
    seed = resolve_seed(args)
    assert isinstance(seed, int) and 0 <= seed < 2**32 and args.seed == seed
    assert resolve_seed(args) == seed
    assert resolve_seed(p.parse_args(["--seed", "7"])) == 7
    with pytest.raises(CLIError, match="--seed must be 0 or more"):
        resolve_seed(p.parse_args(["--seed", "-1"]))


def test_run_command_reports_user_errors_and_lets_bugs_through(capsys):
    def user_error(args):
        raise CLIError("--thing is wrong")

    def bug(args):
        raise ValueError("an internal invariant broke")

    def interrupted(args):
        raise KeyboardInterrupt

    ns = argparse.Namespace()
    assert run_command("demo", user_error, ns) == 2
    assert capsys.readouterr().err == "piquet demo: --thing is wrong\n"
    with pytest.raises(ValueError, match="internal"):
        run_command("demo", bug, ns)
    assert run_command("demo", interrupted, ns) == 130
    assert "piquet demo: interrupted" in capsys.readouterr().err


def test_a_checkpoint_error_is_a_user_error(capsys):
    from piquet_agents.checkpoint import CheckpointError

    def bad_file(args):
        raise CheckpointError("x.safetensors: not a checkpoint")

    assert run_command("eval", bad_file, argparse.Namespace()) == 2
    assert capsys.readouterr().err == "piquet eval: x.safetensors: not a checkpoint\n"


# ---------------------------------------------------------------------------- output paths


def test_check_output_path_accepts_what_can_be_written(tmp_path):
    assert check_output_path(tmp_path / "new.json", "--json") == tmp_path / "new.json"
    assert check_output_path(tmp_path / "a" / "b" / "new_dir", "--out", directory=True)
    (tmp_path / "old.json").write_text("{}")
    assert check_output_path(tmp_path / "old.json", "--json")
    assert check_output_path(tmp_path, "--out", directory=True) == tmp_path
    assert check_output_path(tmp_path / "new_dir", "--out", directory=True)


def test_check_output_path_refuses_what_cannot(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = [
        (afile / "g.json", False, f"--save {afile / 'g.json'}: {afile} is a file, not a directory"),
        (afile / "deep" / "g.json", False, f"{afile} is a file, not a directory"),
        (afile, True, f"--save {afile}: exists and is not a directory"),
        (tmp_path, False, f"--save {tmp_path}: is a directory; give a file name"),
        (tmp_path / "a" / "g.json", False, f"folder {tmp_path / 'a'} does not exist"),
        ("", False, "--save: the path is empty"),
    ]
    for path, directory, message in cases:
        with pytest.raises(CLIError) as err:
            check_output_path(path, "--save", directory=directory)
        assert message in str(err.value)
    assert afile.read_text() == "x"  # nothing touched


def test_check_output_path_refuses_a_read_only_folder(tmp_path, monkeypatch):
    """Permission bits do not stop root, so the check's own question (os.access) is answered
    "no" for the folder, as it is for an ordinary user on a read-only folder."""
    ro = tmp_path / "ro"
    ro.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: real(p, mode) and Path(p) != ro)
    with pytest.raises(CLIError, match=f"--json {ro / 'x.json'}: directory {ro} is not writable"):
        check_output_path(ro / "x.json", "--json")
    with pytest.raises(CLIError, match=f"--out {ro}: not writable"):
        check_output_path(ro, "--out", directory=True)
    assert check_output_path(tmp_path / "x.json", "--json")


def test_write_or_fall_back_writes_in_place_or_elsewhere_and_says_where(tmp_path, capsys):
    def write(path: Path) -> None:
        path.write_text("result")

    target = tmp_path / "sub" / "r.json"
    assert write_or_fall_back(target, write, "--json", "eval") == target
    assert target.read_text() == "result" and capsys.readouterr().err == ""

    blocked = tmp_path / "afile"
    blocked.write_text("x")
    got = write_or_fall_back(blocked / "r.json", write, "--json", "eval")
    assert got != blocked / "r.json" and got.name == "r.json" and got.read_text() == "result"
    err = capsys.readouterr().err
    assert err.startswith(f"piquet eval: could not write --json {blocked / 'r.json'}")
    assert err.rstrip().endswith(f"written to {got} instead")


def test_write_or_fall_back_raises_when_the_fallback_fails_too(tmp_path):
    def always_fails(path: Path) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_or_fall_back(tmp_path / "r.json", always_fails, "--json", "eval")


def test_the_console_entry_point_exits_2_without_a_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "piquet_cli", "bench", "engine", "--rules", "bogus"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("piquet bench: unknown rules preset 'bogus'")
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_bench_engine_runs_and_prints_its_seed(capsys):
    rc, out, _ = _run(["bench", "engine", "--seconds", "0.05", "--seed", "4"], capsys)
    assert rc == 0
    assert out.startswith("engine (standard, event log on): ") and "decisions/s" in out
    assert out.rstrip().endswith("; seed 4)")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    layout=st.lists(st.sampled_from(["dir", "file", "missing"]), min_size=1, max_size=4),
    directory=st.booleans(),
)
def test_an_accepted_path_is_written_in_place_and_a_refused_one_is_untouched(
    tmp_path_factory, layout, directory
):
    """Build a chain of path components, each an existing folder, an existing file or missing;
    whatever check_output_path accepts is then written where asked (no fallback), and whatever it
    refuses raises CLIError without touching anything."""
    root = tmp_path_factory.mktemp("paths")
    path = root
    for k, kind in enumerate(layout):
        path = path / f"c{k}"
        if kind == "dir" and path.parent.is_dir():
            path.mkdir()
        elif kind == "file" and path.parent.is_dir():
            path.write_text("keep")
    before = sorted((p, p.is_dir()) for p in root.rglob("*"))
    try:
        check_output_path(path, "--out", directory=directory)
    except CLIError:
        assert sorted((p, p.is_dir()) for p in root.rglob("*")) == before
        return
    if directory:
        path.mkdir(parents=True, exist_ok=True)
        written = write_or_fall_back(path / "x.json", lambda p: p.write_text("ok"), "--out", "t")
        assert written == path / "x.json"
    else:
        written = write_or_fall_back(path, lambda p: p.write_text("ok"), "--out", "t")
        assert written == path
    assert written.read_text() == "ok"


def test_bench_vector_prints_the_batch_beside_engine_and_env(capsys):
    rc, out, err = _run(["bench", "vector", "--sizes", "256", "--seconds", "0.2"], capsys)
    assert rc == 0, err
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("256 ")]
    assert [r[1] for r in rows] == ["1", "2", "2"]  # one thread, two threads, two processes
    assert all(int(r[-3].replace(",", "")) > 0 for r in rows)
    assert "bare engine, same play" in out and "env(), same play" in out
    assert "100,000 parallel games add" in out


def test_bench_agents_prints_each_agent_beside_the_engine(capsys):
    argv = ["bench", "agents", "--agents", "random", "heuristic", "--seconds", "0.2", "--seed", "3"]
    rc, out, err = _run(argv, capsys)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("agents on one core (standard, single deals")
    assert lines[1].split()[:3] == ["engine", "(random", "moves)"]
    for line, name in zip(lines[2:4], ("random", "heuristic")):
        words = line.split()
        assert words[0] == name and float(words[1].replace(",", "")) > 0
        assert "decisions/s" in line and "deals/s" in line
    assert out.rstrip().endswith("(repeat with --seed 3)")
    rc, _, err = _run(["bench", "agents", "--agents", "alphazero"], capsys)
    assert rc == 2 and err.startswith("piquet bench: --agents: agent spec 'alphazero'")


def test_bench_vector_refuses_a_batch_size_of_zero(capsys):
    rc, _, err = _run(["bench", "vector", "--sizes", "0"], capsys)
    assert rc == 2 and err.startswith("piquet bench: --sizes must be a positive number, got 0")


def test_train_help_names_every_shipped_recipe_and_an_idle_time():
    """Issue 50: the help named 3 of the 6 recipes, not the shipped baseline's ``wide-magnet``,
    and stated a time that holds only on an idle machine without saying so."""
    from piquet_training.settings.recipes import recipe_names

    text = " ".join(_subcommands()["train"].format_help().split())
    assert recipe_names() == ["classic", "classic-magnet", "long", "mini", "wide", "wide-magnet"]
    assert "recipe (classic, classic-magnet, long, mini, wide, wide-magnet: --list-configs)" in text
    assert "(15-25 min on 2 idle cores)" in text and "< 15 min" not in text
