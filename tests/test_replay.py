"""``piquet replay``: a game saved by ``piquet play`` replays identically, step by step, showing
both hands; records from agent games (as ``piquet eval --save-games`` writes them) replay under
every preset; bad records are clear errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from piquet_agents.play import play_game
from piquet_agents.random_agent import RandomAgent
from piquet_training.tui.replay import load_record, record_of, replay_chunks, save_record
from piquet_training.tui.text import Style

from piquet_env.game import Game, replay
from piquet_env.rules import all_presets
from tests.test_play import ROOT, play_scripted, spawn_piquet

TRICK = re.compile(r"Trick (\d+)(?: \(last\))?: (\w+) (\S+), (\w+) (\S+) → (\w+) wins?")
DECLARE = re.compile(r"^(\w+) declares? (.+)$", re.M)


def _normal(text: str) -> str:
    """The person's transcript in the onlooker's words: "you"/"You" become "human"."""
    text = re.sub(r"\bYou declare\b", "human declares", text.replace("\r\n", "\n"))
    return re.sub(r"\b[Yy]ou\b", "human", text)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A partie played through the terminal by the scripted player, and its saved record."""
    record = tmp_path_factory.mktemp("games") / "partie.json"
    child, log = spawn_piquet("play", "--opponent", "random", "--seed", "21", "--save", str(record))
    play_scripted(child)
    assert child.exitstatus == 0
    return log.getvalue(), record


def test_a_saved_game_replays_identically(played: tuple[str, Path]) -> None:
    transcript, record = played
    res = subprocess.run(
        [sys.executable, "-m", "piquet_training.cli", "replay", str(record), "--all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"},
    )
    assert res.returncode == 0, res.stderr
    shown = _normal(transcript)
    tricks_played = TRICK.findall(shown)
    assert len(tricks_played) == 72
    assert TRICK.findall(res.stdout) == tricks_played
    assert DECLARE.findall(res.stdout) == DECLARE.findall(shown) != []
    final = re.compile(r"Final totals: \w+ (\d+), random (\d+)\.")
    assert final.findall(res.stdout) == final.findall(shown) != []
    # Both hands after every trick: elder's and younger's, one card fewer each time.
    for n in range(1, 12):
        chunk = res.stdout.split(f"Trick {n}: ")[-1].split("Trick ")[0]
        hands = re.findall(r"^ {4}(human|random) \((elder|younger)\)\s+(.*?)   ·", chunk, re.M)
        assert sorted(h[1] for h in hands) == ["elder", "younger"]
        assert all(len(h[2].split()) == 12 - n for h in hands)


def test_replay_steps_on_enter_and_quits(played: tuple[str, Path]) -> None:
    _, record = played
    child, log = spawn_piquet("replay", str(record))
    child.expect_exact("[Enter] next, a: all the rest, q: quit> ")
    assert "Trick 1:" not in log.getvalue()  # it waits before the first trick
    assert re.search(r"talon \(top first\)", log.getvalue())
    child.sendline("")
    child.expect_exact("Trick 1: ")
    child.expect_exact("[Enter] next")
    child.sendline("")
    child.expect_exact("Trick 2: ")
    child.expect_exact("quit> ")
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Trick 3:" not in log.getvalue()


