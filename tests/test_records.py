"""Game records read as hostile: every malformed file or field ends in a ``RecordError`` (a
``ValueError``) naming the field and the event index, and ``piquet replay`` turns it into
``piquet replay: <reason>`` with exit status 2, never a traceback.

The corpus is generated here from one small valid record (no large file is committed): file-level
cases, then one mutation of a valid record per field that :func:`piquet_env.game.record.replay`
reads, then a hypothesis property that mutates records at random.
"""

from __future__ import annotations

import copy
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from piquet_agents.loop import play_game
from piquet_cli import main
from piquet_env.agent import RandomAgent
from piquet_env.game import Game
from piquet_env.game.record import (
    MAX_RECORD_BYTES,
    RecordError,
    check_record,
    load_events,
    load_record,
    record_of,
    replay,
    save_record,
)


def _valid() -> dict:
    game = play_game(Game(seed=5, mode="deal"), [RandomAgent(seed=1), RandomAgent(seed=2)])
    return record_of(game, ["random", "heuristic"], seed=5)


VALID = _valid()


def _index(doc: dict, kind: str, nth: int = 0, manual: bool = False) -> int:
    """Index of the ``nth`` event of type ``kind`` (a non-automatic action with ``manual``)."""
    found = [
        i
        for i, e in enumerate(doc["events"])
        if e["type"] == kind and not (manual and e.get("auto"))
    ]
    return found[nth]


def _set(kind: str, key: str, value: object, manual: bool = False) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        doc["events"][_index(doc, kind, manual=manual)][key] = value

    return edit


def _rule(key: str, value: object) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        doc["events"][0]["rules"][key] = value

    return edit


def _delete(kind: str, key: str) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        del doc["events"][_index(doc, kind)][key]

    return edit


def _flip_winner(doc: dict) -> None:
    e = doc["events"][_index(doc, "trick")]
    e["winner"] = 1 - e["winner"]


def _flip_player(doc: dict) -> None:
    e = doc["events"][_index(doc, "action", manual=True)]
    e["player"] = 1 - e["player"]


def _drop_action(doc: dict) -> None:
    del doc["events"][_index(doc, "action", nth=3, manual=True)]


def _append(event: object) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        doc["events"].append(event)

    return edit


def _deal(doc: dict) -> dict:
    return doc["events"][_index(doc, "deal")]


def _hand_of(kind: str, text: str) -> Callable[[dict], None]:
    return _set("deal", kind, text)


