"""``piquet eval`` and ``piquet ladder`` from the command line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from piquet_cli import main
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
        (["eval", "random", "alphago", "--deals", "2"], "agent spec 'alphago'"),
        (["eval", "random", "mcts:x", "--deals", "2"], "'mcts:x'"),
        (["eval", "random", "mcts:0", "--deals", "2"], "iterations"),
        (["eval", "random", "mcts:-3", "--deals", "2"], "iterations"),
        (
            ["eval", "mcts:²:policy=baseline", "random", "--deals", "2"],
            "agent spec 'mcts:²:policy=baseline': with policy= iterations must be a positive "
            "integer, got '²' (digits 0-9 only)",
        ),
        (
            ["eval", "mcts:20:policy=baseline:batch=²", "random", "--deals", "2"],
            "agent spec 'mcts:20:policy=baseline:batch=²': option batch must be a positive",
        ),
        (["eval", "random", "mcts:٣", "--deals", "2"], "agent spec 'mcts:٣': iterations"),
        (["eval", "random", "random", "--deals", "0"], "--deals must be at least 1, got 0"),
        (["eval", "random", "random", "--deals", "-5"], "--deals must be at least 1, got -5"),
        (["eval", "random", "random", "--workers", "0"], "--workers must be at least 1"),
        (["eval", "random", "random", "--seed", "-1"], "--seed must be 0 or more, got -1"),
        (["eval", "random", "random", "--rules", "modern"], "unknown rules preset 'modern'"),
        (["eval", "random", "random", "--variant", "rubicon"], "unknown variant 'rubicon'"),
        (["eval", "random", "random", "--variant", "orbis", "--variant", "orbis"], "twice"),
        (["ladder", "random", "--deals", "2"], "at least two agents"),
        (["ladder", "random", "random", "--deals", "2"], "must be distinct"),
        (["ladder", "random", "bogus", "--deals", "2"], "agent spec 'bogus'"),
        (["ladder", "random", "heuristic", "--deals", "0"], "--deals must be at least 1"),
        (["ladder", "random", "heuristic", "--rules", "x"], "unknown rules preset 'x'"),
        (
            ["ladder", "random", "heuristic", "--deals", "4", "--neighbour-deals", "4"],
            "--neighbour-deals must exceed --deals (4), got 4",
        ),
        (
            ["ladder", "random", "heuristic", "--deals", "4", "--neighbour-max-deals", "9"],
            "--neighbour-max-deals needs --neighbour-deals",
        ),
        (
            [
                "ladder",
                "random",
                "heuristic",
                "--deals",
                "4",
                "--neighbour-deals",
                "8",
                "--neighbour-max-deals",
                "8",
            ],
            "--neighbour-max-deals must exceed --neighbour-deals (8), got 8",
        ),
    ],
)
def test_bad_arguments_give_a_clear_error_and_exit_2(argv, message, capsys, tmp_path):
    rc = main([*argv, *(["--out", str(tmp_path / "l")] if argv[0] == "ladder" else [])])
    assert rc == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    line = captured.err.strip()
    assert line.startswith(f"piquet {argv[0]}: ") and "\n" not in line
    assert message in line
    assert "Traceback" not in captured.err
    assert not (tmp_path / "l").exists()  # nothing was written


@pytest.mark.parametrize("flag", ["--json", "--save-games"])
def test_eval_output_paths_are_checked_before_any_game(flag, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    inside = afile / "x.json" if flag == "--json" else afile
    rc = main(["eval", "heuristic", "random", "--deals", "200", "--no-progress", flag, str(inside)])
    assert rc == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no match was played, no summary printed
    assert captured.err.startswith(f"piquet eval: {flag} {inside}: ")
    assert afile.read_text() == "not a folder"
    assert main(["eval", "random", "random", "--json", str(tmp_path), "--deals", "1"]) == 2
    assert "is a directory; give a file name" in capsys.readouterr().err


def test_ladder_out_under_a_file_fails_before_any_match(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    rc = main(["ladder", "random", "heuristic", "--deals", "30", "--out", str(afile)])
    assert rc == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"piquet ladder: --out {afile}: exists and is not a directory\n"


def test_a_failed_write_at_the_end_falls_back_and_says_where(tmp_path, capsys, monkeypatch):
    """The folder is fine when checked, then becomes unwritable while the match runs: the report
    goes to a temporary folder instead, and stderr names it."""
    from piquet_training.evaluation import duplicate

    target = tmp_path / "out" / "report.json"
    target.parent.mkdir()  # a file's folder must exist when checked
    real_evaluate = duplicate.evaluate_match

    def evaluate_then_block(*args, **kwargs):
        rep = real_evaluate(*args, **kwargs)
        target.parent.rmdir()
        (tmp_path / "out").write_text("now a file")  # the parent is no longer a folder
        return rep

    monkeypatch.setattr("piquet_cli.evaluate.evaluate_match", evaluate_then_block)
    rc = main(["eval", "random", "random", "--deals", "2", "--no-progress", "--seed", "1",
               "--json", str(target)])  # fmt: skip
    assert rc == 0
    captured = capsys.readouterr()
    assert f"could not write --json {target}" in captured.err
    fallback = captured.err.split("written to ")[1].split(" instead")[0]
    data = json.loads(Path(fallback).read_text(encoding="utf-8"))
    assert data["n_pairs"] == 2 and len(data["games"]) == 4
    assert f"report written to {fallback}" in captured.out


def test_ladder_falls_back_when_its_folder_cannot_be_written(tmp_path, capsys, monkeypatch):
    from piquet_training.evaluation.ladder import run as ladder

    out = tmp_path / "lad"
    real = ladder.run_ladder

    def run_then_block(*args, **kwargs):
        res = real(*args, **kwargs)
        shutil.rmtree(out)  # the folder (with the ladder's record) gives way to a file
        out.write_text("now a file")
        return res

    monkeypatch.setattr("piquet_cli.evaluate.run_ladder", run_then_block)
    rc = main(["ladder", "random", "heuristic", "--deals", "2", "--no-progress", "--out", str(out)])
    assert rc == 0
    err = capsys.readouterr().err
    assert err.count("could not write --out") == 2  # ladder.json and ladder.png
    paths = [part.split(" instead")[0] for part in err.split("written to ")[1:]]
    assert json.loads(Path(paths[0]).read_text())["agents"] == ["random", "heuristic"]
    assert Path(paths[1]).read_bytes()[:4] == b"\x89PNG"


def test_saved_game_logs_fall_back_when_the_folder_goes_away(tmp_path, capsys):
    from piquet_training.evaluation.duplicate import save_game_log

    gone = tmp_path / "gone"
    fallback = tmp_path / "fb"
    path = save_game_log('{"x": 1}', "g.json", str(gone), str(fallback))
    assert path == str(fallback / "g.json") and (fallback / "g.json").read_text() == '{"x": 1}'
    assert f"could not write game logs to {gone}" in capsys.readouterr().err
    with pytest.raises(OSError):
        save_game_log("{}", "g.json", str(gone))


def test_eval_prints_the_seed_it_drew(capsys):
    assert main(["eval", "random", "random", "--deals", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    seed = int(out.split("repeat with --seed ")[1].split(")")[0])
    assert (
        main(["eval", "random", "random", "--deals", "1", "--no-progress", "--seed", str(seed)])
        == 0
    )
    again = capsys.readouterr().out
    assert again.splitlines()[1:3] == out.splitlines()[1:3]  # the same match


def test_ladder_writes_json_and_png(tmp_path, capsys):
    rc = main(
        ["ladder", "random", "heuristic", "--deals", "6", "--no-progress", "--out", str(tmp_path)]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "1. heuristic" in text and "2. random" in text
    assert "head to head: mean points per deal, row minus column" in text
    assert "2. random" in text.split("head to head")[1]  # the matrix's rows, in ranking order
    data = json.loads((tmp_path / "ladder.json").read_text())
    assert [r["agent"] for r in data["table"]] == ["heuristic", "random"]
    assert (tmp_path / "ladder.png").read_bytes()[:4] == b"\x89PNG"


def test_the_piquet_console_script_runs_eval():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "piquet_cli",
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
    assert main(["eval", str(path), "random", "--deals", "2", "--rules", "classic"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("piquet eval: ") and "classic" in err


def test_ladder_without_its_optional_packages_fails_before_any_game(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "openskill" else real(name)
    )
    rc = main(["ladder", "random", "heuristic", "--deals", "50", "--out", str(tmp_path / "l")])
    assert rc == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "piquet ladder: needs openskill: pip install -e '.[train]'\n"


def test_ladder_prints_each_match_and_resumes_from_its_record(tmp_path, capsys, monkeypatch):
    from piquet_training.evaluation import record as recording

    out = tmp_path / "lad"
    argv = ["ladder", "random", "heuristic", "mcts:2", "--deals", "2", "--no-progress",
            "--seed", "5", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "  random vs heuristic: " in printed and "points per deal, 2 pairs" in printed
    assert printed.index("heuristic vs mcts:2: ") < printed.index("ladder:")  # as each ends
    first = json.loads((out / "ladder.json").read_text())
    assert len((out / "matches.jsonl").read_text().splitlines()) == 3

    def no_play(*args, **kwargs):
        raise AssertionError("a recorded pair was played again")

    monkeypatch.setattr(recording, "play_games", no_play)
    assert main([*argv, "--resume"]) == 0
    assert json.loads((out / "ladder.json").read_text()) == first
    (out / "matches.jsonl").write_text("[1, 2]\n")
    assert main([*argv, "--resume"]) == 2
    assert "piquet ladder: --resume: " in capsys.readouterr().err
    assert (out / "matches.jsonl").read_text() == "[1, 2]\n"  # a bad record is left as it was


def _report(
    path: Path, a: str, b: str, pairs: list[tuple[int, int]], corrections: float = 0.0
) -> Path:
    """A ``piquet eval --json`` report of hand-made games: each pair's two games' points (one
    deal each); with ``corrections``, each game of the first pair corrected by that much (a
    variance-reduced report)."""
    from piquet_env.rules import STANDARD
    from piquet_training.evaluation.duplicate import GameResult, report

    games = [GameResult(p, g, g, pts, pts, 1, corrections * (p == 0))
             for p, pair in enumerate(pairs) for g, pts in enumerate(pair)]  # fmt: skip
    vr = "baseline" if corrections else ""
    doc = report(games, a, b, STANDARD, "deal", 0, vr).to_dict(games=True)
    path.write_text(json.dumps(doc))
    return path


def test_eval_compare_pairs_two_reports_on_their_deals(tmp_path, capsys):
    """A's pairs are worth 10 and 4 points per deal, B's 6 and 2: A − B is 4 and 2 pair by pair,
    3 on average; its interval is that of those two differences alone, the cards' luck (7 apart
    from one pair to the next) cancelled."""
    a = _report(tmp_path / "a.json", "x", "z", [(12, 8), (6, 2)])
    b = _report(tmp_path / "b.json", "y", "z", [(8, 4), (3, 1)])
    assert main(["eval", "--compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert f"{a}: x − z, points per deal: +7.00" in out
    assert f"{b}: y − z, points per deal: +4.00" in out
    line = out.splitlines()[-1]
    assert line.startswith("A − B (x − y, each against z), points per deal paired on the same ")
    assert "deals: +3.00 [" in line
    assert "2 pairs" in line
    # a variance-reduced report is compared by its corrected values: 10 − 2 = 8 and 4 (under 20
    # pairs the corrections' weight is 1), each 2 above B's 6 and 2
    v = _report(tmp_path / "v.json", "x", "z", [(12, 8), (6, 2)], corrections=2.0)
    assert main(["eval", "--compare", str(v), str(b)]) == 0
    out = capsys.readouterr().out
    assert f"{v}: x − z, points per deal: +6.00" in out and "variance-reduced by baseline" in out
    assert "paired on the same deals: +2.00 [" in out
    # the same from two real matches: the edge of each, and their paired difference
    argv = ["--deals", "6", "--seed", "5", "--rules", "mini", "--no-progress"]
    for name, agent in (("r.json", "random"), ("h.json", "heuristic:seed=1")):
        assert main(["eval", agent, "heuristic", *argv, "--json", str(tmp_path / name)]) == 0
    capsys.readouterr()
    assert main(["eval", "--compare", str(tmp_path / "r.json"), str(tmp_path / "h.json")]) == 0
    r, h = (json.loads((tmp_path / n).read_text()) for n in ("r.json", "h.json"))
    diff = r["points_per_deal"]["mean"] - h["points_per_deal"]["mean"]
    assert f"paired on the same deals: {diff:+.2f} [" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(seed=9), "not the same deals: seed is 0 in"),
        (lambda d: d.update(rules="classic"), "not the same deals: rules is"),
        (lambda d: d.pop("games"), "games: missing or empty"),
        (lambda d: d.pop("mode"), "mode: missing (not an eval report)"),
        (lambda d: d["games"].pop(), "games: 3, where its 2 pairs make 4"),
        (lambda d: d["games"][0].pop("points"), "games[0]: missing points"),
        (lambda d: d["games"][0].update(extra=1), 'games[0]: unknown "extra"'),
        (lambda d: d["games"][0].update(pair=0.5), "games[0].pair: expected an integer (at most"),
        (
            lambda d: d["games"][1].update(points=10**400),
            "not JSON (parse error: integer overflow)",
        ),
        (lambda d: d["games"][1].update(points=2**60), "games[1].points: expected an integer"),
        (lambda d: d["games"][1].update(points=[1]), "games[1].points: expected a number, got arr"),
        (
            lambda d: d.update(seed={"a": [1]}),
            "seed: expected an integer (at most 2^53 in size), got o",
        ),
        (lambda d: d.update(games=5), "games: missing or empty"),
        (lambda d: d["games"].append(7), "games[4]: expected an object, got number"),
        (
            lambda d: d["games"][2].update(deals=True),
            "games[2].deals: expected an integer (at most 2^53 in size), got true",
        ),
        (
            lambda d: d["games"][0].update(correction="nan"),
            'games[0].correction: expected a number, got "nan"',
        ),
        (lambda d: d["games"][1].update(game=0), "expected games 0 and 1 of each pair 0 to 1"),
        (lambda d: d["games"][2].update(pair=7), "expected games 0 and 1 of each pair 0 to 1"),
        (lambda d: d["games"][3].update(deals=0), "a_seat 0 or 1, deals at least 1"),
        (lambda d: d.update(n_pairs=1000), "games: 4, where its 1000 pairs make 2000"),
        (lambda d: d.update(n_pairs=10**18), "n_pairs: expected an integer (at most 2^53 in size)"),
        (lambda d: d.update(n_pairs="2"), "n_pairs: expected an integer (at most 2^53 in"),
        (lambda d: d.update(agent_a=None), "agent_a: expected a string, got null"),
    ],
)
def test_eval_compare_refuses_reports_that_do_not_pair(change, message, tmp_path, capsys):
    a = _report(tmp_path / "a.json", "x", "z", [(12, 8), (6, 2)])
    doc = json.loads(a.read_text())
    change(doc)
    b = tmp_path / "b.json"
    b.write_text(json.dumps(doc))
    assert main(["eval", "--compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("piquet eval: ") and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[" + b"1," * 3_000_000 + b"1]", "expected an object (an eval report), got array"),
        (
            b'{"junk": [' + b"[1]," * 1_500_000 + b'1], "games": [7]}',
            "games[0]: expected an object",
        ),
    ],
    ids=["a 6 MB array", "a 6 MB unknown field"],  # not the contents: megabytes of test ids
)
def test_a_large_report_out_of_place_costs_about_its_size(content, message, tmp_path):
    """Issue 57, point 11: a 200 MB JSON array cost 1.4 GiB before it was refused. Read as a
    stream, a 6 MB array is refused at its first byte, and 6 MB passed over unbuilt under a key
    no report has cost nothing beyond the file's own bytes (parsed whole, the first took 25 MB
    of Python objects, the second 60)."""
    import tracemalloc

    from piquet_training.evaluation.paired import ReportError, read_report

    path = tmp_path / "big.json"
    path.write_bytes(content)
    tracemalloc.start()
    try:
        with pytest.raises(ReportError, match=re.escape(message)):
            read_report(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(content) + (8 << 20), peak  # the bytes, and a few MB whatever the size


def test_eval_compare_refuses_what_is_not_a_report(tmp_path, capsys):
    a = _report(tmp_path / "a.json", "x", "z", [(12, 8), (6, 2)])
    (tmp_path / "bad.json").write_text("{ not json")
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "latin.json").write_bytes(b'{"agent_a": "\xe9"}')
    for other, message in (
        (tmp_path, f"piquet eval: {tmp_path}: is a directory, not an eval report"),
        (tmp_path / "none.json", f"piquet eval: {tmp_path / 'none.json'}: no such file"),
        (tmp_path / "bad.json", f"piquet eval: {tmp_path / 'bad.json'}: "),
        (tmp_path / "latin.json", f"piquet eval: {tmp_path / 'latin.json'}: not UTF-8 text"),
        (tmp_path / "list.json", f"piquet eval: {tmp_path / 'list.json'}: expected an object"),
    ):
        assert main(["eval", "--compare", str(a), str(other)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(message) and "Traceback" not in err, err
        assert err.count(str(other)) == 1, err  # the file named once
    for flags in (["--json", "x.json"], ["--deals", "5", "--exact"], ["--variance-reduction"]):
        assert main(["eval", "--compare", str(a), str(a), *flags]) == 2
        err = capsys.readouterr().err
        assert f"{flags[0]}" in err and "for a match, not for --compare" in err
    assert not (tmp_path.parent / "x.json").exists() and not Path("x.json").exists()
    assert main(["eval", "random", "--compare", str(a), str(a)]) == 2
    assert "give A and B (a match) or --compare A.json B.json, not both" in capsys.readouterr().err
    assert main(["eval", "random"]) == 2
    assert "give A and B, the two agents to play" in capsys.readouterr().err
