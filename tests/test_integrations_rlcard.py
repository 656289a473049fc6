"""RLCard (the ``integrations`` extra): ``rlcard.make("piquet")`` through RLCard's own registry.

RLCard's state dict and payoffs, its ``run``/``tournament`` loop, ``step_back``, bad config, the
registration whatever the import order, and the other way round: RLCard agents as the project's
agents (:class:`RLCardAgent`, the ``py:`` specs of :func:`dqn` and :func:`nfsp`) in matches.
RLCard's DQN and NFSP training is the page's snippet (docs/integrations/rlcard.md, run by
tests/test_docs.py).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

rlcard = pytest.importorskip(
    "rlcard", reason='rlcard is not installed: pip install -e ".[integrations]"'
)
from rlcard.agents import RandomAgent  # noqa: E402
from rlcard.utils import set_seed, tournament  # noqa: E402

import piquet_env  # noqa: E402, F401  (registers "piquet" with RLCard)
from piquet_env.adapters.rlcard import (  # noqa: E402
    RLCardAgent,
    action_of,
    extract_state,
    raw_observation,
    save_weights,
)
from piquet_env.game import Game  # noqa: E402
from piquet_env.game.knowledge import determinize  # noqa: E402
from piquet_env.observation import encoder_for  # noqa: E402
from piquet_env.rules import STANDARD, make_rules  # noqa: E402

KEYS = {"obs", "legal_actions", "raw_obs", "raw_legal_actions", "action_record"}


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"game_rules": "classic+normand", "game_reward": "win"},
        {"game_mode": "partie", "game_reward_scale": 0.01},
    ],
)
def test_the_state_dict_and_the_payoffs(config) -> None:
    env = rlcard.make("piquet", config={"seed": 3, **config})
    rules = make_rules(config.get("game_rules", "standard"))
    enc = encoder_for(rules)
    assert env.num_players == 2 and env.num_actions == enc.n_actions
    assert env.state_shape == [[enc.size], [enc.size]] and env.action_shape == [None, None]
    rng = np.random.default_rng(0)
    state, player = env.reset()
    steps = 0
    while not env.is_over():
        g = env.game.game
        assert set(state) == KEYS and player == g.current_player == env.get_player_id()
        np.testing.assert_array_equal(state["obs"], enc.encode(g, player))
        assert list(state["legal_actions"]) == g.legal_actions()
        assert state["raw_legal_actions"] == [g.action_name(a) for a in g.legal_actions()]
        assert state["raw_obs"]["player"] == player
        assert len(state["action_record"]) == steps
        state, player = env.step(int(rng.choice(list(state["legal_actions"]))))
        steps += 1
    payoffs = env.get_payoffs()
    result = np.array(env.game.game.result, dtype=float)
    if config.get("game_reward") == "win":
        result = np.sign(result)
    np.testing.assert_allclose(payoffs, result * config.get("game_reward_scale", 1.0))
    assert payoffs.sum() == 0
    record = env.get_state(0)["action_record"]
    assert len(record) == len(env.action_recorder) > 0 and isinstance(record[0][1], str)
    info = env.get_perfect_information()
    assert set(info) == {"hands", "discards", "talon", "phase", "current_player", "legal_actions"}


def test_raw_obs_holds_only_what_the_player_knows() -> None:
    """The cards he cannot see dealt afresh (determinize): his raw_obs is the same."""
    rng = random.Random(0)
    for seed in range(20):
        g = Game(STANDARD, seed=seed, mode="deal")
        for _ in range(rng.randrange(0, 40)):
            if g.is_over:
                break
            g.apply(rng.choice(g.legal_actions()))
        if g.is_over:
            continue
        p = g.current_player
        other = determinize(g, p, random.Random(seed))
        assert raw_observation(other, p) == raw_observation(g, p)
        assert extract_state(other, 1 - p)["legal_actions"] == {}


def test_seeded_runs_repeat_and_tournament_runs() -> None:
    def payoffs(seed: int) -> list:
        env = rlcard.make("piquet", config={"seed": seed})
        env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(2)])
        set_seed(seed)
        return [list(env.run()[1]) for _ in range(3)]

    assert payoffs(5) == payoffs(5)
    env = rlcard.make("piquet", config={"seed": 1})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(2)])
    mean = tournament(env, 4)
    assert len(mean) == 2 and mean[0] == -mean[1]


def test_step_back_restores_the_game() -> None:
    env = rlcard.make("piquet", config={"seed": 2, "allow_step_back": True})
    state, _ = env.reset()
    first = env.game.game.clone()
    env.step(next(iter(state["legal_actions"])))
    assert env.step_back()
    g = env.game.game
    assert (g.hands, g.current_player, g.phase) == (first.hands, first.current_player, first.phase)
    assert not env.step_back()  # nothing before the first state


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"game_num_players": 4}, "unknown config key(s) 'game_num_players' for piquet"),
        ({"game_rules": "bogus"}, "game_rules: unknown rules preset 'bogus'"),
        ({"game_mode": "rubber"}, "game_mode must be one of"),
        ({"game_reward": "points"}, "game_reward must be one of ('result', 'win')"),
        ({"game_reward_scale": 0}, "game_reward_scale must be a positive number, got 0"),
        ({"allow_step_back": "yes"}, "allow_step_back must be True or False"),
    ],
)
def test_bad_config_is_named(config, message: str) -> None:
    with pytest.raises(ValueError) as info:
        rlcard.make("piquet", config=config)
    assert message in str(info.value)


def test_an_illegal_action_is_named() -> None:
    env = rlcard.make("piquet", config={"seed": 0})
    state, _ = env.reset()
    illegal = next(a for a in range(env.num_actions) if a not in state["legal_actions"])
    with pytest.raises(ValueError, match=f"{illegal} is not a legal action of player"):
        env.step(illegal)
    with pytest.raises(ValueError, match="'play XX' is not a legal action"):
        env.step("play XX", raw_action=True)
    assert action_of(env.game.game, state["raw_legal_actions"][0]) == next(
        iter(state["legal_actions"])
    )


@pytest.mark.parametrize(
    "order",
    [
        "import piquet_env\nimport rlcard\n",
        "import rlcard\nimport piquet_env\n",
        "import piquet_env.adapters.rlcard\nimport rlcard\n",  # the adapter first imports rlcard
    ],
)
def test_registered_whatever_the_import_order(tmp_path: Path, order: str) -> None:
    """Also when importing the adapter is what imports RLCard (a py: agent spec of it, in a
    fresh evaluation process): RLCard imports the entry point as it registers it."""
    code = order + (
        "env = rlcard.make('piquet', config={'seed': 0})\n"
        "state, player = env.reset()\n"
        "assert state['obs'].shape == (433,) and state['legal_actions']\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_an_rlcard_agent_plays_matches() -> None:
    """RLCard's random agent, wrapped, plays the project's matches, the same for the same seed."""
    from piquet_training.evaluation.duplicate import evaluate

    agent = RLCardAgent(RandomAgent(num_actions=35), name="rlcard-random")
    first = evaluate(agent, "heuristic", STANDARD, n=3, seed=4)
    again = evaluate(agent, "heuristic", STANDARD, n=3, seed=4)
    assert first.points == again.points and first.mean_diff < 0
    with pytest.raises(ValueError, match="needs an RLCard agent with eval_step"):
        RLCardAgent(object())


class Illegal:
    def eval_step(self, state):
        return 99, {}


def test_an_rlcard_agent_answering_an_illegal_action_is_named() -> None:
    from piquet_env.agent import Turn

    g = Game(STANDARD, seed=0)
    with pytest.raises(ValueError, match="99 is not a legal action of player"):
        RLCardAgent(Illegal()).act(Turn(g, g.current_player))


def test_dqn_and_nfsp_weights_become_agent_specs(tmp_path: Path) -> None:
    import torch
    from rlcard.agents import DQNAgent, NFSPAgent

    from piquet_agents.registry import AgentSpecError, make_agent

    enc = encoder_for(STANDARD)
    made = {
        "dqn": DQNAgent(num_actions=enc.n_actions, state_shape=[enc.size], mlp_layers=[16]),
        "nfsp": NFSPAgent(
            num_actions=enc.n_actions,
            state_shape=[enc.size],
            hidden_layers_sizes=[16],
            q_mlp_layers=[16],
            device=torch.device("cpu"),
        ),
    }
    g = Game(STANDARD, seed=1)
    from piquet_env.agent import Turn

    for kind, agent in made.items():
        path = tmp_path / f"{kind}.safetensors"
        save_weights(agent, str(path))
        spec = f"py:piquet_env.adapters.rlcard:{kind}:weights={path}:layers=16"
        loaded = make_agent(spec, STANDARD, seed=0)
        assert loaded.name == f"rlcard-{kind}"
        assert loaded.act(Turn(g, g.current_player)) in g.legal_actions()
        with pytest.raises(AgentSpecError, match="cannot load .* into this network"):
            make_agent(f"py:piquet_env.adapters.rlcard:{kind}:weights={path}:layers=32", STANDARD)
    with pytest.raises(AgentSpecError, match="give the weights: weights=FILE.safetensors"):
        make_agent("py:piquet_env.adapters.rlcard:dqn", STANDARD)
    with pytest.raises(AgentSpecError, match="layers must be positive sizes"):
        make_agent(f"py:piquet_env.adapters.rlcard:dqn:weights={path}:layers=a", STANDARD)
    # the Q-network acts greedily: the same action at the same turn, in every copy
    spec = f"py:piquet_env.adapters.rlcard:dqn:weights={tmp_path / 'dqn.safetensors'}:layers=16"
    a, b = make_agent(spec, STANDARD), make_agent(spec, STANDARD)
    assert a.act(Turn(g, g.current_player)) == b.act(Turn(g, g.current_player))
