"""The web table's server through Starlette's TestClient: a partie over the socket, every kind of
refused message, reconnecting, abandoned tables, limits, isolation, the records folder's bounds,
uploads, watching two agents."""

from __future__ import annotations

import json
import os
import time

import pytest

pytest.importorskip("starlette", reason="the web table needs the web extra: pip install '.[web]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx (the test extra)")

from starlette.websockets import WebSocketDisconnect

from piquet_agents.loop import play_game
from piquet_env.agent import RandomAgent
from piquet_env.game import Game, load_record, replay
from piquet_env.game.record import save_record
from piquet_table.replay import replay_steps
from piquet_table.web.app import MAX_UPLOAD_BYTES
from piquet_table.web.protocol import MAX_MESSAGE_CHARS
from tests.web_helpers import answer
from tests.web_helpers import client as _client
from tests.web_helpers import send as _send


def _expect(ws, msg: dict, kind: str) -> dict:
    """Send ``msg`` and read until a message of type ``kind`` comes (agents' updates go by)."""
    ws.send_text(json.dumps(msg))
    while (reply := ws.receive_json())["type"] != kind:
        assert reply["type"] == "update", reply
    return reply


def _until_choice(ws, msg) -> dict:
    """Read updates until the seat has a choice (or the game is over)."""
    while (
        msg["type"] != "error" and msg["view"]["choice"] is None and msg["view"]["phase"] != "over"
    ):
        msg = ws.receive_json()
    return msg


def _play_out(ws, msg, limit=2000) -> dict:
    """Answer every choice with the first legal one until the game is over."""
    for _ in range(limit):
        msg = _until_choice(ws, msg)
        assert msg["type"] != "error", msg
        if msg["view"]["phase"] == "over":
            return msg
        msg = _send(ws, answer(msg["view"], msg["version"]))
    raise AssertionError("the game did not end")


def _saved(ws) -> str:
    """The record's name, from the update that follows the game's end."""
    msg = ws.receive_json()
    assert msg["type"] == "update" and msg["log"] == []
    return msg["view"]["saved"]


def test_a_partie_over_the_socket_is_saved_as_a_record_that_replays(tmp_path):
    _, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        welcome = _send(ws, {"type": "new", "opponent": "heuristic"})
        assert welcome["type"] == "welcome" and welcome["kind"] == "play"
        assert welcome["log"][0] == "Piquet, standard rules, 6 deals: you against heuristic."
        last = _play_out(ws, welcome)
        view = last["view"]
        assert view["phase"] == "over" and len(view["sheet"]) == 6
        assert view["settlement"][0].startswith("Final totals: you ")
        assert view["sheet"][-1]["totals"] == view["totals"]
        name = _saved(ws)
    doc = load_record(tmp_path / "records" / name)
    assert doc["agents"] == ["human", "heuristic"] and doc["finished"] is True
    game = replay(doc)
    assert game.is_over and list(game.totals) == view["totals"]
    assert list(game.result) == view["result"]
    steps = replay_steps(doc)  # the terminal's replay reads it
    assert steps[-1].kind == "end"


