"""The search guided by a policy network: legal everywhere, reproducible, its visits add up, its
spec checked (``mcts:N:policy=PATH``). Budgets are tiny: strength is measured by ``piquet eval``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.guided_search import GuidedSearchAgent, overrule
from piquet_agents.mcts import MCTSAgent
from piquet_agents.network import ActorCritic
from piquet_agents.policy import PolicyAgent
from piquet_agents.registry import AgentSpecError, make_agent
from piquet_env.agent import RandomAgent, Turn
from piquet_env.game import Game, Phase
from piquet_env.observation import encoder_for
from piquet_env.rules import make_rules


def _net(rules, critic: bool) -> ActorCritic:
    torch.manual_seed(0)
    enc = encoder_for(rules)
    return ActorCritic(enc.size, enc.n_actions, (16,), "tanh", enc.state_size if critic else 0)


def _play(game, agents):
    moves = []
    while not game.is_over:
        p = game.current_player
        a = agents[p].act(Turn(game, p))
        assert game.is_legal(a)
        game.apply(a)
        moves.append(a)
    return moves


@pytest.mark.parametrize("preset", ["standard", "classic+normand"])
@pytest.mark.parametrize(
    "critic,exchange,mix,playout",
    [
        (True, "plan", 0.5, "heuristic"),
        (False, "plan", 1.0, "heuristic"),
        (True, "search", 0.0, "heuristic"),
        (True, "value", 0.5, "policy"),
        (False, "value", 1.0, "policy"),
        (True, "search", 0.5, "flat"),
    ],
)
def test_legal_in_every_phase(preset, critic, exchange, mix, playout):
    rules = make_rules(preset)
    agent = GuidedSearchAgent(
        _net(rules, critic),
        rules,
        6,
        batch=4,
        exchange=exchange,
        mix=mix,
        playout="policy" if playout == "flat" else playout,
        search="flat" if playout == "flat" else "tree",
        seed=1,
    )
    _play(Game(rules, seed=2, mode="deal"), [agent, RandomAgent(3)])
    _play(Game(rules, seed=3, mode="deal"), [RandomAgent(3), agent])


def test_reproducible_and_visits_add_up():
    rules = make_rules("standard")
    net = _net(rules, True)
    runs = [
        _play(Game(rules, seed=7, mode="deal"), [GuidedSearchAgent(net, rules, 10, seed=5)] * 2)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    g = Game(rules, seed=8, mode="deal")
    agent = GuidedSearchAgent(net, rules, 37, batch=8, seed=0)
    while len(g.legal_actions()) < 2:
        g.apply(g.legal_actions()[0])
    visits = agent.visits(Turn(g, g.current_player))
    assert sum(visits.values()) == 37
    assert set(visits) <= set(g.legal_actions())


def test_the_exchange_is_the_plain_searchs_plan():
    rules = make_rules("standard")
    guided = GuidedSearchAgent(_net(rules, True), rules, 20, exchange="plan", seed=4)
    plain = MCTSAgent(20, seed=GuidedSearchAgent._planner_seed(4))
    g = Game(rules, seed=11, mode="deal")
    exchanged = 0
    while g.phase == Phase.EXCHANGE:
        turn = Turn(g, g.current_player)
        a = guided.act(turn)
        if len(turn.legal_actions) > 1:
            assert a == plain.act(turn)
            exchanged += 1
        g.apply(a)
    assert exchanged >= 2


@pytest.mark.parametrize("depth", [1, 2])
def test_the_tree_stops_at_its_depth(depth):
    rules = make_rules("standard")
    agent = GuidedSearchAgent(_net(rules, True), rules, 40, batch=8, depth=depth, seed=0)
    g = Game(rules, seed=8, mode="deal")
    while g.phase == Phase.EXCHANGE or len(g.legal_actions()) < 2:
        g.apply(g.legal_actions()[0])
    root = agent._search(g, g.current_player)
    assert sum(ch.n for ch in root.children.values()) == 40
    level = list(root.children.values())
    for _ in range(depth - 1):
        level = [gc for ch in level for gc in ch.children.values()]
    assert level and all(not ch.children for ch in level)  # nothing below the cut
    unlimited = GuidedSearchAgent(_net(rules, True), rules, 40, batch=8, seed=0)
    assert any(ch.children for ch in unlimited._search(g, g.current_player).children.values())


def test_flat_search_keeps_the_policys_choice_unless_another_is_clearly_better():
    v = np.array([[1.0, 2.0, 0.0], [1.0, 4.0, 5.0], [1.0, 3.0, 1.0]])
    # column 1: mean gain +2 over column 0, standard error 1/sqrt(3) = 0.577
    assert overrule(v, 1.0) == 1 and overrule(v, 3.4) == 1 and overrule(v, 3.5) == 0
    assert overrule(np.array([[2.0, 1.0], [2.0, 1.5]]), 0.0) == 0  # the policy's is best
    assert overrule(np.array([[0.0, 1.0], [0.0, 1.0]]), 1e9) == 1  # a certain gain
    assert overrule(np.array([[0.0, 1.0]]), 0.0) == 0  # one world: no error to judge by
    rules = make_rules("standard")
    net = _net(rules, True)
    policy = PolicyAgent(net, rules)
    bold = GuidedSearchAgent(net, rules, 12, search="flat", margin=0, exchange="search", seed=2)
    g = Game(rules, seed=9, mode="deal")
    differ = 0
    while not g.is_over:
        turn = Turn(g, g.current_player)
        a = policy.act(turn)
        if len(turn.legal_actions) > 1:
            differ += bold.act(turn) != a
        g.apply(a)
    assert differ > 0  # with no margin the search does overrule an untrained policy


def _greedy_to_the_end(game, policy):
    """``game`` played by the greedy policy in both seats until its deal ends."""
    deal = len(game.deal_scores)
    while len(game.deal_scores) == deal and game.current_player >= 0:
        game.apply(policy.act(Turn(game, game.current_player)))
    return game


@pytest.mark.parametrize("preset", ["standard", "classic+saison"])
def test_policy_playouts_are_the_greedy_policy_in_both_seats(preset):
    rules = make_rules(preset)
    net = _net(rules, True)
    agent = GuidedSearchAgent(net, rules, 4, playout="policy", seed=0)
    policy = PolicyAgent(net, rules)
    starts = []
    for seed in range(6):  # games stopped in every phase: exchange, declarations, tricks
        g = Game(rules, seed=seed, mode="partie")
        for _ in range(seed * 5):
            g.apply(RandomAgent(seed).act(Turn(g, g.current_player)))
        starts.append(g)
    played = [g.clone() for g in starts]
    agent._policy_playouts(played)  # all six in lockstep
    for start, got in zip(starts, played):
        want = _greedy_to_the_end(start.clone(), policy)
        assert (
            got.deal_scores == want.deal_scores
            and len(got.deal_scores) == len(start.deal_scores) + 1
        )
        assert got.totals == want.totals


def test_value_exchange_weighs_the_policys_own_plan():
    rules = make_rules("standard")
    net = _net(rules, True)
    agent = GuidedSearchAgent(net, rules, 8, exchange="value", playout="policy", seed=3)
    policy = PolicyAgent(net, rules)
    g = Game(rules, seed=5, mode="deal")
    p = g.current_player
    own = agent._policy_plan(g, p)
    h = g.clone()
    while h.current_player == p and h.phase == Phase.EXCHANGE:
        a = policy.act(Turn(h, p))
        if a >= rules.n_cards:
            break
        h.apply(a)
    assert sorted(own) == sorted(c for c in range(rules.n_cards) if h.discards[p] >> c & 1)
    plan = agent._choose_plan(g, p)
    candidates = [sorted(c) for c in agent._planner.exchange_candidates(g, p)] + [sorted(own)]
    assert sorted(plan) in candidates
    while g.current_player == p and g.phase == Phase.EXCHANGE:  # a plan, played card by card
        g.apply(agent.act(Turn(g, p)))
    assert sorted(c for c in range(rules.n_cards) if g.discards[p] >> c & 1) in candidates


def test_spec_builds_the_guided_search(tmp_path):
    rules = make_rules("standard")
    path = ck.save_policy(
        tmp_path / "p.safetensors", _net(rules, True), rules, {"reward_scale": 0.05}
    )
    agent = make_agent(f"mcts:12:policy={path}:c=2:batch=3", rules, seed=0)
    assert isinstance(agent, GuidedSearchAgent)
    assert (agent.iterations, agent.c, agent.batch, agent.reward_scale) == (12, 2.0, 3, 0.05)
    assert (agent.exchange, agent.search, agent.playout) == ("search", "flat", "policy")
    assert make_agent(f"mcts:5:policy={path}:exchange=plan", rules).exchange == "plan"
    assert (agent.mix, make_agent(f"mcts:5:policy={path}:mix=0", rules).mix) == (0.5, 0.0)
    assert make_agent(f"mcts:5:policy={path}:playout=heuristic", rules).playout == "heuristic"
    assert make_agent(f"mcts:5:policy={path}:exchange=value", rules).exchange == "value"
    assert (agent.depth, make_agent(f"mcts:5:policy={path}:depth=1", rules).depth) == (None, 1)
    flat = make_agent(f"mcts:5:policy={path}:search=flat:margin=0.5", rules)
    tree = make_agent(f"mcts:5:policy={path}:search=tree", rules)
    assert (tree.search, flat.search, agent.margin, flat.margin) == ("tree", "flat", 1.0, 0.5)
    for bad, words in [
        (f"mcts:0:policy={path}", "iterations"),
        (f"mcts:5:policy={tmp_path}/none.safetensors", "no checkpoint"),
        (f"mcts:5:policy={path}:rollout=greedy", "bad option"),
        (f"mcts:5:policy={path}:batch=0", "batch"),
        (f"mcts:5:policy={path}:exchange=greedy", "exchange must be one of plan, value, search"),
        (f"mcts:5:policy={path}:mix=1.5", "mix must be a number in"),
        (f"mcts:5:policy={path}:mix=-0.1", "mix must be a finite number >= 0"),
        (f"mcts:5:policy={path}:playout=random", "playout must be one of heuristic, policy"),
        (f"mcts:5:policy={path}:depth=0", "depth must be a positive integer"),
        (f"mcts:5:policy={path}:search=wide", "search must be one of tree, flat"),
        (f"mcts:5:policy={path}:margin=-1", "margin must be a finite number >= 0"),
    ]:
        with pytest.raises(AgentSpecError, match=words):
            make_agent(bad, rules)


def test_bad_arguments_are_named():
    rules = make_rules("standard")
    with pytest.raises(ValueError, match="iterations"):
        GuidedSearchAgent(_net(rules, True), rules, 0)
    with pytest.raises(ValueError, match="mix must be a number in"):
        GuidedSearchAgent(_net(rules, True), rules, 5, mix=2)
    with pytest.raises(ValueError, match="exchange must be one of"):
        GuidedSearchAgent(_net(rules, True), rules, 5, exchange="cards")
    with pytest.raises(ValueError, match="search must be one of"):
        GuidedSearchAgent(_net(rules, True), rules, 5, search="wide")
    with pytest.raises(ValueError, match="margin must be a finite number"):
        GuidedSearchAgent(_net(rules, True), rules, 5, margin=float("nan"))
    with pytest.raises(ValueError, match="depth must be a positive int"):
        GuidedSearchAgent(_net(rules, True), rules, 5, depth=0)
    with pytest.raises(ValueError, match="playout must be one of"):
        GuidedSearchAgent(_net(rules, True), rules, 5, playout="greedy")
    with pytest.raises(ValueError, match="network reads"):
        GuidedSearchAgent(_net(make_rules("standard+normand"), True), rules, 5)
