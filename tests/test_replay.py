"""``piquet replay``: a game saved by ``piquet play`` replays identically, step by step, showing
both hands; records from agent games (as ``piquet eval --save-games`` writes them) replay under
every preset; bad records are clear errors."""

from __future__ import annotations

import json
import re
import signal
import termios
import time
from pathlib import Path

import pexpect
import pytest

from piquet_agents.loop import play_game
from piquet_env.agent import RandomAgent
from piquet_env.game import Game, replay
from piquet_env.game.record import load_record, record_of, save_record
from piquet_env.rules import all_presets
from piquet_table.replay import replay_chunks, replay_steps
from piquet_table.text import Style
from tests.pty_helpers import play_scripted, run_piquet, spawn_piquet

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
    res = run_piquet(
        "replay", str(record), "--all", env={"PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"}
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
        hands = re.findall(r"^ {4}(human|random) \((elder|younger)\) +(.*?)$", chunk, re.M)
        assert sorted(h[1] for h in hands) == ["elder", "younger"]
        assert all(len(h[2].split()) == 12 - n for h in hands)


PROMPT = "[Enter] next, b back, d next deal, q quit, ? help> "


def test_replay_keys_act_at_once_on_a_terminal(played: tuple[str, Path]) -> None:
    """Each key is one keypress, no Enter after it (issue 28, point 12: ``b`` did nothing until
    Enter)."""
    _, record = played
    child, log = spawn_piquet("replay", str(record))
    child.expect_exact(PROMPT)
    assert "Trick 1:" not in log.getvalue()  # it waits before the first trick
    assert re.search(r"talon \(top first\)", log.getvalue())
    child.send("\r")  # Enter
    child.expect_exact("Trick 1: ")
    child.expect_exact(PROMPT)
    child.send("n")
    child.expect_exact("Trick 2: ")
    child.expect_exact(PROMPT)
    child.send("b")  # back: trick 1 again
    child.expect_exact("(back one step)")
    child.expect_exact("Trick 1: ")
    child.expect_exact(PROMPT)
    for typed, answer in [
        ("?", "Replay keys (on a terminal each acts at once; from a pipe, one per line):"),
        ("h", "b            back one step"),
        ("x", "unknown key 'x': Enter next, b back, d next deal, a all, q quit, ? help"),
        ("\x1b[A", "unknown key: Enter next"),  # an arrow key: one unknown key, not three
        ("é", "unknown key 'é'"),  # one key of two bytes
    ]:
        child.send(typed)
        child.expect_exact(answer)
        child.expect_exact(PROMPT)
    child.send("d")  # next deal: its heading, hands and declarations, no trick of deal 1
    child.expect_exact("Deal 2 of 6")
    child.expect_exact(PROMPT)
    assert "Trick 12 (last)" not in log.getvalue()
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert log.getvalue().count("unknown key") == 3


def test_replay_keys_are_lines_from_a_pipe(played: tuple[str, Path]) -> None:
    _, record = played
    res = run_piquet("replay", str(record), stdin="\nn\nb\nhelp\nx\nq\n")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.count("Trick 2: ") == 1 and out.count("Trick 1: ") == 2
    assert out.index("Trick 2: ") < out.index("(back one step)") < out.rindex("Trick 1: ")
    assert "Replay keys" in out and "unknown key 'x'" in out
    assert out.count(PROMPT) == 6


def _lflag(child: pexpect.spawn) -> int:
    """The local modes of the child's terminal (the pty's master shares its settings)."""
    return termios.tcgetattr(child.child_fd)[3]


@pytest.mark.parametrize("end", ["q", "ctrl-d", "ctrl-c", "SIGTERM", "SIGHUP"])
def test_the_terminal_is_restored_on_every_way_out(played: tuple[str, Path], end: str) -> None:
    _, record = played
    child, _ = spawn_piquet("replay", str(record))
    assert _lflag(child) & termios.ICANON and _lflag(child) & termios.ECHO
    child.expect_exact(PROMPT)
    deadline = time.monotonic() + 10
    while _lflag(child) & termios.ICANON and time.monotonic() < deadline:
        time.sleep(0.01)  # the prompt is written once the key mode is set: this is a formality
    assert not _lflag(child) & (termios.ICANON | termios.ECHO)  # waiting for a single key
    {
        "q": lambda: child.send("q"),
        "ctrl-d": child.sendeof,
        "ctrl-c": child.sendintr,
        "SIGTERM": lambda: child.kill(signal.SIGTERM),
        "SIGHUP": lambda: child.kill(signal.SIGHUP),
    }[end]()
    child.expect(pexpect.EOF)
    assert _lflag(child) & termios.ICANON and _lflag(child) & termios.ECHO
    child.close()
    expected = {"q": 0, "ctrl-d": 0, "ctrl-c": 130, "SIGTERM": 143, "SIGHUP": 129}[end]
    assert (child.exitstatus, child.signalstatus) == (expected, None)


def test_replay_from_a_later_deal_starts_at_its_start(played: tuple[str, Path]) -> None:
    _, record = played
    res = run_piquet("replay", str(record), "--all", "--ascii", "--deal", "4")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    doc = json.loads(record.read_text())
    before = next(e["totals"] for e in doc["events"] if e["type"] == "deal" and e["deal"] == 3)
    assert f"(deals 1 to 3 left out; totals before deal 4: human {before[0]}, " in out
    # The opening lines, then deal 4 from its heading: nothing of deal 3.
    assert out.index("Cut for deal") < out.index("left out") < out.index("== Deal 4 of 6")
    assert "Deal 3 of 6" not in out and "End of deal 3." not in out
    assert len(re.findall(r"^Trick \d+", out, re.M)) == 3 * 12
    # Stepping from deal 4: the first pause comes after deal 4's declarations.
    child, log = spawn_piquet("replay", str(record), "--deal", "4")
    child.expect_exact(PROMPT)
    shown = log.getvalue()
    assert "Deal 4 of 6" in shown and "Trick" not in shown and "End of deal" not in shown
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    for deal, reason in [
        ("7", f"{record}: no deal 7 in this record: it has deals 1 to 6"),
        ("0", "--deal must be at least 1, got 0"),
    ]:
        res = run_piquet("replay", str(record), "--all", "--deal", deal)
        assert res.returncode == 2 and f"piquet replay: {reason}" in res.stderr


def test_an_unfinished_record_says_where_it_ends(tmp_path: Path) -> None:
    game = Game(seed=4)
    agents = [RandomAgent(seed=1), RandomAgent(seed=2)]
    from piquet_agents.loop import play_turn

    while game.deal_number < 1 or sum(game.tricks_won) < 5:
        play_turn(game, agents)
    path = save_record(tmp_path / "cut.json", game, ["random", "heuristic"])
    res = run_piquet("replay", str(path), "--all")
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip().endswith(
        "The record ends here, in deal 2 during trick 6: the game was not finished."
    )


def test_names_from_a_record_cannot_drive_the_terminal(played: tuple[str, Path], tmp_path) -> None:
    _, record = played
    doc = json.loads(record.read_text())
    doc["agents"] = ["\x1b[2J\x1b]0;owned\x07evil\r\nname\u202e", "\x9b31mred\x00"]
    path = tmp_path / "names.json"
    path.write_text(json.dumps(doc))
    res = run_piquet("replay", str(path), "--all")
    assert res.returncode == 0, res.stderr
    assert "evil name against red." in res.stdout
    for bad in ("\x1b", "\x9b", "\x07", "\x00", "\u202e", "\r"):
        assert bad not in res.stdout


@pytest.mark.parametrize("rules", all_presets(), ids=lambda r: r.name)
def test_agent_games_replay_under_every_preset(rules, tmp_path: Path) -> None:
    game = play_game(Game(rules, seed=len(rules.name)), [RandomAgent(seed=1), RandomAgent(seed=2)])
    path = save_record(tmp_path / "g.json", game, ["random", "random"], seed=0)
    doc = load_record(path)
    lines = [line for step in replay_steps(doc, Style(ascii=True)) for line in step.lines]
    text = "\n".join(lines)
    n_deals = len(game.deal_scores)
    assert text.count(f"Trick {rules.hand_size} (last)") == n_deals
    assert text.count("End of deal") == n_deals
    assert "random (0)" in text and "random (1)" in text  # same names made distinct
    a, b = game.totals
    assert f"Final totals: random (0) {a}, random (1) {b}." in text
    # In every deal each player plays a hand of different cards (12, 24 in all).
    trick = re.compile(r"Trick \d+(?: \(last\))?: (random \(\d\)) (\w+), (random \(\d\)) (\w+) ->")
    for deal in text.split("== Deal ")[1:]:
        played: dict[str, set[str]] = {"random (0)": set(), "random (1)": set()}
        for leader, lead, follower, follow in trick.findall(deal):
            played[leader].add(lead)
            played[follower].add(follow)
        assert [len(x) for x in played.values()] == [rules.hand_size] * 2
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
    # The dealt hands, as held: grouped by suit (clubs, diamonds, hearts, spades), high to low.
    assert re.search(r"heuristic \(elder\) +A♥ K♥ Q♥ J♥  A♠ K♠ Q♠ J♠ 10♠ 9♠ 8♠ 7♠\n", text)
    assert re.search(r"random \(younger\) +A♣ K♣ Q♣ J♣  A♦ K♦ Q♦ J♦  10♥ 9♥ 8♥ 7♥\n", text)
    assert re.search(r"talon \(top first\) +7♣ 8♣ 9♣ 10♣ 7♦ 8♦ 9♦ 10♦\n", text)