def test_refused_messages_get_the_reason_and_change_nothing(tmp_path):
    hub, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        msg = _until_choice(ws, _send(ws, {"type": "new", "opponent": "random", "mode": "deal"}))
        version, view = msg["version"], msg["view"]
        assert view["choice"]["kind"] == "exchange"
        held = {c for group in view["players"][0]["hand"] for c in group}
        not_held = next(
            c for c in ("AS", "KS", "QS", "AH", "KH", "QH", "AD", "KD", "QD") if c not in held
        )
        bad = [
            ("{not json", "not a JSON message"),
            ("[1, 2]", "a JSON object"),
            (json.dumps({"type": "cheat"}), "unknown message type"),
            (json.dumps({"type": "play", "card": "QH"}), "needs 'version'"),
            (json.dumps({"type": "play", "card": 7, "version": version}), "'card' must be"),
            (json.dumps({"type": "exchange", "cards": [], "version": True}), "'version' must"),
            (json.dumps({"type": "next", "version": version, "x": 1}), "has no field"),
            (json.dumps({"type": "exchange", "cards": ["AC"] * 13, "version": version}), "at most"),
            ("x" * (MAX_MESSAGE_CHARS + 1), "at most 2,048"),
            ("x" * 5000, "message of 5,000 characters"),  # its real length, not the cut one
            ("[" * 1020 + "]" * 1020, "not a JSON message"),
            (json.dumps({"type": "play", "card": "QH", "version": version}), "it is the exchange"),
            (json.dumps({"type": "next", "version": version}), "no deal breakdown"),
            (json.dumps({"type": "exchange", "cards": [], "version": version + 5}), "version"),
            (json.dumps({"type": "exchange", "cards": [not_held], "version": version}), "not hold"),
            (json.dumps({"type": "exchange", "cards": ["1"], "version": version}), "is not a card"),
            (
                json.dumps({"type": "exchange", "cards": ["ZZ"], "version": version}),
                "is not a card",
            ),
            (json.dumps({"type": "pause"}), "for watching"),
            (json.dumps({"type": "new", "opponent": "/etc/passwd"}), "no opponent"),
            (json.dumps({"type": "new", "opponent": "mcts:100000"}), "no opponent"),
        ]
        if view["choice"]["min"] > 0:
            bad.append(
                (json.dumps({"type": "exchange", "cards": [], "version": version}), "gave none")
            )
        for text, reason in bad:
            ws.send_text(text)
            reply = ws.receive_json()
            assert reply["type"] == "error" and reason in reply["message"], (text[:60], reply)
        ws.send_bytes(b'{"type": "leave"}')
        reply = ws.receive_json()
        assert reply["type"] == "error" and "binary" in reply["message"]
        again = _send(ws, {"type": "join", **_ids(hub)})
        assert again["type"] == "welcome" and again["version"] == version
        assert again["view"] == view  # nothing changed
        move = answer(view, version)
        first = _send(ws, move)
        assert first["type"] == "update" and first["version"] == version + 1
        _until_choice(ws, first)
        ws.send_text(json.dumps(move))  # the same message again, once the seat may act: a replay
        reply = ws.receive_json()
        assert reply["type"] == "error" and "was not played" in reply["message"]


def _ids(hub) -> dict:
    (table,) = hub.tables.values()
    return {"table": table.id, "token": table.token}


def test_an_illegal_card_is_refused_with_the_reason(tmp_path):
    _, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        msg = _send(ws, {"type": "new", "opponent": "random", "mode": "deal"})
        for _ in range(200):
            msg = _until_choice(ws, msg)
            view = msg["view"]
            choice = view["choice"]
            hand = [c for g in view["players"][0]["hand"] for c in g]
            if choice["kind"] == "play" and len(choice["cards"]) < len(hand):
                break
            msg = _send(ws, answer(view, msg["version"]))
        else:
            pytest.fail("no trick to follow with a suit in hand")
        illegal = next(c for c in hand if c not in choice["cards"])
        reply = _send(ws, {"type": "play", "card": illegal, "version": msg["version"]})
        assert reply["type"] == "error" and reply["message"].startswith("you must follow ")
        reply = _send(ws, {"type": "play", "card": "2", "version": msg["version"]})
        assert "is not a card: name one" in reply["message"]
        reply = _send(ws, {"type": "play", "card": "ZZ", "version": msg["version"]})
        assert "like qh or 10s" in reply["message"] and "number" not in reply["message"]
        played = _send(
            ws, {"type": "play", "card": choice["cards"][0].lower(), "version": msg["version"]}
        )
        assert played["type"] == "update" and played["version"] == msg["version"] + 1


def test_a_search_opponent_shows_that_it_is_thinking(tmp_path):
    _, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        msg = _send(ws, {"type": "new", "opponent": "heuristic", "mode": "deal"})
        seen = set()
        for _ in range(400):
            view = msg["view"]
            if view["phase"] == "over":
                break
            busy = view["to_act"] == 1 and not view["deal_over"]
            assert view["thinking"] == ("heuristic" if busy else None)
            seen.add(view["thinking"])
            move = answer(view, msg["version"])
            msg = _send(ws, move) if move else ws.receive_json()
        assert seen == {"heuristic", None}


