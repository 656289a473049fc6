"""``piquet bench env``: throughput and memory of the PettingZoo environment on one core.

:func:`bench_env` plays uniformly random legal actions through :func:`piquet_env.piquet_v0.env`
(the wrapped environment, observation and action mask computed at every step, as a learner would
read them) and counts agent-steps per second; for comparison it also times the unwrapped
``raw_env`` and the same env with PettingZoo's wrapper classes exactly as shipped. It then measures
the resident memory (RSS) added by 1,000 live environments parked mid-game.

It also runs PettingZoo's own ``pettingzoo.test.performance_benchmark`` on ``env()`` (five
seconds, its loop: ``flatnonzero(mask).tolist()`` and ``random.choice`` per step, dead steps
counted), the figure PettingZoo environments are usually quoted with.

The machine's speed drifts (shared virtual cores): the report gives the mean over all rounds and
the slowest and fastest round, so a noisy run shows as one.

Command: ``piquet bench env [--rules classic] [--variant normand] [--seconds 5] [--seed 0]
[--no-pettingzoo]``.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import random
import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from piquet_env.game import Game
from piquet_env.piquet_v0 import env, plain_env, raw_env
from piquet_env.rules import Rules, make_rules

N_LIVE = 1000
"""Environments kept alive for the memory measurement."""


def _pin_one_core() -> Callable[[], None]:
    """Pin this process to one CPU (where the OS allows it); return a function that undoes it."""
    if not hasattr(os, "sched_getaffinity"):
        return lambda: None
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})
    return lambda: os.sched_setaffinity(0, before)


def _rss_bytes() -> int:
    """Current resident set size of this process (Linux ``/proc``; else the peak from
    ``resource``)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def random_play(make: Callable[..., Any], kwargs: dict, seconds: float, seed: int) -> dict:
    """Random legal play through ``make(**kwargs)`` for about ``seconds``: agent-steps per second
    (each step reads ``last()``, i.e. the observation and mask, then calls ``step``)."""
    rng = random.Random(seed)
    e = make(**kwargs)
    e.reset(seed=seed)
    steps = episodes = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        e.reset()
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            e.step(int(legal[int(rng.random() * len(legal))]))
            steps += 1
        episodes += 1
    elapsed = time.perf_counter() - start
    return {
        "steps_per_s": steps / elapsed,
        "steps": steps,
        "episodes": episodes,
        "seconds": elapsed,
    }


def live_memory(kwargs: dict, n: int, seed: int) -> dict:
    """RSS added by ``n`` environments reset and played a random number of moves into a partie
    (after one warm-up instance, so shared tables are not counted)."""
    rng = random.Random(seed)
    warm = env(**kwargs)
    warm.reset(seed=seed)
    gc.collect()
    before = _rss_bytes()
    live = []
    for i in range(n):
        e = env(**kwargs)
        e.reset(seed=seed + i)
        for _ in range(rng.randrange(30, 150)):
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                break
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.randrange(len(legal))]))
        live.append(e)
    gc.collect()
    added = _rss_bytes() - before
    assert len(live) == n
    return {"n_envs": n, "rss_added_mib": added / 2**20, "per_env_kib": added / n / 1024}


def pettingzoo_benchmark(kwargs: dict) -> float:
    """Turns per second reported by PettingZoo's ``performance_benchmark`` on ``env(**kwargs)``
    (it runs for five seconds and prints; the printed figure is parsed)."""
    from pettingzoo.test import performance_benchmark

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        performance_benchmark(env(**kwargs))
    match = re.search(r"([0-9.]+) turns per second", out.getvalue())
    if match is None:
        raise RuntimeError(f"performance_benchmark printed no turns/s: {out.getvalue()!r}")
    return float(match.group(1))


def bench_engine(
    rules: str | Rules = "standard",
    variants: tuple[str, ...] = (),
    seconds: float = 5.0,
    seed: int = 0,
    record: bool = True,
) -> dict[str, float]:
    """Random legal parties through the bare engine for about ``seconds`` (``piquet bench
    engine``): decisions/s, deals/s and the counts. ``record=False`` skips the event log, as
    search clones do."""
    r = make_rules(rules, variants)
    rng = random.Random(seed)
    decisions = deals = parties = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        g = Game(r, seed=rng.getrandbits(32), record=record)
        while not g.is_over:
            legal = g.legal_actions()
            g.apply(legal[int(rng.random() * len(legal))])
            decisions += 1
        deals += len(g.deal_scores)
        parties += 1
    elapsed = time.perf_counter() - start
    return {
        "decisions_per_s": decisions / elapsed,
        "deals_per_s": deals / elapsed,
        "decisions": decisions,
        "deals": deals,
        "parties": parties,
        "seconds": elapsed,
    }


