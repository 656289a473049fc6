"""How often ``piquet eval``'s 95% interval holds the truth, on a rule set small enough to know it.

On ``mini`` (or any rule set :mod:`piquet_env.exact` can enumerate) the exact expected points per
deal of A over B in a duplicate pair is computed by traversal
(:func:`piquet_training.exact.exact_difference`); the match is then played on ``--seeds``
different seeds, plain and with ``--variance-reduction CRITIC`` when given, and each interval is
checked against it. A well-calibrated interval covers it in about 95% of seeds; the coverage is
reported with its own Wilson interval.

Command (the results page's): ``python -m piquet_training.studies.exact_coverage A B --rules mini
--seeds 40 --deals 200 [--variance-reduction CRITIC] [--json F]``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piquet_env.rules import make_rules
from piquet_training.evaluation.duplicate import evaluate
from piquet_training.evaluation.stats import wilson_interval
from piquet_training.exact import exact_difference


def coverage(
    agent_a: str,
    agent_b: str,
    rules_name: str,
    seeds: Sequence[int],
    deals: int,
    variance_reduction: str | None = None,
) -> dict[str, Any]:
    """Play ``deals`` duplicate pairs of ``agent_a`` against ``agent_b`` on each seed (with the
    corrected estimate too where ``variance_reduction`` names a critic) and count how often each
    95% interval holds the exact difference; return the measurements."""
    rules = make_rules(rules_name)
    t0 = time.perf_counter()
    truth = exact_difference(agent_a, agent_b, rules, seed=seeds[0])
    exact_s = time.perf_counter() - t0
    forms = ["plain"] + (["corrected"] if variance_reduction else [])
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for seed in seeds:
        rep = evaluate(
            agent_a, agent_b, rules, deals, "deal", seed, variance_reduction=variance_reduction
        )
        plain = rep.plain_points if rep.plain_points is not None else rep.points
        estimates = {"plain": plain, "corrected": rep.points}
        rows.append(
            {
                "seed": seed,
                **{
                    form: {
                        "mean": estimates[form].mean,
                        "low": estimates[form].low,
                        "high": estimates[form].high,
                        "covers": estimates[form].low <= truth <= estimates[form].high,
                    }
                    for form in forms
                },
            }
        )
    played_s = time.perf_counter() - t0
    summary = {}
    for form in forms:
        hits = sum(r[form]["covers"] for r in rows)
        low, high = wilson_interval(hits / len(rows), len(rows))
        widths = [r[form]["high"] - r[form]["low"] for r in rows]
        summary[form] = {
            "covered": hits,
            "of": len(rows),
            "rate": hits / len(rows),
            "rate_interval": [low, high],
            "mean_width": sum(widths) / len(widths),
            "mean_error": sum(r[form]["mean"] for r in rows) / len(rows) - truth,
        }
    return {
        "agent_a": agent_a,
        "agent_b": agent_b,
        "rules": rules.name,
        "deals": deals,
        "variance_reduction": variance_reduction or "",
        "exact_points_per_deal": truth,
        "summary": summary,
        "seeds": rows,
        "seconds": {"exact": round(exact_s, 1), "matches": round(played_s, 1)},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m piquet_training.studies.exact_coverage``: print the coverage (and write
    ``--json``)."""
    p = argparse.ArgumentParser(
        prog="python -m piquet_training.studies.exact_coverage", description=__doc__
    )
    p.add_argument("agent_a")
    p.add_argument("agent_b")
    p.add_argument("--rules", default="mini", help="a rule set small enough (default mini)")
    p.add_argument("--seeds", type=int, default=40, help="matches, on seeds 0..N-1 (default 40)")
    p.add_argument("--deals", type=int, default=200, help="duplicate pairs a match (default 200)")
    p.add_argument("--variance-reduction", metavar="CRITIC", help="also the corrected estimate")
    p.add_argument("--json", type=Path, help="write the measurements there")
    args = p.parse_args(argv)
    if args.seeds < 1 or args.deals < 1:
        p.error("--seeds and --deals must be at least 1")
    out = coverage(
        args.agent_a,
        args.agent_b,
        args.rules,
        list(range(args.seeds)),
        args.deals,
        args.variance_reduction,
    )
    print(f"exact {out['agent_a']} − {out['agent_b']}: {out['exact_points_per_deal']:+.4f}")
    for form, s in out["summary"].items():
        low, high = s["rate_interval"]
        print(
            f"  {form}: covered in {s['covered']} of {s['of']} seeds ({s['rate']:.0%}, "
            f"[{low:.0%}, {high:.0%}]); mean width {s['mean_width']:.2f}, "
            f"mean error {s['mean_error']:+.3f}"
        )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
