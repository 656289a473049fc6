"""Exact evaluation (``piquet_env.exact``) on tiny instances of the ``mini`` rules: the tree's
counts, its information-state keys against the engine's and OpenSpiel's, best responses and
NashConv against OpenSpiel's ``exploitability.nash_conv`` on the adapter's game, CFR+, tabular
policies, and the refusals. The full ``mini`` game runs in ``python -m piquet_env.testing.exact``
(a benchmark script), not here."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from piquet_env.agent import RandomAgent, Turn
from piquet_env.exact import policy as P
from piquet_env.exact import solve as S
from piquet_env.exact import tree as T
from piquet_env.exact.keys import info_key
from piquet_env.game import Game, Phase
from piquet_env.rules import STANDARD, make_rules

TINY = "mini[suits=2,ranks=2,hand_size=1]"
"""Four cards (K A of two suits), one each, a talon of two: a few seconds in OpenSpiel."""
SMALL = "mini[suits=2,hand_size=2]"
"""Six cards (Q K A of two suits), two each, a talon of two: 64,716 histories."""


@pytest.fixture(scope="module")
def tiny() -> T.GameTree:
    return T.build_tree(make_rules(TINY))


@pytest.fixture(scope="module")
def small() -> T.GameTree:
    return T.build_tree(make_rules(SMALL))


def test_the_deals_are_counted_by_hand(tiny, small):
    # 4 cards: elder's 1 of 4, younger's 1 of 3, the talon's 2 in either order.
    assert T.count_deals(make_rules(TINY)) == 4 * 3 * 2 == tiny.n_deals
    # 6 cards: C(6,2) * C(4,2) * 2!
    assert T.count_deals(make_rules(SMALL)) == 15 * 6 * 2 == small.n_deals
    # mini: C(9,4) * C(5,4) * 1!
    assert T.count_deals(make_rules("mini")) == 126 * 5
    rows = T.enumerate_deals(make_rules(TINY))
    assert len({tuple(r) for r in rows.tolist()}) == rows.shape[0] == 24
    counts = small.counts()
    assert counts["histories"] == counts["terminal_histories"] + counts["decision_histories"]
    assert counts["infosets_elder"] + counts["infosets_younger"] == small.n_infosets
    # every node comes after its parent, and its level is its depth
    has = small.parent >= 0
    assert (small.parent[has] < np.flatnonzero(has)).all()
    assert (small.depth[has] == small.depth[small.parent[has]] + 1).all()


def test_a_rule_set_too_large_is_refused_before_any_work():
    with pytest.raises(T.TreeError, match="too large to solve exactly.*use rules=.mini."):
        T.check_size(STANDARD)
    with pytest.raises(T.TreeError, match="too large"):
        T.build_tree(make_rules("standard+orbis"))


def _games(tree: T.GameTree, limit: int, seed: int = 0):
    """``(node, game)`` for up to ``limit`` decision nodes asked by an agent (not the forced
    passes), the game replayed along the node's path with its events recorded."""
    forced = P.forced_nodes(tree)
    nodes = np.flatnonzero((tree.player >= 0) & ~forced)
    pick = np.random.default_rng(seed).choice(nodes, size=min(limit, nodes.size), replace=False)
    for node in pick.tolist():
        path = []
        n = node
        while tree.parent[n] >= 0:
            path.append(n)
            n = int(tree.parent[n])
        game = P.deal_game(tree.rules, tree.deals[tree.deal[node]])
        for step in reversed(path):
            if not forced[tree.parent[step]]:
                game.apply(int(tree.action[step]))
        yield node, game


def test_the_engine_and_the_batch_compute_the_same_keys(small):
    for node, game in _games(small, 400):
        assert game.current_player == small.player[node]
        legal = sum(1 << a for a in game.legal_actions())
        assert legal == int(small.info_legal[small.infoset[node]])
        assert info_key(game, game.current_player) == tuple(
            int(x) for x in small.info_key[small.infoset[node]]
        )


