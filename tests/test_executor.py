"""The executor (piquet_training.evaluation.executor): the same results here, in worker processes
and on a Ray cluster of three nodes (started once for the module), a killed worker and a node
that leaves survived, every result checked."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
import re
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from piquet_env.rules import STANDARD
from piquet_training.evaluation.duplicate.checks import check_chunk, chunk_checker
from piquet_training.evaluation.duplicate.match import DuplicateMatch, GameResult
from piquet_training.evaluation.duplicate.play import (
    _play_chunk_measured,
    check_save_dir,
    play_games,
)
from piquet_training.evaluation.executor import (
    POOL_RESTARTS,
    RAY_INSTALL,
    AgentFileError,
    AgentFiles,
    Executor,
    ExecutorError,
    Fanout,
    RayNotInstalledError,
    ResultError,
)
from piquet_training.memory import ProcessMemory

# ------------------------------------------------------------------------------ the tasks


def draw(seed: int, i: int) -> float:
    """A deterministic task: the first draw of its own stream."""
    return random.Random(f"{seed}/{i}").random()


def die_once(marker_dir: str, victim: int, i: int) -> float:
    """``draw(7, i)``; task ``victim`` kills its own process the first time it runs."""
    marker = Path(marker_dir) / f"killed-{victim}"
    if i == victim and not marker.exists():
        marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return draw(7, i)


def die_always(i: int) -> float:
    """A task that kills its process every time."""
    os.kill(os.getpid(), signal.SIGKILL)
    return 0.0


def fail(i: int) -> float:
    """A task that raises."""
    raise KeyError(f"no such thing as {i}")


def node_draw(marker_dir: str, i: int) -> tuple[float, str]:
    """``draw(3, i)`` after 2 s for tasks 1 and 2 (0.2 s for the others), and the Ray node it
    ran on (a file ``start-TASK-NODE-PID`` says where each start was)."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    (Path(marker_dir) / f"start-{i}-{node}-{os.getpid()}").touch()
    time.sleep(2.0 if i in (1, 2) else 0.2)
    return draw(3, i), node


def collect(fanout: Fanout, fn, tasks, **kw) -> tuple[list, object]:
    """The results of ``fanout`` running ``tasks``, sorted by task, and the executor."""
    with fanout.open() as ex:
        got = list(ex.run(fn, tasks, **kw))
    assert sorted(i for i, _ in got) == list(range(len(tasks)))  # every task once
    return [r for _, r in sorted(got, key=lambda p: p[0])], ex


EXPECTED = [draw(1, i) for i in range(12)]
MATCH = DuplicateMatch("random", "heuristic", STANDARD, 8, seed=5)
CHUNKS = [[0, 1, 2], [3, 4, 5], [6, 7]]


def match_games(fanout: Fanout) -> list[GameResult]:
    """MATCH's games played in CHUNKS on ``fanout``, checked, sorted by pair and game."""
    tasks = [(c, None, None) for c in CHUNKS]
    results, _ = collect(
        fanout, _play_chunk_measured, tasks, shared=(MATCH,), check=chunk_checker(CHUNKS)
    )
    return sorted((g for games, _ in results for g in games), key=lambda g: (g.pair, g.game))


# --------------------------------------------------------------------------- the fanout value


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"workers": 0}, "workers must be an int of at least 1, got 0"),
        ({"workers": True}, "workers must be an int of at least 1, got True"),
        ({"workers": 2.0}, "workers must be an int of at least 1, got 2.0"),
        ({"ray": "cluster"}, "ray must be 'local', 'auto' or 'ray://HOST:PORT', got 'cluster'"),
        ({"ray": ""}, "ray must be 'local', 'auto' or 'ray://HOST:PORT', got ''"),
        ({"ray": "ray://head"}, "got 'ray://head'"),
        ({"ray": "ray://head:0"}, "got 'ray://head:0'"),
        ({"ray": "ray://:10001"}, "got 'ray://:10001'"),
        ({"ray": "head:6379"}, "got 'head:6379'"),
    ],
)
def test_bad_fanouts_are_refused_by_name(kw, message):
    with pytest.raises(ValueError) as err:
        Fanout(**kw)
    assert message in str(err.value)


def test_good_fanouts_say_where_they_run():
    assert Fanout().where == "this process"
    assert Fanout(3).where == "3 worker processes"
    assert Fanout(2, "auto").where == "Ray at auto, 2 tasks at a time"
    assert (
        Fanout(ray="ray://10.0.0.1:10001").where == "Ray at ray://10.0.0.1:10001, 1 task at a time"
    )


def test_without_ray_installed_ray_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(RayNotInstalledError) as err:
        Fanout(2, "local").open()
    assert str(err.value) == "a Ray cluster needs Ray, which is not installed: " + RAY_INSTALL
    assert RAY_INSTALL == "pip install -e '.[ray]'"


