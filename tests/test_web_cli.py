"""``piquet serve`` and ``piquet humans``: their user errors, the server as a program, and the
humans' summary with the evaluation's intervals."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from piquet_agents.loop import play_game
from piquet_cli import main
from piquet_env.agent import RandomAgent
from piquet_env.game import Game
from piquet_env.game.record import save_record
from piquet_training.evaluation.stats import mean_ci, proportion_ci


def _run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (["--port", "70000"], "--port must be 0 to 65535, got 70000"),
        (["--opponent", "nobody"], "--opponent: agent spec 'nobody': not an agent name"),
        (["--max-tables", "0"], "--max-tables must be at least 1, got 0"),
        (["--rules", "bogus"], "unknown rules preset 'bogus'"),
        (["--checkpoints", "no/such/dir"], "--checkpoints no/such/dir: not a directory"),
        (["--allowed-host", "ev*il.example"], "--allowed-host 'ev*il.example': not a host name"),
        (["--allowed-host", "a b"], "--allowed-host 'a b': not a host name"),
        (["--max-records", "0"], "--max-records must be at least 1, got 0"),
        (["--max-record-mib", "-1"], "--max-record-mib must be a positive number, got -1"),
        (["--records-per-hour", "inf"], "--records-per-hour must be a positive number, got inf"),
        (["--workers", "1"], "--workers must be 0 (threads) or at least 2, got 1"),
        (["--rate", "0"], "--rate must be a positive number of messages a second, got 0.0"),
        (["--client-rate", "nan"], "--client-rate must be a positive number of messages a second"),
        (["--connections-per-client", "0"], "--connections-per-client must be at least 1, got 0"),
        (["--cookie-secret-file", "."], "--cookie-secret-file: .: is a directory"),
    ],
)
def test_serve_user_errors_are_one_line_and_exit_2(extra, reason, capsys, tmp_path):
    pytest.importorskip("starlette", reason="needs the web extra")
    rc, _, err = _run(["serve", "--records", str(tmp_path / "r"), *extra], capsys)
    assert rc == 2
    assert err.startswith("piquet serve: ") and reason in err and err.count("\n") == 1


def test_the_limits_check_themselves_naming_the_field():
    """Limits refuses a value out of range itself (the command line only names its flag)."""
    from piquet_table.web.limits import LimitError, Limits

    for field, value, rule in [
        ("max_tables", 0, "must be at least 1, got 0"),
        ("max_connections", 2.5, "must be at least 1, got 2.5"),
        ("rate", float("inf"), "must be a positive number of messages a second, got inf"),
        ("header_timeout", 0.0, "must be a positive number, got 0"),
        ("cooldown", -1.0, "must be 0 or more seconds, got -1"),
        ("keep_alive", "5", "must be a number, got '5'"),
    ]:
        with pytest.raises(LimitError) as err:
            Limits(**{field: value})
        assert (err.value.field, err.value.rule) == (field, rule)
        assert str(err.value) == f"{field} {rule}"
    assert Limits(cooldown=0.0).cooldown == 0.0


def test_serve_checks_the_records_folder_before_starting(capsys, tmp_path):
    pytest.importorskip("starlette", reason="needs the web extra")
    (tmp_path / "afile").write_text("")
    rc, _, err = _run(["serve", "--records", str(tmp_path / "afile")], capsys)
    assert rc == 2 and "exists and is not a directory" in err


def test_serve_without_the_web_extra_names_it(tmp_path):
    code = (
        "import sys\nsys.modules['starlette'] = None\n"
        "import importlib.util as u\nfind = u.find_spec\n"
        "u.find_spec = lambda n, *a: None if n == 'starlette' else find(n, *a)\n"
        "from piquet_cli import main\nsys.exit(main(['serve']))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr == "piquet serve: needs starlette: pip install -e '.[web]'\n"


def test_serve_shares_the_rules_and_seed_options(capsys):
    from piquet_cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["serve"]
    opts = {a.dest: a for a in sub._actions}
    assert (opts["rules"].default, opts["seed"].default, opts["opponent"].default) == (
        "standard",
        None,
        "baseline",
    )
    assert (opts["host"].default, opts["port"].default) == ("127.0.0.1", 8000)


def test_serve_runs_until_interrupted_and_saves_nothing_it_did_not_play(tmp_path):
    pytest.importorskip("uvicorn", reason="needs the web extra")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    records = tmp_path / "records"
    cmd = [sys.executable, "-m", "piquet_cli", "serve", "--port", str(port), "--seed", "3"]
    cmd += ["--opponent", "heuristic", "--records", str(records), "--allowed-host", "table.example"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config") as r:
                    config = json.load(r)
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        assert config["default"] == "heuristic" and config["rules"] == "standard"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as r:
            assert b'data-action="new"' in r.read()
        named = urllib.request.Request(f"http://127.0.0.1:{port}/api/config")
        named.add_header("Host", f"table.example:{port}")
        with urllib.request.urlopen(named) as r:
            assert r.status == 200
        named.add_header("Host", f"other.example:{port}")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(named)
        assert refused.value.code == 400
        from websockets.sync.client import connect

        with connect(f"ws://127.0.0.1:{port}/ws") as ws:
            ws.send('{"type": "leave"}')
            assert "no table to leave" in ws.recv()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.startswith(f"Piquet, standard rules: http://127.0.0.1:{port}/")
    assert "seed 3 (repeat with --seed 3)" in out
    assert records.is_dir() and not os.listdir(records)
    (line,) = [x for x in err.splitlines() if "connection closed" in x]  # one line per socket
    assert " piquet serve: 127.0.0.1:" in line and "closed by the client after" in line
    assert "messages received 1, sent 1 (errors 1), dropped 0" in line
    assert "Traceback" not in err


def _wait_for(url: str, proc) -> int:
    """The status of ``GET url`` once the server answers."""
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url) as r:
                return r.status
        except urllib.error.HTTPError as err:
            return err.code
        except OSError:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)


def test_serve_on_every_interface_warns_prints_its_addresses_and_wants_its_token(tmp_path):
    pytest.importorskip("uvicorn", reason="needs the web extra")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "piquet_cli", "serve", "--host", "0.0.0.0", "--port", str(port)]
    cmd += ["--opponent", "random", "--records", str(tmp_path / "r"), "--token", "--workers", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(f"http://127.0.0.1:{port}/api/config", proc) == 401
        lines = [proc.stdout.readline() for _ in range(3)]
        token = next(x for x in lines if x.startswith("  token: ")).split()[1]
        login = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/login", data=json.dumps({"token": token}).encode()
        )
        with urllib.request.urlopen(login) as r:
            cookie = r.headers["set-cookie"].split(";")[0]
        config = urllib.request.Request(f"http://127.0.0.1:{port}/api/config")
        config.add_header("Cookie", cookie)
        with urllib.request.urlopen(config) as r:
            assert json.load(r)["default"] == "random"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert lines[0].startswith(f"Piquet, standard rules: http://127.0.0.1:{port}/")
    assert "http://0.0.0.0" not in "".join(lines) + out
    assert lines[1].startswith("  also at http://")  # this machine's name and addresses
    assert "warning: listening on every interface" in err and "they need the token" in err


def _human_games(folder, n: int, mode: str, opponent: str = "random") -> list[Game]:
    games = []
    for i in range(n):
        seats = [RandomAgent(seed=i), RandomAgent(seed=100 + i)]
        human = i % 2
        game = play_game(Game(seed=i, mode=mode), seats)
        names = [opponent, opponent]
        names[human] = "human"
        save_record(folder / f"{mode}-{i:03d}.json", game, names)
        games.append((game, human))
    return games


def test_humans_summarises_people_against_each_agent_with_the_evaluations_intervals(
    capsys, tmp_path
):
    games = _human_games(tmp_path, 12, "partie")
    _human_games(tmp_path, 3, "deal", opponent="heuristic")
    unfinished = Game(seed=50)
    unfinished.apply(unfinished.legal_actions()[0])
    save_record(tmp_path / "partie-unfinished.json", unfinished, ["human", "random"])
    save_record(tmp_path / "agents.json", games[0][0], ["random", "heuristic"])
    (tmp_path / "junk.json").write_text("not json")
    rc, out, _ = _run(["humans", str(tmp_path), "--json", str(tmp_path / "s.out")], capsys)
    assert rc == 0
    points = [
        sum(ds[h].total - ds[1 - h].total for ds in g.deal_scores) / len(g.deal_scores)
        for g, h in games
    ]
    wins = [1.0 if g.result[h] > 0 else 0.5 if g.result[h] == 0 else 0.0 for g, h in games]
    p, w = mean_ci(points), proportion_ci(wins)
    s = mean_ci([float(g.result[h]) for g, h in games])
    assert "human vs random: standard, partie mode, 12 games (72 deals), 1 unfinished" in out
    assert f"points per deal (human − random): {p.mean:+.2f}  95% CI [{p.low:+.2f}, " in out
    assert f"win rate of human: {100 * w.mean:.1f}%  95% CI [{100 * w.low:.1f}%" in out
    assert f"settled partie score of human: {s.mean:+.1f}  95% CI [{s.low:+.1f}" in out
    assert "human vs heuristic: standard, deal mode, 3 games (3 deals)" in out
    assert "verdict: too few games to judge (3 < 10)" in out
    assert "1 without a person, 1 unreadable" in out and "junk.json: not a JSON" in out
    doc = json.loads((tmp_path / "s.out").read_text())
    (random_row,) = [r for r in doc["standings"] if r["opponent"] == "random"]
    assert random_row["points_per_deal"]["ci_low"] == pytest.approx(p.low)
    assert random_row["win_rate"]["method"] == "wilson" and random_row["unfinished"] == 1


def test_humans_refuses_what_is_not_a_folder(capsys, tmp_path):
    rc, _, err = _run(["humans", str(tmp_path / "nothing")], capsys)
    assert (
        rc == 2
        and err == f"piquet humans: {tmp_path / 'nothing'}: not a directory of game records\n"
    )


def test_the_web_bench_runs_and_prints_its_numbers():
    """``python -m piquet_cli.web_speed`` (the harness of docs/results/speed.md), shortly:
    a table against random, the results with a few records, agents in the server's threads."""
    pytest.importorskip("websockets", reason="needs the web extra")
    cmd = [sys.executable, "-m", "piquet_cli.web_speed", "--tables", "1", "--moves", "3"]
    cmd += ["--records", "5", "--workers", "0", "random"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "GET /api/results with 5 records: the first after a start" in out.stdout
    (row,) = [x for x in out.stdout.splitlines() if x.startswith("  random ")]
    assert int(row.split()[1]) == 3  # moves timed


def test_the_attack_bench_runs_its_four_phases():
    """``python -m piquet_cli.web_attack`` (docs/results/web.md's attack figures), shortly: the
    quiet reference, the slow connections, the quiet reference, the big logins, each a line, and
    the server stopped with no traceback."""
    pytest.importorskip("websockets", reason="needs the web extra")
    cmd = [sys.executable, "-m", "piquet_cli.web_attack", "--seconds", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    phases = [
        line.split("  HTTP")[0].strip() for line in out.stdout.splitlines() if " HTTP " in line
    ]
    assert phases == [
        "quiet reference",
        "slow connections (300 half-sent)",
        "quiet reference",
        "300 MB login bodies",
    ]
    assert out.stdout.rstrip().endswith("tracebacks: 0")


def _descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (its children, theirs...), from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = {c for c, pp in parents.items() if pp == p} - found
        found |= kids
        todo += kids
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the processes in /proc")
def test_a_hard_kill_of_the_server_leaves_no_process_behind(tmp_path):
    """After ``kill -9`` of ``piquet serve``, its 2 move workers and the resource tracker lived on
    (9 minutes later), re-parented to PID 1. Now they end with it."""
    pytest.importorskip("uvicorn", reason="needs the web extra")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "piquet_cli", "serve", "--port", str(port), "--workers", "2"]
    cmd += ["--opponent", "random", "--records", str(tmp_path / "records")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    children: set[int] = set()
    try:
        assert _wait_for(f"http://127.0.0.1:{port}/api/config", proc) == 200
        deadline = time.monotonic() + 120
        while len(children := _descendants(proc.pid)) < 3:  # 2 workers, the resource tracker
            assert time.monotonic() < deadline, children
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 30
        while alive := [p for p in children if _alive(p)]:
            assert time.monotonic() < deadline, f"{alive} outlived the server"
            time.sleep(0.2)
    finally:
        for pid in [proc.pid, *(p for p in children if _alive(p))]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        proc.communicate(timeout=10)