def test_a_key_is_the_same_in_either_seat():
    g0 = Game(make_rules(SMALL), seed=3, mode="deal", first_elder=0)
    deal = next(e for e in g0.events if e["type"] == "deal")
    g1 = Game(
        make_rules(SMALL),
        mode="deal",
        deals=[(deal["elder_hand"], deal["younger_hand"], deal["talon"])],
        first_elder=1,
    )
    rng = random.Random(0)
    while not g0.is_over:
        p = g0.current_player
        assert info_key(g0, p) == info_key(g1, 1 - p)
        a = rng.choice(g0.legal_actions())
        g0.apply(a)
        g1.apply(a)


def test_a_key_needs_no_event_log():
    g = Game(make_rules(SMALL), seed=5, mode="deal")
    quiet = Game(make_rules(SMALL), seed=5, mode="deal", record=False)
    rng = random.Random(5)
    while not g.is_over:
        p = g.current_player
        assert info_key(g, p) == info_key(quiet, p) == info_key(quiet.clone(), p)
        a = rng.choice(g.legal_actions())
        g.apply(a)
        quiet.apply(a)


def test_best_responses_are_consistent(small):
    target = P.tabulate(small, RandomAgent())
    for player in (S.ELDER, S.YOUNGER):
        br = S.best_response(small, target, player)
        mine = br.policy(small)
        elder, younger = (mine, target) if player == S.ELDER else (target, mine)
        value = S.expected_value(small, elder, younger)
        assert (value if player == S.ELDER else -value) == pytest.approx(br.value, abs=1e-9)
        # no responder does better than the best response: nor uniform play
        uniform = S.expected_value(small, target if player else S.uniform_policy(small))
        assert br.value >= (uniform if player == S.ELDER else -uniform) - 1e-9
    e = S.exploitability(small, target)
    assert e.nash_conv == pytest.approx(e.br_elder + e.br_younger)
    assert e.br_seat == pytest.approx(e.nash_conv / 2) == pytest.approx(e.exploitability)


def test_cfr_plus_approaches_an_equilibrium_and_saves_as_an_agent(small, tmp_path):
    solver = S.CFRPlus(small)
    gaps = []
    for _ in range(4):
        solver.run(40)
        gaps.append(S.nash_conv(small, solver.average))
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 0.05
    assert S.nash_conv(small, S.uniform_policy(small)) > 20
    table = P.TabularPolicy.from_tree(small, solver.average, iterations=solver.iterations)
    path = table.save(tmp_path / "cfr.npz")
    assert P.is_tabular_file(path)
    back = P.TabularPolicy.load(path)
    assert back.meta["iterations"] == 160 and back.rules == small.rules
    np.testing.assert_allclose(back.on_tree(small), solver.average, atol=1e-6)
    agent = P.TabularAgent(back, seed=1)
    for node, game in _games(small, 200, seed=1):
        probs = agent.action_probabilities(Turn(game, game.current_player))
        i = small.infoset[node]
        a, b = small.slot_start[i], small.slot_start[i + 1]
        want = dict(zip(small.slot_action[a:b].tolist(), back.on_tree(small)[a:b].tolist()))
        assert probs == pytest.approx(want)
        assert agent.act(Turn(game, game.current_player)) in game.legal_actions()
    with pytest.raises(P.ExactPolicyError, match="cannot play"):
        back.on_tree(T.build_tree(make_rules(TINY)))


def test_a_bad_tabular_file_is_named(tmp_path):
    bad = tmp_path / "x.npz"
    np.savez(bad, a=np.zeros(3))
    with pytest.raises(P.ExactPolicyError, match="not a tabular policy file"):
        P.TabularPolicy.load(bad)
    (tmp_path / "y.npz").write_bytes(b"not a zip")
    with pytest.raises(P.ExactPolicyError, match="not a tabular policy file"):
        P.TabularPolicy.load(tmp_path / "y.npz")
    assert P.is_tabular_file(tmp_path / "y.npz")  # an .npz is read as one, and refused by name


