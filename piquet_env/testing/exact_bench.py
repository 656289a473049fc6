"""The exact solver on a whole small game: the tree's counts, how long each stage takes, and
CFR+'s speed, beside the bare engine's speed measured in the same run (the machine's drift).

It builds the tree of one deal of ``--rules`` (default ``mini``), prints its counts (deals,
histories, information states per player, decisions per deal), times the uniform policy's
exact NashConv (one expected value and two best responses) and ``--iterations`` of CFR+, and
plays the bare engine for a second with random moves as the reference. Agents (the heuristic,
policies) are measured by ``piquet exploit TARGET --exact``, which this layer cannot import.

Command: ``python -m piquet_env.testing.exact_bench [--rules mini] [--iterations 10] [--json F]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections.abc import Sequence
from typing import Any

from piquet_env.exact import CFRPlus, build_tree, exploitability, uniform_policy
from piquet_env.rules import make_rules
from piquet_env.testing.env_speed import engine_play


def bench_exact(rules_name: str = "mini", iterations: int = 10) -> dict[str, Any]:
    """Build the tree, time the exact figures and CFR+; return the measurements."""
    rules = make_rules(rules_name)
    reference = engine_play(rules, 1.0, seed=0)
    t0 = time.perf_counter()
    tree = build_tree(rules)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    uniform = exploitability(tree, uniform_policy(tree))
    exact_s = time.perf_counter() - t0
    solver = CFRPlus(tree).run(iterations)
    figures = exploitability(tree, solver.average)
    end = tree.value[tree.player < 0]
    return {
        "rules": rules.name,
        "counts": tree.counts(),
        "points_range": float(end.max() - end.min()),
        "build_seconds": round(built, 2),
        "uniform": uniform.to_dict(),
        "uniform_exact_seconds": round(exact_s, 2),
        "cfr_iterations": iterations,
        "cfr_seconds_per_iteration": round(solver.seconds / max(iterations, 1), 3),
        "cfr_nash_conv": figures.nash_conv,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "engine_steps_per_s": round(reference["steps_per_s"]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m piquet_env.testing.exact_bench``: print the measurements."""
    p = argparse.ArgumentParser(
        prog="python -m piquet_env.testing.exact_bench", description=__doc__
    )
    p.add_argument("--rules", default="mini", help="a rule set small enough (default mini)")
    p.add_argument("--iterations", type=int, default=10, help="CFR+ iterations to time")
    p.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    args = p.parse_args(argv)
    res = bench_exact(args.rules, args.iterations)
    c = res["counts"]
    print(f"exact solver, {res['rules']} (one deal):")
    print(
        f"  {c['deals']:,} deals, {c['histories']:,} histories ({c['terminal_histories']:,} "
        f"terminal), {c['infosets_elder']:,} information states of elder and "
        f"{c['infosets_younger']:,} of younger, at most {c['max_decisions_per_deal']} decisions "
        f"per deal; the points range {res['points_range']:g}"
    )
    print(f"  tree built in {res['build_seconds']:.1f} s (peak {res['peak_rss_mib']:,} MiB)")
    u = res["uniform"]
    print(
        f"  uniform policy: NashConv {u['nash_conv']:.4f} (value for elder {u['value_elder']:+.4f})"
        f", exact in {res['uniform_exact_seconds']:.2f} s"
    )
    print(
        f"  CFR+: {res['cfr_seconds_per_iteration']:.2f} s per iteration; NashConv "
        f"{res['cfr_nash_conv']:.4f} after {res['cfr_iterations']}"
    )
    print(f"  reference: the bare engine, {res['engine_steps_per_s']:,} random steps/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
