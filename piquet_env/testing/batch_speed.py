"""``piquet bench vector``: agent-steps per second of the batched engine, beside the bare engine
and ``env()`` measured in the same run, and the memory of 100,000 parallel games.

Each measured step is what a learner does: the batch computes every game's observation and
legal mask (:meth:`~piquet_env.vector.BatchGame.step` with observations on), the policy is
handed both and picks one uniformly random legal action per game from the mask
(:func:`~piquet_env.vector.sample_legal`), and the batch applies them. One agent-step is one
decision in one game. "threads" runs that many batches of the given size in as many Python
threads at once (numpy releases the interpreter lock inside its array operations); one thread is
pinned to one core, as ``piquet bench env`` is.

``--processes 2`` adds rows with one batch per process (no shared lock), the way to use both cores
from numpy.

Command: ``python -m piquet_env.testing.batch_speed [--rules classic] [--variant normand]
[--sizes 256,1024,4096,16384] [--threads 1,2] [--processes 2] [--seconds 3]
[--memory-games 100000]``.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from piquet_env.piquet_v0 import env
from piquet_env.rules import Rules, make_rules
from piquet_env.testing.env_speed import engine_play, random_play
from piquet_env.vector.batch_policy import RandomPolicy
from piquet_env.vector.engine import BatchGame

SIZES = (256, 1024, 4096, 16384)
THREADS = (1, 2)


def _pin(cores: int) -> set[int] | None:
    """Restrict this process to ``cores`` CPUs (where the OS allows); return the old set."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(sorted(before)[:cores]))
    return before


def _unpin(before: set[int] | None) -> None:
    if before is not None:
        os.sched_setaffinity(0, before)


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def vector_play(rules: Rules, n: int, seconds: float, seed: int, threads: int = 1) -> dict:
    """Random legal play in ``threads`` batches of ``n`` games for about ``seconds``, reading
    observation and mask every step: agent-steps per second over all threads."""
    batches = [BatchGame(rules, n=n, seed=seed + t, record=False) for t in range(threads)]
    policies = [RandomPolicy(seed + t) for t in range(threads)]
    outs = [b.reset() for b in batches]
    for t, b in enumerate(batches):  # warm up: games in every phase
        for _ in range(40):
            o = outs[t]
            outs[t] = b.step(policies[t](o.obs, o.mask))
    counts = [0] * threads
    barrier = threading.Barrier(threads + 1)
    stop = threading.Event()

    def run(t: int) -> None:
        b, policy, o = batches[t], policies[t], outs[t]
        barrier.wait()
        k = 0
        while not stop.is_set():
            o = b.step(policy(o.obs, o.mask))
            k += 1
        counts[t] = k * n

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    start = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    return {
        "steps_per_s": sum(counts) / elapsed,
        "steps": sum(counts),
        "seconds": elapsed,
        "batch": n,
        "threads": threads,
    }


def _process_worker(
    rules: Rules, n: int, seconds: float, seed: int, barrier: Any, results: Any
) -> None:
    """One process of :func:`vector_processes`: warm up, wait for the others, measure."""
    b = BatchGame(rules, n=n, seed=seed, record=False)
    policy = RandomPolicy(seed)
    o = b.reset()
    for _ in range(40):
        o = b.step(policy(o.obs, o.mask))
    barrier.wait()
    k = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        o = b.step(policy(o.obs, o.mask))
        k += 1
    results.put((k * n, time.perf_counter() - start))


def vector_processes(rules: Rules, n: int, seconds: float, seed: int, processes: int) -> dict:
    """As :func:`vector_play`, with one batch of ``n`` games in each of ``processes`` processes
    (no shared interpreter lock): agent-steps per second summed over the processes."""
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    procs = [
        ctx.Process(target=_process_worker, args=(rules, n, seconds, seed + t, barrier, results))
        for t in range(processes)
    ]
    for proc in procs:
        proc.start()
    got = [results.get() for _ in procs]
    for proc in procs:
        proc.join()
    rate = sum(steps / secs for steps, secs in got)
    return {
        "steps_per_s": rate,
        "steps": sum(s for s, _ in got),
        "seconds": max(t for _, t in got),
        "batch": n,
        "threads": f"{processes} proc",
    }


