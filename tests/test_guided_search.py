"""The search guided by a policy network: legal everywhere, reproducible, the very choices it made
before its other forms were removed, its spec checked (``mcts:N:policy=PATH``, removed options
named). Budgets are tiny: strength is measured by ``piquet eval``."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.guided_search import GuidedSearchAgent, overrule
from piquet_agents.network import ActorCritic
from piquet_agents.policy import PolicyAgent
from piquet_agents.registry import AgentSpecError, make_agent
from piquet_env.agent import RandomAgent, Turn
from piquet_env.game import Game
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
@pytest.mark.parametrize("critic,mix", [(True, 0.5), (False, 1.0), (True, 0.0)])
def test_legal_in_every_phase(preset, critic, mix):
    rules = make_rules(preset)
    agent = GuidedSearchAgent(_net(rules, critic), rules, 6, batch=4, mix=mix, seed=1)
    _play(Game(rules, seed=2, mode="deal"), [agent, RandomAgent(3)])
    _play(Game(rules, seed=3, mode="deal"), [RandomAgent(3), agent])


def test_reproducible_and_reseeded():
    rules = make_rules("standard")
    net = _net(rules, True)
    agent = GuidedSearchAgent(net, rules, 10, seed=5)
    first = _play(Game(rules, seed=7, mode="deal"), [agent, agent])
    again = _play(Game(rules, seed=7, mode="deal"), [GuidedSearchAgent(net, rules, 10, seed=5)] * 2)
    agent.reset(5)
    reseeded = _play(Game(rules, seed=7, mode="deal"), [agent, agent])
    assert first == again == reseeded


# Deals played by one seeded search in both seats, recorded with the code of e232381, before the
# search's other forms (tree search, heuristic playouts, planned exchanges) were removed: the
# default form must still make the very same choices (among them, in each deal, 10 to 21 where it
# overrules its policy). A change to the encoders changes them too: record them again from the
# code before such a change. "baseline" was recorded with the policy then shipped, played by its
# tag since baseline names a newer one.
RECORDED = {
    "defaults": [0, 32, 32, 34, 34, 34, 33, 11, 8, 24, 27, 22, 21, 23, 4, 18, 12, 31, 30, 29, 9,
                 19, 7, 6, 5, 16, 10, 13, 14, 15, 28],
    "margin=0": [9, 32, 32, 33, 33, 26, 25, 30, 29, 18, 23, 19, 16, 11, 8, 2, 3, 24, 28, 31, 13,
                 12, 15, 22, 6, 7, 1, 20, 14],
    "shared critic alone": [26, 24, 21, 14, 33, 12, 25, 10, 4, 31, 34, 34, 29, 28, 19, 17, 5, 2,
                            22, 20, 15, 6, 16, 18, 32, 11, 7, 1, 3, 0, 27, 9, 30, 8, 23, 13],
    "baseline": [0, 1, 24, 10, 13, 2, 3, 19, 33, 33, 33, 33, 33, 22, 16, 23, 20, 21, 8, 31, 26, 30,
                 28, 18, 9, 29, 27, 25, 11, 7, 4, 5, 12, 6, 14, 17, 15],
}  # fmt: skip


@pytest.mark.parametrize("case", RECORDED)
def test_seeded_choices_are_those_recorded(case):
    std, normand = make_rules("standard"), make_rules("classic+normand")
    rules, agent, deal = {
        "defaults": lambda: (std, GuidedSearchAgent(_net(std, True), std, 12, seed=5), 7),
        "margin=0": lambda: (std, GuidedSearchAgent(_net(std, True), std, 12, margin=0, seed=2), 9),
        "shared critic alone": lambda: (
            normand,
            GuidedSearchAgent(_net(normand, False), normand, 10, batch=4, mix=0, margin=0, seed=1),
            3,
        ),
        "baseline": lambda: (
            std,
            make_agent("mcts:8:policy=baseline@2026-11-30:margin=0.5", std, seed=0),
            11,
        ),
    }[case]()
    assert _play(Game(rules, seed=deal, mode="deal"), [agent, agent]) == RECORDED[case]


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
    bold = GuidedSearchAgent(net, rules, 12, margin=0, seed=2)
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
    agent = GuidedSearchAgent(net, rules, 4, seed=0)
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


def test_spec_builds_the_guided_search(tmp_path):
    rules = make_rules("standard")
    path = ck.save_policy(
        tmp_path / "p.safetensors", _net(rules, True), rules, {"reward_scale": 0.05}
    )
    agent = make_agent(f"mcts:12:policy={path}:batch=3", rules, seed=0)
    assert isinstance(agent, GuidedSearchAgent)
    assert (agent.iterations, agent.batch, agent.reward_scale) == (12, 3, 0.05)
    assert (agent.mix, agent.margin) == (0.5, 1.0)
    tuned = make_agent(f"mcts:5:policy={path}:mix=0:margin=0.5", rules)
    assert (tuned.mix, tuned.margin, tuned.batch) == (0.0, 0.5, 16)
    assert agent.floor == 0.01 and make_agent(f"mcts:5:policy={path}:floor=0", rules).floor == 0
    for bad, words in [
        (f"mcts:0:policy={path}", "iterations"),
        (f"mcts:5:policy={tmp_path}/none.safetensors", "no checkpoint"),
        (
            f"mcts:5:policy={path}:rollout=greedy",
            "bad option 'rollout=greedy'; with policy= the options are policy=VALUE, "
            "batch=VALUE, mix=VALUE, margin=VALUE",
        ),
        (f"mcts:5:policy={path}:batch=0", "batch must be a positive integer"),
        (f"mcts:5:policy={path}:mix=1.5", "mix must be a number in"),
        (f"mcts:5:policy={path}:floor=2", "floor must be a number in [0, 1]"),
        (f"mcts:5:policy={path}:mix=-0.1", "mix must be a finite number >= 0"),
        (f"mcts:5:policy={path}:margin=-1", "margin must be a finite number >= 0"),
        (f"mcts:5:policy={path}:margin=1:margin=2", "margin given twice"),
    ]:
        with pytest.raises(AgentSpecError, match=re.escape(words)):
            make_agent(bad, rules)


@pytest.mark.parametrize(
    "option,words",
    [
        ("search=tree", "option search was removed: the search is the flat one"),
        ("search=flat", "option search was removed: the search is the flat one"),
        ("playout=heuristic", "option playout was removed: the playouts are the policy's own"),
        ("exchange=plan", "option exchange was removed: the exchange is searched card by card"),
        ("exchange=search", "option exchange was removed: the exchange is searched card by card"),
        ("c=2", "option c was removed: it was the PUCT constant of search=tree"),
        ("depth=1", "option depth was removed: it cut the tree of search=tree"),
        ("scale=30", "option scale was removed: it weighed values against c in search=tree"),
    ],
)
def test_a_removed_option_is_named_with_what_to_do(tmp_path, option, words):
    rules = make_rules("standard")
    path = ck.save_policy(tmp_path / "p.safetensors", _net(rules, True), rules)
    with pytest.raises(AgentSpecError, match=re.escape(words)) as err:
        make_agent(f"mcts:5:policy={path}:{option}", rules)
    assert str(err.value).endswith("; drop it")


def test_bad_arguments_are_named():
    rules = make_rules("standard")
    with pytest.raises(ValueError, match="iterations"):
        GuidedSearchAgent(_net(rules, True), rules, 0)
    with pytest.raises(ValueError, match="mix must be a number in"):
        GuidedSearchAgent(_net(rules, True), rules, 5, mix=2)
    with pytest.raises(ValueError, match="margin must be a finite number"):
        GuidedSearchAgent(_net(rules, True), rules, 5, margin=float("nan"))
    with pytest.raises(ValueError, match="batch must be a positive int"):
        GuidedSearchAgent(_net(rules, True), rules, 5, batch=0)
    with pytest.raises(ValueError, match="reward_scale must be a finite number > 0"):
        GuidedSearchAgent(_net(rules, True), rules, 5, reward_scale=0.0)
    with pytest.raises(ValueError, match="network reads"):
        GuidedSearchAgent(_net(make_rules("standard+normand"), True), rules, 5)


class _Spy(RandomAgent):
    """A random agent that notes the seat of every decision it is asked for."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.asked: list[int] = []

    def act(self, turn: Turn) -> int:
        self.asked.append(turn.player)
        return super().act(turn)


