"""The records folder of ``piquet serve`` within its budgets (piquet_table.web.records).

A socket sending ``new`` in a loop wrote a record per table, without bound: 10,178 files in 10 s,
after which the results took seconds and read only the newest 10,000, pushing every person's game
out without saying so. Now: a table left without a person's move is not saved, an address saves
at most so many records an hour, the folder holds at most ``max_records`` of the server's records
and ``max_record_mib`` of them (the oldest unfinished rotate out first), the results are kept as
each record is written, and a summary that left records out says so.
"""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("starlette", reason="the web table needs the web extra: pip install '.[web]'")


from piquet_agents.loop import play_game
from piquet_env.agent import RandomAgent
from piquet_env.game import Game, load_record
from piquet_env.game.record import save_record
from piquet_env.rules import STANDARD
from piquet_table import results
from piquet_table.web.records import SERVER_NAME
from tests.web_helpers import answer
from tests.web_helpers import client as _client
from tests.web_helpers import send as _send


def _leave(ws) -> None:
    """Leave the table, reading what its agent still sent until the server says it is left."""
    ws.send_text(json.dumps({"type": "leave"}))
    while ws.receive_json()["type"] != "left":
        pass


def _until_choice(ws, msg) -> dict:
    while (
        msg["type"] != "error" and msg["view"]["choice"] is None and msg["view"]["phase"] != "over"
    ):
        msg = ws.receive_json()
    return msg


def _one_move(ws, mode: str = "deal") -> dict:
    """Open a table and make the person's first move; the reply to it."""
    msg = _until_choice(ws, _send(ws, {"type": "new", "opponent": "random", "mode": mode}))
    return _send(ws, answer(msg["view"], msg["version"]))


def _a_deal(ws) -> str:
    """Play a deal to its end; the name its record was saved under."""
    msg = _send(ws, {"type": "new", "opponent": "random", "mode": "deal"})
    while True:
        msg = _until_choice(ws, msg)
        assert msg["type"] != "error", msg
        if msg["view"]["phase"] == "over":
            break
        msg = _send(ws, answer(msg["view"], msg["version"]))
    while msg["view"]["saved"] is None:
        msg = ws.receive_json()
    return msg["view"]["saved"]


def _server_records(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if SERVER_NAME.fullmatch(p.name))


def test_tables_left_without_a_persons_move_are_not_saved(tmp_path):
    _, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        for _ in range(30):  # new after new, in deal mode: the loop that filled the disk
            assert _send(ws, {"type": "new", "opponent": "random", "mode": "deal"})["type"] in (
                "welcome",
                "update",
            )
        ws.send_text(json.dumps({"type": "watch", "players": ["random", "random"]}))
        assert ws.receive_json()["type"] in ("welcome", "update")
        _leave(ws)  # a watched game left unfinished: no person's game either
        _one_move(ws)  # a person's move: this one is kept, unfinished
        _leave(ws)
    (kept,) = (tmp_path / "records").glob("[!.]*")
    assert load_record(kept)["finished"] is False


