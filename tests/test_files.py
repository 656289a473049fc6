"""Files written whole or not at all (``piquet_env.files``), as checkpoints, records and game
logs are."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from piquet_env.files import whole_file, write_bytes, write_text


def test_a_file_is_replaced_whole_with_an_ordinary_files_mode(tmp_path: Path) -> None:
    path = write_text(tmp_path / "log.json", "first")
    write_text(path, "second")
    assert path.read_text(encoding="utf-8") == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["log.json"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_text(tmp_path / "log.json", "old")

    def full_disk(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_text(path, "new")
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["log.json"]


def test_an_error_inside_the_block_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = write_bytes(tmp_path / "edge.png", b"old")
    with pytest.raises(RuntimeError, match="drawing failed"), whole_file(path) as f:
        f.write(b"half of a new")
        raise RuntimeError("drawing failed")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["edge.png"]


@pytest.mark.parametrize("durable", [False, True])
def test_a_whole_file_in_text_or_bytes_and_durable(tmp_path: Path, durable: bool) -> None:
    with whole_file(tmp_path / "a.txt", "w", durable=durable) as f:
        f.write("écarté\n")
    with whole_file(tmp_path / "b.bin", prefix="b.bin.", durable=durable) as f:
        f.write(b"\x00\x01")
    assert (tmp_path / "a.txt").read_bytes() == "écarté\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]


def test_a_whole_file_names_a_mode_it_cannot_write(tmp_path: Path) -> None:
    with (
        pytest.raises(ValueError, match="mode must be 'w' or 'wb', got 'a'"),
        whole_file(tmp_path / "x", "a"),
    ):
        pass
    assert list(tmp_path.iterdir()) == []