def test_replay_ctrl_d_and_all(played: tuple[str, Path]) -> None:
    _, record = played
    child, _ = spawn_piquet("replay", str(record))
    child.expect_exact("quit> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    child, log = spawn_piquet("replay", str(record))
    child.expect_exact("quit> ")
    child.sendline("a")  # all the rest, without pausing
    child.expect_exact("The partie is over")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and log.getvalue().count("quit> ") == 1


def test_replay_from_a_later_deal(played: tuple[str, Path]) -> None:
    _, record = played
    cmd = [sys.executable, "-m", "piquet_training.cli", "replay", str(record), "--all", "--ascii"]
    res = subprocess.run(
        [*cmd, "--deal", "4"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    assert "(deals 1 to 3 left out)" in res.stdout
    assert "Deal 3 of 6" not in res.stdout and "Deal 4 of 6" in res.stdout
    # The last trick of deal 3 closes it with the totals; then deals 4, 5 and 6 in full.
    assert len(re.findall(r"^Trick \d+", res.stdout, re.M)) == 1 + 3 * 12
    assert "End of deal 3." in res.stdout and "End of deal 2." not in res.stdout
    res = subprocess.run(
        [*cmd, "--deal", "7"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 2 and "no deal 7 in this record: it has deals 1 to 6" in res.stdout


def test_bad_records_are_clear_errors(played: tuple[str, Path], tmp_path: Path) -> None:
    _, record = played
    doc = json.loads(record.read_text())
    trick = next(e for e in doc["events"] if e["type"] == "trick")
    trick["winner"] = 1 - trick["winner"]
    (tmp_path / "tampered.json").write_text(json.dumps(doc))
    (tmp_path / "notjson.json").write_text("{nope")
    (tmp_path / "other.json").write_text('{"format": "piquet-log/1", "events": [{"type": "x"}]}')
    cases = [
        ("tampered.json", "replay differs at event"),
        ("notjson.json", "not a JSON game"),
        ("other.json", "must start with a 'partie' event"),
        ("missing.json", "no such file"),
    ]
    for name, reason in cases:
        res = subprocess.run(
            [sys.executable, "-m", "piquet_training.cli", "replay", str(tmp_path / name), "--all"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 2 and reason in res.stdout, (name, res.stdout)


@pytest.mark.parametrize("rules", all_presets(), ids=lambda r: r.name)
def test_agent_games_replay_under_every_preset(rules, tmp_path: Path) -> None:
    game = play_game(Game(rules, seed=len(rules.name)), [RandomAgent(seed=1), RandomAgent(seed=2)])
    path = save_record(tmp_path / "g.json", game, ["random", "random"], seed=0)
    doc = load_record(path)
    lines = [line for chunk in replay_chunks(doc, Style(ascii=True)) for line in chunk]
    text = "\n".join(lines)
    n_deals = len(game.deal_scores)
    assert text.count("Trick 12 (last)") == n_deals
    assert text.count("End of deal") == n_deals
    assert "random (0)" in text and "random (1)" in text  # same names made distinct
    a, b = game.totals
    assert f"Final totals: random (0) {a}, random (1) {b}." in text
    # In every deal each player plays 12 different cards, 24 in all.
    trick = re.compile(r"Trick \d+(?: \(last\))?: (random \(\d\)) (\w+), (random \(\d\)) (\w+) ->")
    for deal in text.split("== Deal ")[1:]:
        played: dict[str, set[str]] = {"random (0)": set(), "random (1)": set()}
        for leader, lead, follower, follow in trick.findall(deal):
            played[leader].add(lead)
            played[follower].add(follow)
        assert [len(x) for x in played.values()] == [12, 12]
        assert not played["random (0)"] & played["random (1)"]


def test_single_deal_records_as_eval_saves_them() -> None:
    """``piquet eval --save-games`` saves one-deal games dealt from preset cards, elder 0."""
    deals = [
        (
            "AS KS QS JS TS 9S 8S 7S AH KH QH JH",
            "AD KD QD JD AC KC QC JC 7H 8H 9H TH",
            "7C 8C 9C TC 7D 8D 9D TD",
        )
    ]
    game = play_game(
        Game(seed=1, mode="deal", deals=deals, first_elder=0),
        [RandomAgent(seed=3), RandomAgent(seed=4)],
    )
    doc = record_of(game, ["heuristic", "random"], pair=0, seed=0)
    text = "\n".join(line for chunk in replay_chunks(doc) for line in chunk)
    assert "heuristic (elder)" in text
    assert "The deal is over" in text
    r = game.result
    if r[0] != r[1]:
        w = "heuristic" if r[0] > r[1] else "random"
        assert f"{w} wins the deal by {max(r)} points." in text
    assert replay(doc).result == r
    # The dealt hands, as held: by suit (clubs, diamonds, hearts, spades), high to low.
    assert re.search(r"heuristic \(elder\) +A♥ K♥ Q♥ J♥ A♠ K♠ Q♠ J♠ 10♠ 9♠ 8♠ 7♠\n", text)
    assert re.search(r"random \(younger\) +A♣ K♣ Q♣ J♣ A♦ K♦ Q♦ J♦ 10♥ 9♥ 8♥ 7♥\n", text)
    assert re.search(r"talon \(top first\) +7♣ 8♣ 9♣ 10♣ 7♦ 8♦ 9♦ 10♦\n", text)