@pytest.mark.parametrize("ray", ["auto", "ray://head:10001"])
def test_game_logs_on_a_cluster_are_refused_before_any_game(tmp_path, monkeypatch, ray):
    """A game's log is written where it is played: ``save_dir`` on a cluster is refused before
    Ray is even imported (and so before any game), by the library and by ``piquet eval``."""
    monkeypatch.setitem(sys.modules, "ray", None)  # nothing may reach for Ray
    match = DuplicateMatch("random", "heuristic", STANDARD, 2, "deal", 0)
    want = f"game logs (save_dir) are written where each game is played: not with ray={ray!r}"
    with pytest.raises(ValueError, match=re.escape(want)):
        play_games(match, fanout=Fanout(2, ray), save_dir=str(tmp_path / "logs"))
    assert not (tmp_path / "logs").exists()
    check_save_dir(str(tmp_path), Fanout(2, "local"))  # a Ray started here: the logs are here
    check_save_dir(None, Fanout(2, ray))


def test_piquet_eval_refuses_save_games_on_a_cluster_in_one_line(tmp_path, capsys):
    pytest.importorskip("ray", reason="Ray is not installed")
    from piquet_cli import main

    logs = tmp_path / "logs"
    argv = [
        "eval",
        "random",
        "heuristic",
        "--deals",
        "2",
        "--ray",
        "auto",
        "--save-games",
        str(logs),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "game logs (--save-games) are written where each game" in err[0]
    assert "--ray auto (use --ray local, or no cluster)" in err[0] and not logs.exists()


# ------------------------------------------------------------------------------- locally


def test_here_and_in_processes_the_same_results():
    tasks = [(1, i) for i in range(12)]
    here, ex1 = collect(Fanout(1), draw, tasks)
    two, ex2 = collect(Fanout(2), draw, tasks)
    assert here == two == EXPECTED
    assert ex1.duplicates == ex2.duplicates == ex2.resubmitted == 0


class _Twice(Executor):
    """Gives every task's result twice, the second time wrong."""

    def _results(self, fn, tasks, shared, prepare):
        for i, task in enumerate(tasks):
            yield i, fn(*shared, *task)
            yield i, -1.0


def test_a_result_given_twice_is_counted_once():
    ex = _Twice()
    got = list(ex.run(draw, [(1, i) for i in range(3)]))
    assert got == [(0, EXPECTED[0]), (1, EXPECTED[1]), (2, EXPECTED[2])]  # the first of each
    assert ex.duplicates == 3


def test_shared_arguments_come_first():
    results, _ = collect(Fanout(2), draw, [(i,) for i in range(4)], shared=(1,))
    assert results == EXPECTED[:4]


def test_a_worker_killed_mid_run_is_survived_locally(tmp_path):
    tasks = [(str(tmp_path), 3, i) for i in range(8)]
    results, ex = collect(Fanout(2), die_once, tasks)
    assert results == [draw(7, i) for i in range(8)]  # as if nothing had happened
    assert (tmp_path / "killed-3").exists()  # the worker was killed
    assert ex.resubmitted >= 1  # task 3 at least ran again in a new pool


def test_a_task_that_always_kills_its_worker_ends_in_a_clear_error():
    with Fanout(2).open() as ex, pytest.raises(ExecutorError) as err:
        list(ex.run(die_always, [(0,), (1,)]))
    assert f"the worker pool broke {POOL_RESTARTS + 1} times" in str(err.value)
    assert "2 of 2 tasks unfinished" in str(err.value)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_task_error_is_raised_as_it_is(workers):
    with Fanout(workers).open() as ex, pytest.raises(KeyError, match="no such thing as 0"):
        list(ex.run(fail, [(0,)]))


def test_a_match_chunk_by_chunk_equals_play_games():
    reference = play_games(MATCH)
    assert match_games(Fanout(1)) == match_games(Fanout(2)) == reference
    assert [(g.pair, g.game) for g in reference] == [(p, k) for p in range(8) for k in (0, 1)]


# ------------------------------------------------------------------------- checking results


def _games(pairs: list[int]) -> list[GameResult]:
    return [GameResult(p, k, k, 3 - k, 5, 1, 0.25) for p in pairs for k in (0, 1)]


MEMORY = ProcessMemory(pid=12, peak_rss_mib=300.0, rss_mib=200.0, pss_mib=150.0, uss_mib=100.0)


def test_a_well_formed_chunk_passes():
    check_chunk([4, 5], (_games([4, 5]), MEMORY))
    check_chunk([4, 5], (list(reversed(_games([4, 5]))), None))


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ([], "not a (games, memory) pair but a list"),
        ((tuple(_games([4, 5])), None), "the games are a tuple, not a list"),
        ((_games([4]), None), "2 games for 2 pairs, not 4"),
        ((_games([4, 5, 6]), None), "6 games for 2 pairs, not 4"),
        ((_games([4, 6]), None), "pair 6 is not one of the task's"),
        ((_games([4, 4]), None), "game 0 of pair 5 is missing"),
        ((_games([4])[:1] * 2 + _games([5]), MEMORY), "game 1 of pair 4 is missing"),
        (([{"pair": 4}, *_games([4, 5])[1:]], None), "a game is a dict, not a GameResult"),
        (([dataclasses.replace(_games([4])[0], game=True), *_games([4, 5])[1:]], None), "game"),
        (([dataclasses.replace(_games([4])[0], a_seat=1), *_games([4, 5])[1:]], None), "seat"),
        (
            ([dataclasses.replace(_games([4])[0], points=2**53 + 1), *_games([4, 5])[1:]], None),
            "points is not an int within 2^53",
        ),
        (
            ([dataclasses.replace(_games([4])[0], result=1.0), *_games([4, 5])[1:]], None),
            "result is not an int",
        ),
        (([dataclasses.replace(_games([4])[0], deals=0), *_games([4, 5])[1:]], None), "deals"),
        (
            (
                [dataclasses.replace(_games([4])[0], correction=float("nan")), *_games([4, 5])[1:]],
                None,
            ),
            "correction is not a finite number",
        ),
        ((_games([4, 5]), {"pid": 12}), "the memory reading is a dict, not a ProcessMemory"),
        ((_games([4, 5]), dataclasses.replace(MEMORY, uss_mib=float("inf"))), "uss_mib"),
        ((_games([4, 5]), dataclasses.replace(MEMORY, pss_mib=-1.0)), "pss_mib"),
        ((_games([4, 5]), dataclasses.replace(MEMORY, pid=0)), "pid"),
    ],
)
def test_a_malformed_chunk_fails_its_check(result, message):
    with pytest.raises(ResultError) as err:
        check_chunk([4, 5], result)
    assert message in str(err.value)


