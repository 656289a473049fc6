"""Every agent acts legally on every legal turn, whatever happened before it took the seat.

Each agent is handed turns from random points of random games under all 32 presets: in the middle
of an exchange someone else began, in the declarations, in the play, in a later deal of a partie.
"""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from piquet_agents.heuristic import HeuristicAgent
from piquet_agents.mcts import ROLLOUT_POLICIES, MCTSAgent
from piquet_agents.policy import ActorCritic, PolicyAgent
from piquet_env.agent import RandomAgent, Turn
from piquet_env.game import Game, Phase, max_start_total
from piquet_env.observation import encoder_for
from piquet_env.rules import STANDARD, all_presets

PRESETS = all_presets()


def _policy(rules) -> PolicyAgent:
    enc = encoder_for(rules)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = ActorCritic(enc.size, enc.n_actions, hidden=(8,))
    return PolicyAgent(model, rules, greedy=False, seed=0)


_POLICIES = {r: _policy(r) for r in PRESETS}


def _agents(rules, seed: int) -> list:
    return [
        RandomAgent(seed=seed),
        HeuristicAgent(seed=seed),
        *(MCTSAgent(iterations=12, seed=seed, rollout=r) for r in ROLLOUT_POLICIES),
        _POLICIES[rules],
    ]


def _advance(game: Game, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        if game.is_over:
            return
        game.apply(rng.choice(game.legal_actions()))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(PRESETS),
    st.integers(0, 2**32 - 1),
    st.sampled_from(("partie", "deal")),
    st.one_of(st.integers(0, 8), st.integers(0, 60), st.integers(0, 400)),
    st.floats(0, 1),
    st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
def test_every_agent_acts_legally_from_any_point_of_any_game(
    rules, seed, mode, steps, start, totals
):
    rng = random.Random(seed)
    deal_number = int(start * (rules.deals - 1))  # a partie taken up part-way through
    top = max_start_total(rules, deal_number)
    game = Game(
        rules,
        seed=seed,
        mode=mode,
        deal_number=deal_number,
        totals=(int(totals[0] * top), int(totals[1] * top)),
    )
    _advance(game, rng, steps)
    if game.is_over:
        return
    for agent in _agents(rules, seed):
        legal = game.legal_actions()
        action = agent.act(Turn(game, game.current_player))
        assert action in legal, f"{agent!r} chose {action} in {game!r}; legal {legal}"


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_every_agent_finishes_an_exchange_begun_by_another(rules):
    """Elder (or younger) discards his highest cards, which no plan would choose, then each agent
    takes the seat and must finish the exchange legally with those discards kept."""
    if not rules.exchange:
        pytest.skip("no exchange under orbis")
    for seed, who in ((0, "elder"), (1, "younger")):
        base = Game(rules, seed=seed, mode="deal")
        if who == "younger":
            while base.current_player == base.elder:
                base.apply(base.legal_actions()[0])
        if base.phase != Phase.EXCHANGE:
            continue  # younger has nothing to take (mini: the talon is elder's part)
        player = base.current_player
        forced = max(a for a in base.legal_actions() if a < rules.n_cards)
        base.apply(forced)
        if base.current_player != player or base.phase != Phase.EXCHANGE:
            continue  # the exchange ended at its maximum
        for agent in _agents(rules, seed):
            game = base.clone()
            while game.current_player == player and game.phase == Phase.EXCHANGE:
                action = agent.act(Turn(game, player))
                assert action in game.legal_actions(), f"{agent!r} chose {action}"
                game.apply(action)
            assert game.discards[player] >> forced & 1


def test_search_takes_over_a_half_done_exchange():
    # issue 15, item 1: this raised "max() arg is an empty sequence" in 14 of 20 seeds
    for seed in range(20):
        g = Game(STANDARD, seed=seed)
        forced = max(a for a in g.legal_actions() if a < 32)
        g.apply(forced)
        agent = MCTSAgent(iterations=50, seed=0)
        plans = agent.exchange_candidates(g, g.current_player)
        assert plans and all(p[0] == forced and len(p) <= 5 for p in plans)
        assert agent.act(Turn(g, g.current_player)) in g.legal_actions()
