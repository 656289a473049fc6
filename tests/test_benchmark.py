"""``piquet benchmark``: the protocol is fixed and versioned, a run writes a result file that the
leaderboard's checks accept, a file that is not one is refused naming its field, and the
leaderboard is made from the checked-in files (docs/results/benchmark/)."""

from __future__ import annotations

import copy
import dataclasses
import datetime
import hashlib
import json
import os
from pathlib import Path

import pytest

from piquet_agents.registry import same_agent, spec_files
from piquet_cli import main
from piquet_env.rules import STANDARD, make_rules
from piquet_training.benchmark.protocol import (
    EXACT_SEARCH_SKIP,
    PINNED,
    PROTOCOL,
    PROTOCOL_V1,
    SEARCH_SKIP,
    SELF_SKIP,
    BenchmarkError,
    Match,
    Protocol,
)
from piquet_training.benchmark.results import (
    ResultFileError,
    check_result,
    leaderboard,
    read_result,
    runs_table,
)
from piquet_training.benchmark.run import (
    benchmark_match,
    exact_nashconv,
    run_benchmark,
    upgrade_result,
)
from piquet_training.evaluation.duplicate import evaluate
from piquet_training.exact import exact_report

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "benchmark"

VERSION_1 = {
    "name": "piquet-benchmark",
    "version": 1,
    "rules": "standard",
    "mode": "deal",
    "variance_reduction": False,
    "matches": [
        {"opponent": "random", "pairs": 500, "seed": 2026},
        {"opponent": "heuristic", "pairs": 2000, "seed": 2026},
        {"opponent": "mcts:100", "pairs": 500, "seed": 2026},
        {"opponent": "baseline", "pairs": 2000, "seed": 2026},
    ],
    "exploit": {
        "env_steps": 20_000_000,
        "seed": 0,
        "eval_pairs": 2000,
        "eval_every": 50,
        "periodic_pairs": 100,
        "reference": "baseline",
        "settings": {"torch_threads": 1, "learning_rate": 0.0003},
    },
}
"""Protocol version 1 as its files hold it, frozen."""
VERSION_2 = {**VERSION_1, "version": 2, "exact": {"rules": "mini", "seed": 0}}
"""Version 2, the current one: version 1 and the exact NashConv under ``mini``. A change to the
protocol is a new version: this test fails until the version is raised and this copy follows."""
EXACT_RULES = "mini[suits=2,ranks=3,hand_size=2]"
"""A mini of 6 cards, two each: its exact figures take seconds."""


def tiny_protocol(version: int = 2) -> Protocol:
    """The current version's shape at a budget of seconds (3 pairs a match, mcts:5, 1,200 env
    steps, the exact NashConv on a 6-card mini); ``version=1``: version 1's."""
    d = copy.deepcopy(VERSION_1 if version == 1 else VERSION_2)
    if version > 1:
        d["exact"]["rules"] = EXACT_RULES
    for m in d["matches"]:
        m["pairs"] = 3
    d["matches"][2]["opponent"] = "mcts:5"
    d["exploit"].update(env_steps=1200, eval_pairs=6, eval_every=1, periodic_pairs=2)
    d["exploit"]["settings"].update(games_per_update=8, num_envs=8, num_minibatches=2)
    return Protocol.from_dict(d)


@pytest.fixture(scope="module")
def heuristic_result(tmp_path_factory) -> dict:
    """The tiny protocol run for the heuristic, once for the module."""
    work = tmp_path_factory.mktemp("bench")
    return run_benchmark("heuristic", work, protocol=tiny_protocol(), echo=False, command="x")


def test_the_versions_are_frozen() -> None:
    assert PROTOCOL.to_dict() == VERSION_2 and PROTOCOL_V1.to_dict() == VERSION_1
    assert Protocol.from_dict(PROTOCOL.to_dict()) == PROTOCOL
    assert Protocol.from_dict(PROTOCOL_V1.to_dict()) == PROTOCOL_V1


