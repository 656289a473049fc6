"""The ISMCTS agent: legal in every phase and preset, reproducible, sensible on obvious choices.

Budgets are tiny: these tests check behaviour, not strength (``piquet eval`` measures that).
"""

from __future__ import annotations

import pytest

from piquet_agents.mcts import MCTSAgent
from piquet_agents.registry import make_agent
from piquet_env.agent import RandomAgent, Turn
from piquet_env.cards import parse_mask, to_mask
from piquet_env.game import Game, Phase
from piquet_env.rules import STANDARD, make_rules
from tests.scenarios import deal, exchange

PRESETS = [
    make_rules(n) for n in ("standard", "classic", "standard+normand", "classic+normand+orbis")
]


def _play(game: Game, agents) -> list[int]:
    out = []
    while not game.is_over:
        p = game.current_player
        a = agents[p].act(Turn(game, p))
        assert game.is_legal(a), (game.phase, a)
        game.apply(a)
        out.append(a)
    return out


@pytest.mark.parametrize("rules", PRESETS, ids=lambda r: r.name)
def test_mcts_is_legal_in_every_phase(rules):
    _play(Game(rules, seed=4, mode="deal"), [MCTSAgent(iterations=6, seed=1), RandomAgent(2)])
    _play(Game(rules, seed=5, mode="deal"), [RandomAgent(2), MCTSAgent(iterations=6, seed=1)])


def test_mcts_is_deterministic_with_a_seed():
    runs = [
        _play(Game(seed=9, mode="deal"), [MCTSAgent(8, seed=3), MCTSAgent(8, seed=4)])
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_mcts_plays_on_into_the_next_deal_of_a_partie():
    game = Game(seed=2)
    agent = MCTSAgent(4, seed=0)
    while game.deal_number < 2:
        p = game.current_player
        game.apply(agent.act(Turn(game, p)) if p == 0 else RandomAgent(p).act(Turn(game, p)))
    assert not game.is_over and game.deal_scores


def test_mcts_declares_a_repique():
    # RULES.md example 2: elder's point of eight and huitième make a repique; sinking throws it
    # away.
    game = deal(
        STANDARD,
        "AS KS QS JS TS 9S 8S 7S AH KH QH JH",
        "AD KD QD JD AC KC QC JC 7H 8H 9H TH",
        "7C 8C 9C TC 7D 8D 9D TD",
    )
    exchange(game, "JH", "")
    assert game.phase == Phase.DECLARE and game.current_player == 0
    assert MCTSAgent(40, seed=0).act(Turn(game, 0)) == STANDARD.n_cards + 1


def test_mcts_exchange_candidates_cover_every_size_and_follow_one_plan():
    game = Game(seed=12, mode="deal")
    agent = MCTSAgent(10, seed=0)
    elder = game.elder
    plans = agent.exchange_candidates(game, elder)
    assert {len(p) for p in plans} == {1, 2, 3, 4, 5}
    assert len({frozenset(p) for p in plans}) == len(plans)
    hand = game.hands[elder]
    assert all(to_mask(p) & ~hand == 0 for p in plans)
    chosen = []
    while game.current_player == elder:
        a = agent.act(Turn(game, elder))
        game.apply(a)
        chosen.append(a)
    discarded = [a for a in chosen if a < STANDARD.n_cards]
    assert frozenset(discarded) in {frozenset(p) for p in plans}


def test_mcts_time_budget_and_bad_arguments():
    game = Game(seed=1, mode="deal")
    agent = MCTSAgent(iterations=0, time_limit=0.02, seed=0)
    assert agent.act(Turn(game, game.current_player)) in game.legal_actions()
    with pytest.raises(ValueError, match="budget"):
        MCTSAgent(iterations=0)
    with pytest.raises(ValueError, match="iterations"):
        MCTSAgent(iterations=-3)
    with pytest.raises(ValueError, match="rollout"):
        MCTSAgent(rollout="perfect")


def test_registry_builds_mcts_with_options():
    agent = make_agent("mcts:30:c=1.5:time=0.5", STANDARD, seed=2)
    assert isinstance(agent, MCTSAgent)
    assert (agent.iterations, agent.c, agent.time_limit) == (30, 1.5, 0.5)
    assert make_agent("mcts", STANDARD).iterations == 200
    for bad in ("mcts:many", "mcts:10:depth=3", "mcts:10:c=high", "alphazero", ""):
        with pytest.raises(ValueError):
            make_agent(bad, STANDARD)


def test_registry_refuses_missing_checkpoints(tmp_path):
    with pytest.raises(ValueError, match="checkpoint"):
        make_agent(str(tmp_path / "missing.pt"), STANDARD)


def test_mcts_single_legal_action_is_not_searched():
    game = deal(
        STANDARD,
        "AS KS QS JS TS 9S 8S 7S AH KH QH JH",
        "AD KD QD JD AC KC QC JC 7H 8H 9H TH",
        "7C 8C 9C TC 7D 8D 9D TD",
    )
    hand = parse_mask("AS KS QS JS TS 9S 8S 7S AH KH QH JH")
    assert game.hands[0] == hand
    agent = MCTSAgent(iterations=10**9, seed=0)  # would never return if it searched
    exchange(game, "JH", "")
    game.apply(STANDARD.n_cards + 1)
    while game.phase == Phase.DECLARE:
        game.apply(game.legal_actions()[0])
    # Play down to the last trick: one card each, a single legal action.
    while len(game.legal_actions()) > 1 or game.current_player != 0:
        game.apply(game.legal_actions()[0])
        if game.is_over:
            pytest.fail("the deal ended before a forced decision of player 0")
    assert agent.act(Turn(game, 0)) == game.legal_actions()[0]
