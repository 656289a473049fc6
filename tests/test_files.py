"""Files written whole or not at all (``piquet_env.files``), as checkpoints, records and game
logs are."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from piquet_env.files import write_text


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