def test_the_folder_keeps_its_budget_and_the_oldest_unfinished_go_first(tmp_path):
    _, client = _client(tmp_path, max_records=4)
    folder = tmp_path / "records"
    with client, client.websocket_connect("/ws") as ws:
        finished = [_a_deal(ws)]
        for _ in range(3):
            _one_move(ws)
            _leave(ws)
        assert len(_server_records(folder)) == 4
        finished += [_a_deal(ws), _a_deal(ws)]
        kept = _server_records(folder)
        assert len(kept) == 4 and set(finished) <= set(kept)  # two unfinished went first
        finished += [_a_deal(ws), _a_deal(ws), _a_deal(ws)]
        assert _server_records(folder) == sorted(finished[-4:])  # then the oldest finished
    foreign = folder / "mine.json"  # a record of another name is read, never counted or removed
    game = play_game(Game(seed=2, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
    save_record(foreign, game, ["human", "heuristic"])
    _, client2 = _client(tmp_path, max_records=2)
    with client2:
        assert len(_server_records(folder)) == 2 and foreign.exists()  # the budget, at start
        standings = client2.get("/api/results").json()["standings"]
        assert {s["opponent"] for s in standings} == {"random", "heuristic"}


def test_the_disk_budget_holds(tmp_path):
    _, client = _client(tmp_path, max_record_mib=12 / 1024)  # about three deals' records
    folder = tmp_path / "records"
    with client, client.websocket_connect("/ws") as ws:
        for _ in range(6):
            _a_deal(ws)
            size = sum(p.stat().st_size for p in folder.glob("[!.]*"))
            assert size <= 12 * 1024 or len(list(folder.glob("[!.]*"))) == 1


def test_an_address_saves_so_many_records_an_hour(tmp_path):
    _, client = _client(tmp_path, records_per_hour=2)
    with client, client.websocket_connect("/ws") as ws:
        _a_deal(ws)
        _a_deal(ws)
        msg = _send(ws, {"type": "new", "opponent": "random", "mode": "deal"})
        while msg["type"] != "error":
            msg = _until_choice(ws, msg)
            if msg["type"] != "error" and msg["view"]["phase"] != "over":
                msg = _send(ws, answer(msg["view"], msg["version"]))
            elif msg["type"] != "error":
                msg = ws.receive_json()
        assert "not saved" in msg["message"] and "2 records an hour" in msg["message"]
    assert len(list((tmp_path / "records").glob("[!.]*"))) == 2


def test_results_come_from_the_store_and_a_cut_summary_says_so(tmp_path, monkeypatch):
    hub, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        _a_deal(ws)
        _a_deal(ws)
        summary = client.get("/api/results").json()
        assert summary["records"] == 2 and summary["left_out"] == 0
        (row,) = summary["standings"]
        assert row["opponent"] == "random" and row["games"] == 2
    monkeypatch.setattr(results, "MAX_RECORDS", 1)
    cut = results.summarize_folder(tmp_path / "records")
    assert cut.records == 1 and cut.left_out == 1
    assert "1 older record not read" in "\n".join(cut.lines())
    assert asyncio.run(_store_summary(hub)).left_out == 1


async def _store_summary(hub):
    hub.store.forget()
    return await hub.store.summary()


def test_a_record_copied_in_while_the_server_runs_is_listed_and_counted(tmp_path):
    _, client = _client(tmp_path)
    folder = tmp_path / "records"
    with client:
        assert client.get("/api/records").json() == []
        game = play_game(Game(seed=5, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
        save_record(folder / "copied.json", game, ["human", "heuristic"])
        assert [r["name"] for r in client.get("/api/records").json()] == ["copied.json"]
        assert client.get("/api/results").json()["standings"][0]["opponent"] == "heuristic"
        (folder / "copied.json").unlink()
        assert client.get("/api/records").json() == []


EVIL = "bad\x1b[2J\x1b[31mred\nname\u202e"
"""An agent name that would clear a terminal, recolour it, break a line and reverse the text."""


def test_names_with_control_characters_are_shown_stripped_everywhere(tmp_path, capsys):
    """Records come from uploads and other people's folders: every name shown, on the terminal
    (piquet replay, piquet humans) and on the page (results, replays, the opponent list), has its
    escape sequences and control characters removed."""
    from piquet_cli import main
    from piquet_table.web.opponents import opponent_choices

    folder = tmp_path / "records"
    folder.mkdir()
    game = play_game(Game(seed=3, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
    save_record(folder / "evil.json", game, ["human", EVIL])
    save_record(folder / "evil2.json", game, [EVIL, "random"])
    for argv in (["humans", str(folder)], ["replay", str(folder / "evil2.json"), "--all"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "badred name" in out and not any(c in out for c in "\x1b\u202e"), argv
        assert "\nname" not in out
    _, client = _client(tmp_path)
    with client:
        shown = [
            client.get("/api/results").text,
            client.get("/api/records/evil2.json").text,
            client.post("/api/replay", content=(folder / "evil2.json").read_text()).text,
        ]
    for text in shown:
        assert "badred name" in text
        assert "\\u001b" not in text and "\\n" not in text and "\u202e" not in text
    bad_name = tmp_path / f"{EVIL}.safetensors"
    bad_name.write_bytes(b"")  # a checkpoint file's name: offered only if it builds, shown clean
    choices, skipped = opponent_choices(STANDARD, "random", tmp_path)
    assert all("\x1b" not in c.label and "\n" not in c.label for c in choices.values())
    assert all("\x1b" not in line and "\n" not in line for line in skipped)


def test_a_restart_reads_the_results_kept_not_the_records(tmp_path, monkeypatch):
    from piquet_table.web import records

    _, client = _client(tmp_path)
    with client, client.websocket_connect("/ws") as ws:
        _a_deal(ws)
        before = client.get("/api/results").json()
    assert (tmp_path / "records" / records.CACHE).is_file()

    def no_reading(path):
        raise AssertionError(f"{path.name} was read again")

    monkeypatch.setattr(records, "file_row", no_reading)
    _, client = _client(tmp_path)
    with client:
        assert client.get("/api/results").json() == before
        assert [r["name"] for r in client.get("/api/records").json()] == [
            p.name for p in (tmp_path / "records").glob("2*.json")
        ]


DEEP = "[" * 200_000 + "]" * 200_000
"""JSON nested far deeper than a parser's recursion goes."""


def _bad_folder_served(tmp_path, caplog, before: dict[str, object], copied: dict[str, object]):
    """A server started on a records folder holding ``before`` (name: text, or ``"fifo"``), then
    given ``copied`` while it runs: its records and results still answer, and each bad file is
    named in one log line."""
    import logging
    import os

    folder = tmp_path / "records"
    folder.mkdir(exist_ok=True)

    def put(files):
        for name, text in files.items():
            if text == "fifo":
                os.mkfifo(folder / name)
            else:
                (folder / name).write_text(text)

    put(before)
    game = play_game(Game(seed=5, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
    save_record(folder / "good.json", game, ["human", "heuristic"])
    caplog.set_level(logging.INFO, logger="piquet_table.web")
    _, client = _client(tmp_path)
    with client:
        for _ in range(2):
            listed = client.get("/api/records")
            assert listed.status_code == 200
            shown = client.get("/api/results")
            assert shown.status_code == 200
            assert shown.json()["standings"][0]["opponent"] == "heuristic"
            assert "good.json" in [r["name"] for r in listed.json()]
            put(copied)
            copied = {}
    lines = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    return lines


@pytest.mark.parametrize(
    ("before", "copied", "named"),
    [
        ({".piquet-results.json": DEEP}, {}, [".piquet-results.json"]),
        ({".piquet-results.json": "[" * 900 + "]" * 900}, {}, [".piquet-results.json"]),
        ({".piquet-results.json": "fifo"}, {}, [".piquet-results.json"]),
        ({"20260101-000000-play-0123456789abcdef.json": DEEP}, {}, ["20260101-000000-play-"]),
        ({"deep.json": DEEP}, {}, ["deep.json"]),
        ({}, {"20260101-000000-play-0123456789abcdef.json": DEEP}, ["20260101-000000-play-"]),
        ({}, {"copied-deep.json": DEEP}, ["copied-deep.json"]),
        ({}, {"20260101-000000-watch-0123456789abcdef.json": "fifo"}, ["-watch-"]),
    ],
    ids=[
        "deep cache",
        "cache nested 900 deep",
        "FIFO cache",
        "deep server record",
        "deep record",
        "deep server record copied in",
        "deep record copied in",
        "FIFO record copied in",
    ],
)
def test_a_bad_file_in_the_records_folder_is_skipped_with_one_line(
    tmp_path, caplog, before, copied, named
):
    """A deeply nested cache stopped the server at start (RecursionError), a FIFO cache hung it,
    and a deeply nested record made /api/records and /api/results answer 500. Now each bad file is
    skipped, named in one log line, and the pages answer."""
    lines = _bad_folder_served(tmp_path, caplog, before, copied)
    for name in named:
        assert len([t for t in lines if name in t]) == 1, lines