def test_a_reload_joins_the_same_table_and_a_wrong_token_does_not(tmp_path):
    hub, client = _client(tmp_path)
    with client:
        with client.websocket_connect("/ws") as ws:
            msg = _until_choice(ws, _send(ws, {"type": "new", "opponent": "random"}))
            msg = _until_choice(ws, _send(ws, answer(msg["view"], msg["version"])))
            ids, version, log = _ids(hub), msg["version"], msg["view"]
        with client.websocket_connect("/ws") as ws:
            wrong = _send(ws, {"type": "join", "table": ids["table"], "token": "x" * 32})
            assert wrong["type"] == "error" and "no such table" in wrong["message"]
            back = _send(ws, {"type": "join", **ids})
            assert back["type"] == "welcome" and back["version"] == version
            assert back["view"] == log and back["log"][0].startswith("Piquet, standard rules")
            _play_out(ws, back)


def test_an_abandoned_table_is_saved_unfinished_and_replays(tmp_path):
    hub, client = _client(tmp_path, reconnect_grace=0.2)
    with client:
        with client.websocket_connect("/ws") as ws:
            msg = _until_choice(ws, _send(ws, {"type": "new", "opponent": "random"}))
            _until_choice(ws, _send(ws, answer(msg["view"], msg["version"])))
        for _ in range(100):
            if not hub.tables:
                break
            time.sleep(0.05)
        assert not hub.tables
    (path,) = (tmp_path / "records").glob("[!.]*")
    doc = load_record(path)
    assert doc["finished"] is False and not replay(doc).is_over
    assert replay_steps(doc)[-1].kind == "unfinished"


def _a_move(ws, opponent: str = "random") -> None:
    """Open a table and make the person's first move (a table left before one is not saved)."""
    msg = _until_choice(ws, _expect(ws, {"type": "new", "opponent": opponent}, "welcome"))
    _send(ws, answer(msg["view"], msg["version"]))


def test_leaving_and_stopping_the_server_save_the_tables(tmp_path):
    hub, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        _a_move(ws)
        _expect(ws, {"type": "leave"}, "left")
        assert len(list((tmp_path / "records").glob("[!.]*"))) == 1
        _a_move(ws)
        _a_move(ws, "heuristic")  # the first is saved
        assert len(list((tmp_path / "records").glob("[!.]*"))) == 2
    assert len(list((tmp_path / "records").glob("[!.]*"))) == 3  # the server stopped: saved
    assert not hub.tables


def test_tables_per_client_and_in_all_are_bounded(tmp_path):
    hub, client = _client(tmp_path, max_per_client=2, max_tables=3)
    with client:
        sockets = [client.websocket_connect("/ws") for _ in range(3)]
        try:
            replies = [
                _send(ws.__enter__(), {"type": "new", "opponent": "random"}) for ws in sockets
            ]
            assert [r["type"] for r in replies] == ["welcome", "welcome", "error"]
            assert "you have 2 tables open" in replies[2]["message"]
            hub.tables[next(iter(hub.tables))].owner = "someone else"
            assert _send(sockets[2], {"type": "new"})["type"] == "welcome"
            for table in hub.tables.values():
                table.owner = table.owner if table.owner == "testclient" else "a third"
            full = _expect(sockets[2], {"type": "new", "opponent": "random"}, "welcome")
            assert full["type"] == "welcome"  # its own table was left first, making room
            assert len(hub.tables) == 3
        finally:
            for ws in sockets:
                ws.__exit__(None, None, None)


def test_tables_are_isolated(tmp_path):
    hub, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
        ma = _until_choice(a, _send(a, {"type": "new", "opponent": "random"}))
        mb = _until_choice(b, _send(b, {"type": "new", "opponent": "heuristic"}))
        ta, tb = hub.tables[ma["table"]], hub.tables[mb["table"]]
        before_b = tb.game.clone().events
        _until_choice(a, _send(a, answer(ma["view"], ma["version"])))
        assert tb.game.events == before_b and tb.version == mb["version"]
        cross = _send(a, {"type": "join", "table": tb.id, "token": ta.token})
        assert cross["type"] == "error"
        assert ta.version > 0 and tb.version == mb["version"]