class _Peeker:
    """Plays the first legal card unless the opponent holds the ace of clubs: it reads a hidden
    card, so it has no policy over what it knows."""

    name = "peeker"

    def action_probabilities(self, turn: Turn) -> dict[int, float]:
        legal = turn.legal_actions
        g = turn.game
        peek = g.hands[1 - turn.player] >> 7 & 1
        return {legal[-1] if peek and g.phase == Phase.PLAY else legal[0]: 1.0}


def test_an_agent_that_reads_hidden_cards_has_no_exact_policy(small):
    with pytest.raises(P.ExactPolicyError, match="not a function of what it knows"):
        P.tabulate(small, _Peeker(), check=True)
    with pytest.raises(P.ExactPolicyError, match="no exact action probabilities"):
        P.tabulate(small, object())


# ---------------------------------------------------------------------------- OpenSpiel


class _AgentPolicy:
    """An agent as an OpenSpiel policy (its probabilities at every state)."""

    def __new__(cls, game, agent):
        from open_spiel.python import policy

        class AgentPolicy(policy.Policy):
            def action_probabilities(self, state, player_id=None):
                g = state.game
                return agent.action_probabilities(Turn(g, g.current_player))

        return AgentPolicy(game, [0, 1])


def _trained_policy(tmp_path):
    """A policy trained by ``piquet train`` on the tiny rules for a few updates."""
    from piquet_agents.policy import PolicyAgent
    from tests.train_helpers import TINY as SETTINGS
    from tests.train_helpers import train_cli

    out = tmp_path / "run"
    assert train_cli(out, SETTINGS, f"rules={TINY}", "updates=3", "exact_every=2") == 0
    return out / "policy.safetensors", PolicyAgent


def test_nash_conv_agrees_with_openspiel(tiny, tmp_path):
    pyspiel = pytest.importorskip("pyspiel")
    pytest.importorskip("torch")
    from open_spiel.python.algorithms import exploitability

    import piquet_env.adapters.openspiel  # noqa: F401  (registers python_piquet)
    from piquet_agents.heuristic import HeuristicAgent

    game = pyspiel.load_game("python_piquet", {"rules": TINY, "mode": "deal"})
    path, PolicyAgent = _trained_policy(tmp_path)
    agents = {
        "random": RandomAgent(),
        "heuristic": HeuristicAgent(seed=0),
        "trained policy, sampled": PolicyAgent.load(path, greedy=False),
    }  # the greedy policy, deterministic as the heuristic is, is checked below against exact.csv
    seen = set()
    for name, agent in agents.items():
        mine = S.exploitability(tiny, P.tabulate(tiny, agent, batched=False, check=True))
        theirs = exploitability.nash_conv(game, _AgentPolicy(game, agent))
        assert math.isclose(mine.nash_conv, theirs, abs_tol=1e-9), name
        seen.add(round(mine.nash_conv, 6))
    assert len(seen) >= 3  # the targets differ, so the agreement says something
    # the run measured itself exactly as it trained (exact_every=2: updates 0, 2 and 3)
    import csv

    rows = list(csv.DictReader((path.parent / "exact.csv").open()))
    assert [(r["update"], r["form"]) for r in rows] == [
        (u, f) for u in ("0", "2", "3") for f in ("sample", "greedy")
    ]
    last = {r["form"]: float(r["nash_conv"]) for r in rows[-2:]}
    for form, agent in (
        ("greedy", PolicyAgent.load(path)),
        ("sample", agents["trained policy, sampled"]),
    ):
        assert last[form] == pytest.approx(S.nash_conv(tiny, P.tabulate(tiny, agent)), abs=1e-5)


