"""How long a duplicate match takes here, in worker processes and on a local Ray instance: the
executor's fixed costs (starting Ray, the first result, closing) and its cost per pair
(docs/results/cluster.md).

``python -m piquet_training.studies.fanout_speed --pairs 2000 --workers 1 2``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from piquet_env.rules import make_rules
from piquet_training.evaluation.duplicate.checks import chunk_checker
from piquet_training.evaluation.duplicate.match import DuplicateMatch
from piquet_training.evaluation.duplicate.play import _play_chunk_measured, match_chunks
from piquet_training.evaluation.executor import Fanout


def _measure(fanout: Fanout, match: Any) -> dict[str, float]:
    """Seconds to open ``fanout`` and to play ``match`` on it in ``play_games``'s chunks."""
    chunks = match_chunks(match, fanout.workers)
    t0 = time.perf_counter()
    with fanout.open() as ex:
        t1 = time.perf_counter()
        first = None
        games = []
        tasks = [(c, None, None) for c in chunks]
        for _, (chunk, _mem) in ex.run(
            _play_chunk_measured, tasks, shared=(match,), check=chunk_checker(chunks)
        ):
            first = first or time.perf_counter()
            games.extend(chunk)
        t2 = time.perf_counter()
    t3 = time.perf_counter()
    games.sort(key=lambda g: (g.pair, g.game))
    return {
        "start_s": t1 - t0,
        "first_s": (first or t2) - t1,
        "play_s": t2 - t1,
        "close_s": t3 - t2,
        "points": sum(g.points for g in games),
    }


def _timed_chunk(match: DuplicateMatch, pairs: list[int]) -> tuple[str, float, list[Any]]:
    """One chunk played where it lands: the Ray node's id, the seconds it took, its games."""
    import ray

    t0 = time.perf_counter()
    games, _ = _play_chunk_measured(match, pairs, None, None)
    return ray.get_runtime_context().get_node_id(), time.perf_counter() - t0, games


def simulated_cluster(match: DuplicateMatch, nodes: int) -> int:
    """Play ``match`` on a cluster of ``nodes`` one-CPU nodes started on this machine
    (``ray.cluster_utils.Cluster``) and here; print each node's tasks and seconds, and whether the
    games are the same."""
    import ray
    from ray.cluster_utils import Cluster

    here = _play_chunk_measured(match, list(match.numbers), None, None)[0]
    head = {"num_cpus": 1, "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        chunks = match_chunks(match, nodes)
        t0 = time.perf_counter()
        with Fanout(nodes, "auto").open() as ex:
            out = dict(ex.run(_timed_chunk, [(c,) for c in chunks], shared=(match,)))
        wall = time.perf_counter() - t0
    finally:
        ray.shutdown()
        cluster.shutdown()
    games = sorted((g for i in sorted(out) for g in out[i][2]), key=lambda g: (g.pair, g.game))
    per_node: dict[str, list[float]] = {}
    for node, seconds, _ in out.values():
        per_node.setdefault(node, []).append(seconds)
    print(f"a simulated cluster of {nodes} nodes, {len(chunks)} tasks of {len(chunks[0])} pairs:")
    for k, (node, times) in enumerate(sorted(per_node.items())):
        print(f"  node {k + 1} ({node[:8]}): {len(times)} tasks, {sum(times):.1f} s of play")
    same = games == sorted(here, key=lambda g: (g.pair, g.game))
    print(f"  wall {wall:.1f} s; the same games as played here: {same}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Print the time of a match on the process pool and on a local Ray instance."""
    parser = argparse.ArgumentParser(
        prog="python -m piquet_training.studies.fanout_speed",
        description="Time a duplicate match on local processes and on a local Ray instance.",
    )
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--agents", nargs=2, default=["baseline", "heuristic"])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--nodes", type=int, default=0, help="instead: a simulated cluster of this many nodes"
    )
    args = parser.parse_args(argv)
    rules = make_rules(args.rules)
    match = DuplicateMatch(args.agents[0], args.agents[1], rules, args.pairs, seed=args.seed)
    print(f"{args.agents[0]} vs {args.agents[1]}, {args.pairs} pairs, rules {args.rules}")
    if args.nodes:
        return simulated_cluster(match, args.nodes)
    print("where                          open s  first s   play s  close s  ms/pair  points")
    for workers in args.workers:
        for ray in (None, "local"):
            fanout = Fanout(workers, ray)
            m = _measure(fanout, match)
            print(
                f"{fanout.where:30} {m['start_s']:7.2f} {m['first_s']:8.2f} {m['play_s']:8.2f} "
                f"{m['close_s']:8.2f} {1000 * m['play_s'] / args.pairs:8.1f} {m['points']:7d}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