def test_a_run_writes_what_the_checks_accept(heuristic_result: dict) -> None:
    d = heuristic_result
    assert check_result(json.loads(json.dumps(d)), official=False) == d
    assert d["agent"] == {"name": "heuristic", "spec": "heuristic", "files": []}
    assert d["matches"]["heuristic"] == {"skipped": SELF_SKIP}
    assert d["matches"]["random"]["pairs"] == 3 and d["matches"]["random"]["p"] <= 1
    assert d["exploit"]["env_steps"] >= 1200 and d["exploit"]["pairs"] == 6
    assert d["exploit"]["reference"] == "baseline" and d["exploit"]["gain_over_reference"]
    (baseline,) = spec_files(PINNED["baseline"], STANDARD)  # the protocol's baseline
    config = d["exploit"]["config"]
    assert "out_dir" not in config and config["init_from"] == os.path.basename(baseline)
    assert config["init_from_sha256"] == hashlib.sha256(Path(baseline).read_bytes()).hexdigest()
    truth = exact_report("heuristic", make_rules(EXACT_RULES), seed=0).figures.nash_conv
    assert d["exact_nashconv"] == {
        "rules": EXACT_RULES,
        "value": truth,
        "command": f"piquet exploit heuristic --rules '{EXACT_RULES}' --exact --seed 0",
    }
    assert truth > 0
    assert d["run"]["command"] == "x" and d["run"]["package_version"]
    with pytest.raises(ResultFileError, match="protocol: not the settings of protocol version 2"):
        check_result(d)


def test_what_the_exact_rules_cannot_measure_is_said(tmp_path: Path) -> None:
    """A search has no exact probabilities; a policy of the standard rules does not play mini;
    version 1 measures nothing."""
    protocol = tiny_protocol()
    assert exact_nashconv("mcts:5", protocol) == {"skipped": EXACT_SEARCH_SKIP}
    skipped = exact_nashconv("baseline", protocol)["skipped"]
    assert skipped.startswith(f"the agent does not play {EXACT_RULES}: ")
    assert exact_nashconv("random", tiny_protocol(1)) is None


def test_the_matches_are_the_protocols_own(heuristic_result: dict) -> None:
    """A match of the result is the protocol's deals, seed and pairs, whoever plays them: the
    agent as an object gives the same numbers as its spec."""
    from piquet_agents import HeuristicAgent

    rep = benchmark_match(HeuristicAgent(), "random", tiny_protocol())
    direct = evaluate("heuristic", "random", STANDARD, 3, mode="deal", seed=2026)
    assert rep.points == direct.points
    assert heuristic_result["matches"]["random"]["points_per_deal"]["mean"] == rep.points.mean
    with pytest.raises(BenchmarkError, match="no match against 'mcts:7'"):
        benchmark_match("random", "mcts:7", tiny_protocol())


def test_versions_1_and_2_play_the_baseline_they_were_set_with() -> None:
    """Their ``baseline`` is the policy it named when they were set (kept as a retired
    baseline), whatever ``baseline`` ships now: the match, the exploit's reference and its
    starting weights; a later version plays its names as written."""
    assert PROTOCOL.spec("baseline") == PROTOCOL_V1.spec("baseline") == "baseline@2026-11-30"
    assert PROTOCOL.spec("mcts:100") == "mcts:100"
    assert dataclasses.replace(PROTOCOL, version=3).spec("baseline") == "baseline"
    (pinned,) = spec_files(PINNED["baseline"], STANDARD)
    digest = hashlib.sha256(Path(pinned).read_bytes()).hexdigest()
    row = read_result(RESULTS / "baseline-2026-11-30.json")  # baseline's row, run while it was
    assert row["agent"]["name"] == PINNED["baseline"] and row["agent"]["spec"] == "baseline"
    assert [f["sha256"] for f in row["agent"]["files"]] == [digest]
    assert spec_files("baseline", STANDARD) != [pinned]  # baseline names a newer policy now
    rep = benchmark_match("random", "baseline", tiny_protocol())
    assert rep.agent_b == "baseline@2026-11-30"
    direct = evaluate("random", "baseline@2026-11-30", STANDARD, 3, mode="deal", seed=2026)
    assert rep.points == direct.points


