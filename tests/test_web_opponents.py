"""The agents a page may choose: the server's own first, the built-ins that build, and the
checkpoints of the allowed folder only."""

from __future__ import annotations

import os
import shutil

import pytest

from piquet_env.rules import STANDARD, make_rules
from piquet_table.web.opponents import checkpoint_paths, opponent_choices


def test_the_servers_opponent_comes_first_and_only_what_builds_is_offered():
    choices, skipped = opponent_choices(make_rules("standard", variants=["normand"]), "heuristic")
    assert list(choices)[:3] == ["heuristic", "random", "mcts:100"]
    assert "baseline" not in choices  # no policy ships for these rules: left out, and said why
    assert any(line.startswith("baseline: ") and "no shipped baseline" in line for line in skipped)
    with pytest.raises(ValueError, match="not an agent name"):
        opponent_choices(STANDARD, "nobody")


def test_checkpoints_come_from_the_allowed_folder_only(tmp_path):
    pytest.importorskip("torch", reason="policy checkpoints need the train extra")
    from piquet_agents.baseline import BASELINE_PATH

    folder = tmp_path / "allowed"
    (folder / "run").mkdir(parents=True)
    shutil.copy(BASELINE_PATH, folder / "mine.safetensors")
    shutil.copy(BASELINE_PATH, folder / "run" / "policy.safetensors")
    (folder / "broken.safetensors").write_bytes(b"not a checkpoint")
    (folder / "notes.txt").write_text("")
    shutil.copy(BASELINE_PATH, tmp_path / "outside.safetensors")
    os.symlink(tmp_path / "outside.safetensors", folder / "link.safetensors")
    assert [p.name for p in checkpoint_paths(folder)] == [
        "broken.safetensors",
        "mine.safetensors",
        "run",
    ]
    choices, skipped = opponent_choices(STANDARD, "random", folder)
    assert choices["checkpoint:mine.safetensors"].spec == str(folder / "mine.safetensors")
    assert choices["checkpoint:run"].public() == {
        "id": "checkpoint:run",
        "label": "Policy run",
        "searches": False,
    }
    assert not any("link" in cid or "outside" in cid for cid in choices)
    assert any(line.startswith("broken.safetensors: ") for line in skipped)
    assert choices["mcts:50:policy=baseline"].searches
