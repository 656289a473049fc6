"""Hostile config files and values (issue 57, points 9 and 14): every one is refused by the
command with one line and exit status 2, before any work, and costs no more than its cap."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from piquet_cli import main
from piquet_training.settings.schema import MAX_CONFIG_BYTES


def _refused(argv: list[str], capsys, *parts: str) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.count("\n") == 1 and len(err) < 400, err
    for part in parts:
        assert part in err
    return err


def _config(path: Path, capsys, *parts: str) -> str:
    return _refused(["train", "--config", str(path), "--show-config"], capsys, str(path), *parts)


def test_a_fifo_config_is_refused_without_blocking(tmp_path, capsys):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # nobody writes it: a read would wait forever
    _config(fifo, capsys, "is a FIFO, not a regular file")


def test_a_link_to_dev_zero_is_refused_unread(tmp_path, capsys):
    link = tmp_path / "zero.toml"
    link.symlink_to("/dev/zero")
    _config(link, capsys, "is a character device, not a regular file")


def test_a_300_mb_config_is_refused_by_its_size_unread(tmp_path, capsys):
    big = tmp_path / "big.toml"
    with big.open("wb") as f:  # a real 300 MB file (sparse: no disk spent)
        f.truncate(300_000_000)
    tracemalloc.start()
    try:
        _config(big, capsys, "300,000,000 bytes, over the 1 MiB a config file may take")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_CONFIG_BYTES


def test_a_config_at_the_cap_is_still_read(tmp_path, capsys):
    ok = tmp_path / "ok.toml"
    comment = "# " + "x" * 1000 + "\n"
    ok.write_text("seed = 5\n" + comment * ((MAX_CONFIG_BYTES - 100) // len(comment)))
    assert main(["train", "--config", str(ok), "--show-config"]) == 0
    assert "seed = 5" in capsys.readouterr().out


def test_arrays_nested_10000_deep_are_one_line(tmp_path, capsys):
    deep = tmp_path / "deep.toml"
    deep.write_text("hidden = " + "[" * 10_000 + "]" * 10_000 + "\n")
    _config(deep, capsys, "is not valid TOML: nested too deeply")


def test_a_5000_digit_integer_is_one_short_line(tmp_path, capsys):
    digits = "7" * 5000
    huge = tmp_path / "huge.toml"
    huge.write_text(f"seed = {digits}\n")
    _config(huge, capsys, "is not valid TOML")
    err = _refused(["train", "--show-config", "--set", f"seed={digits}"], capsys, "seed")
    assert digits not in err


@pytest.mark.parametrize("seed", [10**30, 2**62 + 1, -(2**62) - 1])
def test_a_seed_beyond_2_62_is_refused_before_training(tmp_path, capsys, seed):
    _refused(["train", "--show-config", "--set", f"seed={seed}"], capsys, "beyond 2^62")
    toml = tmp_path / "seed.toml"
    toml.write_text(f"seed = {seed}\n")
    _config(toml, capsys, "beyond 2^62")


def test_exploit_seed_beyond_2_62_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "x"
    argv = ["exploit", "random", "--rules", "mini", "--steps", "64", "--out", str(out)]
    _refused([*argv, "--seed", str(10**30)], capsys, "seed", "beyond 2^62")
    assert not (out / "exploiter" / "checkpoints").exists()


def test_the_largest_seed_is_taken(capsys):
    assert main(["train", "--show-config", "--set", f"seed={2**62}"]) == 0
    assert f"seed = {2**62}" in capsys.readouterr().out