def test_the_commands_give_exact_figures(tiny, tmp_path, capsys):
    pytest.importorskip("torch")
    import json

    from piquet_cli import main

    out = tmp_path / "cfr"
    assert main(["solve", "--rules", TINY, "--iterations", "60", "--check-every", "20",
                 "--out", str(out), "--json", str(tmp_path / "s.json")]) == 0  # fmt: skip
    solved = json.loads((tmp_path / "s.json").read_text())
    assert solved["iterations"] == 60 and len(solved["log"]) == 3
    assert (out / "policy.npz").is_file() and (out / "nashconv.csv").is_file()
    assert main(["exploit", str(out / "policy.npz"), "--rules", TINY, "--exact",
                 "--json", str(tmp_path / "e.json")]) == 0  # fmt: skip
    exact = json.loads((tmp_path / "e.json").read_text())["exact"]
    assert exact["nash_conv"] == pytest.approx(solved["figures"]["nash_conv"], abs=1e-6)
    assert main(["exploit", "random", "--rules", TINY, "--exact"]) == 0
    assert "NashConv 7.8333" in capsys.readouterr().out
    assert main(["exploit", "heuristic", "--exact"]) == 2
    assert "too large to solve exactly" in capsys.readouterr().err
    assert main(["exploit", "mcts:5", "--rules", TINY, "--exact"]) == 2
    assert "no exact action probabilities" in capsys.readouterr().err
    assert main(["solve", "--until", "2"]) == 2


def test_exact_every_needs_small_rules():
    from piquet_training.settings.train import ConfigError, TrainConfig

    with pytest.raises(ConfigError, match="exact_every: 'standard' is too large"):
        TrainConfig(exact_every=5).validate()
    TrainConfig(exact_every=5, rules="mini").validate()


def test_measuring_exactly_does_not_change_what_is_trained(tmp_path):
    """``exact_every`` only reads the network: the same seed trains the same weights with it on
    and off (so a run's exact learning curve is that of the run without it)."""
    pytest.importorskip("torch")
    import torch
    from safetensors.torch import load_file

    from tests.train_helpers import TINY as SETTINGS
    from tests.train_helpers import train_cli

    weights = []
    for every in (2, 0):
        out = tmp_path / f"every-{every}"
        assert train_cli(out, SETTINGS, f"rules={TINY}", "updates=3", f"exact_every={every}") == 0
        assert (out / "exact.csv").exists() == bool(every)
        weights.append(load_file(out / "policy.safetensors"))
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def make_agent_for(rules, spec):
    from piquet_agents.registry import make_agent

    return make_agent(spec, rules)


