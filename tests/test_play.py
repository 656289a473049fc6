"""``piquet play``: the real program driven through a pseudo-terminal (pexpect), plus in-process
checks of the input parsers and of what the person is shown.

The scripted player types ``1`` at every prompt, which must always pick the first choice listed:
the first card of the sorted hand in the exchange, "declare", the first legal card in play.
"""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pexpect
import pytest
from hypothesis import given
from hypothesis import strategies as st

from piquet_env.actions import declare_action, done_action, pass_action
from piquet_env.agent import RandomAgent
from piquet_env.cards import card_str, cards_of, parse_card, parse_cards, sort_key
from piquet_env.game import Game, Phase, replay
from piquet_env.game.record import record_of
from piquet_env.rules import CLASSIC, STANDARD, all_presets, make_rules
from piquet_table.input import InputError, parse_decision, parse_discards, parse_play
from piquet_table.narrate import Narrator
from piquet_table.session import Session
from piquet_table.text import Cast, Style, score_sheet, settlement_lines
from tests.pty_helpers import (
    NEXT_DEAL,
    PROMPT,
    play_scripted,
    run_piquet,
    spawn_piquet,
    transcript_lines,
)


def test_scripted_player_completes_a_partie(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    child, log = spawn_piquet("play", "--opponent", "random", "--seed", "11", "--save", str(record))
    answers = play_scripted(child)
    out = log.getvalue()
    assert child.exitstatus == 0, out[-2000:]
    for deal in range(1, 7):
        assert f"End of deal {deal}." in out
    assert out.count("Trick 12 (last)") == 6
    assert "Game record saved to" in out
    # A pause at the end of each deal but the last; the last trick's card is always forced.
    assert out.count(NEXT_DEAL) == 5
    assert out.count("it is played for you") >= 6
    long = [line for line in transcript_lines(out) if len(line) > 80]
    assert [line for line in long if str(record) not in line] == []  # a path cannot be wrapped
    # The score sheet: one row per deal whose scores add up to the running totals.
    sheet = re.findall(r"^ +(\d) +(?:You|random) +(\d+) +(\d+) +(\d+) – (\d+)\r?$", out, re.M)
    assert [int(row[0]) for row in sheet] == [1, 2, 3, 4, 5, 6]
    running = [0, 0]
    for _, mine, theirs, total_mine, total_theirs in sheet:
        running = [running[0] + int(mine), running[1] + int(theirs)]
        assert running == [int(total_mine), int(total_theirs)]
    # The settlement, checked against RULES.md section 8 by hand from the printed totals.
    a, b = map(int, re.search(r"Final totals: you (\d+), random (\d+)\.", out).groups())
    assert running == [a, b]
    hi, lo = max(a, b), min(a, b)
    expected = hi + lo + 100 if lo < 100 <= hi else hi - lo + 100
    if a != b:
        winner = "You win" if a > b else "random wins"
        assert f"{winner} the partie by {expected}:" in out
    # The record replays, and it shows that every `1` picked the first choice on offer.
    doc = json.loads(record.read_text())
    assert doc["agents"] == ["human", "random"]
    game = replay(doc)
    assert game.is_over and list(game.totals) == [a, b]
    assert game.result == ((expected, -expected) if a > b else (-expected, expected))
    g = Game(
        game.rules,
        first_elder=next(e["elder"] for e in doc["events"] if e["type"] == "deal"),
        deals=[
            (e["elder_hand"], e["younger_hand"], e["talon"])
            for e in doc["events"]
            if e["type"] == "deal"
        ],
    )
    human_actions = 0
    for e in doc["events"]:
        if e["type"] != "action" or e.get("auto"):
            continue
        if e["player"] == 0:
            human_actions += 1
            if g.phase == Phase.PLAY:
                first = min(g.legal_actions(), key=sort_key)
            elif g.phase == Phase.DECLARE:
                first = declare_action(g.rules)
            elif g.discards[0]:
                first = done_action(g.rules)  # one card discarded, then done
            else:
                first = min(cards_of(g.hands[0]), key=sort_key)
            assert e["action"] == first, (e, g)
        g.apply(e["action"])
    assert human_actions >= answers  # an exchange answer is a discard and a done


def test_bad_input_is_reprompted_with_the_reason() -> None:
    child, log = spawn_piquet("play", "--opponent", "random", "--seed", "3", "--ascii")
    child.expect("discard> ")  # the person's first decision is always his exchange
    for typed, reason in [
        ("zz", "'zz' is not a card"),
        ("0", "there is no choice 0"),
        ("9" * 5000, "there is no choice 9999999999999..."),  # not int('9' * 5000): no crash
        ("1 2 3 4 5 6", "you gave 6"),
        ("1 1", "is given twice"),
        ("help", "Commands, at any prompt"),
        ("tricks", "No trick played yet"),
        ("table", "12) "),  # the table and the numbered choices again
    ]:
        child.sendline(typed)
        child.expect_exact(reason)
        child.expect("discard> ")
    child.sendline("1")
    # Play on with `1` until the person must follow suit while holding another suit.
    while True:
        k = child.expect([PROMPT, r"\[Enter\] next deal> "])
        if k == 1:
            child.sendline("")
            continue
        before = child.before
        if child.match.group(1) == "play" and (m := re.search(r"Follow (\w+):", before)):
            break
        child.sendline("1")
    suit = "CDHS"[("clubs", "diamonds", "hearts", "spades").index(m.group(1))]
    hand = re.findall(r"Your hand\s+(.*?)\s+\|", before)[-1].split()
    off_suit = next(c for c in hand if c[-1] != suit)
    missing = next(card_str(c) for c in range(32) if card_str(c) not in hand)
    for typed, reason in [
        (off_suit.lower(), f"you must follow {m.group(1)}"),
        (missing, f"you do not hold {missing}"),
        ("99", "there is no choice 99"),
        ("1" * 5000, "there is no choice 1111111111111..."),
        ("qh ks", "play one card"),
        ("table", "1) "),
    ]:
        child.sendline(typed)
        child.expect_exact(reason)
        child.expect("play> ")
    child.sendline("quit")
    child.expect_exact("You leave the partie.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert log.getvalue().isascii()  # --ascii: no suit symbols, no box drawing


def test_a_card_typed_as_shown_is_played() -> None:
    """Cards are shown as "10♠"; typed back that way (or 10s, ts, T♠) they are understood."""
    child, _ = spawn_piquet("play", "--opponent", "random", "--seed", "3")
    child.expect("discard> ")
    shown = re.findall(r"\d+\) (\S+)", child.before)
    ten = next(card for card in shown if card.startswith("10"))  # seed 3 deals the person 10♣
    child.sendline(ten)
    child.expect_exact(f"You discard {ten} and take")
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_d_exits_cleanly_and_saves_the_unfinished_game(tmp_path: Path) -> None:
    record = tmp_path / "part.json"
    child, _ = spawn_piquet("play", "--seed", "5", "--save", str(record))
    child.expect(PROMPT)
    child.sendeof()
    child.expect_exact("End of input: you leave the partie.")
    child.expect_exact("(unfinished)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    game = replay(record.read_text())  # a log cut short replays up to where it ends
    assert not game.is_over and game.current_player == 0


@pytest.mark.parametrize(
    ("sig", "status", "said"),
    [
        (signal.SIGINT, 130, "Interrupted."),
        (signal.SIGTERM, 143, "Terminated (SIGTERM)."),
        (signal.SIGHUP, 129, "The terminal hung up (SIGHUP)."),
    ],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
def test_a_signal_ends_the_game_and_saves_the_record(
    tmp_path: Path, sig: int, status: int, said: str
) -> None:
    record = tmp_path / "cut.json"
    child, _ = spawn_piquet("play", "--seed", "5", "--save", str(record))
    child.expect("discard> ")
    child.sendline("1")
    child.expect("declare> |play> ")  # one move made: the record holds it
    child.kill(sig)
    child.expect_exact(said)
    child.expect_exact("(unfinished)")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == status
    game = replay(record.read_text())
    assert not game.is_over and game.discards[0]  # the exchange made is in the record


def test_save_paths_are_checked_before_the_game(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    for path, reason in [
        (afile / "g.json", "is a file, not a directory"),
        (afile / "deeper" / "g.json", "is a file, not a directory"),
        (tmp_path, "is a directory"),
    ]:
        res = run_piquet("play", "--seed", "1", "--save", str(path))
        assert res.returncode == 2, res.stderr
        assert res.stderr.startswith("piquet play: --save") and reason in res.stderr
        assert "Traceback" not in res.stderr and "Piquet," not in res.stdout


def test_a_failed_save_falls_back_and_says_where(tmp_path: Path) -> None:
    """The folder of --save turns into a file during the game: the record is written elsewhere."""
    folder = tmp_path / "games"
    folder.mkdir()
    child, log = spawn_piquet("play", "--seed", "5", "--save", str(folder / "g.json"))
    child.expect("discard> ")
    folder.rmdir()
    folder.write_text("in the way")
    child.sendline("quit")
    child.expect_exact("could not write --save")
    child.expect(r"written to (\S+) instead")
    fallback = Path(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, log.getvalue()
    assert not replay(fallback.read_text()).is_over
    fallback.unlink()
    fallback.parent.rmdir()


def test_unknown_opponent_and_rules_are_clear_errors(tmp_path: Path, capsys) -> None:
    """In process (the command's own ``main``): each refusal exits 2 before any game starts."""
    from piquet_cli import main

    junk = tmp_path / "junk.safetensors"
    junk.write_text("not a checkpoint")
    for args, reason in [
        (["--opponent", "nobody"], "agent spec 'nobody'"),
        (["--opponent", "mcts:x"], "agent spec 'mcts:x'"),
        (["--opponent", str(junk)], str(junk)),
        (["--rules", "modern"], "unknown rules preset 'modern'"),
        (["--player", "random", "--delay", "-1"], "--delay must be at least 0"),
        (["--player", "random", "--delay", "nan"], "--delay must be at least 0"),
        (["--player", "random", "--delay", "1e9"], "--delay must be at most 60"),
        (["--delay", "1"], "add --player SPEC"),
        (["--step"], "add --player SPEC"),
    ]:
        try:
            rc = main(["play", *args])
        except SystemExit as exc:  # argparse's own refusals
            rc = exc.code
        err = capsys.readouterr().err
        assert rc == 2, (args, err)
        assert reason in err, (args, err)


def test_undecodable_input_is_bad_input_not_a_crash() -> None:
    res = run_piquet("play", "--seed", "1", stdin=b"caf\xe9 \xff\nquit\n")
    assert res.returncode == 0, res.stderr
    assert "is not a card" in res.stdout.decode() and b"Traceback" not in res.stderr


def test_a_checkpoint_is_an_opponent_and_its_long_name_fits(tmp_path: Path) -> None:
    """A saved policy (here an untrained one, rules classic) plays a whole partie against the
    scripted player; its long name (``policy:<file name>``) never pushes a line past 80 columns."""
    import torch

    from piquet_agents.checkpoint import save_policy
    from piquet_agents.policy import ActorCritic
    from piquet_env.observation import encoder_for

    rules = make_rules("classic")
    enc = encoder_for(rules)
    torch.manual_seed(0)
    path = save_policy(
        tmp_path / "a_rather_long_checkpoint_name_from_training.safetensors",
        ActorCritic(enc.size, enc.n_actions, hidden=(16,), activation="tanh"),
        rules,
    )
    child, log = spawn_piquet(
        "play", "--opponent", str(path), "--rules", "classic", "--seed", "1", timeout=60
    )
    play_scripted(child)
    out = log.getvalue()
    assert child.exitstatus == 0, out[-2000:]
    assert "The partie is over" in out
    name = "policy:a_rather_long_checkpoint_name_from_training.safetensors"
    assert name in out
    lines = transcript_lines(out)
    assert max(len(line) for line in lines) <= 80
    # Wrapped at spaces only: the name is never cut across two lines.
    assert not any(line.endswith(name[:20]) for line in lines)


def test_an_agent_can_take_the_seat_and_be_watched(tmp_path: Path) -> None:
    record = tmp_path / "watch.json"
    res = run_piquet(
        "play",
        "--player",
        "random",
        "--opponent",
        "random",
        "--rules",
        "classic",
        "--seed",
        "2",
        "--save",
        str(record),
    )
    assert res.returncode == 0, res.stderr
    assert "random (0) against random (1)" in res.stdout
    assert "talon (top first)" in res.stdout  # an onlooker sees both hands and the talon
    assert "next deal>" not in res.stdout  # piped: no pauses, no delay
    assert replay(record.read_text()).is_over


def test_watching_with_step_waits_for_enter_after_each_trick() -> None:
    child, log = spawn_piquet("play", "--player", "random", "--seed", "2", "--step")
    for n in (1, 2):
        child.expect_exact(f"Trick {n}: ")
        child.expect_exact("[Enter] next trick, q quit> ")
        assert f"Trick {n + 1}:" not in log.getvalue()
        child.sendline("")
    child.expect_exact("Trick 3: ")
    child.expect_exact("q quit> ")
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


# ---------------------------------------------------------------------- in process


def test_parse_play() -> None:
    qh, jh, seven_h, ks = (parse_card(c) for c in ("QH", "JH", "7H", "KS"))
    legal = [qh, jh, seven_h]
    hand = sum(1 << c for c in (qh, jh, seven_h, ks))
    assert parse_play("Qh", legal, STANDARD) == qh
    assert parse_play(" 3 ", legal, STANDARD) == seven_h
    with pytest.raises(InputError, match="you must follow hearts"):
        parse_play("ks", legal, STANDARD, hand, lead=parse_card("AH"))
    with pytest.raises(InputError, match="you do not hold AS"):
        parse_play("as", legal, STANDARD, hand, lead=parse_card("AH"))
    with pytest.raises(InputError, match="choose 1 to 3"):
        parse_play("4", legal, STANDARD)
    with pytest.raises(InputError, match="no joker"):
        parse_play("jk", legal, STANDARD)


def test_parse_discards() -> None:
    hand = parse_cards("AC KC TC 7C KD QD JD TH KS QS JS 9S")
    assert parse_discards("discard 7c 10h 1", hand, 1, 5, STANDARD) == [
        parse_card("7C"),
        parse_card("TH"),
        parse_card("AC"),
    ]
    assert parse_discards("none", hand, 0, 3, STANDARD) == []
    with pytest.raises(InputError, match="discard 1 to 5 cards; you gave none"):
        parse_discards("none", hand, 1, 5, STANDARD)
    with pytest.raises(InputError, match="you do not hold AH"):
        parse_discards("ah", hand, 1, 5, STANDARD)
    with pytest.raises(InputError, match="7C is given twice"):
        parse_discards("7c 4", hand, 1, 5, STANDARD)


def test_cards_typed_with_suit_symbols_and_long_numbers() -> None:
    ts, th = parse_card("TS"), parse_card("TH")
    legal = [ts, th]
    for typed in ("10♠", "10♤", "T♠", "t♠", "10s", "ts", "10♠\ufe0f"):
        assert parse_play(typed, legal, STANDARD) == ts, typed
    assert parse_play("10♥", legal, STANDARD) == th
    assert parse_discards("10♠, 10♡", [ts, th], 1, 2, STANDARD) == [ts, th]
    with pytest.raises(InputError, match=r"there is no choice 1111.*: choose 1 to 2"):
        parse_play("1" * 5000, legal, STANDARD)
    with pytest.raises(InputError, match=r"'xxxxxxxxxxxxx...' is not a card"):
        parse_play("x" * 5000, legal, STANDARD)
    with pytest.raises(InputError, match="there is no choice 0001"):
        parse_discards("0001", [ts, th], 1, 2, STANDARD)


def test_parse_decision() -> None:
    assert parse_decision("D") is True and parse_decision("1") is True
    assert parse_decision("pass") is False and parse_decision("2") is False
    with pytest.raises(InputError, match="declare"):
        parse_decision("3")


HANDS = st.lists(st.integers(0, 31), min_size=12, max_size=12, unique=True)


def _typed(card: int, upper: bool, ten: bool) -> str:
    name = card_str(card)
    name = ("10" + name[1]) if ten and name[0] == "T" else name
    return name.upper() if upper else name.lower()


@given(HANDS, st.data())
def test_typed_discards_parse_back_to_the_cards(hand: list[int], data: st.DataObject) -> None:
    shown = sorted(hand, key=sort_key)
    chosen = data.draw(st.lists(st.sampled_from(shown), min_size=1, max_size=5, unique=True))
    tokens = [
        str(shown.index(c) + 1)
        if data.draw(st.booleans())
        else _typed(c, data.draw(st.booleans()), data.draw(st.booleans()))
        for c in chosen
    ]
    text = data.draw(st.sampled_from(["", "discard ", "x "])) + data.draw(
        st.sampled_from([" ", ", "])
    ).join(tokens)
    assert parse_discards(text, shown, 1, 5, STANDARD) == chosen


@given(HANDS, st.text(max_size=12), st.integers(1, 12))
def test_any_typing_is_a_legal_choice_or_a_reason(hand: list[int], text: str, n: int) -> None:
    """Whatever is typed, the parsers return a legal choice or raise InputError, nothing else."""
    legal = hand[:n]

    def outcome(parse):
        try:
            return parse()
        except InputError:
            return None

    played = outcome(lambda: parse_play(text, legal, STANDARD, sum(1 << c for c in hand), hand[0]))
    assert played is None or played in legal
    discards = outcome(lambda: parse_discards(text, hand, 0, 3, STANDARD))
    assert discards is None or (set(discards) <= set(hand) and len(discards) <= 3)
    assert outcome(lambda: parse_decision(text)) in (None, True, False)
    for digits in ("²", "١", "1²"):  # digits that are not ASCII numbers are not choices
        assert outcome(lambda d=digits: parse_play(d, legal, STANDARD)) is None


def _typist(rng: random.Random):
    """Types what a careless person might: sometimes nonsense, often a legal-looking choice."""

    def read(prompt: str) -> str:
        if rng.random() < 0.05:
            return rng.choice(["", "zz", "0", "tricks", "table", "help", "1 1"])
        if prompt.startswith("discard"):
            return " ".join(str(k) for k in rng.sample(range(1, 13), rng.randint(0, 5)))
        if prompt.startswith("declare"):
            return rng.choice(["d", "p", "1", "2"])
        return str(rng.randint(1, 12))

    return read


@pytest.mark.parametrize("rules", all_presets(), ids=lambda r: r.name)
def test_the_person_sees_only_what_he_may_know(rules) -> None:
    """A partie under every preset, typed carelessly: it completes, and no line shown during a
    deal names a card the person may not know then: the opponent's discards (but those of a carte
    blanche he showed) and the talon cards nobody took and he did not see never appear."""
    rng = random.Random(rules.name)
    lines: list[str] = []
    game = Game(rules, seed=rng.getrandbits(32))
    status = Session(
        game, [None, RandomAgent(seed=1)], Style(ascii=True), read=_typist(rng), write=lines.append
    ).run()
    assert status == 0 and game.is_over
    doc = record_of(game, ["human", "random"])
    rebuilt = replay(doc)
    assert rebuilt.totals == game.totals
    # Split what was shown by deal, and work out each deal's secret cards from the record.
    text = "\n".join(lines)
    shown_by_deal = re.split(r"== Deal \d+ of \d+ \| elder", text)[1:]
    secret_by_deal = []
    g = Game(
        rules,
        first_elder=next(e["elder"] for e in doc["events"] if e["type"] == "deal"),
        deals=[
            (e["elder_hand"], e["younger_hand"], e["talon"])
            for e in doc["events"]
            if e["type"] == "deal"
        ],
    )
    for e in doc["events"]:
        if e["type"] == "action" and not e.get("auto"):
            if g.phase == Phase.PLAY and not g.trick and g.tricks_won == [0, 0]:
                talon = sum(1 << c for c in g.talon)
                # (a carte blanche was shown before its holder discarded from it)
                secret = (g.discards[1] & ~g.blanche[1]) | (talon & ~g.seen_talon[0])
                secret_by_deal.append(secret)
            g.apply(e["action"])
    assert len(shown_by_deal) == len(secret_by_deal) == len(game.deal_scores)
    for shown, secret in zip(shown_by_deal, secret_by_deal):
        named = set(re.findall(r"\b([789TJQKA][CDHS]|JK)\b", shown))
        assert not named & {card_str(c) for c in cards_of(secret)}


def test_exchange_limits_follow_the_rules() -> None:
    g = Game(make_rules("classic"), seed=4)
    assert g.exchange_limits(g.elder) == (1, 5)
    g.apply(min(cards_of(g.hands[g.elder])))
    g.apply(done_action(g.rules))
    assert g.exchange_limits(g.younger) == (1, 7)  # classic: younger may take all that is left


# ---------------------------------------------------------------------- narration, in process


def _names(*names: str, viewer: int | None = None) -> Cast:
    return Cast((names[0], names[1]), viewer)


@pytest.mark.parametrize(
    ("totals", "rules", "expected"),
    [
        # RULES.md section 10, example 8, worked by hand.
        (
            (309, 125),
            STANDARD,
            "by 284: the difference 309 - 125 = 184, plus 100 for the game "
            "= 284 (random reached 100, so nobody is rubiconed).",
        ),
        (
            (97, 89),
            STANDARD,
            "by 108: the difference 97 - 89 = 8, plus 100 for the game = 108 "
            "(neither player reached 100, so nobody is rubiconed).",
        ),
        (
            (97, 89),
            CLASSIC,
            "by 286: random is rubiconed (under 100), so the winner scores both "
            "totals plus 100 for the game: 97 + 89 + 100 = 286.",
        ),
        (
            (99, 120),
            STANDARD,
            "by 319: you are rubiconed (under 100), so the winner scores both "
            "totals plus 100 for the game: 120 + 99 + 100 = 319.",
        ),
    ],
)
def test_the_settlement_says_what_the_100_is(totals, rules, expected) -> None:
    from piquet_env.game import settle

    lines = settlement_lines(
        totals, settle(totals, rules), rules, _names("you", "random", viewer=0)
    )
    assert lines[0] == f"Final totals: you {totals[0]}, random {totals[1]}."
    assert lines[1].endswith(expected), lines[1]
    assert lines[1].startswith("You win" if totals[0] > totals[1] else "random wins")


def test_the_score_sheet_lists_every_deal() -> None:
    sheet = score_sheet(
        [(0, 1, (28, 11), (28, 11)), (1, 0, (33, 2), (61, 13))],
        _names("you", "a_very_long_agent_name_indeed", viewer=0),
        Style(),
    )
    assert sheet == [
        "Score sheet:",
        "  deal  elder                            You  a_very_long_a...   totals",
        "     1  a_very_long_a...                  28                11   28 – 11",
        "     2  You                               33                 2   61 – 13",
    ]


HOYLE = (
    "AS AH AD AC KS KH KD KC QS QH QD 7C",
    "JS TS 9S JH TH 9H JD TD 9D JC TC 9C",
    "QC 8S 7S 8H 7H 8D 7D 8C",
)
"""RULES.md section 10, example 9: the classic maximum; elder wins every trick whatever he plays."""


def test_a_capot_is_narrated() -> None:
    """Hoyle's deal: elder exchanges 7C for QC, younger 9S for 8S, both declare everything they
    may; elder wins all 12 tricks, so the capot (40) replaces classic's 10 for the cards and
    elder's deal is 170 (RULES.md section 10, example 9)."""
    game = Game(CLASSIC, mode="deal", deals=[HOYLE], first_elder=0)
    narrator = Narrator(CLASSIC, _names("elder", "younger"), Style(ascii=True))
    lines: list[str] = []
    script = [parse_card("7C"), done_action(CLASSIC), parse_card("9S"), done_action(CLASSIC)]
    while not game.is_over:
        if script:
            action = script.pop(0)
        elif game.phase == Phase.DECLARE:
            legal = game.legal_actions()
            action = declare_action(CLASSIC) if declare_action(CLASSIC) in legal else legal[0]
        else:
            action = min(game.legal_actions(), key=sort_key)
        before = game.clone()
        game.apply(action)
        lines += narrator.narrate(before, game, game.events[len(before.events) :])
    text = "\n".join(lines)
    assert "Capot! elder wins every trick: 40 for the capot, in place of the 10 for the cards." in (
        text
    )
    assert re.search(r"^  capot +40 +0$", text, re.M)
    assert re.search(r"^  deal total +170 +0$", text, re.M)
    assert game.deal_scores[0][0].total == 170
    assert pass_action(CLASSIC) != declare_action(CLASSIC)


class _Slow:
    """An agent that takes its time: it acts only once the status line says it is thinking."""

    name = "mcts:400"

    def __init__(self) -> None:
        self.thinking = threading.Event()
        self.inner = RandomAgent(seed=0)

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, turn) -> int:
        assert self.thinking.wait(10), "no status line while thinking"
        self.thinking.clear()
        return self.inner.act(turn)


def test_a_slow_agent_shows_that_it_is_thinking() -> None:
    slow = _Slow()
    shown: list[str | None] = []

    def status(text: str | None) -> None:
        shown.append(text)
        if text is not None:
            slow.thinking.set()

    game = Game(seed=1, mode="deal")
    lines: list[str] = []
    session = Session(
        game,
        [RandomAgent(seed=2), slow],
        Style(ascii=True),
        write=lines.append,
        status=status,
        think_after=0.0,
    )
    assert session.run() == 0 and game.is_over
    assert "mcts:400 is thinking..." in shown
    # Every status line is erased before the next line is written.
    assert all(
        a is not None and a.endswith(" is thinking...") and b is None
        for a, b in zip(shown[::2], shown[1::2])
    )
    assert len(shown) % 2 == 0


def test_the_person_is_paused_at_each_deal_end_and_forced_cards_are_played() -> None:
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        return "" if prompt.startswith("[Enter]") else "1"

    lines: list[str] = []
    game = Game(seed=7)
    assert Session(game, [None, RandomAgent(seed=1)], Style(), read, lines.append).run() == 0
    assert game.is_over
    assert prompts.count("[Enter] next deal> ") == len(game.deal_scores) - 1
    forced = [line for line in lines if line.endswith("it is played for you.")]
    assert len(forced) >= len(game.deal_scores)  # at least the last trick of each deal
    # The pause comes after the deal's breakdown and before the next deal's heading.
    text = "\n".join(lines)
    assert text.index("End of deal 1.") < text.index("Deal 2 of 6")


def _entries(lines: list[str]) -> list[tuple[int, list[str]]]:
    """Help lines grouped by entry (a heading, or a name indented at most 2 and its text): (the
    column its text starts at, its lines)."""
    groups: list[tuple[int, list[str]]] = []
    for line in lines:
        gap = re.match(r"\s*\S.*?\s{2,}", line)
        if line.startswith("   ") and groups:
            groups[-1][1].append(line)
        else:
            groups.append((gap.end() if gap else 0, [line]))
    return groups


@pytest.mark.parametrize("width", [40, 47, 60, 80])
def test_the_help_wraps_each_entry_under_its_text(width: int) -> None:
    """Issue 28, point 13: wrapped lines were indented 4 past the line's start, not under its
    text."""
    from piquet_table.session import HELP

    lines: list[str] = []
    answers = iter(["help", "q"])
    session = Session(
        Game(seed=1),
        [None, RandomAgent(seed=1)],
        Style(),
        lambda _: next(answers),
        lines.append,
        width=width,
    )
    assert session.run() == 0
    start = lines.index("Commands, at any prompt:")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Card names:"))
    end = next((i for i in range(end + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    shown = lines[start:end]
    assert " ".join(shown).split() == HELP.split()  # every word, in order
    assert all(len(line) <= width for line in shown)
    wrapped = 0
    for column, group in _entries(shown):
        for line in group[1:]:
            assert len(line) - len(line.lstrip()) == column > 0, (column, line)
            wrapped += 1
    assert wrapped >= 5  # some lines are wrapped at every width
    assert any("`discard 7c 8d 9h`" in line for line in shown)  # an example is not cut in two


def test_a_sigterm_while_the_agents_load_saves_the_game_as_dealt(tmp_path: Path) -> None:
    """``piquet play --save`` killed before its first prompt (loading the shipped policy takes
    seconds) exited -15 and saved nothing; it saves the game as dealt, as on end of input."""
    record = tmp_path / "early.json"
    code = (
        "import os, signal, sys, time\n"
        "import piquet_table.session as session\n"
        "def loading(*args, **kwargs):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(30)\n"
        "session.make_seats = loading\n"
        "from piquet_cli import main\n"
        f"sys.exit(main(['play', '--seed', '5', '--save', {str(record)!r}]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.PIPE,
    )
    assert out.returncode == 143, (out.returncode, out.stdout, out.stderr)
    assert "Terminated (SIGTERM)." in out.stdout and "(unfinished)" in out.stdout
    doc = json.loads(record.read_text())
    assert doc["agents"] == ["human", "random"] and doc["seed"] == 5
    game = replay(doc)
    moves = [e for e in doc["events"] if e["type"] == "action" and not e.get("auto")]
    assert not game.is_over and not moves


def test_a_point_is_declared_by_its_pips_and_scores_its_length() -> None:
    """Issue 50: "declare Point of six, worth 58" read as a score of 58. In Hoyle's deal
    (RULES.md section 10, example 9) elder's point after his exchange is three cards, A K Q of
    spades (11 + 10 + 10 = 31 pips): it is declared by its pips and scores 3, one per card."""
    game = Game(CLASSIC, mode="deal", deals=[HOYLE], first_elder=0)
    narrator = Narrator(CLASSIC, _names("elder", "younger"), Style(ascii=True))
    lines: list[str] = []
    script = [parse_card("7C"), done_action(CLASSIC), parse_card("9S"), done_action(CLASSIC)]
    while game.phase != Phase.PLAY:
        if script:
            action = script.pop(0)
        else:
            legal = game.legal_actions()
            action = declare_action(CLASSIC) if declare_action(CLASSIC) in legal else legal[0]
        before = game.clone()
        game.apply(action)
        lines += narrator.narrate(before, game, game.events[len(before.events) :])
    text = "\n".join(lines)
    assert "elder declares Point of three, 31 pips (AS KS QS)." in text, text
    assert "elder scores 3 for the point." in text
    assert "worth" not in text