def test_a_search_is_not_exploited_and_itself_is_not_played(tmp_path: Path) -> None:
    protocol = tiny_protocol()
    d = run_benchmark("mcts:5", tmp_path, protocol=protocol, echo=False)
    assert d["exploit"] == {"skipped": SEARCH_SKIP}
    assert d["exact_nashconv"] == {"skipped": EXACT_SEARCH_SKIP}
    assert d["matches"]["mcts:5"] == {"skipped": SELF_SKIP}
    assert not (tmp_path / "exploit").exists()
    assert same_agent("baseline", str(ROOT / "agents" / "baseline" / "baseline.safetensors"))
    assert not same_agent("mcts:100", "mcts:200") and not same_agent("random", "heuristic")


def test_a_work_folder_in_use_is_refused(heuristic_result: dict, tmp_path: Path) -> None:
    (tmp_path / "exploit" / "exploiter" / "checkpoints").mkdir(parents=True)
    with pytest.raises(BenchmarkError, match="holds a benchmark run already"):
        run_benchmark("random", tmp_path, protocol=tiny_protocol(), echo=False)
    with pytest.raises(BenchmarkError, match="holds no matches or exploiter run to continue"):
        run_benchmark("random", tmp_path / "new", protocol=tiny_protocol(), echo=False, resume=True)
    with pytest.raises(BenchmarkError, match="agent spec 'alphazero'"):
        run_benchmark("alphazero", tmp_path, protocol=tiny_protocol(), echo=False)


class Killed(Exception):
    """Stands for a kill in the middle of a match."""