FIELD_CASES: list[tuple[str, Callable[[dict], None], str]] = [
    ("format", lambda d: d.update(format="piquet-log/2"), "'format' is \"piquet-log/2\""),
    ("format-escape", lambda d: d.update(format="\x1b[2J"), "'format' is \"\\u001b[2J\""),
    ("agents-str", lambda d: d.update(agents="x"), "'agents' must be a list of two names"),
    ("agents-three", lambda d: d.update(agents=["a", "b", "c"]), "'agents' must be a list"),
    ("agents-int", lambda d: d.update(agents=[1, "b"]), "'agents'[0] must be a name"),
    ("agents-empty", lambda d: d.update(agents=["a", ""]), "'agents'[1] must be a name"),
    ("agents-long", lambda d: d.update(agents=["a" * 1000, "b"]), "'agents'[0] must be a name"),
    ("events-dict", lambda d: d.update(events={}), "'events' must be a list of events"),
    ("events-empty", lambda d: d.update(events=[]), "'events' is empty"),
    ("events-missing", lambda d: d.pop("events"), "no 'events' key"),
    ("events-ints", lambda d: d.update(events=[1, 2]), "event 0 is not an object (got 1)"),
    ("events-null", lambda d: d.update(events=[None]), "event 0 is not an object (got null)"),
    ("events-list", lambda d: d.update(events=[[]]), "event 0 is not an object (got [])"),
    ("type-int", lambda d: d["events"][3].update(type=5), "event 3: 'type' must be a string"),
    ("type-missing", lambda d: d["events"][2].pop("type"), "event 2: 'type' must be a string"),
    ("no-partie", lambda d: d["events"].pop(0), "must start with a 'partie' event"),
    ("two-parties", lambda d: d["events"].insert(1, d["events"][0]), "a second 'partie' event"),
    ("no-deal", lambda d: d.update(events=d["events"][:1]), "the event log has no deal"),
    ("rules-missing", _delete("partie", "rules"), "event 0 (partie): no 'rules' field"),
    ("rules-str", _set("partie", "rules", "standard"), "'rules' must be an object"),
    ("rules-unknown", _rule("bogus", 1), 'unknown rule option "bogus"'),
    ("rules-deals-str", _rule("deals", "six"), "rule option 'deals' is \"six\""),
    ("rules-deals-bool", _rule("deals", True), "rule option 'deals' is true"),
    ("rules-deals-odd", _rule("deals", 3), "bad rules: deals must be a positive even number"),
    ("rules-deals-huge", _rule("deals", 10**9), "rule option 'deals' is 1000000000"),
    ("rules-joker-int", _rule("joker", 1), "rule option 'joker' is 1"),
    ("rules-variants-str", _rule("variants", "orbis"), "rule option 'variants'"),
    ("rules-variants-bad", _rule("variants", ["nope"]), "unknown variant 'nope'"),
    ("rules-settlement", _rule("settlement", "modern"), "settlement must be one of"),
    ("rules-ymax", _rule("younger_max_exchange", "3"), "rule option 'younger_max_exchange'"),
    ("mode", _set("partie", "mode", "tournament"), "'mode' must be one of ('partie', 'deal')"),
    ("mode-list", _set("partie", "mode", ["deal"]), "'mode' must be one of"),
    ("deal_number-neg", _set("partie", "deal_number", -1), "'deal_number' must be an integer"),
    ("deal_number-big", _set("partie", "deal_number", 99), "'deal_number' must be an integer"),
    ("deal_number-float", _set("partie", "deal_number", 0.5), "'deal_number' must be"),
    ("totals-short", _set("partie", "totals", [1]), "'totals' must be two non-negative"),
    ("totals-neg", _set("partie", "totals", [-5, 0]), "'totals' must be two non-negative"),
    ("totals-float", _set("partie", "totals", [1e308, 0]), "'totals' must be two non-negative"),
    ("totals-huge", _set("partie", "totals", [10**12, 0]), "totals[0] must be in 0.."),
    ("deal-elder", _set("deal", "elder", 2), "(deal): 'elder' must be 0 or 1, got 2"),
    ("deal-elder-bool", _set("deal", "elder", True), "(deal): 'elder' must be 0 or 1, got true"),
    ("deal-hand-int", _set("deal", "elder_hand", 5), "'elder_hand' must be a string of card"),
    ("deal-hand-bad", _hand_of("elder_hand", "XX YY"), "(deal): elder hand: malformed card 'XX'"),
    ("deal-talon-missing", _delete("deal", "talon"), "(deal): no 'talon' field"),
    (
        "deal-hand-short",
        lambda d: _hand_of("younger_hand", " ".join(_deal(d)["younger_hand"].split()[:11]))(d),
        "younger hand has 11 cards, expected 12",
    ),
    (
        "deal-duplicate",
        lambda d: _hand_of(
            "younger_hand",
            " ".join(_deal(d)["elder_hand"].split()[:1] + _deal(d)["younger_hand"].split()[1:]),
        )(d),
        "is both in the elder hand and the younger hand",
    ),
    (
        "deal-joker",
        lambda d: _hand_of("talon", "JK " + " ".join(_deal(d)["talon"].split()[1:]))(d),
        "not in the 32-card pack",
    ),
    ("action-player", _set("action", "player", 2, True), "(action): 'player' must be 0 or 1"),
    ("action-player-str", _set("action", "player", "0", True), "'player' must be 0 or 1, got"),
    ("action-str", _set("action", "action", "5", True), "'action' must be an integer action id"),
    ("action-bool", _set("action", "action", True, True), "'action' must be an integer"),
    ("action-float", _set("action", "action", 3.0, True), "'action' must be an integer"),
    ("action-huge", _set("action", "action", 10**30, True), "is not legal here"),
    ("action-neg", _set("action", "action", -1, True), "action -1 is not legal here"),
    ("action-auto", _set("action", "auto", "yes", True), "'auto' must be true or false"),
    ("action-missing", _delete("action", "action"), "(action): no 'action' field"),
    ("action-who", _flip_player, "the record says player"),
    ("action-dropped", _drop_action, "event"),
    ("trick-winner", _flip_winner, "replay differs at event"),
    ("score-points", _set("score", "points", 999), "replay differs at event"),
    ("after-the-end", _append({"type": "action", "player": 0, "action": 0}), "already over"),
    ("unknown-event", _append({"type": "x"}), "replay stopped after"),
    ("escape-event", _append({"type": "\x1b[2J\x1b]0;t\x07"}), "replay stopped after"),
    ("deep-event", _append({"type": "trick", "x": json.loads("[" * 900 + "]" * 900)}), "event"),
]
"""One mutation of the valid record per field, and what the error must say."""

