"""Only what the person's seat knows reaches the browser.

Every message a table sends during a partie, under every preset, names no card hidden from the seat
at that moment; and a view does not change when the cards hidden from the seat are permuted among
the hidden places (the env's observation test, :func:`tests.test_observation._shuffle_hidden`).
"""

from __future__ import annotations

import asyncio
import random

import pytest

from piquet_env.cards import card_str, parse_card
from piquet_env.game import Game, Phase, hidden_cards
from piquet_env.rules import all_presets
from piquet_table.web.client import Client
from piquet_table.web.view import deal_end_view, seat_view, spectator_view
from tests.test_observation import _shuffle_hidden
from tests.web_helpers import answer, cards_named, make_hub

PRESETS = all_presets()


def _forbidden(table) -> int:
    """The cards hidden from the person now: for a deal's breakdown (the next deal is dealt
    already), those hidden just before its last card, less the last trick's cards (played)."""
    if table.ended is not None:
        before, events = table.ended
        trick = next(e for e in events if e["type"] == "trick")
        played = (1 << parse_card(trick["lead"])) | (1 << parse_card(trick["follow"]))
        return hidden_cards(before, table.seat) & ~played
    return hidden_cards(table.game, table.seat)


async def _play_partie(rules, tmp_path, seed: int) -> tuple[list[tuple[dict, int]], object]:
    """A partie against the random agent through a hub, the person answering at random; every
    message with the cards hidden from him when it was sent."""
    hub = make_hub(tmp_path, rules, seed=seed)
    rng = random.Random(seed)
    sent: list[tuple[dict, int]] = []
    inbox: asyncio.Queue = asyncio.Queue()
    client: Client

    async def send(message: dict) -> None:
        table = client.table or next(iter(hub.tables.values()), None)
        sent.append((message, _forbidden(table) if table is not None else 0))
        inbox.put_nowait(message)

    client = Client(hub, send, "tester")
    await client.receive('{"type": "new", "opponent": "random"}')
    table = client.table
    while True:
        msg = await asyncio.wait_for(inbox.get(), 10)
        if msg["type"] == "error":
            raise AssertionError(msg)
        if msg["view"]["phase"] == "over" and msg["view"].get("saved"):
            break
        if msg["version"] != table.version:
            continue  # an agent moved since: its update is on its way
        move = answer(msg["view"], msg["version"], rng)
        if move is not None:
            await client.receive(__import__("json").dumps(move))
    await hub.shutdown()
    return sent, table


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_no_message_of_a_partie_names_a_card_the_seat_has_not_seen(rules, tmp_path):
    sent, table = asyncio.run(_play_partie(rules, tmp_path, seed=len(rules.name)))
    assert table.game.is_over and len(sent) > 40
    named_any = 0
    for message, forbidden in sent:
        if message["type"] == "welcome":  # its log tells deals before this one
            message = {k: v for k, v in message.items() if k != "log"}
        named = cards_named(message)
        named_any += bool(named)
        leak = [card_str(c) for c in named if forbidden >> c & 1]
        assert not leak, (leak, message)
    assert named_any > len(sent) // 2  # the scan does see cards


def test_the_scan_finds_a_card_shown_either_way():
    assert cards_named({"log": ["You play 10♠, then Q♥"], "view": {"c": ["JK", "TS"]}}) == {
        parse_card(c) for c in ("TS", "QH", "JK")
    }
    assert cards_named({"log": ["Cut for deal: you 9♣, random K♦."]}) == set()


def _states(rules, seed: int):
    """Every decision state of a random partie, with the state before each deal's last card."""
    rng = random.Random(seed)
    g = Game(rules, seed=rng.getrandbits(32))
    while not g.is_over:
        before = g.clone()
        g.apply(rng.choice(g.legal_actions()))
        new = g.events[len(before.events) :]
        k = next((i for i, e in enumerate(new) if e["type"] == "deal"), len(new))
        yield before, new[:k] if any(e["type"] == "deal_end" for e in new) else None
    yield g, None


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_a_permutation_of_the_hidden_cards_changes_no_view(rules):
    rng = random.Random(rules.name)
    names = ("human", "agent")
    changed = 0
    for g, ended in _states(rules, rng.getrandbits(32)):
        for seat in (0, 1):
            other = _shuffle_hidden(g, seat, rng)
            assert seat_view(g, seat, names) == seat_view(other, seat, names)
            if ended is not None:
                assert deal_end_view(g, ended, seat, names) == deal_end_view(
                    other, ended, seat, names
                )
            changed += spectator_view(g, names) != spectator_view(other, names)
    # the shuffles moved cards that an onlooker sees (fewer states in a mini deal)
    assert changed > (50 if rules.pack_size > 20 else 10)


def test_a_seat_view_shows_its_own_hand_and_what_it_was_shown():
    g = Game(all_presets()[0], seed=5)
    seat = g.current_player
    view = seat_view(g, seat, ("a", "b"))
    mine = {c for group in view["players"][seat]["hand"] for c in group}
    assert mine == {card_str(c) for c in range(32) if g.hands[seat] >> c & 1}
    assert view["players"][1 - seat]["hand"] is None and view["talon"] is None
    assert view["players"][1 - seat]["cards"] == 12 and view["talon_count"] == 8
    assert view["choice"]["kind"] == "exchange"
    while g.phase == Phase.EXCHANGE:
        g.apply(g.legal_actions()[0])
    elder = g.elder
    view = seat_view(g, elder, ("a", "b"))
    assert set(view["talon_seen"]) == {
        card_str(c) for c in range(32) if g.seen_talon[elder] >> c & 1
    }