def test_against_an_opponent_the_playouts_give_it_the_other_seat():
    """An exploiter's search: in every playout the opponent plays the searcher's opponent's
    seat (and only that seat), to the deal's end; without one the policy plays both."""
    rules = make_rules("mini")
    spy = _Spy(4)
    agent = GuidedSearchAgent(_net(rules, True), rules, 6, mix=1.0, seed=0, opponent=spy)
    starts = []
    for seed in range(6):
        g = Game(rules, seed=seed, mode="deal")
        for _ in range(seed):
            if not g.is_over:
                g.apply(RandomAgent(seed).act(Turn(g, g.current_player)))
        starts.append(g)
    for player in (0, 1):
        spy.asked.clear()
        played = [g.clone() for g in starts]
        agent._policy_playouts(played, player)
        assert spy.asked and set(spy.asked) == {1 - player}
        assert all(len(p.deal_scores) == len(s.deal_scores) + 1 for p, s in zip(played, starts))
    # a whole deal with it: legal throughout, the opponent reseeded with the search
    _play(Game(rules, seed=9, mode="deal"), [agent, RandomAgent(1)])
    agent.reset(3)
    assert spy.seed == 3


def test_the_against_option_makes_an_exploiters_search(tmp_path):
    rules = make_rules("mini")
    path = ck.save_policy(tmp_path / "p.safetensors", _net(rules, True), rules, {})
    agent = make_agent(f"mcts:8:policy={path}:against=heuristic:seed=3", rules, seed=0)
    assert isinstance(agent, GuidedSearchAgent)
    assert agent.opponent is not None and agent.opponent.name == "heuristic:seed=3"
    assert agent.mix == 1.0  # the playouts alone, unless given
    assert make_agent(f"mcts:8:policy={path}:mix=0.5:against=random", rules).mix == 0.5
    policy = make_agent(f"mcts:8:policy={path}:against={path}:sample", rules, seed=0)
    assert policy._opponent_net is not None and not policy._opponent_greedy  # in the batch
    _play(Game(rules, seed=2, mode="deal"), [policy, RandomAgent(2)])
    with pytest.raises(AgentSpecError, match="against: agent spec 'nobody'"):
        make_agent(f"mcts:8:policy={path}:against=nobody", rules)
