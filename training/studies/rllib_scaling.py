"""Env steps per second of the RLlib exploiter with 1 and 2 env runners on Ray local and with 2
on a simulated cluster of three one-CPU nodes, each beside the built-in collector in the same
process; where an iteration's time goes (RLlib's own timers: sampling, the learner's update,
the weights' sync); and the projection to 64 env runners.

The exploiter is the CLI's (:func:`~piquet_training.rllib.exploit.exploit_algo_config` on the
batched engine): against ``--target`` on the standard rules, of its widths (the shipped
``baseline``'s: 512 x 512), the built-in exploiter's update
(:func:`~piquet_training.rllib.exploit.update_decisions`, 16 minibatches), its asymmetric
critic, one local learner with one torch thread. An env step is a move applied, the target's
included, as both trainers count them.

``python -m piquet_training.studies.rllib_scaling --iterations 6``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from piquet_env.rules import make_rules

MODES = {
    "Ray local, 1 env runner": (1, 0),
    "Ray local, 2 env runners": (2, 0),
    "3 simulated one-CPU nodes, 2 env runners": (2, 3),
}
"""Each measured setting: its env runners and its simulated nodes (0: Ray local, 2 CPUs)."""


def exploit_settings(target: str, runners: int) -> Any:
    """The RLlib exploiter's settings against ``target`` with ``runners`` env runners, as
    ``piquet exploit TARGET --backend rllib`` makes them (its plan, then its RLlib settings: the
    start's widths, the built-in's update and settings), one torch thread."""
    from piquet_training.exploit.plan import plan_exploit
    from piquet_training.rllib.exploit import exploit_rllib_config

    with tempfile.TemporaryDirectory() as out:
        plan = plan_exploit(
            target, make_rules("standard"), Path(out), steps=1, reference="none", echo=False
        )
        return exploit_rllib_config(plan, [f"num_env_runners={runners}", "torch_threads=1"])


def exploit_config(target: str, runners: int) -> Any:
    """The RLlib exploiter's ``PPOConfig`` of :func:`exploit_settings`."""
    from piquet_training.rllib.exploit import exploit_algo_config

    return exploit_algo_config(exploit_settings(target, runners), target)


def measure(target: str, runners: int, iterations: int) -> dict[str, float]:
    """Median env steps/s, sampling, learner and sync seconds of ``iterations`` iterations
    after one warm-up, on the Ray instance this process has joined."""
    from ray.rllib.utils.metrics import (
        ENV_RUNNER_SAMPLING_TIMER,
        LEARNER_UPDATE_TIMER,
        SYNCH_WORKER_WEIGHTS_TIMER,
        TIMERS,
    )

    from piquet_training.rllib.vector_env import moves_sampled

    algorithm = exploit_config(target, runners).build_algo()
    try:
        before = moves_sampled(algorithm.train())
        rows = []
        for _ in range(iterations):
            t0 = time.perf_counter()
            result = algorithm.train()
            seconds = time.perf_counter() - t0
            now = moves_sampled(result)
            timers = result.get(TIMERS, {})
            rows.append(
                {
                    "rate": (now - before) / seconds,
                    "seconds": seconds,
                    "sample": float(timers.get(ENV_RUNNER_SAMPLING_TIMER, float("nan"))),
                    "learn": float(timers.get(LEARNER_UPDATE_TIMER, float("nan"))),
                    "sync": float(timers.get(SYNCH_WORKER_WEIGHTS_TIMER, float("nan"))),
                    "steps": now - before,
                }
            )
            before = now
    finally:
        algorithm.stop()
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def project(one: dict[str, float], two: dict[str, float], runners: int) -> dict[str, float]:
    """Env steps/s with ``runners`` env runners, from the 1- and 2-runner figures: an iteration
    is its sampling, shared among the runners, plus what fanning out cost beyond that with 2
    (``two``'s sampling less half of ``one``'s, at least 0), plus the learner's update and the
    sync, which do not shrink (one learner).

    >>> r = project({"sample": 4.0, "learn": 2.0, "sync": 0.1, "steps": 1000.0},
    ...             {"sample": 2.5, "learn": 2.0, "sync": 0.1, "steps": 1000.0}, 4)
    >>> round(r["seconds"], 2), round(r["rate"])
    (3.6, 278)
    """
    fixed = max(0.0, two["sample"] - one["sample"] / 2)
    seconds = one["sample"] / runners + fixed + one["learn"] + one["sync"]
    return {
        "seconds": seconds,
        "rate": one["steps"] / seconds,
        "learner_bound": one["steps"] / (one["learn"] + one["sync"]),
    }


def _ray(nodes: int) -> Any:
    """Join a local Ray instance of 2 CPUs, or a simulated cluster of ``nodes`` one-CPU nodes
    (returned, to be shut down)."""
    import ray

    if not nodes:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        return None
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    return cluster


def main(argv: Sequence[str] | None = None) -> int:
    """Print each setting's figures, the built-in collector's beside it, and the projection."""
    from piquet_training.studies.rllib_exploit_speed import builtin

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", default="baseline")
    p.add_argument("--iterations", type=int, default=6, help="measured, after one warm-up")
    p.add_argument("--seconds", type=float, default=5.0, help="built-in collector's timing")
    p.add_argument("--runners", type=int, default=64, help="the projection's env runners")
    args = p.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    torch.set_num_threads(1)
    figures = {}
    for label, (runners, nodes) in MODES.items():
        cluster = _ray(nodes)
        try:
            got = figures[label] = measure(args.target, runners, args.iterations)
        finally:
            ray.shutdown()
            if cluster is not None:
                cluster.shutdown()
        hidden = exploit_settings(args.target, 0).hidden
        here = builtin(args.target, "standard", 512, args.seconds, hidden)
        print(
            f"{label}: {got['rate']:,.0f} env steps/s ({got['steps']:,.0f} an iteration in "
            f"{got['seconds']:.2f} s: sampling {got['sample']:.2f} s, the learner's update "
            f"{got['learn']:.2f} s, sync {got['sync']:.2f} s); the built-in collector beside it "
            f"(512 games): {here:,.0f} env steps/s",
            flush=True,
        )
    one, two = figures["Ray local, 1 env runner"], figures["Ray local, 2 env runners"]
    out = project(one, two, args.runners)
    print(
        f"projected, not measured: {args.runners} env runners, one CPU learner: "
        f"{out['rate']:,.0f} env steps/s (an iteration {out['seconds']:.2f} s); the learner "
        f"alone bounds it at {out['learner_bound']:,.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
