"""Agents against a target on given deals, each deal played in both seats: every deal of a rule
set small enough to enumerate, or deals sampled as the engine deals them.

A match samples its deals, and on ``mini`` the luck of the deal is most of a bound's interval.
Here each deal is played once with the agent as elder and once as younger against the target,
each weighted alike as chance deals them: over :func:`every_deal` the deal's luck is gone, so an
agent whose play is a function of what it knows (a greedy policy against a greedy or fixed
target) gets its exact value against the target, and a search (random only through its own
draws) gets its value up to those. :func:`play_deals` also tells a caller each of the agent's
decisions (``on_move``): what expert iteration labels
(:mod:`piquet_training.exploit.expert`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

from piquet_agents.registry import make_agent
from piquet_env.agent import Turn
from piquet_env.exact.tree import enumerate_deals
from piquet_env.game import Game
from piquet_env.rules import Rules

__all__ = ["Deal", "every_deal", "play_deals", "play_every_deal", "sampled_deals"]

Deal = tuple[list[int], list[int], list[int]]
"""A deal's cards: elder's hand, younger's, and the talon in its order."""


def every_deal(rules: Rules) -> list[Deal]:
    """Every deal of ``rules``' pack (:func:`piquet_env.exact.tree.enumerate_deals`'s, in its
    order): elder's hand, younger's, the talon in its order."""
    h = rules.hand_size
    return [
        (row[:h].tolist(), row[h : 2 * h].tolist(), row[2 * h :].tolist())
        for row in enumerate_deals(rules).astype(np.int64)
    ]


def sampled_deals(rules: Rules, n: int, seed: int) -> list[Deal]:
    """``n`` deals as the engine deals them, each game's seed drawn from ``seed``."""
    draw = random.Random(seed)
    out = []
    for _ in range(n):
        game = Game(rules, mode="deal", seed=draw.getrandbits(63), record=False)
        elder, younger, talon = game.deal_cards
        out.append((list(elder), list(younger), list(talon)))
    return out


def play_deals(
    agent: str,
    target: str,
    rules: Rules,
    deals: Sequence[Deal],
    seed: int = 0,
    on_move: Callable[[Turn, int], None] | None = None,
    first: int = 0,
) -> list[float]:
    """``agent``'s deal points over ``target``'s on each of ``deals``, averaged over its two
    seats (the agent elder, then younger), one entry a deal; both reseeded from ``seed`` and the
    deal's number (``first`` for the first of ``deals``: a slice of a longer list plays as it
    would in the whole). ``on_move(turn, action)`` is told each of the agent's decisions."""
    me = make_agent(agent, rules, seed=seed)
    them = make_agent(target, rules, seed=seed)
    out = []
    for k, deal in enumerate(deals, start=first):
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


def play_every_deal(
    agent: str,
    target: str,
    rules: Rules,
    seed: int = 0,
    on_move: Callable[[Turn, int], None] | None = None,
) -> list[float]:
    """:func:`play_deals` on :func:`every_deal` of ``rules``."""
    return play_deals(agent, target, rules, every_deal(rules), seed, on_move)
