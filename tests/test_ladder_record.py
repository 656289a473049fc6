"""``piquet ladder --resume`` reads its record, ``DIR/matches.jsonl``, as hostile input: every bad
record is one line on stderr naming the file (and the line), exit status 2, nothing played; a
line whose games were edited is refused by its checksum."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from piquet_env.rules import STANDARD
from piquet_training.cli import main
from piquet_training.evaluation.ladder.run import LadderRecordError, MatchRecord, run_ladder
from tests.pty_helpers import run_piquet

ARGV = ["ladder", "random", "heuristic", "--deals", "2", "--seed", "0", "--no-progress"]
"""A ladder whose only match, random vs heuristic, is the one recorded by :func:`valid_line`."""


@pytest.fixture(scope="module")
def valid_line(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The record line of random vs heuristic, 2 pairs, seed 0 (what ``ARGV`` plays)."""
    path = tmp_path_factory.mktemp("rec") / "matches.jsonl"
    run_ladder(["random", "heuristic"], STANDARD, n=2, seed=0, record=MatchRecord(path))
    (line,) = path.read_text(encoding="utf-8").splitlines()
    return line


def _signed(entry: dict) -> str:
    """``entry`` as a record line with its checksum: SHA-256 of the sorted, spaceless JSON of the
    rest of the line (computed here from the definition, not by the code under test)."""
    rest = {k: v for k, v in entry.items() if k != "sha256"}
    digest = hashlib.sha256(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode())
    return json.dumps({**rest, "sha256": digest.hexdigest()}, separators=(",", ":"))


def test_every_line_carries_the_checksum_of_the_rest_of_it(valid_line):
    entry = json.loads(valid_line)
    assert list(entry)[-1] == "sha256" and len(entry["games"]) == 4
    assert valid_line == _signed(entry)


