"""``piquet eval --record FILE --resume``: a match killed in the middle continues from its record
to the report an uninterrupted run gives (issue 48: a driver killed mid-run resumes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from piquet_cli import main

MATCH = ["eval", "heuristic", "mcts:4", "--deals", "60", "--seed", "3", "--no-progress"]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_killed_match_resumes_from_its_record_to_the_uninterrupted_report(tmp_path: Path):
    record, resumed, whole = tmp_path / "r.jsonl", tmp_path / "b.json", tmp_path / "c.json"
    cmd = [sys.executable, "-m", "piquet_cli", *MATCH, "--record", str(record)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 120
    while _lines(record) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # a driver killed: no cleanup, no last words
    proc.wait()
    kept = _lines(record)
    assert 2 <= kept < 6, "the run was to be killed with some chunks of ten pairs recorded"
    assert main([*MATCH, "--record", str(record), "--resume", "--json", str(resumed)]) == 0
    assert _lines(record) == 6  # the resumed run played only the chunks that were missing
    assert main([*MATCH, "--json", str(whole)]) == 0
    assert json.loads(resumed.read_text()) == json.loads(whole.read_text())


def test_a_record_cut_short_by_the_kill_loses_only_its_last_line(tmp_path: Path, capsys):
    record, resumed, whole = tmp_path / "r.jsonl", tmp_path / "b.json", tmp_path / "c.json"
    short = ["eval", "heuristic", "random", "--deals", "40", "--seed", "1", "--no-progress"]
    assert main([*short, "--record", str(record)]) == 0
    lines = record.read_text().splitlines(keepends=True)
    record.write_text("".join(lines[:2]) + lines[2][:30])  # a write cut short by the kill
    assert main([*short, "--record", str(record), "--resume", "--json", str(resumed)]) == 0
    assert "20 of 40 pairs taken" in capsys.readouterr().out
    assert main([*short, "--json", str(whole)]) == 0
    assert json.loads(resumed.read_text()) == json.loads(whole.read_text())


def test_resume_without_a_record_and_a_tampered_record_are_one_line_each(tmp_path: Path, capsys):
    assert main(["eval", "heuristic", "random", "--deals", "4", "--resume"]) == 2
    assert "--resume needs --record FILE" in capsys.readouterr().err
    record = tmp_path / "r.jsonl"
    args = ["eval", "heuristic", "random", "--deals", "20", "--seed", "1", "--no-progress"]
    assert main([*args, "--record", str(record)]) == 0
    record.write_text(record.read_text().replace('"points":', '"points": 1 +', 1))
    assert main([*args, "--record", str(record), "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("piquet eval: --resume:")


@pytest.mark.parametrize("flag", ["--record", "--resume"])
def test_the_record_flags_are_for_a_match_not_for_compare(tmp_path: Path, capsys, flag):
    extra = [flag, str(tmp_path / "r.jsonl")] if flag == "--record" else [flag]
    a = str(tmp_path / "a.json")
    assert main(["eval", "--compare", a, a, *extra]) == 2
    assert flag in capsys.readouterr().err


def test_an_existing_record_or_any_file_is_refused_without_resume_or_overwrite(
    tmp_path: Path, capsys
):
    """Issue 57: ``--record FILE`` without ``--resume`` emptied a 40-pair record (and a
    ``notes.txt``); now refused before any game, the file untouched, unless ``--overwrite``."""
    args = ["eval", "heuristic", "random", "--deals", "40", "--seed", "1", "--no-progress"]
    record, notes = tmp_path / "r.jsonl", tmp_path / "notes.txt"
    assert main([*args, "--record", str(record)]) == 0
    kept = record.read_bytes()
    assert len(kept.splitlines()) == 4
    notes.write_text("my notes\n")
    capsys.readouterr()
    for path in (record, notes):
        assert main([*args, "--deals", "5", "--record", str(path)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1
        assert "exists" in err and "--resume" in err and "--overwrite" in err
    assert record.read_bytes() == kept and notes.read_text() == "my notes\n"
    assert main([*args, "--record", str(record), "--resume", "--overwrite"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 2
    assert "--overwrite needs --record" in capsys.readouterr().err
    assert main([*args, "--deals", "5", "--record", str(notes), "--overwrite"]) == 0
    lines = notes.read_text().splitlines()  # replaced by the new match's record
    assert "my notes" not in lines and all(json.loads(line)["sha256"] for line in lines)


def test_record_and_json_naming_one_file_are_refused_before_any_work(tmp_path: Path, capsys):
    args = ["eval", "heuristic", "random", "--deals", "5", "--seed", "1", "--no-progress"]
    same, link = tmp_path / "x.json", tmp_path / "link.json"
    link.symlink_to(same)
    for json_path in (same, link):
        assert main([*args, "--record", str(same), "--json", str(json_path)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and "--record and --json name one file" in err
    assert not same.exists()


def test_a_record_with_holes_is_resumed_in_one_fan_out(tmp_path: Path, monkeypatch, capsys):
    """Issue 57: each stretch of missing pairs opened an executor of its own (a Ray job each: a
    record with ten holes took 87.7 s on Ray against 21.9 s for the whole match). Now all the
    missing pairs go out in one run of one executor, to the uninterrupted run's report."""
    from piquet_training.evaluation.executor import Fanout

    args = ["eval", "heuristic", "random", "--deals", "40", "--seed", "6", "--no-progress"]
    record, resumed, whole = tmp_path / "r.jsonl", tmp_path / "b.json", tmp_path / "c.json"
    assert main([*args, "--record", str(record)]) == 0
    lines = record.read_text().splitlines(keepends=True)
    assert len(lines) == 4  # chunks of ten pairs
    record.write_text(lines[1] + lines[3])  # two holes: pairs 0 to 9 and 20 to 29
    opened = []
    real_open = Fanout.open

    def counted(self):
        opened.append(self)
        return real_open(self)

    monkeypatch.setattr(Fanout, "open", counted)
    resume = ["--record", str(record), "--resume", "--workers", "2", "--json", str(resumed)]
    assert main([*args, *resume]) == 0
    assert "20 of 40 pairs taken" in capsys.readouterr().out
    assert len(opened) == 1  # one executor for both holes
    monkeypatch.undo()
    assert main([*args, "--json", str(whole)]) == 0
    assert json.loads(resumed.read_text()) == json.loads(whole.read_text())
