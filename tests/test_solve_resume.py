"""``piquet solve`` keeps its work: a checkpoint every K iterations, written whole or not at all;
``--resume`` continuing bit for bit (the same regrets, strategy sums and policy as a run never
stopped); a folder holding a solve refused without ``--resume`` or ``--overwrite``; the
checkpoint read back as untrusting as a tabular policy; progress shown (``--no-progress`` hides
it); and ``piquet exploit --exact`` showing its stages' progress."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from piquet_cli import main
from piquet_env.exact import policy as P
from piquet_env.rules import make_rules
from piquet_training import exact as X

TINY = "mini[suits=2,ranks=2,hand_size=1]"
"""Four cards, one each, a talon of two: 852 slots, a CFR+ iteration in about a millisecond."""


def _state(out: Path) -> dict[str, np.ndarray]:
    with np.load(out / X.CHECKPOINT_FILE) as z:
        ck = {k: z[k].copy() for k in ("regrets", "strategy_sum")}
    with np.load(out / "policy.npz") as z:
        ck["probs"] = z["probs"].copy()
    return ck


def _log(out: Path) -> list[tuple[str, str, str]]:
    with open(out / "nashconv.csv") as f:
        return [(r["iteration"], r["nash_conv"], r["value_elder"]) for r in csv.DictReader(f)]


def _assert_same_run(a: Path, b: Path) -> None:
    sa, sb = _state(a), _state(b)
    for name in sa:
        assert sa[name].dtype == sb[name].dtype
        assert np.array_equal(sa[name], sb[name]), name  # bit for bit, not approximately
    assert _log(a) == _log(b)


def test_half_then_resume_is_the_whole_run_bit_for_bit(tmp_path):
    rules = make_rules(TINY)
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    X.solve(rules, whole, iterations=60, check_every=20, checkpoint_every=0)
    first = X.solve(rules, halves, iterations=30, check_every=20, checkpoint_every=10)
    assert first.iterations == 30 and [e["iteration"] for e in first.log] == [20, 30]
    resumed = X.solve(rules, halves, iterations=60, check_every=20, resume=True)
    assert resumed.iterations == 60
    # 30 is an end, not a check of the whole run: its entry stays in the resumed run's log
    assert [e["iteration"] for e in resumed.log] == [20, 30, 40, 60]
    _assert_same_run_arrays(whole, halves)


def _assert_same_run_arrays(a: Path, b: Path) -> None:
    sa, sb = _state(a), _state(b)
    for name in sa:
        assert np.array_equal(sa[name], sb[name]), name


def test_a_killed_run_resumes_from_its_last_checkpoint_bit_for_bit(tmp_path):
    rules = make_rules(TINY)
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    X.solve(rules, whole, iterations=60, check_every=20, checkpoint_every=25)

    def kill_at_37(it: int) -> None:
        if it == 37:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        X.solve(rules, killed, iterations=60, check_every=20, on_iteration=kill_at_37,
                checkpoint_every=25)  # fmt: skip
    assert not (killed / "policy.npz").exists()
    solver, meta = P.load_cfr_checkpoint(X.tree_for(rules), killed / X.CHECKPOINT_FILE)
    assert solver.iterations == 25 and [e["iteration"] for e in meta["log"]] == [20]
    X.solve(rules, killed, iterations=60, check_every=20, checkpoint_every=25, resume=True)
    _assert_same_run(whole, killed)


def test_the_checkpoint_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    rules = make_rules(TINY)
    out = tmp_path / "run"
    X.solve(rules, out, iterations=10, check_every=5, checkpoint_every=5)
    before = (out / X.CHECKPOINT_FILE).read_bytes()

    def savez_then_fail(f, **arrays):
        f.write(b"PK\x03\x04 half a zip")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(P.np, "savez", savez_then_fail)
    solver, _ = P.load_cfr_checkpoint(X.tree_for(rules), out / X.CHECKPOINT_FILE)
    with pytest.raises(OSError, match="No space left"):
        P.save_cfr_checkpoint(solver.run(1), out / X.CHECKPOINT_FILE, log=[])
    assert (out / X.CHECKPOINT_FILE).read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == [
        "nashconv.csv",
        "policy.npz",
        "solve-checkpoint.npz",
        "solve.json",
    ]


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main(argv)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_a_folder_holding_a_solve_needs_resume_or_overwrite(tmp_path, capsys):
    out = str(tmp_path / "s")
    base = ["solve", "--rules", TINY, "--iterations", "20", "--no-progress", "--out", out]
    assert _run(base, capsys)[0] == 0
    rc, _, err = _run(base, capsys)
    assert rc == 2 and "holds a run already (policy.npz, solve-checkpoint.npz)" in err
    assert "--overwrite" in err and err.count("\n") == 1
    assert _run([*base, "--overwrite"], capsys)[0] == 0
    assert _run([*base, "--resume", "--overwrite"], capsys)[0] == 2
    rc, _, err = _run([*base[:-1], str(tmp_path / "empty"), "--resume"], capsys)
    assert rc == 2 and "holds no solve to continue" in err
    rc, _, err = _run([*base[:4], "10", "--no-progress", "--resume", out], capsys)
    assert rc == 2 and "is at iteration 20, past --iterations 10" in err
    rc, _, err = _run([*base, "--resume", "--overwrite"], capsys)
    assert rc == 2 and err == "piquet solve: give --resume or --overwrite, not both\n"


def test_the_library_solve_checks_its_own_folder(tmp_path):
    """``solve`` itself refuses a folder that holds a solve, and a resume of one that holds none
    (its run folder), in its own names: the command line only writes them as flags."""
    from piquet_training.run_folder import RunFolderError

    rules, out = make_rules(TINY), tmp_path / "s"
    X.solve(rules, out, iterations=5, check_every=5)
    with pytest.raises(RunFolderError, match=r"holds a run already.*\(resume\).*\(overwrite\)"):
        X.solve(rules, out, iterations=5)
    X.solve(rules, out, iterations=5, overwrite=True)
    with pytest.raises(RunFolderError, match="give resume or overwrite, not both"):
        X.solve(rules, out, iterations=5, resume=True, overwrite=True)
    with pytest.raises(P.ExactPolicyError, match=r"cannot resume \(resume\).*holds no solve"):
        X.solve(rules, tmp_path / "empty", iterations=5, resume=True)
    with pytest.raises(P.ExactPolicyError, match="at iteration 5, past iterations=4"):
        X.solve(rules, out, iterations=4, resume=True)
    assert not (tmp_path / "empty").exists()


@pytest.mark.parametrize(
    ("damage", "match"),
    [
        (lambda p, a: p.write_bytes(p.read_bytes()[:300]), "not a CFR\\+ checkpoint"),
        (lambda p, a: _rewrite(p, a, regrets=np.full_like(a["regrets"], np.nan)), "regrets"),
        (lambda p, a: _rewrite(p, a, strategy_sum=-a["strategy_sum"] - 1), "strategy_sum"),
        (lambda p, a: _rewrite(p, a, regrets=a["regrets"][:10]), "not the tree's 852 slots"),
        (
            lambda p, a: _rewrite(p, a, strategy_sum=np.full_like(a["strategy_sum"], 1e308)),
            r"strategy_sum\[0\] is 1e\+308, not a number from 0 to 1e\+300",
        ),
    ],
    ids=["truncated", "nan regrets", "negative sums", "other shape", "sums of 1e308"],
)
def test_a_damaged_checkpoint_is_refused_in_one_line(tmp_path, capsys, damage, match):
    out = tmp_path / "s"
    base = ["solve", "--rules", TINY, "--iterations", "20", "--no-progress", "--out", str(out)]
    assert _run(base, capsys)[0] == 0
    path = out / X.CHECKPOINT_FILE
    with np.load(path) as z:
        arrays = {k: z[k].copy() for k in z.files}
    damage(path, arrays)
    rc, _, err = _run([*base[:4], "40", "--no-progress", "--resume", str(out)], capsys)
    assert rc == 2 and err.count("\n") == 1 and str(path) in err
    assert err.startswith("piquet solve: ") and re.search(match, err)


def _rewrite(path: Path, arrays: dict[str, np.ndarray], **changes: np.ndarray) -> None:
    arrays.update(changes)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def test_progress_is_shown_unless_no_progress(tmp_path, capsys):
    argv = ["solve", "--rules", TINY, "--iterations", "20", "--check-every", "10"]
    rc, out, err = _run([*argv, "--out", str(tmp_path / "a")], capsys)
    assert rc == 0 and "CFR+: 100%" in err and "20/20" in err
    rc, out, err = _run([*argv, "--out", str(tmp_path / "b"), "--no-progress"], capsys)
    assert rc == 0 and "CFR+" not in err and "iteration    10  NashConv" in out


def test_exploit_exact_shows_its_stages(capsys):
    assert main(["exploit", "heuristic", "--rules", TINY, "--exact"]) == 0
    err = capsys.readouterr().err
    assert "policy: 100%" in err  # the heuristic is asked at every information state


def test_a_resume_under_other_rules_is_refused_before_the_tree_is_built(
    tmp_path, capsys, monkeypatch
):
    """The checkpoint names its rules: a resume under others is refused from its metadata,
    before their tree (minutes and GiB for mini) is built (issue 57, point 10)."""
    out = tmp_path / "s"
    base = ["solve", "--iterations", "20", "--no-progress", "--out", str(out)]
    assert _run([*base, "--rules", TINY], capsys)[0] == 0

    def no_tree(*args, **kwargs):
        raise AssertionError("the tree was built")

    monkeypatch.setattr(X, "tree_for", no_tree)
    other = "mini[suits=2,ranks=3,hand_size=2]"
    rc, _, err = _run([*base[:-2], "--rules", other, "--resume", str(out)], capsys)
    assert rc == 2 and err.count("\n") == 1
    assert f"is a solve of '{make_rules(TINY).name}', not of '{make_rules(other).name}'" in err
    rc, _, err = _run(
        [*base[:1], "--rules", TINY, "--iterations", "10", "--resume", str(out)], capsys
    )
    assert rc == 2 and "is at iteration 20, past --iterations 10" in err


def test_a_json_path_that_is_a_directory_is_refused_before_the_solve(tmp_path, capsys, monkeypatch):
    def no_solve(*args, **kwargs):
        raise AssertionError("the solve ran")

    monkeypatch.setattr(X, "solve", no_solve)
    (tmp_path / "dir").mkdir()
    argv = ["solve", "--rules", TINY, "--iterations", "20", "--no-progress"]
    rc, _, err = _run(
        [*argv, "--out", str(tmp_path / "s"), "--json", str(tmp_path / "dir")], capsys
    )
    assert rc == 2 and err.count("\n") == 1 and "--json" in err and "is a directory" in err