def test_a_stopped_match_continues_to_the_same_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed in the middle, a match continued with --resume gives the games of one played in
    one go; every chunk that ended before the kill is in the file (issue 57: they were saved 100
    pairs at a time), and the chunk being played when the kill came is played again."""
    import piquet_training.benchmark.run as bench

    protocol = dataclasses.replace(tiny_protocol(), matches=(Match("random", 5, 2026),))

    def run(agent: str, where: str, **kwargs) -> dict:
        return run_benchmark(
            agent, tmp_path / where, protocol=protocol, echo=False, exploit_it=False, **kwargs
        )

    played = run("heuristic", "h")["matches"]["random"]  # in chunks of one pair
    real = bench.play_games
    calls = []

    def killed_at_pair_2(match, **kwargs):
        calls.append(match.numbers)
        keep = kwargs.pop("on_chunk")

        def on_chunk(chunk):
            if chunk[0].pair >= 2:
                raise Killed
            keep(chunk)

        return real(match, on_chunk=on_chunk, **kwargs)

    monkeypatch.setattr(bench, "play_games", killed_at_pair_2)
    with pytest.raises(Killed):
        run("heuristic", "w")
    assert calls == [range(0, 5)]  # the match in one fan-out
    path = tmp_path / "w" / "matches" / "random.jsonl"
    assert len(path.read_text().splitlines()) == 3  # the header, pair 0 and pair 1
    with pytest.raises(BenchmarkError, match="holds a benchmark run already"):
        run("heuristic", "w")
    monkeypatch.setattr(bench, "play_games", real)
    header, *chunks = (json.loads(line) for line in path.read_text().splitlines())
    chunks[0]["minutes"], chunks[1]["minutes"] = 5.0, 0.0  # the first sitting's pairs: 5 min
    path.write_text("".join(json.dumps(x) + "\n" for x in (header, *chunks)))
    with path.open("a") as f:
        f.write('{"start": 2, "minutes": 0.1, "ga')  # a write cut short by the kill
    d = run("heuristic", "w", resume=True)
    resumed = d["matches"]["random"]
    assert resumed["points_per_deal"] == played["points_per_deal"] and resumed["pairs"] == 5
    # the match's minutes and the run's count the first sitting's too
    assert 5.0 <= resumed["minutes"] <= d["run"]["minutes"]
    assert len(path.read_text().splitlines()) == 6  # the header, then pairs 0 to 4
    # a file of another match, or a damaged one, is refused naming it
    with pytest.raises(BenchmarkError, match="its games are of another match"):
        run("heuristic:seed=3", "w", resume=True)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[2], lines[1]]) + "\n")
    with pytest.raises(BenchmarkError, match="line 2: expected both games of pairs 0 onwards"):
        run("heuristic", "w", resume=True)
    path.write_text("[1, 2]\n")
    with pytest.raises(BenchmarkError, match="not a benchmark match file"):
        run("heuristic", "w", resume=True)
    # --overwrite plays the matches afresh
    again = run("heuristic", "w", overwrite=True)["matches"]["random"]
    assert again["points_per_deal"] == played["points_per_deal"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("exact"), "protocol: missing exact"),
        (lambda d: d["exact"].update(rules="standard"), "protocol.exact.rules: 'standard' is too"),
        (lambda d: d["exact"].update(seed=-1), "protocol.exact.seed: expected an integer"),
        (lambda d: d["exact"].update(x=1), "protocol.exact: unknown x"),
    ],
)
def test_a_bad_exact_block_names_its_field(change, message: str) -> None:
    d = copy.deepcopy(VERSION_2)
    change(d)
    with pytest.raises(BenchmarkError, match=message):
        Protocol.from_dict(d)
    with pytest.raises(BenchmarkError, match="protocol: unknown exact"):
        Protocol.from_dict({**VERSION_1, "exact": {"rules": "mini", "seed": 0}})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(name="other"), "protocol.name: expected 'piquet-benchmark'"),
        (lambda d: d.update(version=0), "protocol.version: expected an integer of at least 1"),
        (lambda d: d.update(rules="bogus"), "protocol.rules: unknown rules preset 'bogus'"),
        (lambda d: d.update(mode="game"), "protocol.mode: expected one of"),
        (lambda d: d.update(variance_reduction=1), "protocol.variance_reduction: expected true"),
        (lambda d: d.update(matches=[]), "protocol.matches: expected a non-empty list"),
        (lambda d: d["matches"][1].update(pairs=0), "protocol.matches[1].pairs: expected an"),
        (lambda d: d["matches"][0].pop("seed"), "protocol.matches[0]: missing seed"),
        (lambda d: d["matches"][0].update(x=1), "protocol.matches[0]: unknown x"),
        (lambda d: d["matches"].append(d["matches"][0]), "an opponent is named twice"),
        (lambda d: d["exploit"].update(env_steps=-1), "protocol.exploit.env_steps: expected"),
        (lambda d: d["exploit"].update(reference=3), "protocol.exploit.reference: expected a"),
        (lambda d: d["exploit"]["settings"].update(lr="fast"), "learning_rate"),
        (lambda d: d["exploit"]["settings"].update(bogus=1), "bogus"),
    ],
)
def test_a_bad_protocol_names_its_field(change, message: str) -> None:
    d = copy.deepcopy(VERSION_1)
    change(d)
    with pytest.raises(BenchmarkError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Protocol.from_dict(d)


def official(heuristic: dict) -> dict:
    """A result file of the current protocol made from the tiny run's fields (its numbers are the
    tiny run's: what is checked here is the form)."""
    d = copy.deepcopy(heuristic)
    d["protocol"] = PROTOCOL.to_dict()
    d["exact_nashconv"]["rules"] = "mini"
    d["matches"] = {"mcts:100" if k == "mcts:5" else k: v for k, v in d["matches"].items()}
    for m in PROTOCOL.matches:
        if "pairs" in d["matches"][m.opponent]:
            d["matches"][m.opponent]["pairs"] = m.pairs
    d["exploit"].update(env_steps=PROTOCOL.exploit.env_steps, pairs=PROTOCOL.exploit.eval_pairs)
    return d


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("run"), "the file: missing run"),
        (lambda d: d.update(extra=1), "the file: unknown extra"),
        (lambda d: d["protocol"].update(version=3), "protocol.version: 3, where this package's"),
        (lambda d: d["matches"].pop("random"), "matches: missing random"),
        (lambda d: d["matches"]["random"].update(pairs=499), "the protocol plays 500, got 499"),
        (
            lambda d: d["matches"]["random"]["points_per_deal"].update(mean=1e9),
            "expected ci_low <= mean <= ci_high",
        ),
        (lambda d: d["matches"]["random"].update(p=2), r"matches\['random'\].p: expected a number"),
        (lambda d: d["matches"]["random"]["win_rate"].update(ci_high=1.5), "win_rate.ci_high"),
        (
            lambda d: d["matches"]["heuristic"].update(skipped=" "),
            "skipped: expected a non-empty string, got a blank string",
        ),
        (
            lambda d: d["run"].update(command=7),
            "run.command: expected a non-empty string, got number",
        ),
        (lambda d: d["exploit"].update(env_steps=5), "exploit.env_steps: 5, short of the budget"),
        (lambda d: d["exploit"].update(reference=None), "null, but a reference's edge is given"),
        (lambda d: d["agent"]["files"].append({"name": "x", "sha256": "00"}), "64 hex digits"),
        (lambda d: d.update(exact_nashconv={"value": 1.0}), "exact_nashconv: missing command"),
        (
            lambda d: d.update(exact_nashconv={"rules": "mini", "value": -1, "command": "c"}),
            "exact_nashconv.value: expected a number in",
        ),
        (lambda d: d.update(exact_nashconv=None), "exact_nashconv: expected an object, got null"),
        (lambda d: d["exact_nashconv"].update(rules="mini[suits=2]"), "the protocol measures mini"),
        (
            lambda d: d["exact_nashconv"].update(upgraded_from={"version": 1, "sha256": "0"}),
            "upgraded_from.sha256: expected 64 hex digits",
        ),
        (lambda d: d["run"].update(date="1 Dec"), "run.date: expected YYYY-MM-DD"),
    ],
)
def test_a_result_file_that_is_not_one_is_refused(heuristic_result, change, message) -> None:
    d = official(heuristic_result)
    check_result(copy.deepcopy(d))  # the form of a current file passes
    change(d)
    with pytest.raises(ResultFileError, match=message):
        check_result(d, "f.json")