FILE_CASES: list[tuple[str, bytes | None, str]] = [
    ("empty", b"", "not a JSON game record"),
    ("not-json", b"{nope", "not a JSON game record"),
    ("not-utf8", b'{"events": "caf\xe9"}', "not UTF-8 text (byte 15)"),
    ("utf16", '{"events": []}'.encode("utf-16"), "not UTF-8 text"),
    ("nested-arrays", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ("nested-objects", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "nested too deeply"),
    ("nan", b'{"events": NaN}', "NaN is not a JSON number"),
    ("infinity", b'{"events": [-Infinity]}', "-Infinity is not a JSON number"),
    ("big-int", b'{"events": [' + b"9" * 5000 + b"]}", "not a JSON game record"),
    ("string", b'"events"', "a JSON string, not an object"),
    ("number", b"42", "a JSON number, not an object"),
    ("events-ints", b'{"events": [1, 2]}', "event 0 is not an object (got 1)"),
    ("bare-null", b"[null]", "event 0 is not an object (got null)"),
    ("bare-list", b"[[]]", "event 0 is not an object (got [])"),
    ("no-events", b"{}", "no 'events' key"),
    ("other", b'{"format": "piquet-log/1", "events": [{"type": "x"}]}', "'partie' event"),
]
"""Whole files (bytes) and what the error must say."""


def _bad_files(tmp_path: Path) -> list[tuple[str, Path, str]]:
    """Every file case written under ``tmp_path``, plus the paths that are not record files."""
    out = []
    for name, data, reason in FILE_CASES:
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        out.append((name, path, reason))
    for name, edit, reason in FIELD_CASES:
        doc = copy.deepcopy(VALID)
        edit(doc)
        path = tmp_path / f"field-{name}.json"
        path.write_text(json.dumps(doc))
        out.append((f"field-{name}", path, reason))
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:  # sparse: takes no disk space
        f.truncate(MAX_RECORD_BYTES + 1)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # opening it would block until a writer came: refused unopened
    out += [
        ("missing", tmp_path / "missing.json", "no such file"),
        ("directory", tmp_path, "is a directory, not a game record"),
        ("huge", huge, "over the 16 MiB a game record may take"),
        ("fifo", fifo, "not a regular file"),
        ("device", Path("/dev/zero"), "not a regular file"),
    ]
    return out


N_BAD_INPUTS = len(FILE_CASES) + len(FIELD_CASES) + 5
"""Bad record files the suite tries through ``piquet replay`` (besides the hypothesis ones)."""


def test_the_valid_record_replays(tmp_path: Path) -> None:
    path = save_record(tmp_path / "ok.json", replay(VALID), ["random", "heuristic"])
    assert replay(load_record(path)).result == replay(VALID).result
    assert main(["replay", str(path), "--all", "--ascii"]) == 0
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # readable like any new file
    assert [p.name for p in tmp_path.iterdir()] == ["ok.json"]  # no temporary left behind


def test_every_bad_record_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = _bad_files(tmp_path)
    assert len(cases) == N_BAD_INPUTS == 85
    for name, path, reason in cases:
        with pytest.raises(RecordError) as caught:
            doc = load_record(path)
            replay(doc)
        message = str(caught.value)
        assert reason in message, (name, message)
        assert str(path) in message or name.startswith("field-"), (name, message)
        assert message.count(": event ") <= 1, (name, message)
        assert message.isprintable() and len(message) < 1000, (name, message)
        # The program: one line on stderr, exit status 2, nothing on stdout.
        assert main(["replay", str(path), "--all"]) == 2, name
        out, err = capsys.readouterr()
        assert out == "" and err.startswith("piquet replay: ") and err.count("\n") == 1, name
        assert reason in err and "Traceback" not in err, (name, err)


def test_a_bad_record_through_the_real_program(tmp_path: Path) -> None:
    """Two of the corpus in a fresh process: status 2 and one line, no traceback."""
    from tests.pty_helpers import run_piquet

    (tmp_path / "deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    for path, reason in [(tmp_path / "deep.json", "nested too deeply"), (tmp_path, "directory")]:
        res = run_piquet("replay", str(path))
        assert res.returncode == 2 and res.stdout == ""
        assert res.stderr.startswith(f"piquet replay: {path}: ") and reason in res.stderr


def test_load_events_names_the_event() -> None:
    with pytest.raises(RecordError, match=r"^event 1 is not an object \(got \[\]\)$"):
        load_events([VALID["events"][0], []])
    with pytest.raises(RecordError, match="not a JSON game record"):
        load_events("{")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_mutated_record_replays_or_is_a_record_error(data: st.DataObject) -> None:
    """Replace, add or delete one field of one event (or of the document) with any JSON value:
    the record still replays, or :class:`RecordError` says why; no other exception."""
    doc = copy.deepcopy(VALID)
    target = data.draw(st.sampled_from([doc, doc["events"][0]["rules"], *doc["events"]]))
    keys = sorted(target)
    key = data.draw(st.sampled_from([*keys, "extra"]))
    if data.draw(st.booleans()) and key in target:
        del target[key]
    else:
        target[key] = data.draw(JSON)
    try:
        replay(check_record(json.loads(json.dumps(doc))))
    except RecordError as err:
        assert str(err).isprintable()
