"""Agents against a target on every deal of a rule set small enough to enumerate, in both seats.

A match samples its deals, and on ``mini`` the luck of the deal is most of a bound's interval: at
300 duplicate pairs a bound of 1.5 points per deal holds ±0.7. Here every deal of the pack
(``mini``: 630) is played once with the agent as elder and once as younger against the target,
each weighted alike as chance deals them, so the deal's luck is gone: an agent whose play is a
function of what it knows (a greedy policy against a greedy or fixed target) gets its exact value
against the target, and a search (random only through its own draws) gets its value up to those.
Each agent after the first is also reported as its difference from the first, deal by deal; its
95% interval counts the deals as if sampled, which overstates the search's own noise (the deals
are all there), so it is a conservative one.

Command (the results page's): ``python -m piquet_training.studies.every_deal TARGET AGENT
[AGENT ...] --rules mini [--exact BR_SEAT] [--json F]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from piquet_agents.registry import make_agent
from piquet_env.agent import Turn
from piquet_env.game import Game
from piquet_env.rules import Rules, make_rules

__all__ = ["every_deal", "main", "play_every_deal"]


def every_deal(rules: Rules) -> list[tuple[list[int], list[int], list[int]]]:
    """Every deal of ``rules``' pack: elder's hand, younger's, the talon in its order."""
    pack, h = list(rules.pack), rules.hand_size
    deals = []
    for elder in itertools.combinations(pack, h):
        rest = [c for c in pack if c not in elder]
        for younger in itertools.combinations(rest, h):
            left = [c for c in rest if c not in younger]
            for talon in itertools.permutations(left):
                deals.append((list(elder), list(younger), list(talon)))
    return deals


def play_every_deal(
    agent: str,
    target: str,
    rules: Rules,
    seed: int = 0,
    on_move: Callable[[Turn, int], None] | None = None,
) -> list[float]:
    """``agent``'s deal points over ``target``'s on every deal, averaged over its two seats (the
    agent elder, then younger), one entry a deal; both reseeded from ``seed`` and the deal.
    ``on_move(turn, action)`` is told each of the agent's decisions."""
    me = make_agent(agent, rules, seed=seed)
    them = make_agent(target, rules, seed=seed)
    out = []
    for k, deal in enumerate(every_deal(rules)):
        both = 0.0
        for seat in (0, 1):
            me.reset(seed * 1_000_003 + 2 * k + seat)
            them.reset(seed)
            game = Game(rules, mode="deal", deals=[deal], first_elder=0, record=False)
            while not game.is_over:
                p = game.current_player
                turn = Turn(game, p)
                action = (me if p == seat else them).act(turn)
                if on_move is not None and p == seat:
                    on_move(turn, action)
                game.apply(action)
            ds = game.deal_scores[0]
            both += ds[seat].total - ds[1 - seat].total
        out.append(both / 2)
    return out


def _interval(xs: Sequence[float]) -> tuple[float, float]:
    """The mean and the half width of its 95% interval, the entries taken as a sample."""
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return mean, 1.96 * sd / math.sqrt(n)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m piquet_training.studies.every_deal")
    ap.add_argument("target")
    ap.add_argument("agents", nargs="+")
    ap.add_argument("--rules", default="mini")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exact", type=float, default=None, help="the exact best response's value")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rules = make_rules(args.rules)
    found: dict[str, Any] = {"target": args.target, "rules": rules.name, "agents": {}}
    first: list[float] = []
    for spec in args.agents:
        t0 = time.perf_counter()
        points = play_every_deal(spec, args.target, rules, args.seed)
        row: dict[str, Any] = {"value": sum(points) / len(points), "deals": len(points)}
        if first:
            mean, half = _interval([a - b for a, b in zip(points, first)])
            row["minus_first"] = {"mean": mean, "ci_low": mean - half, "ci_high": mean + half}
            row["deals_differing"] = sum(a != b for a, b in zip(points, first))
        else:
            first = points
        if args.exact:
            row["fraction"] = row["value"] / args.exact
        row["minutes"] = round((time.perf_counter() - t0) / 60, 2)
        print(json.dumps({spec: row}), flush=True)
        row["points"] = points  # deal by deal, for pairing with another run
        found["agents"][spec] = row
    if args.json:
        args.json.write_text(json.dumps(found, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
