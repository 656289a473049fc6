"""The search's belief weighed by the opponent's reach (:mod:`piquet_agents.belief`): a
determinized world's history replays to that world, the true deal has the full reach of the
agent that played it, a world the opponent would not have played into has none, and the search
takes ``belief=reach`` from its spec."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.belief import reach_weights, replay_deal, resample
from piquet_agents.guided_search import GuidedSearchAgent
from piquet_agents.heuristic import HeuristicAgent
from piquet_agents.network import ActorCritic
from piquet_agents.policy import PolicyAgent
from piquet_agents.registry import AgentSpecError, make_agent
from piquet_env.agent import RandomAgent, Turn
from piquet_env.game import Game, determinize
from piquet_env.observation import encoder_for
from piquet_env.rules import make_rules


def _net(rules) -> ActorCritic:
    torch.manual_seed(0)
    enc = encoder_for(rules)
    return ActorCritic(enc.size, enc.n_actions, (16,), "tanh", 0)


def _midway(rules, seed: int, agent) -> Game | None:
    """A deal played by ``agent`` in both seats for a few moves (None if it ended)."""
    g = Game(rules, seed=seed, mode="deal")
    for _ in range(random.Random(seed).randrange(1, 22)):
        if g.current_player < 0:
            return None
        g.apply(agent.act(Turn(g, g.current_player)))
    return g if g.current_player >= 0 else None


def _state(g: Game) -> tuple:
    return (g.hands, g.discards, g.played, g.talon, g.phase, g.decl_step, g.current_player)


@pytest.mark.parametrize("preset", ["mini", "standard", "classic+normand"])
def test_a_worlds_history_replays_to_that_world(preset):
    """The history a determinized copy carries replays, decision by decision, to the copy
    itself (the declarations from the public record, whatever was forced in either world)."""
    rules = make_rules(preset)
    checked = 0
    for seed in range(25):
        g = _midway(rules, seed, HeuristicAgent(seed=0))
        if g is None:
            continue
        rng = random.Random(seed)
        for _ in range(4):
            world = determinize(g, g.current_player, rng)
            states = [state for state, _ in replay_deal(world)]
            assert states and _state(states[-1]) == _state(world)
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("preset", ["mini", "standard"])
def test_reach_is_the_opponents_probability_of_his_own_moves(preset):
    """The true deal has reach 1 for the pure heuristic that played it; a world where it would
    have moved otherwise has 0; a sampled policy's reach is the product of its probabilities."""
    rules = make_rules(preset)
    heuristic = HeuristicAgent(seed=0)
    zeros = ones = 0
    for seed in range(30):
        g = _midway(rules, seed, heuristic)
        if g is None:
            continue
        p = g.current_player
        assert reach_weights([g], 1 - p, heuristic)[0] == 1.0
        worlds = [determinize(g, p, random.Random(k)) for k in range(8)]
        w = reach_weights(worlds, 1 - p, heuristic)
        assert set(w.tolist()) <= {0.0, 1.0}
        zeros, ones = zeros + int((w == 0).sum()), ones + int((w == 1).sum())
    assert zeros and ones
    # a sampled policy: the product of its probabilities of its moves, one at a time
    policy = PolicyAgent(_net(rules), rules, greedy=False, seed=0)
    g = _midway(rules, 3, RandomAgent(3))
    assert g is not None
    by_hand, seat = 1.0, 1 - g.current_player
    for state, action in replay_deal(g):
        if state.current_player == seat:
            by_hand *= policy.action_probabilities(Turn(state, seat))[action]
    assert reach_weights([g], seat, policy)[0] == pytest.approx(by_hand, rel=1e-6)


def test_resampling_follows_the_weights():
    rng = random.Random(0)
    assert set(resample(np.array([0.0, 1.0, 0.0]), 20, rng)) == {1}
    assert set(resample(np.zeros(3), 60, rng)) == {0, 1, 2}  # nothing explains: uniform


def test_the_search_takes_belief_reach_from_its_spec(tmp_path):
    rules = make_rules("mini")
    path = ck.save_policy(tmp_path / "p.safetensors", _net(rules), rules, {})
    agent = make_agent(f"mcts:8:policy={path}:belief=reach:against=heuristic:seed=3", rules, 0)
    assert isinstance(agent, GuidedSearchAgent) and agent.belief == "reach"
    assert make_agent(f"mcts:8:policy={path}:against=random", rules).belief == "uniform"
    with pytest.raises(AgentSpecError, match="belief must be one of uniform, reach"):
        make_agent(f"mcts:8:policy={path}:belief=exact:against=random", rules)
    with pytest.raises(ValueError, match="give the opponent"):
        GuidedSearchAgent(_net(rules), rules, 8, belief="reach")
    for seed in range(3):  # legal throughout, in either seat
        g = Game(rules, seed=seed, mode="deal")
        seats = [agent, HeuristicAgent(seed=3)] if seed % 2 else [HeuristicAgent(seed=3), agent]
        while not g.is_over:
            p = g.current_player
            a = seats[p].act(Turn(g, p))
            assert g.is_legal(a)
            g.apply(a)


TINY = "mini[suits=2,ranks=2,hand_size=1]"
SMALL = (("games_per_update", 8), ("num_envs", 8), ("num_minibatches", 2), ("bc_games", 8))
SMALL += (("hidden", "[16]"), ("tensorboard", "false"), ("torch_threads", 1))


def test_the_reach_searchs_bound_stays_below_the_exact_value(tmp_path):
    """``piquet exploit --search N --belief reach`` on a small form of ``mini``: the search's
    bound (and the exploiter's) never lies above the target's exact exploitability beyond its
    95% interval; the files name the search's belief."""
    import json

    from piquet_cli import main

    out, target = tmp_path / "x", "heuristic:seed=1"
    argv = ["exploit", target, "--rules", TINY, "--exact", "--steps", "600", "--eval-deals",
            "120", "--search", "4", "--belief", "reach", "--reference", "none", "--out", str(out),
            "--json", str(tmp_path / "x.json"), "--eval-every", "0"]  # fmt: skip
    for key, value in SMALL:
        argv += ["--set", f"{key}={value}"]
    assert main(argv) == 0
    found = json.loads((tmp_path / "x.json").read_text())
    truth = found["exact"]["br_seat"]
    assert found["search_agent"].endswith(f":belief=reach:against={target}")
    for bound in (found["edge"], found["search"]):
        assert bound["ci_low"] <= truth
    assert (out / "pairs.csv").read_text().splitlines()[0] == "pair,exploiter,search"