def test_hostile_files_are_refused_naming_the_file(tmp_path: Path) -> None:
    for name, data in [("nan.json", b'{"a": NaN}'), ("bin.json", b"\xff\xfe"), ("l.json", b"[")]:
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ResultFileError, match=str(tmp_path / name)):
            read_result(tmp_path / name)
    with pytest.raises(ResultFileError, match="is a directory"):
        read_result(tmp_path)


def test_the_leaderboard_ranks_the_files_and_shows_what_is_not_measured(
    heuristic_result, tmp_path: Path
) -> None:
    a, b = official(heuristic_result), official(heuristic_result)
    b["agent"]["name"] = "better"
    b["matches"]["baseline"]["points_per_deal"] = {"mean": 5.0, "ci_low": 4.0, "ci_high": 6.0}
    b["exploit"] = {"skipped": SEARCH_SKIP}
    b["exact_nashconv"] = {"rules": "mini", "value": 0.125, "command": "piquet exploit --exact"}
    a["exact_nashconv"] = {"skipped": "the agent does not play mini: ..."}
    for name, d in (("a.json", a), ("b.json", b)):
        (tmp_path / name).write_text(json.dumps(d))
    table = leaderboard(sorted(tmp_path.glob("*.json")), link="results/benchmark/")
    rows = table.splitlines()
    assert rows[0].startswith("| rank | agent | vs `random` | vs `heuristic` | vs `mcts:100`")
    assert "| vs `baseline@2026-11-30` |" in rows[0]  # the pinned opponent, by what it plays
    assert "exact NashConv (`mini`)" in rows[0] and "20 M env steps" in rows[0]
    assert rows[2].startswith("| 1 | `better` |") and "+5.00 [+4.00, +6.00]" in rows[2]
    assert "not measured (a search)" in rows[2] and "| 0.125 |" in rows[2]
    assert rows[3].startswith("| 2 | `heuristic` |") and "0 (itself)" in rows[3]
    assert "| not measured (does not play it) |" in rows[3]
    assert "[a.json](results/benchmark/a.json)" in rows[3]
    assert "`x`" in runs_table([tmp_path / "a.json"])
    assert "| not measured in the run |" in runs_table([tmp_path / "a.json"])
    b["exact_nashconv"]["upgraded_from"] = {"version": 1, "sha256": "ab" * 32}
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert "measured by `--upgrade` of the version-1 file `abababababab`" in runs_table(
        [tmp_path / "b.json"]
    )
    upgrade = {**b["run"], "date": "2026-12-04", "commit": "abc1234", "dirty": False}
    b["exact_nashconv"]["upgraded_from"]["run"] = upgrade
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert "by `--upgrade` (2026-12-04, `abc1234`) of the version-1 file" in runs_table(
        [tmp_path / "b.json"]
    )
    upgrade["date"] = "4 Dec"
    (tmp_path / "b.json").write_text(json.dumps(b))
    with pytest.raises(ResultFileError, match="upgraded_from.run.date: expected YYYY-MM-DD"):
        runs_table([tmp_path / "b.json"])


