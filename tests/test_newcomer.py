"""What a newcomer meets following the docs (issue 57): the names the docs and ``--help`` give
are the ones the commands use, and messages say things one way."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from piquet_env.rules import make_rules

ROOT = Path(__file__).resolve().parents[1]


def test_the_solve_folder_named_in_the_docs_and_help_is_the_default():
    """exact.md and ``piquet solve --help`` named ``runs/solve-mini``; the solve goes to
    ``runs/solve-standard+mini``, so exact.md's next step found no checkpoint."""
    from piquet_cli import solve

    args = argparse.Namespace(resume=None, out=None)
    default = solve._out_dir(args, make_rules("mini")).as_posix()
    assert default == "runs/solve-standard+mini"
    for text in ((ROOT / "docs" / "exact.md").read_text(), solve.__doc__ or ""):
        named = set(re.findall(r"runs/solve-[\w+.-]+", text))
        assert named == {default}, named


def test_a_json_file_in_a_missing_folder_is_one_line_and_no_folder_is_made(tmp_path, capsys):
    """``--json /nonexistent/dir/x.json`` made ``/nonexistent/dir`` at the filesystem's root
    (as root); a file's missing folder is now refused before any work, and nothing is made."""
    from piquet_cli import main

    missing = tmp_path / "nonexistent" / "dir"
    args = ["eval", "random", "random", "--deals", "2", "--seed", "1", "--no-progress"]
    for flag in ("--json", "--record"):
        assert main([*args, flag, str(missing / "x.json")]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == (
            f"piquet eval: {flag} {missing / 'x.json'}: folder {missing} does not exist "
            "(create it, or give another)\n"
        )
    assert not (tmp_path / "nonexistent").exists()


def test_every_command_names_its_seed_in_one_wording(tmp_path, capsys):
    """eval, ladder, serve and bench worded the seed four ways; now one (``seed_text``)."""
    from piquet_cli import main
    from piquet_cli.common import seed_text

    assert seed_text(7) == "seed 7 (repeat with --seed 7)"
    assert main(["eval", "random", "random", "--deals", "2", "--seed", "7", "--no-progress"]) == 0
    assert "  seed 7 (repeat with --seed 7)\n" in capsys.readouterr().out
    ladder = ["ladder", "random", "heuristic", "--deals", "2", "--seed", "7", "--no-progress"]
    assert main([*ladder, "--out", str(tmp_path / "lad")]) == 0
    assert "  seed 7 (repeat with --seed 7)\n" in capsys.readouterr().out
    words = re.compile(r"--seed \{[^}]+\} deals|repeat with --seed \{")
    cli = ROOT / "training" / "cli"
    assert [p.name for p in cli.glob("*.py") if words.search(p.read_text())] == ["common.py"]


TINY = "mini[suits=2,ranks=3,hand_size=2]"


def test_exact_says_the_plain_heuristic_is_taken_as_one_pure_policy(capsys):
    """``piquet exploit heuristic --rules mini --exact`` gave exactly ``heuristic:seed=0``'s value
    while the docs called the plain ``heuristic`` a reseeded mixture: the output now says which
    pure policy its figures are for, and they are that policy's."""
    from piquet_cli import main

    assert main(["exploit", "heuristic", "--rules", TINY, "--exact", "--seed", "3"]) == 0
    plain = capsys.readouterr().out
    assert "heuristic taken as heuristic:seed=3, one pure policy" in plain
    assert main(["exploit", "heuristic:seed=3", "--rules", TINY, "--exact", "--seed", "3"]) == 0
    fixed = capsys.readouterr().out
    assert "taken as" not in fixed

    def figures(out: str) -> list[str]:
        lines = out.splitlines()
        return [line for line in lines if "points per deal" in line or "NashConv" in line]

    assert figures(plain) == figures(fixed)
    text = " ".join((ROOT / "docs" / "exact.md").read_text().split())
    assert "`--exact` takes it as `heuristic:seed=N` of the run's `--seed N`" in text
    match = ["eval", "heuristic", "random", "--rules", TINY, "--deals", "4", "--seed", "3"]
    assert main([*match, "--exact", "--no-progress"]) == 0
    assert "heuristic taken as heuristic:seed=3, one pure policy" in capsys.readouterr().out


def test_every_install_named_is_one_from_a_clone():
    """The README, getting-started and every "needs ..." message said ``pip install
    'piquet-env[...]'``, but the package is on no index: each now names ``pip install -e
    '.[...]'``, and the install sections say it runs in a clone of the repository."""
    import subprocess

    files = subprocess.run(
        ["git", "ls-files", "*.py", "*.md"], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.split()
    from_index = re.compile(r"pip install [\"']?piquet-env\b")
    history = ("docs/results/", "docs/changelog.md", "tests/test_newcomer.py")
    found = [
        f for f in files
        if not f.startswith(history) and from_index.search((ROOT / f).read_text())
    ]  # fmt: skip
    assert found == []
    for page in ("README.md", "docs/getting-started.md", "docs/index.md"):
        assert "from a clone of" in " ".join((ROOT / page).read_text().lower().split()), page
    from piquet_cli.common import missing

    assert (
        missing(["no_such_module_xyz"], "ray")
        == "needs no_such_module_xyz: pip install -e '.[ray]'"
    )