def _resume_fails(out: Path, capsys: pytest.CaptureFixture[str], reason: str) -> str:
    """Run ``ARGV --resume`` on ``out``: exit 2, one line on stderr with ``reason``, no game."""

    def no_play(*args, **kwargs):
        raise AssertionError("a game was played from a bad record")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("piquet_training.evaluation.record.play_games", no_play)
        assert main([*ARGV, "--out", str(out), "--resume"]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert captured.out == "", captured.out
    assert err.startswith(f"piquet ladder: --resume: {out / 'matches.jsonl'}"), err
    assert err.count("\n") == 1 and reason in err and "Traceback" not in err, err
    assert err.isascii() and err[:-1].isprintable(), err
    return err


def _write(out: Path, data: bytes) -> Path:
    out.mkdir(exist_ok=True)
    (out / "matches.jsonl").write_bytes(data)
    return out / "matches.jsonl"


def test_invalid_utf8_names_the_line(tmp_path, capsys, valid_line):
    path = _write(tmp_path, valid_line.encode() + b'\n{"agent_a":"caf\xe9"}\n')
    _resume_fails(tmp_path, capsys, "matches.jsonl line 2: not UTF-8 text (byte 15 of the line)")
    assert path.read_bytes().endswith(b'\xe9"}\n')  # a bad record is left as it was


def test_infinity_is_not_a_number(tmp_path, capsys, valid_line):
    entry = json.loads(valid_line)
    line = _signed(entry).replace('"seed":0', '"seed":Infinity')
    _write(tmp_path, f"{line}\n".encode())
    _resume_fails(tmp_path, capsys, "line 1: not a recorded batch of games (not JSON: Infinity")


def test_a_number_beyond_a_float_is_not_one(tmp_path, capsys, valid_line):
    line = _signed(json.loads(valid_line)).replace('"points":', '"points":1e999,"x":', 1)
    _write(tmp_path, f"{valid_line}\n{line}\n".encode())
    _resume_fails(tmp_path, capsys, "line 2: not a recorded batch of games (not JSON: 1e999 is")


def test_deep_nesting_is_refused(tmp_path, capsys):
    _write(tmp_path, b"[" * 100_000 + b"]" * 100_000 + b"\n")
    _resume_fails(tmp_path, capsys, "line 1: not a recorded batch of games (not JSON: nested")


def test_a_directory_is_no_record(tmp_path, capsys):
    (tmp_path / "matches.jsonl").mkdir()
    _resume_fails(tmp_path, capsys, "matches.jsonl: is a directory, not a ladder record")


def test_a_device_is_refused_unread(tmp_path, capsys):
    (tmp_path / "matches.jsonl").symlink_to(os.devnull)
    _resume_fails(tmp_path, capsys, "matches.jsonl: is a character device, not a regular file")


def test_a_tampered_result_is_refused_by_its_checksum(tmp_path, capsys, valid_line):
    entry = json.loads(valid_line)
    game = next(g for g in entry["games"] if g["result"] < 0)
    game["result"] = game["points"] = -game["result"]  # a lost game made a won one, in place
    tampered = json.dumps(entry, separators=(",", ":"))
    _write(tmp_path, f"{tampered}\n".encode())  # before checksums: taken as it was
    err = _resume_fails(tmp_path, capsys, "line 1: checksum mismatch")
    assert 'the games of "random" vs "heuristic", pairs 0 to 1 were changed' in err


def test_a_record_written_before_checksums_is_refused(tmp_path, capsys, valid_line):
    entry = json.loads(valid_line)
    del entry["sha256"]
    _write(tmp_path, (json.dumps(entry, separators=(",", ":")) + "\n").encode())
    err = _resume_fails(tmp_path, capsys, "line 1: no checksum")
    assert "start a new record (without --resume)" in err


def test_a_signed_line_with_bad_games_is_still_checked(tmp_path, valid_line):
    path = tmp_path / "matches.jsonl"
    for edit, reason in [
        (lambda e: e.update(seed="0"), "'seed' must be an integer, got \"0\""),
        (lambda e: e["games"][0].update(deals=0), "game 0: 'deals' must be an integer from 1"),
        (lambda e: e["games"][1].update(game=True), "game 1: 'game' must be an integer from 0"),
        (lambda e: e.update(games=[]), "'games' must be a list of games, got []"),
    ]:
        entry = json.loads(valid_line)
        edit(entry)
        path.write_text(_signed(entry) + "\n", encoding="utf-8")
        with pytest.raises(LadderRecordError, match="line 1: not a recorded batch") as caught:
            MatchRecord(path, resume=True)
        assert reason in str(caught.value)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    """In a fresh process, with and without --resume: opening a FIFO would wait for a writer."""
    fifo = tmp_path / "matches.jsonl"
    os.mkfifo(fifo)
    try:
        res = run_piquet(*ARGV, "--out", str(tmp_path), "--resume", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("piquet ladder --resume hung on a FIFO")
    assert res.returncode == 2 and res.stdout == "", res.stderr
    assert res.stderr == f"piquet ladder: --resume: {fifo}: is a FIFO, not a regular file\n"
    try:
        res = run_piquet(*ARGV, "--out", str(tmp_path), timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("piquet ladder hung on a FIFO")
    assert res.returncode == 0, res.stderr  # without --resume: the ladder, without its record
    assert f"could not record games in {fifo} (it is a FIFO, not a regular file)" in res.stderr
    assert "ladder written to" in res.stdout and fifo.is_fifo()


def test_without_resume_a_directory_in_the_way_is_left_alone(tmp_path, capsys):
    (tmp_path / "matches.jsonl").mkdir()
    (tmp_path / "matches.jsonl" / "keep").write_text("x")
    assert main([*ARGV, "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "(it is a directory, not a regular file); the ladder goes on without its record" in err
    assert (tmp_path / "matches.jsonl" / "keep").read_text() == "x"
    assert json.loads((tmp_path / "ladder.json").read_text())["agents"] == ["random", "heuristic"]


def test_a_refused_record_is_left_as_it_was_even_with_a_last_line_cut_short(tmp_path, valid_line):
    path = tmp_path / "matches.jsonl"
    data = b"[1, 2]\n" + valid_line.encode()[:40]  # a bad line, and a tail a kill cut short
    path.write_bytes(data)
    with pytest.raises(LadderRecordError, match=r"line 1: not a recorded batch .*a JSON array"):
        MatchRecord(path, resume=True)
    assert path.read_bytes() == data


def _games(pairs: range) -> list:
    from piquet_training.evaluation.duplicate import GameResult

    return [GameResult(p, k, k, 2 - 4 * k, 2 - 4 * k, 1) for p in pairs for k in (0, 1)]


KEY = ("random", "a" * 20, "heuristic", "b" * 20, "standard", "deal", 0)


def test_a_record_is_written_in_lines_of_at_most_line_pairs_and_read_back(tmp_path):
    import piquet_training.evaluation.record as R

    path = tmp_path / "matches.jsonl"
    record = MatchRecord(path)
    record.add(KEY, _games(range(2 * R.LINE_PAIRS + 5)))
    lines = path.read_bytes().splitlines()
    assert [len(json.loads(x)["games"]) // 2 for x in lines] == [R.LINE_PAIRS, R.LINE_PAIRS, 5]
    assert max(map(len, lines)) < R.MAX_RECORD_LINE // 8
    again = MatchRecord(path, resume=True).recorded(KEY)
    assert sorted(again) == list(range(2 * R.LINE_PAIRS + 5))


def test_a_line_over_the_cap_is_refused_without_being_held_whole(tmp_path):
    """A line of 8 MiB (twice the cap) of well-formed games: refused by its length as it is
    read, never parsed (issue 57: a 200 MB line took 2.6 GiB)."""
    import tracemalloc

    import piquet_training.evaluation.record as R

    path = tmp_path / "matches.jsonl"
    MatchRecord(path).add(KEY, _games(range(3)))
    game = json.dumps({"pair": 0, "game": 0, "a_seat": 0, "result": 1, "points": 1, "deals": 1})
    with path.open("a") as f:
        f.write('{"games": [' + ",".join([game] * (2 * R.MAX_RECORD_LINE // len(game))) + "]}\n")
    assert path.stat().st_size > 2 * R.MAX_RECORD_LINE
    tracemalloc.start()
    try:
        with pytest.raises(LadderRecordError) as err:
            MatchRecord(path, resume=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(err.value) == f"{path}, line 2: over the 4 MiB a line may take"
    assert peak < 2 * R.MAX_RECORD_LINE + (1 << 20)