def test_a_page_from_another_site_cannot_open_the_socket(tmp_path):
    _, client = _client(tmp_path)
    evil = {"origin": "http://evil.example"}
    with client:
        with (
            pytest.raises(WebSocketDisconnect) as err,
            client.websocket_connect("/ws", headers=evil),
        ):
            pass
        assert err.value.code == 1008
        with client.websocket_connect("/ws", headers={"origin": "http://testserver"}) as ws:
            assert _send(ws, {"type": "leave"})["type"] == "error"  # accepted: no table yet


def test_records_are_read_only_from_the_records_folder(tmp_path):
    _, client = _client(tmp_path)
    records = tmp_path / "records"
    records.mkdir()
    game = play_game(Game(seed=2, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
    save_record(records / "good.json", game, ["human", "random"])
    save_record(tmp_path / "outside.json", game, ["human", "random"])
    os.symlink(tmp_path / "outside.json", records / "link.json")
    (records / ".hidden.json").write_text("{}")
    (records / "broken.json").write_text('{"format": "piquet-log/1", "events": []}')
    with client:
        names = [r["name"] for r in client.get("/api/records").json()]
        assert sorted(names) == ["broken.json", "good.json"]
        frames = client.get("/api/records/good.json").json()
        assert frames["names"] == ["human", "random"] and frames["finished"] is True
        assert frames["frames"][-1]["view"]["phase"] == "over"
        hands = frames["frames"][0]["view"]["players"]
        assert all(p["hand"] for p in hands)  # both hands shown
        for name in ("link.json", ".hidden.json", "..%2Foutside.json", "%2Fetc%2Fpasswd"):
            reply = client.get(f"/api/records/{name}")
            assert reply.status_code in (400, 404), name
            assert "events" not in reply.text
        broken = client.get("/api/records/broken.json")
        assert broken.status_code == 400 and "'events' is empty" in broken.json()["error"]
        assert str(tmp_path) not in broken.text


def test_an_uploaded_record_is_replayed_from_memory_within_its_bounds(tmp_path):
    _, client = _client(tmp_path)
    game = play_game(Game(seed=4), [RandomAgent(seed=1), RandomAgent(seed=2)])
    text = json.dumps({"format": "piquet-log/1", "agents": ["a", "b"], "events": game.events})
    with client:
        frames = client.post("/api/replay", content=text).json()
        assert frames["title"] == "uploaded record" and len(frames["starts"]) == 6
        assert frames["frames"][-1]["view"]["settlement"]
        bad = client.post("/api/replay", content=text.replace('"action"', '"actoin"', 1))
        assert bad.status_code == 400 and bad.json()["error"].startswith("event 8 (action)")
        assert client.post("/api/replay", content=b"\xff\xfe").status_code == 400
        big = client.post("/api/replay", content=b" " * (MAX_UPLOAD_BYTES + 1))
        assert big.status_code == 413
        assert client.post("/api/replay", content="NaN").status_code == 400
    assert not (tmp_path / "records").exists()  # nothing was written


def test_watching_two_agents_to_the_end_with_pause_and_step(tmp_path):
    _, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        msg = _send(ws, {"type": "watch", "players": ["random", "heuristic"], "delay": 0})
        assert msg["type"] == "welcome" and msg["kind"] == "watch"
        assert msg["view"]["names"] == ["random", "heuristic"]
        paused = _send(ws, {"type": "pause"})
        while not paused["view"]["paused"]:
            paused = ws.receive_json()
        version = paused["version"]
        time.sleep(0.1)
        stepped = _send(ws, {"type": "step"})
        while stepped["version"] == version:
            stepped = ws.receive_json()
        assert stepped["version"] == version + 1 and stepped["view"]["paused"]
        msg = _send(ws, {"type": "resume"})
        deals, hands_seen = set(), False
        while msg["view"]["phase"] != "over":
            view = msg["view"]
            hands_seen |= all(p["hand"] for p in view["players"])
            deals.add(view["deal"])
            msg = ws.receive_json()
        assert deals == set(range(1, 7)) and hands_seen
        assert msg["view"]["settlement"]
        name = _saved(ws)
    assert load_record(tmp_path / "records" / name)["agents"] == ["random", "heuristic"]


def test_the_page_and_its_files_come_from_the_package(tmp_path):
    _, client = _client(tmp_path)
    with client:
        page = client.get("/")
        assert (
            page.status_code == 200
            and "default-src 'self'" in page.headers["content-security-policy"]
        )
        for ref in ("/static/table.js", "/static/table.css"):
            assert ref in page.text and client.get(ref).status_code == 200
        assert "http" not in page.text.replace("http-equiv", "")  # nothing from elsewhere
        assert client.get("/static/../app.py").status_code == 404
        config = client.get("/api/config").json()
        assert config["default"] == "random" and [o["id"] for o in config["opponents"]] == [
            "random",
            "heuristic",
        ]


def test_a_table_left_while_its_agent_thinks_is_saved_after_the_move(tmp_path):
    from piquet_table.web.opponents import Choice

    hub, client = _client(tmp_path)
    hub.choices["slow"] = Choice("slow", "Slow search", "mcts:0:time=0.3")
    with client, client.websocket_connect("/ws") as ws:
        msg, moved = _send(ws, {"type": "new", "opponent": "slow", "mode": "deal"}), False
        while not (msg["view"]["thinking"] and moved):  # the agent thinks after a person's move
            if msg["view"]["choice"]:
                msg, moved = _send(ws, answer(msg["view"], msg["version"])), True
            else:
                msg = ws.receive_json()
        busy = _send(ws, answer(msg["view"], msg["version"]) or {"type": "next", "version": 0})
        assert busy["type"] == "error" and "mcts:0:time=0.3 is thinking" in busy["message"]
        _expect(ws, {"type": "leave"}, "left")
    (path,) = (tmp_path / "records").glob("[!.]*")
    doc = load_record(path)
    assert doc["finished"] is False and not replay(doc).is_over  # it replays, unfinished
    moves = [e for e in doc["events"] if e["type"] == "action" and not e.get("auto")]
    assert moves[-1]["player"] == 1  # the move being thought about was let finish


def test_a_table_opened_in_another_window_is_played_there_only(tmp_path):
    hub, client = _client(tmp_path)
    with (
        client,
        client.websocket_connect("/ws") as first,
        client.websocket_connect("/ws") as second,
    ):
        msg = _until_choice(first, _send(first, {"type": "new", "opponent": "random"}))
        back = _send(second, {"type": "join", **_ids(hub)})
        assert back["type"] == "welcome"
        assert "opened in another window" in first.receive_json()["message"]
        stale = _send(first, answer(msg["view"], msg["version"]))
        assert stale["type"] == "error" and "play it there" in stale["message"]
        played = _send(second, answer(back["view"], back["version"]))
        assert played["type"] == "update" and played["version"] == back["version"] + 1


def test_an_agent_that_cannot_be_made_is_an_error_message(tmp_path):
    from piquet_table.web.opponents import Choice

    hub, client = _client(tmp_path)
    hub.choices["gone"] = Choice("gone", "A checkpoint since removed", str(tmp_path / "x.pt"))
    with client, client.websocket_connect("/ws") as ws:
        reply = _send(ws, {"type": "new", "opponent": "gone"})
        assert reply["type"] == "error" and "the agent could not be made" in reply["message"]
        assert _send(ws, {"type": "new", "opponent": "random"})["type"] == "welcome"


def test_a_displaced_socket_that_joins_again_takes_its_table_back(tmp_path):
    """A opens a table, B joins it with its token (A is told, with a code the page acts on), B
    closes, A joins again: A is attached again and its moves are played."""
    hub, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as a:
        msg = _until_choice(a, _send(a, {"type": "new", "opponent": "random"}))
        ids = _ids(hub)
        with client.websocket_connect("/ws") as b:
            assert _send(b, {"type": "join", **ids})["type"] == "welcome"
            told = a.receive_json()
            assert told["type"] == "error" and told["code"] == "displaced", told
            assert "opened in another window" in told["message"]
            moved = _send(a, answer(msg["view"], msg["version"]))
            assert moved["type"] == "error" and moved["code"] == "displaced"
            assert _send(a, {"type": "leave"})["type"] == "left"  # A lets go; B's table stays
            assert ids["table"] in hub.tables and not hub.tables[ids["table"]].closed
        back = _send(a, {"type": "join", **ids})
        assert back["type"] == "welcome" and back["version"] == msg["version"]
        played = _send(a, answer(back["view"], back["version"]))
        assert played["type"] == "update" and played["version"] == back["version"] + 1