def test_the_checked_in_results_are_files_of_the_current_protocol() -> None:
    files = sorted(RESULTS.glob("*.json"))
    for f in files:
        d = read_result(f)
        assert d["run"]["command"].startswith("piquet benchmark "), f
        assert d["run"]["commit"] and d["run"]["dirty"] is False, f


def test_the_command(heuristic_result, tmp_path: Path, capsys) -> None:
    assert main(["benchmark", "--show-protocol"]) == 0
    assert json.loads(capsys.readouterr().out) == VERSION_2
    good = tmp_path / "good.json"
    good.write_text(json.dumps(official(heuristic_result)))
    assert main(["benchmark", "--check", str(good)]) == 0
    assert "heuristic, protocol version 2: ok" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(heuristic_result))  # the tiny protocol's: no leaderboard row
    assert main(["benchmark", "--check", str(bad)]) == 2
    assert "protocol: not the settings of protocol version 2" in capsys.readouterr().err
    assert main(["benchmark", "heuristic"]) == 2
    assert "give the result file: --out FILE.json" in capsys.readouterr().err
    assert main(["benchmark", "--out", str(tmp_path / "x.json")]) == 2
    assert "name the agent to benchmark" in capsys.readouterr().err
    proto = tmp_path / "p.json"
    proto.write_text(json.dumps({**VERSION_2, "mode": "game"}))
    assert main(["benchmark", "random", "--out", "x.json", "--protocol", str(proto)]) == 2
    assert f"--protocol {proto}.mode: expected one of" in capsys.readouterr().err


