"""The shipped policy: ``baseline`` is an agent spec on a fresh install, its metadata says how it
was trained, and :func:`write_baseline` records that for a new one."""

from __future__ import annotations

import pytest
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.baseline import (
    BASELINE_PATH,
    BASELINES,
    RETIRED,
    NoBaselineError,
    baseline_info,
    baseline_path,
    write_baseline,
)
from piquet_agents.guided_search import GuidedSearchAgent
from piquet_agents.network import ActorCritic
from piquet_agents.policy import PolicyAgent
from piquet_agents.registry import AgentSpecError, make_agent, spec_files
from piquet_env.observation import encoder_for
from piquet_env.rules import CLASSIC, STANDARD, make_rules
from piquet_training.evaluation.duplicate import evaluate


def test_the_shipped_policy_loads_by_its_spec_and_plays():
    assert BASELINE_PATH.is_file() and BASELINE_PATH.stat().st_size < 8 * 2**20
    agent = make_agent("baseline", STANDARD, seed=0)
    assert isinstance(agent, PolicyAgent) and agent.name == "baseline"
    info = baseline_info()
    assert info["baseline"]["command"].startswith("piquet train")
    assert info["config"]["hidden"] == list(agent.model.hidden)
    report = evaluate("baseline", "random", STANDARD, n=3, mode="deal", seed=0)
    assert report.n_games == 6
    guided = make_agent("mcts:4:policy=baseline", STANDARD, seed=0)
    assert isinstance(guided, GuidedSearchAgent)


def test_baseline_is_the_policy_of_the_rules_in_use():
    classic = make_agent("baseline", CLASSIC, seed=0)
    assert isinstance(classic, PolicyAgent) and classic.rules == CLASSIC
    assert baseline_path(CLASSIC) == BASELINES["classic"] != BASELINE_PATH
    assert baseline_info(BASELINES["classic"])["config"]["rules"] == "classic"
    assert spec_files("baseline", CLASSIC) == [str(BASELINES["classic"])]
    assert spec_files("baseline") == spec_files("baseline", STANDARD) == [str(BASELINE_PATH)]
    report = evaluate("baseline", "heuristic", CLASSIC, n=2, mode="deal", seed=0)
    assert report.n_games == 4
    guided = make_agent("mcts:4:policy=baseline", CLASSIC, seed=0)
    assert isinstance(guided, GuidedSearchAgent) and guided.rules == CLASSIC
    for name, path in BASELINES.items():  # each file is a policy of the rules it is filed under
        assert path.is_file() and path.stat().st_size < 8 * 2**20
        assert baseline_info(path)["config"]["rules"] == name


def test_rules_without_a_shipped_policy_say_which_rule_sets_have_one():
    normand = make_rules("standard", variants=["normand"])
    with pytest.raises(NoBaselineError, match=r"'standard\+normand'; rule sets with one: standard"):
        baseline_path(normand)
    with pytest.raises(AgentSpecError, match=r"no shipped baseline for the rules 'standard\+n"):
        make_agent("baseline", normand)
    with pytest.raises(AgentSpecError, match="policy: no shipped baseline"):
        make_agent("mcts:4:policy=baseline", normand)
    assert spec_files("baseline", normand) == []


def test_a_retired_baseline_plays_by_its_tag():
    """What ``baseline`` named before stays in the package: ``baseline@TAG``, greedy or sampled,
    alone or guiding a search, each file a policy of the rules it is filed under."""
    for tag, files in RETIRED.items():
        for name, path in files.items():
            rules = make_rules(name)
            assert path.is_file() and path.stat().st_size < 8 * 2**20
            assert baseline_path(rules, tag) == path
            assert baseline_info(path)["config"]["rules"] == name
            agent = make_agent(f"baseline@{tag}", rules, seed=0)
            assert isinstance(agent, PolicyAgent) and agent.name == f"baseline@{tag}"
            assert agent.greedy and agent.rules == rules
    sampled = make_agent("Baseline@2026-11-30:sample", STANDARD, seed=0)
    assert sampled.name == "baseline@2026-11-30:sample" and not sampled.greedy
    kept = [str(RETIRED["2026-11-30"]["standard"])]
    assert spec_files("baseline@2026-11-30") == kept
    assert spec_files("mcts:4:policy=baseline@2026-11-30") == kept
    report = evaluate("baseline@2026-11-30", "random", STANDARD, n=2, mode="deal", seed=0)
    assert report.n_games == 4
    # a retired policy plays under its own rules, beside the one that replaced it
    report = evaluate("baseline@2026-12-01", "baseline", CLASSIC, n=2, mode="deal", seed=0)
    assert report.n_games == 4
    assert spec_files("baseline@2026-12-01", CLASSIC) == [str(RETIRED["2026-12-01"]["classic"])]


@pytest.mark.parametrize(
    ("spec", "rules", "message"),
    [
        ("baseline@2099-01-01", STANDARD, r"no retired baseline tagged '2099-01-01'; tags: 2026-"),
        ("baseline@", STANDARD, r"no retired baseline tagged ''; tags: 2026-11-30, 2026-12-01$"),
        ("mcts:4:policy=baseline@x", STANDARD, r"policy: no retired baseline tagged 'x'"),
        ("baseline@2026-11-30", CLASSIC, r"no baseline@2026-11-30 for the rules 'classic'; rule"),
        ("baseline@2026-12-01", STANDARD, r"2026-12-01 for the rules 'standard'; .*: classic$"),
    ],
)
def test_a_tag_that_names_nothing_says_which_there_are(spec, rules, message):
    with pytest.raises(AgentSpecError, match=message):
        make_agent(spec, rules)


def test_write_baseline_records_the_command(tmp_path):
    enc = encoder_for(STANDARD)
    torch.manual_seed(0)
    net = ActorCritic(enc.size, enc.n_actions, (8,), "tanh", enc.state_size)
    src = ck.save_policy(tmp_path / "p.safetensors", net, STANDARD, {"hidden": [8], "seed": 4})
    out = write_baseline(src, "piquet train --set seed=4", "measured", tmp_path / "b.safetensors")
    info = baseline_info(out)
    assert info["baseline"] == {
        "command": "piquet train --set seed=4",
        "note": "measured",
        "source": "p.safetensors",
    }
    assert info["config"]["seed"] == 4
    loaded = PolicyAgent.load(out).model.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in net.state_dict().items())


def test_the_writer_runs_as_a_module(tmp_path):
    import subprocess
    import sys

    enc = encoder_for(STANDARD)
    src = ck.save_policy(
        tmp_path / "p.safetensors", ActorCritic(enc.size, enc.n_actions, (8,)), STANDARD, {}
    )
    out = tmp_path / "b.safetensors"
    cmd = [sys.executable, "-m", "piquet_agents.baseline", str(src), "--command", "piquet train"]
    done = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert baseline_info(out)["baseline"]["command"] == "piquet train"