def test_eval_and_ladder_print_the_exact_expectation(tiny, tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("openskill")
    from piquet_cli import main
    from piquet_training.exact import exact_difference, exact_ratings

    rules = make_rules(TINY)
    truth = exact_difference("heuristic:seed=0", "random", rules)
    # by hand: the duplicate pair's two games, half each
    h = P.tabulate(tiny, make_agent_for(rules, "heuristic:seed=0"))
    u = S.uniform_policy(tiny)
    by_hand = 0.5 * (S.expected_value(tiny, h, u) - S.expected_value(tiny, u, h))
    assert truth == pytest.approx(by_hand, abs=1e-12)
    assert exact_difference("random", "heuristic:seed=0", rules) == pytest.approx(-truth)
    assert exact_difference("random", "random", rules) == pytest.approx(0.0, abs=1e-12)
    assert main(["eval", "heuristic:seed=0", "random", "--rules", TINY, "--deals", "200",
                 "--exact", "--no-progress", "--seed", "1",
                 "--json", str(tmp_path / "e.json")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"exact expected points per deal (heuristic:seed=0 − random): {truth:+.4f}" in out
    import json

    assert json.loads((tmp_path / "e.json").read_text())["exact"]["points_per_deal"] == truth
    ratings = exact_ratings(["heuristic:seed=0", "random"], rules)["ratings"]
    assert ratings["heuristic:seed=0"] == pytest.approx(truth / 2)
    assert main(["ladder", "heuristic:seed=0", "random", "--rules", TINY, "--deals", "50",
                 "--exact", "--no-progress", "--out", str(tmp_path / "lad")]) == 0  # fmt: skip
    assert "exact ratings" in capsys.readouterr().out
    saved = json.loads((tmp_path / "lad" / "ladder.json").read_text())["exact"]
    assert saved["ratings"] == pytest.approx(ratings)
    assert saved["matrix"]["random"]["heuristic:seed=0"] == pytest.approx(-truth)
    assert set(saved["holds"]) == {"heuristic:seed=0", "random"}
    assert all(isinstance(v, bool) for v in saved["holds"].values())
    assert main(["eval", "mcts:5", "random", "--rules", TINY, "--exact"]) == 2
    assert main(["eval", "random", "random", "--exact"]) == 2


def test_the_coverage_harness_checks_each_interval_against_the_exact_difference():
    """``python -m piquet_training.studies.exact_coverage``: the truth is the traversal's, each
    seed's interval is the match's own, and the counts follow from them."""
    from piquet_training.evaluation.duplicate import evaluate
    from piquet_training.exact import exact_difference
    from piquet_training.studies.exact_coverage import coverage, main

    out = coverage("random", "heuristic:seed=0", TINY, [0, 1, 2], deals=30)
    truth = exact_difference("random", "heuristic:seed=0", make_rules(TINY))
    assert out["exact_points_per_deal"] == truth < 0  # the heuristic is the better player
    rep = evaluate("random", "heuristic:seed=0", make_rules(TINY), 30, "deal", 1)
    assert out["seeds"][1]["plain"]["low"] == rep.points.low
    covers = [r["plain"]["low"] <= truth <= r["plain"]["high"] for r in out["seeds"]]
    assert [r["plain"]["covers"] for r in out["seeds"]] == covers
    assert out["summary"]["plain"]["covered"] == sum(covers)
    assert "corrected" not in out["summary"]
    assert main(["random", "random", "--rules", TINY, "--seeds", "2", "--deals", "10"]) == 0


def test_the_exact_curves_read_each_run_and_draw_them(tmp_path):
    """``python -m piquet_training.studies.exact_curves``: the finals are each run's last row of its
    form, the group's mean theirs, and the figure is written."""
    from piquet_training.studies.exact_curves import main, read_exact, summarise

    header = "update,env_steps,minutes,form,nash_conv,br_elder,br_younger,value_elder,seconds\n"
    for run, finals in (("a", (6.0, 6.5)), ("b", (4.0, 4.5))):
        (tmp_path / run).mkdir()
        rows = ["0,0,0,sample,14,0,0,0,1\n", "0,0,0,greedy,15,0,0,0,1\n"]
        rows += [f"20,1000,0.5,{form},7,0,0,0,12\n" for form in ("sample", "greedy")]
        rows += [
            f"40,2000,1.5,sample,{finals[0]},0,0,0,1\n",
            f"40,2000,1.5,greedy,{finals[1]},0,0,0,1\n",
        ]
        (tmp_path / run / "exact.csv").write_text(header + "".join(rows))
    (tmp_path / "cfr.csv").write_text("iteration,seconds,nash_conv,value_elder\n25,3.0,0.7,20\n")
    runs = [str(tmp_path / "a"), str(tmp_path / "b")]
    s = summarise({"plain": runs})["plain"]
    assert [r["nash_conv"] for r in s["runs"].values()] == [6.0, 4.0] and s["mean"] == 5.0
    assert summarise({"plain": runs}, "greedy")["plain"]["max"] == 6.5
    curve = read_exact(runs[0])  # minutes less the measurement at update 20 (12 s)
    assert [r["minutes"] for r in curve] == [0, 0.5, 1.3] and curve[-1]["env_steps"] == 2000
    out = tmp_path / "curves.png"
    argv = ["--group", f"plain={','.join(runs)}", "--cfr", str(tmp_path / "cfr.csv")]
    assert main([*argv, "--out", str(out)]) == 0 and out.stat().st_size > 10_000
    with pytest.raises(FileNotFoundError, match="no exact.csv"):
        summarise({"x": [str(tmp_path)]})
