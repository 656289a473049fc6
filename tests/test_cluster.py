"""The evaluation commands on a Ray cluster of three nodes on this machine (issue 48): a match, a
ladder, a benchmark row and an exploit's final evaluation give the local run's results pair for
pair, a worker killed in the middle of a match included, and ``piquet eval --ray auto`` joins the
cluster from the command line. The cluster starts once for the module; the executor's own tests
(a node that leaves, results that fail their checks) are in tests/test_executor.py."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from piquet_env.rules import STANDARD, make_rules
from piquet_training.evaluation.duplicate import evaluate
from piquet_training.evaluation.executor import Fanout
from tests.train_helpers import KILLER

ray = pytest.importorskip("ray", reason="Ray is not installed (the ray extra)")


@pytest.fixture(scope="module")
def cluster():
    """Three nodes of one CPU each, this process the driver (``Fanout(ray="auto")`` uses it)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    for _ in range(2):
        c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def _games(report) -> list:
    return [dataclasses.astuple(g) for g in report.games]


def test_a_match_on_the_cluster_is_the_local_match_pair_for_pair(cluster):
    here = evaluate("baseline", "heuristic", STANDARD, 12, seed=5)
    there = evaluate("baseline", "heuristic", STANDARD, 12, seed=5, workers=3, ray="auto")
    assert _games(there) == _games(here)
    assert there.to_dict() == here.to_dict()  # the same report, to the digit


def test_a_worker_killed_in_the_middle_of_a_match_is_retried_to_the_same_games(
    cluster, tmp_path: Path
):
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    spec = f"py:{killer}:make"
    there = evaluate(spec, "random", STANDARD, 9, seed=2, workers=3, ray="auto")
    assert killer.with_suffix(".killed").exists()  # a worker did die, mid-match
    here = evaluate(spec, "random", STANDARD, 9, seed=2)  # the marker is there: nobody dies
    assert _games(there) == _games(here)
    assert [g.pair for g in there.games] == [p for p in range(9) for _ in (0, 1)]


def test_a_ladder_on_the_cluster_is_the_local_ladder(cluster):
    from piquet_training.evaluation.ladder.run import run_ladder

    agents = ["random", "heuristic", "mcts:3"]
    here = run_ladder(agents, STANDARD, 4, seed=3)
    there = run_ladder(agents, STANDARD, 4, seed=3, workers=3, ray="auto")
    assert [_games(m) for m in there.matches] == [_games(m) for m in here.matches]
    assert there.table() == here.table()


def test_a_benchmark_row_on_the_cluster_is_the_local_row(cluster, tmp_path: Path):
    from piquet_training.benchmark.run import run_benchmark
    from tests.test_benchmark import tiny_protocol

    protocol = tiny_protocol()

    def row(where: str, **kwargs) -> dict:
        d = run_benchmark(
            "heuristic", tmp_path / where, protocol=protocol, echo=False, command="x", **kwargs
        )
        for m in d["matches"].values():
            m.pop("minutes", None)
        d["exploit"].pop("minutes", None)
        return {"matches": d["matches"], "exploit": d["exploit"]}

    assert row("ray", workers=3, ray="auto") == row("here")


def test_an_exploit_final_evaluation_on_the_cluster_is_the_local_one(cluster, tmp_path: Path):
    from piquet_agents.registry import spec_files
    from piquet_training.exploit.exploiter import TrainedExploiter, measure
    from piquet_training.exploit.plan import plan_exploit

    policy = Path(spec_files("baseline", STANDARD)[0])

    def pairs(where: str, fanout: Fanout) -> str:
        out = tmp_path / where
        plan = plan_exploit(
            "heuristic", STANDARD, out, steps=0, seed=7, reference="random", pairs=6,
            fanout=fanout, echo=False,
        )  # fmt: skip
        measure(plan, TrainedExploiter(policy, env_steps=0, seconds=0.0))
        return (out / "pairs.csv").read_text()

    assert pairs("ray", Fanout(3, "auto")) == pairs("here", Fanout())


def test_piquet_eval_joins_the_cluster_from_the_command_line(cluster, tmp_path: Path):
    """``RAY_ADDRESS`` names the cluster as ``ray start`` would have it; ``--ray auto`` joins it,
    and the report is the local one's."""
    env = dict(os.environ, RAY_ADDRESS=cluster.address, OMP_NUM_THREADS="1")

    def report(*flags: str) -> dict:
        out = tmp_path / f"r{len(flags)}.json"
        cmd = [sys.executable, "-m", "piquet_cli", "eval", "heuristic", "random"]
        cmd += ["--deals", "8", "--seed", "4", "--no-progress", "--json", str(out), *flags]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(out.read_text())

    assert report("--ray", "auto", "--workers", "3") == report()


def test_ray_output_stays_off_the_reports_stdout_when_a_worker_dies(cluster, tmp_path: Path):
    """Issue 57: the raylet's worker-death message, with colour codes, landed on ``piquet
    eval``'s standard output ahead of the report, and each join added three INFO lines. Now the
    report alone is on stdout (as a local run prints it); on stderr, the line naming what was
    joined and one line pointing to the file that holds Ray's messages."""
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    env = dict(os.environ, RAY_ADDRESS=cluster.address, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "piquet_cli", "eval", f"py:{killer}:make", "random"]
    cmd += ["--deals", "9", "--seed", "2", "--no-progress"]
    there = subprocess.run(
        [*cmd, "--ray", "auto", "--workers", "3"], capture_output=True, text=True, env=env,
        timeout=300,
    )  # fmt: skip
    assert there.returncode == 0, there.stderr[-2000:]
    assert killer.with_suffix(".killed").exists()  # a worker did die, mid-match
    here = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert there.stdout == here.stdout and "\x1b" not in there.stdout
    err = there.stderr.splitlines()
    assert err[0] == "joined the Ray cluster at " + cluster.address + ": 3 nodes, 3 CPUs"
    assert not [line for line in err if " INFO " in line]
    said = [line for line in err if line.startswith("Ray: ")]
    assert len(said) <= 1 and "\x1b" not in there.stderr
    if said:  # the raylet's report of the death reached the driver before the end
        log = Path(said[0].rsplit("Ray's messages: ", 1)[1].rstrip(")"))
        assert log.is_file() and log.read_text().strip()