def engine_play(rules: Rules, seconds: float, seed: int) -> dict:
    """The same random play through the bare engine (no event log), for reference."""
    res = bench_engine(rules, (), seconds, seed, record=False)
    return {
        "steps_per_s": res["decisions_per_s"],
        "steps": res["decisions"],
        "episodes": res["parties"],
        "seconds": res["seconds"],
    }


def bench_env(
    rules: str = "standard",
    variants: tuple[str, ...] = (),
    seconds: float = 5.0,
    seed: int = 0,
    n_live: int = N_LIVE,
    pettingzoo: bool = True,
) -> dict:
    """Throughput of ``env()`` (agent-steps/s), and for comparison of ``raw_env``, of the env
    with PettingZoo's plain wrapper classes and of the bare engine, on one core; then the memory
    of ``n_live`` (1,000) live envs. ``seconds`` is the time given to ``env()``; the measurements
    are interleaved in ten rounds so that a busy machine slows them alike. Returns a dict for
    :func:`print_env_report`. ``pettingzoo`` adds PettingZoo's own performance benchmark."""
    r = make_rules(rules, variants)
    kwargs = {"rules": r}
    runs: dict[str, Callable[[float, int], dict]] = {
        "env": lambda t, s: random_play(env, kwargs, t, s),
        "raw_env": lambda t, s: random_play(raw_env, kwargs, t, s),
        "plain_wrappers": lambda t, s: random_play(plain_env, kwargs, t, s),
        "engine": lambda t, s: engine_play(r, t, s),
    }
    share = {"env": 1.0, "raw_env": 0.5, "plain_wrappers": 0.5, "engine": 0.5}
    totals = {k: {"steps": 0, "episodes": 0, "seconds": 0.0, "rounds": []} for k in runs}
    rounds = 10
    unpin = _pin_one_core()
    try:
        for i in range(rounds):
            for name, run in runs.items():
                res = run(seconds * share[name] / rounds, seed + i)
                for key in ("steps", "episodes", "seconds"):
                    totals[name][key] += res[key]
                totals[name]["rounds"].append(res["steps_per_s"])
        memory = live_memory(kwargs, n_live, seed)
        pz = pettingzoo_benchmark(kwargs) if pettingzoo else None
    finally:
        unpin()
    for t in totals.values():
        t["steps_per_s"] = t["steps"] / t["seconds"]
    return {"rules": r.name, **totals, "memory": memory, "pettingzoo_turns_per_s": pz}


def print_env_report(result: dict) -> None:
    """Print :func:`bench_env`'s numbers."""
    main, raw, plain, mem = (
        result["env"],
        result["raw_env"],
        result["plain_wrappers"],
        result["memory"],
    )
    engine = result["engine"]
    print(f"env ({result['rules']}), random legal play on one core, observation and mask included:")
    print(
        f"  env():              {main['steps_per_s']:>9,.0f} agent-steps/s "
        f"({main['steps']:,} steps, {main['episodes']:,} parties in {main['seconds']:.1f} s; "
        f"rounds {min(main['rounds']):,.0f} to {max(main['rounds']):,.0f})"
    )
    print(f"  raw_env (no wrap):  {raw['steps_per_s']:>9,.0f} agent-steps/s")
    print(
        f"  env() with PettingZoo's plain wrapper classes: {plain['steps_per_s']:,.0f} "
        f"agent-steps/s"
    )
    print(
        f"  bare engine, same play: {engine['steps_per_s']:,.0f} decisions/s "
        f"(env() runs at {main['steps_per_s'] / engine['steps_per_s']:.0%} of it)"
    )
    if result.get("pettingzoo_turns_per_s") is not None:
        print(
            f"  PettingZoo's performance_benchmark(env()): "
            f"{result['pettingzoo_turns_per_s']:,.0f} turns/s (its own, heavier loop)"
        )
    print(
        f"  memory: {mem['n_envs']:,} live envs mid-game add {mem['rss_added_mib']:.1f} MiB RSS "
        f"({mem['per_env_kib']:.1f} KiB each)"
    )
