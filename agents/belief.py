"""A searcher's belief over the cards it cannot see, weighed by the opponent's play.

A best response to a fixed opponent weighs each deal of the hidden cards that agrees with what
its player knows by how likely the opponent was to play as he did in it: his **reach**, the
product of his probabilities of his own actions along the deal's history in that world (chance
deals every consistent world alike, and the searcher's own actions, a function of what he knows,
are the same in all of them). A search that deals the hidden cards uniformly
(:func:`piquet_env.game.determinize`) weighs a world where the opponent would never have played
as he did like any other; one that knows the opponent's policy need not.

:func:`reach_weights` replays each world's history (the ``deal_cards`` and ``deal_moves`` that a
determinized copy carries) and multiplies the opponent's probabilities of his moves there: in
one batched pass for a policy (an agent with ``batch_probabilities``), else by the agent's
``action_probabilities``. :func:`resample` then draws worlds in proportion to those weights:
importance resampling of uniform samples, which on a small game like ``mini``, whose consistent
worlds are few, is the exact posterior up to the sampling of the candidates.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from piquet_env.agent import Turn
from piquet_env.game import Game, Phase
from piquet_env.observation import encoder_for

__all__ = ["BELIEFS", "reach_weights", "replay_deal", "resample"]

BELIEFS = ("uniform", "reach")
"""How a search weighs the worlds it deals: ``uniform`` (every consistent world alike) or
``reach`` (by the opponent's reach, :func:`reach_weights`)."""


def replay_deal(world: Game) -> Iterator[tuple[Game, int]]:
    """The decisions of ``world``'s deal so far, replayed from its start: a fresh game dealt its
    ``deal_cards`` (with the same elder, deal number and totals) yielded before each decision
    with the action taken there, and then that action applied. The exchange's discards and the
    cards played come from ``deal_moves``; each declaration decision from the public record
    (``decided`` and ``declared``), since whether a declaration was a choice or forced depends on
    the hand, which differs between worlds (the engine records no forced pass). Stops at the
    world's own decision, or where its history cannot be replayed (a move illegal there)."""
    elder, younger, talon = world.deal_cards
    game = Game(
        world.rules,
        mode=world.mode,
        deals=[(list(elder), list(younger), list(talon))],
        first_elder=world.elder,
        deal_number=world.deal_number,
        totals=(world.totals[0], world.totals[1]),
        record=False,
    )
    n = world.rules.n_cards
    moves = [a for a in world.deal_moves if a <= n]  # the declarations are n + 1 and n + 2
    i = 0
    while game.current_player >= 0:
        if game.phase == Phase.DECLARE:
            cat, mover = game.decl_step >> 1, game.current_player
            if not world.decided[cat][mover]:
                return
            action = n + 1 if world.declared[cat][mover] is not None else n + 2
        elif i < len(moves):
            action, i = moves[i], i + 1
        else:
            return
        if not game.is_legal(action):
            return
        yield game, action
        game.apply(action)


def reach_weights(worlds: Sequence[Game], seat: int, agent: Any) -> np.ndarray:
    """The reach of ``agent``, playing ``seat``, in each of ``worlds`` (determinized copies of one
    game): the product of its probabilities of the moves ``seat`` made in the deal so far, as
    that world's history has them (:func:`replay_deal`). A move the agent would not make, or a
    history that does not replay there (a move illegal in that world), gives 0. ``agent`` needs
    ``batch_probabilities(obs, mask)`` (a policy: one batched pass for every world) or
    ``action_probabilities(turn)``."""
    first: dict[tuple, int] = {}  # a history met before is weighed once
    same = [first.setdefault((w.deal_cards, tuple(w.deal_moves)), i) for i, w in enumerate(worlds)]
    weights = np.ones(len(worlds))
    batched = hasattr(agent, "batch_probabilities")
    rows: list[tuple[int, int]] = []  # (world, action) of every move of ``seat`` to weigh
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    for w, world in enumerate(worlds):
        if same[w] != w:
            continue
        enc = encoder_for(world.rules)
        n, replayed = world.rules.n_cards, 0
        for game, action in replay_deal(world):
            replayed += action <= n
            if game.current_player != seat:
                continue
            if batched:
                obs.append(enc.encode(game, seat))
                masks.append(enc.action_mask(game, seat))
                rows.append((w, action))
            else:
                weights[w] *= float(agent.action_probabilities(Turn(game, seat)).get(action, 0.0))
        if replayed < sum(a <= n for a in world.deal_moves):
            weights[w] = 0.0  # its history does not replay there: no world the opponent reached
    if rows:
        probs = agent.batch_probabilities(np.stack(obs), np.stack(masks))
        taken = probs[np.arange(len(rows)), [a for _, a in rows]]
        for (w, _), p in zip(rows, taken.tolist()):
            weights[w] *= p
    return weights[same]


def resample(weights: np.ndarray, k: int, rng: random.Random) -> list[int]:
    """``k`` indices drawn with replacement in proportion to ``weights`` (uniformly when they
    are all 0: no candidate explains the opponent's play, and the uniform belief is kept)."""
    total = float(np.sum(weights))
    n = len(weights)
    if not total > 0:
        return [rng.randrange(n) for _ in range(k)]
    return rng.choices(range(n), weights=list(map(float, weights)), k=k)