def test_the_rules_of_a_match_reach_the_cluster(cluster):
    """Another rule set's match (the small ``mini``) on the cluster, as here."""
    rules = make_rules("mini")
    here = evaluate("heuristic", "random", rules, 6, seed=1)
    there = evaluate("heuristic", "random", rules, 6, seed=1, workers=2, ray="auto")
    assert _games(there) == _games(here)


def test_the_rllib_exploiters_env_runners_train_on_other_nodes(cluster):
    """``piquet exploit --backend rllib --ray ADDRESS``: the exploiter's env runners (each with
    the target inside its envs) are placed on the cluster's nodes, one CPU each here, so two
    runners take two nodes, and a training iteration samples on both: every move they report
    is counted."""
    pytest.importorskip("ray.rllib", reason="Ray RLlib is not installed (the rllib extra)")
    from piquet_training.rllib.algo import RLlibConfig
    from piquet_training.rllib.exploit import exploit_algo_config
    from piquet_training.rllib.vector_env import moves_sampled

    cfg = RLlibConfig(
        rules="mini[suits=2,ranks=2,hand_size=1]", num_env_runners=2, num_envs_per_env_runner=2,
        train_batch_size=100, minibatch_size=50, update_epochs=1, hidden=(16,),
    )  # fmt: skip
    algorithm = exploit_algo_config(cfg, "random").build_algo()
    try:
        nodes = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False
        )
        result = algorithm.train()
    finally:
        algorithm.stop()
    everywhere = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    assert len(nodes) == 2 and len(set(nodes)) == 2 and set(nodes) <= everywhere
    assert moves_sampled(result) >= 100  # the exploiter's decisions and the target's moves between


# ------------------------------------------------------------------- training on the cluster


def test_training_collected_on_the_cluster_is_the_run_collected_here(cluster, tmp_path: Path):
    """The built-in trainer's chunks on the three nodes (issue 54): the same ``train.csv``,
    evaluations and final weights as the run collected in this process, with a collector killed
    in the middle of an update (a training opponent that kills its own worker, once): Ray runs
    its chunk again from the chunk's seed."""
    from tests.test_train_fanout import assert_same_run, train_small

    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    settings = dict(opponents=f"py:{killer}:make@0.2", updates=2)
    there = train_small(tmp_path / "ray", workers=3, ray="auto", **settings)
    assert killer.with_suffix(".killed").exists()  # a collector did die, mid-update
    here = train_small(tmp_path / "here", **settings)
    assert_same_run(here, there)


SLEEPER = '''\
"""A heuristic agent that, at its first move in each process, leaves a marker naming its Ray node
(and process), then waits a moment there: the test takes that node away meanwhile."""
import os
import time
from pathlib import Path

import ray

from piquet_agents.heuristic import HeuristicAgent

MARKS = Path(__file__).with_suffix(".nodes")


class Sleeper(HeuristicAgent):
    marked = False

    def act(self, turn):
        if not Sleeper.marked:
            Sleeper.marked = True
            MARKS.mkdir(exist_ok=True)
            (MARKS / f"{ray.get_runtime_context().get_node_id()}-{os.getpid()}").touch()
            time.sleep(2)
        return super().act(turn)


def make(rules, seed):
    return Sleeper(seed, name="sleeper")
'''
"""An external agent that marks where it plays and lingers there at its first move (in this
process too, which is the head node's driver)."""


def test_a_node_that_leaves_in_the_middle_of_training_loses_and_doubles_nothing(
    cluster, tmp_path: Path
):
    """Last of the module: it takes a node away. A worker node leaves while one of its chunks is
    being collected (a training opponent lingers at its first move there): Ray collects the chunk
    again on a node that stays, and the run is the run collected here, update for update: no game
    lost, none counted twice (each chunk's game count is checked, the rows are the same)."""
    import threading
    import time

    from tests.test_train_fanout import assert_same_run, train_small

    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text(SLEEPER)
    marks = sleeper.with_suffix(".nodes")
    settings = dict(opponents=f"py:{sleeper}:make@0.5", updates=2)
    here = train_small(tmp_path / "here", **settings)
    workers = {n.node_id: n for n in cluster.list_all_nodes() if n is not cluster.head_node}
    removed: list[str] = []
    done = threading.Event()

    def take_a_node_away() -> None:
        while not done.is_set():
            for mark in marks.glob("*") if marks.exists() else []:
                node = mark.name.rsplit("-", 1)[0]
                if node in workers:
                    cluster.remove_node(workers[node])
                    removed.append(node)
                    return
            time.sleep(0.02)

    watcher = threading.Thread(target=take_a_node_away)
    watcher.start()
    try:
        there = train_small(tmp_path / "ray", workers=3, ray="auto", **settings)
    finally:
        done.set()
        watcher.join()
    assert removed  # a worker node left while its chunk was being collected
    assert removed[0] not in {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert_same_run(here, there)
