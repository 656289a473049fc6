"""The CSV files read back from a run folder (issue 57, points 9 and 11): a run's logs
(``read_run_log``, ``read_csv``, the exploiter's ``edge_curve``) and an exploit run's
``pairs.csv`` are regular files only, capped, and read line by line: a FIFO or a link to
``/dev/zero`` is one error, not a hang, and a large file costs a line, not many times its size."""

from __future__ import annotations

import os
import signal
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from piquet_training.exploit import result
from piquet_training.exploit.result import ExploitError, edge_curve, read_pairs_file
from piquet_training.run_log import read_csv, read_run_log


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    """Each test fails after 10 s instead of hanging on a FIFO."""

    def alarm(*_: object) -> None:
        raise TimeoutError("the read hung")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(10)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _hostile(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


READERS = {
    "read_run_log": lambda folder: read_run_log(folder / "eval.csv"),
    "read_csv": lambda folder: read_csv(folder / "eval.csv"),
    "edge_curve": lambda folder: edge_curve(folder, "random"),
    "pairs": lambda folder: read_pairs_file(folder),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("kind, said", [("fifo", "a FIFO"), ("zero", "a character device")])
@pytest.mark.parametrize("reader", list(READERS))
def test_a_fifo_or_dev_zero_is_one_error(reader, kind, said, tmp_path) -> None:
    path = tmp_path / ("pairs.csv" if reader == "pairs" else "eval.csv")
    _hostile(path, kind)
    with pytest.raises(ValueError) as err:
        READERS[reader](tmp_path)
    assert str(err.value) == f"{path}: is {said}, not a regular file"


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize(
    "tail, message",
    [
        (b"9" * (30 << 20) + b"\n", "pairs.csv, line 3: over the 64 KiB a line may take"),
        (b"1,x\n" + b"2,0.5\n" * (5 << 20), 'pairs.csv: line 3: exploiter is "x"'),
    ],
    ids=["one-long-line", "bad-row-early"],
)
def test_a_large_pairs_csv_costs_a_line(tail, message, tmp_path) -> None:
    """30 MiB of ``pairs.csv`` (it cost 1.2 GiB read whole) is refused holding at most a line."""
    path = tmp_path / "pairs.csv"
    path.write_bytes(b"pair,exploiter\n0,1.0\n" + tail)
    assert path.stat().st_size > 30 << 20
    errors: list[str] = []

    def read() -> None:
        try:
            read_pairs_file(tmp_path)
        except ExploitError as exc:
            errors.append(str(exc))

    assert _peak(read) < 1 << 20
    assert len(errors) == 1 and message in errors[0], errors


def test_a_large_run_log_costs_a_line(tmp_path) -> None:
    """A run log is read line by line: a 30 MiB line is refused at the line cap."""
    path = tmp_path / "train.csv"
    path.write_bytes(b"update,env_steps\n1,2\n3," + b"4" * (30 << 20) + b"\n")
    errors: list[str] = []

    def read() -> None:
        try:
            read_run_log(path)
        except ValueError as exc:
            errors.append(str(exc))

    assert _peak(read) < 4 << 20
    assert errors == [f"{path}, line 3: over the 1 MiB a line may take"]


def test_pairs_over_the_cap_are_refused_unread(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(result, "PAIRS_MAX_BYTES", 1 << 20)
    (tmp_path / "pairs.csv").write_bytes(b"pair,exploiter\n" + b"1,0.5\n" * (1 << 18))
    with pytest.raises(ExploitError, match="over the 1 MiB an exploit run's pairs may take"):
        read_pairs_file(tmp_path)