def test_the_command_runs_a_protocol_file(tmp_path: Path, capsys) -> None:
    proto = tmp_path / "tiny.json"
    proto.write_text(json.dumps(tiny_protocol().to_dict()))
    out = tmp_path / "r.json"
    argv = ["benchmark", "mcts:5", "--protocol", str(proto), "--out", str(out), "--no-progress"]
    assert main([*argv, "--work", str(tmp_path / "w"), "--name", "five"]) == 0
    assert "result written to" in capsys.readouterr().out
    d = read_result(out, official=False)
    assert d["agent"]["name"] == "five" and d["exploit"] == {"skipped": SEARCH_SKIP}
    assert d["run"]["command"].startswith("piquet benchmark mcts:5 --protocol")


def test_a_version_1_file_is_upgraded_by_the_exact_nashconv_alone(tmp_path: Path, capsys) -> None:
    """The matches and the bound are kept as they are; the exact NashConv is measured and the
    old file named; a file whose agent's files changed, or a version that changes more, is
    refused."""
    v1, v2 = tiny_protocol(1), tiny_protocol()
    old = run_benchmark(
        "random", tmp_path / "w", protocol=v1, echo=False, exploit_it=False, command="x"
    )
    assert old["exact_nashconv"] is None and old["protocol"]["version"] == 1
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    new = upgrade_result(path, source=v1, target=v2, command="piquet benchmark --upgrade old")
    assert check_result(json.loads(json.dumps(new)), official=False) == new
    assert {k: v for k, v in new.items() if k not in ("protocol", "exact_nashconv")} == {
        k: v for k, v in old.items() if k not in ("protocol", "exact_nashconv")
    }
    assert new["protocol"] == v2.to_dict()
    truth = exact_report("random", make_rules(EXACT_RULES), seed=0).figures.nash_conv
    assert new["exact_nashconv"]["value"] == truth
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    origin = new["exact_nashconv"]["upgraded_from"]
    assert {k: origin[k] for k in ("version", "sha256")} == {"version": 1, "sha256": sha}
    assert origin["run"]["command"] == "piquet benchmark --upgrade old"
    assert origin["run"]["date"] == datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    with pytest.raises(BenchmarkError, match="not a file of protocol version 2"):
        upgrade_result(path, source=v2, target=v2)
    more = dataclasses.replace(v2, mode="partie")
    with pytest.raises(BenchmarkError, match="changes more than the exact NashConv"):
        upgrade_result(path, source=v1, target=more)
    changed = copy.deepcopy(old)
    changed["agent"]["files"] = [{"name": "x.safetensors", "sha256": "0" * 64}]
    path.write_text(json.dumps(changed))
    with pytest.raises(BenchmarkError, match="its files are not those the file was made with"):
        upgrade_result(path, source=v1, target=v2)
    # the command upgrades files of version 1 as this package runs it, only
    assert main(["benchmark", "--upgrade", str(path), "--out", str(tmp_path / "n.json")]) == 2
    assert "not a file of protocol version 1" in capsys.readouterr().err
    assert main(["benchmark", "--upgrade", str(path)]) == 2
    assert "give the upgraded file: --out" in capsys.readouterr().err


