"""``piquet play``: the real program driven through a pseudo-terminal (pexpect), plus in-process
checks of the input parsers and of what the person is shown.

The scripted player types ``1`` at every prompt, which must always pick the first choice listed:
the first card of the sorted hand in the exchange, "declare", the first legal card in play.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from hypothesis import given
from hypothesis import strategies as st
from piquet_agents.random_agent import RandomAgent
from piquet_training.tui.input import InputError, parse_decision, parse_discards, parse_play
from piquet_training.tui.replay import record_of
from piquet_training.tui.session import Session
from piquet_training.tui.text import Style

from piquet_env.actions import declare_action, done_action
from piquet_env.cards import card_str, cards_of, parse_card, parse_cards, sort_key
from piquet_env.game import Game, Phase, replay
from piquet_env.rules import STANDARD, all_presets, make_rules

ROOT = Path(__file__).resolve().parents[1]
PROMPT = r"(discard|declare|play)> "


def spawn_piquet(*args: str, timeout: float = 30) -> tuple[pexpect.spawn, io.StringIO]:
    """Start ``python -m piquet_training.cli ARGS`` on a pseudo-terminal; return it and its
    transcript."""
    env = dict(os.environ, NO_COLOR="1", PYTHONIOENCODING="utf-8", COLUMNS="100")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "piquet_training.cli", *args],
        cwd=str(ROOT),
        env=env,
        encoding="utf-8",
        timeout=timeout,
        dimensions=(40, 100),
    )
    log = io.StringIO()
    child.logfile_read = log
    child.delaybeforesend = 0.002  # the default 50 ms per line makes a scripted partie slow
    return child, log


def play_scripted(child: pexpect.spawn) -> int:
    """Answer ``1`` at every prompt until the program exits; return how many answers were given."""
    answers = 0
    while child.expect([PROMPT, pexpect.EOF]) == 0:
        child.sendline("1")
        answers += 1
    child.close()
    return answers


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
    # The settlement, checked against RULES.md section 8 by hand from the printed totals.
    a, b = map(int, re.search(r"Final totals: you (\d+), random (\d+)\.", out).groups())
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
        ("1 2 3 4 5 6", "you gave 6"),
        ("1 1", "is given twice"),
        ("help", "Commands, at any prompt"),
        ("tricks", "No trick played yet"),
    ]:
        child.sendline(typed)
        child.expect_exact(reason)
        child.expect("discard> ")
    child.sendline("1")
    # Play on with `1` until the person must follow suit while holding another suit.
    while True:
        child.expect(PROMPT)
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
        ("qh ks", "play one card"),
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


def test_ctrl_c_exits_with_status_130() -> None:
    child, _ = spawn_piquet("play", "--seed", "5")
    child.expect(PROMPT)
    child.sendintr()
    child.expect_exact("Interrupted.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


def test_unknown_opponent_and_rules_are_clear_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.safetensors"
    junk.write_text("not a checkpoint")
    for args, reason in [
        (["--opponent", "nobody"], "unknown agent spec 'nobody'"),
        (["--opponent", "mcts:x"], "'x' is not an integer"),
        (["--opponent", str(junk)], str(junk)),
        (["--rules", "modern"], "unknown rules preset 'modern'"),
    ]:
        res = subprocess.run(
            [sys.executable, "-m", "piquet_training.cli", "play", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            input="",
            timeout=60,
        )
        assert res.returncode == 2
        assert reason in res.stderr and "Traceback" not in res.stderr


def test_undecodable_input_is_bad_input_not_a_crash() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "piquet_training.cli", "play", "--seed", "1"],
        cwd=ROOT,
        capture_output=True,
        input=b"caf\xe9 \xff\nquit\n",
        timeout=60,
        env=dict(os.environ, PYTHONIOENCODING="utf-8"),
    )
    assert res.returncode == 0, res.stderr
    assert "is not a card" in res.stdout.decode() and b"Traceback" not in res.stderr


def test_a_checkpoint_is_an_opponent(tmp_path: Path) -> None:
    """A saved policy (here an untrained one, rules classic) plays a whole partie against the
    scripted player."""
    import torch
    from piquet_agents.checkpoint import save_policy
    from piquet_agents.policy import ActorCritic

    from piquet_env.observation import encoder_for

    rules = make_rules("classic")
    enc = encoder_for(rules)
    torch.manual_seed(0)
    path = save_policy(
        tmp_path / "p.safetensors",
        ActorCritic(enc.size, enc.n_actions, hidden=(16,), activation="tanh"),
        rules,
    )
    child, log = spawn_piquet(
        "play", "--opponent", str(path), "--rules", "classic", "--seed", "1", timeout=60
    )
    play_scripted(child)
    assert child.exitstatus == 0, log.getvalue()[-2000:]
    assert "The partie is over" in log.getvalue()
    assert "policy:p.safetensors" in log.getvalue()


def test_an_agent_can_take_the_seat_and_be_watched(tmp_path: Path) -> None:
    record = tmp_path / "watch.json"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "piquet_training.cli",
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
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONIOENCODING="utf-8"),
    )
    assert res.returncode == 0, res.stderr
    assert "random (0) against random (1)" in res.stdout
    assert "talon (top first)" in res.stdout  # an onlooker sees both hands and the talon
    assert replay(record.read_text()).is_over


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
    deal names a card the person may not know then: the opponent's discards and the talon cards
    nobody took and he did not see never appear."""
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
                secret_by_deal.append(g.discards[1] | (talon & ~g.seen_talon[0]))
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