def batch_memory(rules: Rules, n: int, seed: int) -> dict:
    """RSS added by a batch of ``n`` games reset and stepped 50 times (observations, masks and
    the temporaries of a step included), and the bytes of its arrays."""
    gc.collect()
    before = _rss_bytes()
    b = BatchGame(rules, n=n, seed=seed)
    o = b.reset()
    policy = RandomPolicy(seed)
    for _ in range(50):
        o = b.step(policy(o.obs, o.mask))
    gc.collect()
    added = _rss_bytes() - before
    return {
        "games": n,
        "rss_added_mib": added / 2**20,
        "arrays_mib": b.nbytes / 2**20,
        "state_mib": b.state.nbytes / 2**20,
    }


def bench_vector(
    rules: str | Rules = "standard",
    variants: Sequence[str] = (),
    sizes: Sequence[int] = SIZES,
    threads: Sequence[int] = THREADS,
    seconds: float = 3.0,
    seed: int = 0,
    memory_games: int = 100_000,
    processes: Sequence[int] = (),
) -> dict:
    """Measure the batch at each size and thread count (and process count, if any), the bare
    engine and ``env()`` on one core, and the memory of ``memory_games`` parallel games (0 to
    skip). Returns a dict for :func:`print_vector_report`."""
    r = make_rules(rules, variants)
    rows = []
    for t in threads:
        for n in sizes:
            old = _pin(t)
            try:
                rows.append(vector_play(r, n, seconds, seed, t))
            finally:
                _unpin(old)
    for count in processes:
        for n in sizes:
            rows.append(vector_processes(r, n, seconds, seed, count))
    old = _pin(1)
    try:
        engine = engine_play(r, seconds, seed)
        env_res = random_play(env, {"rules": r}, seconds, seed)
    finally:
        _unpin(old)
    memory = batch_memory(r, memory_games, seed) if memory_games else None
    return {
        "rules": r.name,
        "rows": rows,
        "engine": engine,
        "env": env_res,
        "memory": memory,
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    }


def print_vector_report(res: dict) -> None:
    """Print :func:`bench_vector`'s numbers as a table."""
    env_rate, engine_rate = res["env"]["steps_per_s"], res["engine"]["steps_per_s"]
    print(f"vector ({res['rules']}), random legal play, observation and mask read every step:")
    print(f"  {'batch':>6} {'threads':>8} {'agent-steps/s':>14} {'x env()':>8} {'x engine':>9}")
    for row in res["rows"]:
        rate = row["steps_per_s"]
        print(
            f"  {row['batch']:>6} {row['threads']!s:>8} {rate:>14,.0f} "
            f"{rate / env_rate:>8.1f} {rate / engine_rate:>9.1f}"
        )
    best = max(res["rows"], key=lambda x: x["steps_per_s"])
    print(
        f"  best: {best['steps_per_s']:,.0f} agent-steps/s (batch {best['batch']}, "
        f"threads {best['threads']})"
    )
    print(f"  bare engine, same play, one core: {engine_rate:,.0f} decisions/s")
    print(f"  env(), same play, one core:       {env_rate:,.0f} agent-steps/s")
    mem = res["memory"]
    if mem:
        print(
            f"  memory: {mem['games']:,} parallel games add {mem['rss_added_mib']:,.0f} MiB RSS "
            f"(arrays {mem['arrays_mib']:,.0f} MiB, of which state {mem['state_mib']:,.0f} MiB)"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Command line of ``piquet bench vector`` (or ``python -m piquet_env.testing.batch_speed``)."""
    ap = argparse.ArgumentParser(prog="piquet bench vector", description=__doc__.split("\n")[0])
    ap.add_argument("--rules", default="standard", help="standard, classic, or e.g. classic+orbis")
    ap.add_argument("--variant", action="append", default=[], help="orbis, saison or normand")
    ap.add_argument(
        "--sizes", default=",".join(map(str, SIZES)), help="batch sizes, comma-separated"
    )
    ap.add_argument("--threads", default=",".join(map(str, THREADS)), help="thread counts")
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    ap.add_argument(
        "--processes",
        default="",
        help="also run one batch per process, e.g. 2 (comma-separated counts)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--memory-games",
        type=int,
        default=100_000,
        help="games held for the memory measurement (0 skips it)",
    )
    args = ap.parse_args(argv)
    res = bench_vector(
        args.rules,
        args.variant,
        [int(x) for x in args.sizes.split(",")],
        [int(x) for x in args.threads.split(",")],
        args.seconds,
        args.seed,
        args.memory_games,
        [int(x) for x in args.processes.split(",") if x],
    )
    print_vector_report(res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