def test_show_protocol_says_what_baseline_plays(capsys) -> None:
    """Issue 50: ``--show-protocol`` named the opponent ``baseline`` where the match plays
    ``baseline@2026-11-30``; stdout stays the JSON (``--protocol`` reads it back), the note goes
    to stderr, once for the opponent and the exploit reference together."""
    assert main(["benchmark", "--show-protocol"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["matches"][3]["opponent"] == "baseline"
    assert captured.err == (
        "note: 'baseline' in protocol version 2 plays baseline@2026-11-30, the policy it named "
        "when the version was set\n"
    )


def _match_file(tmp_path: Path, header: dict, *chunks: object) -> Path:
    """A match file holding ``header`` then one line per chunk, as a run writes them."""
    path = tmp_path / "matches" / "random.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"header": header}), *(json.dumps(c) for c in chunks)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _chunk_of(start: int, n: int, **change: object) -> dict:
    games = [
        {"pair": p, "game": k, "a_seat": k, "result": 3, "points": 3, "deals": 1, "correction": 0.0}
        for p in range(start, start + n)
        for k in (0, 1)
    ]
    games[0].update(change)
    return {"start": start, "minutes": 0.5, "games": games}


def _no_play(start: int, n: int, on_chunk: object) -> list:
    raise AssertionError("nothing is played once the file is refused")


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        (_chunk_of(0, 2, deals=0), "deals is not an int from 1 to 2^53: 0"),
        (_chunk_of(0, 2, points=1e300), "points is not an int within 2^53: 1e+300"),
        (_chunk_of(0, 2, deals=-3), "deals is not an int from 1 to 2^53: -3"),
        (_chunk_of(0, 2, a_seat=7), "A's seat is 7, not 0"),
        (_chunk_of(0, 2, points=10**100), "points is not an int within 2^53"),
        (_chunk_of(0, 2, correction=1e308), "correction 1e+308 is beyond"),
        (_chunk_of(0, 2, deals=5.0), "deals is not an int from 1 to 2^53: 5.0"),
        (_chunk_of(0, 2, result=-3), "result -3 and points 3 disagree on who won"),
        (_chunk_of(0, 2, extra=1), "a game is not an object with the fields"),
        ({**_chunk_of(0, 2), "minutes": -5}, "minutes is not a number from 0 to 1,000,000: -5"),
        ({**_chunk_of(0, 2), "minutes": 1e308}, "minutes is not a number from 0 to 1,000,000"),
        ({**_chunk_of(0, 2), "start": 0.0}, "expected both games of pairs 0 onwards"),
        ({**_chunk_of(0, 2), "games": "x"}, "expected both games of 1 to 3 pairs from pair 0"),
        (_chunk_of(0, 4), "expected both games of 1 to 3 pairs from pair 0"),
    ],
)
def test_a_match_files_games_get_the_workers_checks(tmp_path: Path, chunk, message) -> None:
    """A match file's games are checked by the checker a worker's results get (issue 57)."""
    from piquet_training.benchmark.work import played_match

    header = {"agent": "heuristic", "pairs": 3}
    path = _match_file(tmp_path, header, chunk)
    with pytest.raises(BenchmarkError) as err:
        played_match(path, header, 3, _no_play)
    assert str(err.value).startswith(f"{path}, line 2: ")
    assert message in str(err.value)


def test_a_match_file_is_read_line_by_line_and_a_long_header_is_not_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mismatched header of 2 MiB is named by the fields that differ, cut short; a line longer
    than the cap is refused before it is held whole; a good file is read and continued."""
    import tracemalloc

    import piquet_training.benchmark.work as work

    header = {"agent": "heuristic", "pairs": 3}
    path = _match_file(tmp_path, {"agent": "x" * (2 << 20), "pairs": 3})
    monkeypatch.setattr(work, "MAX_MATCH_LINE", 4 << 20)
    with pytest.raises(BenchmarkError) as err:
        work.played_match(path, header, 3, _no_play)
    assert len(str(err.value)) < 400 + len(str(path))
    assert '"agent": "xxxxxxxx' in str(err.value) and '"heuristic" in this match' in str(err.value)
    monkeypatch.setattr(work, "MAX_MATCH_LINE", 1 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(BenchmarkError, match=r"line 1: over the 1 MiB a line may take"):
            work.played_match(path, header, 3, _no_play)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * (1 << 20)  # the 2 MiB line is never held whole
    good = _match_file(tmp_path, header, _chunk_of(0, 2))

    def play(start: int, n: int, on_chunk) -> list:
        from piquet_training.evaluation.duplicate import GameResult

        games = [GameResult(p, k, k, 1, 1, 1) for p in range(start, start + n) for k in (0, 1)]
        on_chunk(games)
        return games

    games, minutes = work.played_match(good, header, 3, play)
    assert [(g.pair, g.game) for g in games] == [(p, k) for p in range(3) for k in (0, 1)]
    assert minutes >= 0.5
