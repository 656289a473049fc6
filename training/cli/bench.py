"""``piquet bench engine|env``: speed on one core, printed (the measurements live in
:mod:`piquet_env.benchmark`).

``engine`` plays random legal parties through the pure engine and prints decisions/s and deals/s;
``env`` plays through the PettingZoo env and prints agent-steps/s and the memory of 1,000 envs.
"""

from __future__ import annotations

import argparse

from piquet_env.benchmark import bench_engine, bench_env, print_env_report


def _run(args: argparse.Namespace) -> int:
    if args.target == "engine":
        res = bench_engine(
            args.rules, tuple(args.variant), args.seconds, args.seed, record=not args.no_log
        )
        print(
            f"engine ({args.rules}{''.join('+' + v for v in args.variant)}, "
            f"{'no log' if args.no_log else 'event log on'}): "
            f"{res['decisions_per_s']:,.0f} decisions/s, {res['deals_per_s']:,.0f} deals/s "
            f"({res['decisions']:,} decisions, {res['parties']:,} parties "
            f"in {res['seconds']:.1f} s)"
        )
        return 0
    print_env_report(
        bench_env(
            args.rules,
            tuple(args.variant),
            args.seconds,
            args.seed,
            pettingzoo=not args.no_pettingzoo,
        )
    )
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet bench``."""
    p = sub.add_parser("bench", help="measure engine or environment speed on one core")
    p.add_argument("target", choices=["engine", "env"], help="what to measure")
    p.add_argument("--rules", default="standard", help="rule set: standard or classic")
    p.add_argument("--variant", action="append", default=[], help="orbis, saison or normand")
    p.add_argument("--seconds", type=float, default=5.0, help="how long to run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-log", action="store_true", help="skip the event log (as search does)")
    p.add_argument(
        "--no-pettingzoo",
        action="store_true",
        help="env: skip PettingZoo's own five-second performance_benchmark",
    )
    p.set_defaults(func=_run)