class _RaisingEq:
    """A value whose comparisons raise, as a hostile worker's result might hold."""

    def __eq__(self, other):
        raise RuntimeError("no comparing me")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        raise RuntimeError("no showing me")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("game", np.array([0, 1]), "game is a ndarray, not 0 or 1"),
        ("game", _RaisingEq(), "game is a _RaisingEq, not 0 or 1"),
        ("a_seat", np.array([0, 0]), "A's seat is ndarray"),
        ("a_seat", _RaisingEq(), "A's seat is _RaisingEq"),
        ("pair", np.int64(4), "a game's pair is not an int from 0 to 2^53: a int64"),
        ("pair", _RaisingEq(), "a game's pair is not an int from 0 to 2^53: a _RaisingEq"),
        ("points", _RaisingEq(), "points is not an int within 2^53: a _RaisingEq"),
        ("correction", np.float64("nan"), "correction is not a finite number: a float64"),
        ("correction", 1e308, "correction 1e+308 is beyond"),
        ("correction", -10_101.0, "correction -10101 is beyond ±10100"),
        ("deals", 21, "deals 21 is more than a game plays (20)"),
        ("points", 251, "points 251 is beyond ±250 in 1 deals"),
        ("result", 10**4 + 101, "result 10101 is beyond ±10100"),
        ("result", -3, "result -3 and points 5 disagree on who won"),
        ("result", 0, "result 0 and points 5 disagree on who won"),
    ],
)
def test_a_hostile_game_is_one_result_error_checked_by_type_first(field, value, message):
    bad = dataclasses.replace(_games([4])[0], **{field: value})
    with pytest.raises(ResultError) as err:
        check_chunk([4, 5], ([bad, *_games([4, 5])[1:]], None))
    assert message in str(err.value)


def test_a_correction_within_the_bound_and_a_tie_pass():
    tie = dataclasses.replace(_games([4])[0], result=0, points=0, correction=-10_100.0)
    check_chunk([4, 5], ([tie, *_games([4, 5])[1:]], None))


def test_a_result_failing_its_check_stops_the_run_naming_the_task():
    tasks = [(c, None, None) for c in CHUNKS]
    wrong = [[0, 1, 2], [3, 4, 9], [6, 7]]  # task 1's check expects pair 9, not 5
    with Fanout(1).open() as ex, pytest.raises(ResultError) as err:
        list(ex.run(_play_chunk_measured, tasks, shared=(MATCH,), check=chunk_checker(wrong)))
    assert str(err.value) == "task 1: pair 5 is not one of the task's"


# ------------------------------------------------------------------------------ agent files


