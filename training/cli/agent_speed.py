"""``piquet bench agents``: how fast each agent decides, beside the bare engine in the same run.

Each agent plays itself, one single deal after another (fresh cards and seeds each deal), and its
decisions per second and deals per second are counted. The bare engine's random play
(:func:`piquet_env.testing.env_speed.engine_play`) is measured in the same rounds, interleaved
with the agents', so that a machine that slows down slows them alike: compare an agent's figure
with the engine's of the same run, not with another day's.

Command: ``piquet bench agents [--agents heuristic mcts:100] [--seconds 5] [--seed 0]``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from piquet_agents.registry import make_agent
from piquet_env.agent import Turn
from piquet_env.game import Game
from piquet_env.rules import Rules
from piquet_env.testing.env_speed import engine_play

AGENTS = ("random", "heuristic", "mcts:100")
"""The agents measured by default."""
ROUNDS = 5
"""Rounds the measurements are interleaved in."""


def agent_play(spec: str, rules: Rules, seconds: float, seed: int) -> dict[str, float]:
    """``spec`` against itself, single deals for about ``seconds`` (the last deal is finished):
    its decisions and deals, and the time they took."""
    rng = random.Random(f"bench-agents/{spec}/{seed}")
    seats = [make_agent(spec, rules), make_agent(spec, rules)]
    decisions = deals = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for agent in seats:
            agent.reset(rng.getrandbits(63))
        game = Game(rules, seed=rng.getrandbits(64), mode="deal", record=False)
        while not game.is_over:
            p = game.current_player
            game.apply(seats[p].act(Turn(game, p)))
            decisions += 1
        deals += 1
    return {"decisions": decisions, "deals": deals, "seconds": time.perf_counter() - start}


def bench_agents(
    rules: Rules, specs: Sequence[str] = AGENTS, seconds: float = 5.0, seed: int = 0
) -> dict[str, Any]:
    """Each of ``specs`` for about ``seconds`` and the engine for half that, in :data:`ROUNDS`
    interleaved rounds; per name, the totals and the rates (for :func:`print_agents_report`)."""
    for spec in specs:
        make_agent(spec, rules)  # a bad spec fails here, before any timing
    totals: dict[str, dict[str, float]] = {
        name: {"decisions": 0, "deals": 0, "seconds": 0.0} for name in ("engine", *specs)
    }
    for r in range(ROUNDS):
        ref = engine_play(rules, seconds / 2 / ROUNDS, seed + r)
        t = totals["engine"]
        t["decisions"] += ref["steps"]
        t["seconds"] += ref["seconds"]
        for spec in specs:
            got = agent_play(spec, rules, seconds / ROUNDS, seed + r)
            for key in ("decisions", "deals", "seconds"):
                totals[spec][key] += got[key]
    for t in totals.values():
        t["decisions_per_s"] = t["decisions"] / t["seconds"]
        t["deals_per_s"] = t["deals"] / t["seconds"]
    return {"rules": rules.name, "seed": seed, "results": totals}


def _times(x: float) -> str:
    """A ratio as ``1.3x`` or ``3,978x``.

    >>> _times(1.31), _times(3977.6)
    ('1.3x', '3,978x')
    """
    return f"{x:.1f}x" if x < 10 else f"{x:,.0f}x"


def print_agents_report(res: dict[str, Any]) -> None:
    """Print :func:`bench_agents`' measurements, one line per agent, the engine first."""
    print(f"agents on one core ({res['rules']}, single deals, each agent against itself):")
    engine = res["results"]["engine"]["decisions_per_s"]
    for name, t in res["results"].items():
        if name == "engine":
            print(f"  {'engine (random moves)':<22} {t['decisions_per_s']:>12,.0f} decisions/s")
            continue
        print(
            f"  {name:<22} {t['decisions_per_s']:>12,.1f} decisions/s "
            f"{t['deals_per_s']:>9,.2f} deals/s  ({t['deals']:,.0f} deals; "
            f"the engine is {_times(engine / t['decisions_per_s'])} faster)"
        )
