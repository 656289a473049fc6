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
from piquet_training.evaluation.duplicate.play import _play_chunk_measured
from piquet_training.evaluation.executor import Fanout


def _measure(fanout: Fanout, match: Any, size: int) -> dict[str, float]:
    """Seconds to open ``fanout`` and to play ``match`` on it in chunks of ``size`` pairs."""
    numbers = list(match.numbers)
    chunks = [numbers[k : k + size] for k in range(0, len(numbers), size)]
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
    args = parser.parse_args(argv)
    rules = make_rules(args.rules)
    match = DuplicateMatch(args.agents[0], args.agents[1], rules, args.pairs, seed=args.seed)
    print(f"{args.agents[0]} vs {args.agents[1]}, {args.pairs} pairs, rules {args.rules}")
    print("where                          open s  first s   play s  close s  ms/pair  points")
    for workers in args.workers:
        size = max(1, min(10, args.pairs // (workers * 4)))  # play_games's chunks
        for ray in (None, "local"):
            fanout = Fanout(workers, ray)
            m = _measure(fanout, match, size)
            print(
                f"{fanout.where:30} {m['start_s']:7.2f} {m['first_s']:8.2f} {m['play_s']:8.2f} "
                f"{m['close_s']:8.2f} {1000 * m['play_s'] / args.pairs:8.1f} {m['points']:7d}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