def test_agent_files_check_the_bytes_where_they_run(tmp_path):
    path = tmp_path / "policy.safetensors"
    path.write_bytes(b"weights one")
    files = AgentFiles.of([str(path), "random", None], STANDARD)
    assert [spec for spec, _ in files.files] == [str(path), "random"]
    assert files.files[0][1] == ((str(path), hashlib.sha256(b"weights one").hexdigest()),)
    assert files.files[1][1] == ()  # random loads no file
    files()  # the same bytes: passes
    path.write_bytes(b"weights two")
    with pytest.raises(AgentFileError, match=r"policy.safetensors on node .* has SHA-256"):
        files()
    path.unlink()
    with pytest.raises(AgentFileError, match=r"policy.safetensors is not on node"):
        files()


# ------------------------------------------------------------------------------------- Ray


@pytest.fixture(scope="module")
def cluster():
    """A Ray cluster of three nodes of one CPU each on this machine, this process its driver."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray = pytest.importorskip("ray", reason="Ray is not installed")
    from ray.cluster_utils import Cluster

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the tasks of this file
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    workers = [c.add_node(num_cpus=1) for _ in range(2)]
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield c, workers
    finally:
        ray.shutdown()
        c.shutdown()


def test_on_ray_the_same_results_and_the_callers_ray_kept(cluster):
    import ray

    tasks = [(1, i) for i in range(12)]
    three, ex = collect(Fanout(3, "auto"), draw, tasks)
    one, _ = collect(Fanout(1, "auto"), draw, tasks)
    assert three == one == EXPECTED
    assert ex.duplicates == ex.resubmitted == 0
    assert ray.is_initialized()  # the executor joined the caller's Ray: not its to shut down


def test_a_match_on_ray_equals_the_match_played_here(cluster):
    assert match_games(Fanout(3, "auto")) == play_games(MATCH)


def test_a_worker_killed_on_ray_is_retried(cluster, tmp_path):
    tasks = [(str(tmp_path), 4, i) for i in range(8)]
    results, ex = collect(Fanout(3, "auto"), die_once, tasks)
    assert results == [draw(7, i) for i in range(8)]
    assert (tmp_path / "killed-4").exists()  # its worker was killed, and Ray ran it again
    assert ex.resubmitted == ex.duplicates == 0


def test_a_task_error_on_ray_is_raised_as_it_is(cluster):
    with Fanout(2, "auto").open() as ex, pytest.raises(KeyError, match="no such thing as 1"):
        list(ex.run(fail, [(1,)]))


def test_agent_files_that_differ_on_a_node_are_named(cluster, tmp_path):
    path = tmp_path / "policy.safetensors"
    path.write_bytes(b"weights one")
    files = AgentFiles.of([str(path)], STANDARD)
    results, _ = collect(Fanout(2, "auto"), draw, [(1, 0), (1, 1)], prepare=files)
    assert results == EXPECTED[:2]
    path.write_bytes(b"weights two")  # the file changed after the run started
    again = AgentFiles.of([str(path)], STANDARD)
    path.write_bytes(b"weights three")
    with Fanout(2, "auto").open() as ex, pytest.raises(AgentFileError) as err:
        list(ex.run(draw, [(1, 0)], prepare=again))
    assert f"agent {str(path)!r}: {path} on node " in str(err.value)
    assert "Ray node" in str(err.value)


def test_a_node_that_leaves_loses_no_task_and_counts_none_twice(cluster, tmp_path):
    """Last of the module: it takes a node away."""
    c, workers = cluster
    tasks = [(str(tmp_path), i) for i in range(9)]
    got: dict[int, tuple[float, str]] = {}
    removed = None
    worker_ids = {n.node_id for n in workers}

    def started(node_ids: set[str]) -> set[int]:
        """The tasks that started on those nodes and gave no result yet."""
        names = [p.name.split("-") for p in tmp_path.iterdir()]
        return {int(i) for _, i, node, _ in names if node in node_ids and int(i) not in got}

    with Fanout(3, "auto").open() as ex:
        for i, result in ex.run(node_draw, tasks):
            assert i not in got
            got[i] = result
            if removed is None:  # after the first result, a worker node leaves with task 1 or 2
                deadline = time.monotonic() + 30
                while not started(worker_ids) and time.monotonic() < deadline:
                    time.sleep(0.02)
                victim = next(n for n in workers if started({n.node_id}))
                removed = victim.node_id
                c.remove_node(victim)
    assert sorted(got) == list(range(9))
    assert [got[i][0] for i in range(9)] == [draw(3, i) for i in range(9)]
    assert ex.duplicates == 0
    lost = {
        int(p.name.split("-")[1]) for p in tmp_path.iterdir() if p.name.split("-")[2] == removed
    }
    lost -= {i for i in got if got[i][1] == removed}  # tasks it started but never finished
    assert lost  # some task was running there when it left...
    assert all(got[i][1] != removed for i in lost)  # ...and finished on another node
