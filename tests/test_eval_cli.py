"""``piquet eval`` and ``piquet ladder`` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from piquet_training.cli import main

from piquet_env.game import replay


def test_eval_prints_the_verdict_and_writes_json(tmp_path, capsys):
    out = tmp_path / "report.json"
    rc = main(
        [
            "eval",
            "heuristic",
            "random",
            "--deals",
            "15",
            "--no-progress",
            "--seed",
            "3",
            "--json",
            str(out),
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "heuristic vs random: standard, deal mode, 15 duplicate pairs (30 games" in text
    assert "heuristic is significantly better than random" in text
    data = json.loads(out.read_text())
    assert data["n_pairs"] == 15 and data["significant"] and len(data["games"]) == 30
    assert data["ci_low"] <= data["mean_diff"] <= data["ci_high"]


def test_eval_partie_mode_variants_and_saved_games(tmp_path, capsys):
    games = tmp_path / "games"
    rc = main(
        [
            "eval",
            "random",
            "mcts:3",
            "--deals",
            "1",
            "--mode",
            "partie",
            "--rules",
            "classic",
            "--variant",
            "normand",
            "--no-progress",
            "--save-games",
            str(games),
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "classic+normand, partie mode, 1 duplicate pairs" in text
    assert "settled partie score of random" in text
    files = sorted(games.iterdir())
    assert len(files) == 2
    for f in files:
        doc = json.loads(f.read_text())
        assert set(doc["agents"]) == {"random", "mcts:3"}
        assert replay(doc).is_over


@pytest.mark.parametrize(
    "argv, message",
    [
        (["eval", "random", "alphago", "--deals", "2"], "unknown agent spec 'alphago'"),
        (["eval", "random", "mcts:x", "--deals", "2"], "iterations 'x' is not an integer"),
        (["eval", "random", "random", "--deals", "0"], "--deals must be at least 1"),
        (["eval", "random", "random", "--rules", "modern"], "unknown rules preset"),
        (["eval", "random", "random", "--variant", "rubicon"], "unknown variant"),
        (["ladder", "random", "--deals", "2"], "at least two agents"),
        (["ladder", "random", "random", "--deals", "2"], "must be distinct"),
    ],
)
def test_bad_arguments_give_a_clear_error(argv, message):
    with pytest.raises(SystemExit) as err:
        main(argv)
    assert message in str(err.value)


def test_ladder_writes_json_and_png(tmp_path, capsys):
    rc = main(
        ["ladder", "random", "heuristic", "--deals", "6", "--no-progress", "--out", str(tmp_path)]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "1. heuristic" in text and "2. random" in text
    data = json.loads((tmp_path / "ladder.json").read_text())
    assert [r["agent"] for r in data["table"]] == ["heuristic", "random"]
    assert (tmp_path / "ladder.png").read_bytes()[:4] == b"\x89PNG"


def test_the_piquet_console_script_runs_eval():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "piquet_training.cli",
            "eval",
            "random",
            "random",
            "--deals",
            "5",
            "--no-progress",
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "random vs random: standard, deal mode, 5 duplicate pairs (10 games" in proc.stdout


def test_eval_accepts_a_checkpoint_path(tmp_path, capsys):
    from piquet_agents.checkpoint import save_policy
    from piquet_agents.policy import ActorCritic

    from piquet_env.actions import n_actions
    from piquet_env.observation import encoder_for
    from piquet_env.rules import STANDARD

    model = ActorCritic(encoder_for(STANDARD).size, n_actions(STANDARD), hidden=(8,))
    path = save_policy(tmp_path / "tiny.safetensors", model, STANDARD)
    assert main(["eval", str(path), "random", "--deals", "2", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "tiny.safetensors vs random: standard, deal mode, 2 duplicate pairs" in text
    assert "win rate of" in text
    with pytest.raises(SystemExit, match="classic"):
        main(["eval", str(path), "random", "--deals", "2", "--rules", "classic"])
