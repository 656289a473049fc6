"""Both seats learning on the batched engine (:class:`BothSeatsVectorEnv`): turn-based steps for
RLlib's multi-agent runner, both seats' rewards summing to their results (zero-sum), games that
end with the rules' games and autoreset the step after, the same seed the same games, and one
short RLlib iteration through :func:`~piquet_training.rllib.algo.both_config`."""

from __future__ import annotations

import os

import numpy as np
import pytest

if not os.environ.get("CI"):  # CI installs the rllib extra: there a missing Ray fails
    pytest.importorskip("ray.rllib", reason="the rllib extra is not installed")

from piquet_env.observation import encoder_for
from piquet_training.rllib.algo import RLlibConfig
from piquet_training.rllib.both_seats import AGENTS, BothSeatsVectorEnv, make_both_env
from piquet_training.settings.schema import ConfigError

TINY = "mini[suits=2,ranks=2,hand_size=1]"


def _actions(obs: list[dict], rng: np.random.Generator) -> list[dict]:
    """A random legal action for every agent that observes with a move to make."""
    return [
        {
            a: int(rng.choice(np.flatnonzero(o["action_mask"])))
            for a, o in game.items()
            if o["action_mask"].any()
        }
        for game in obs
    ]


def _play(env: BothSeatsVectorEnv, seed: int, steps: int) -> list:
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    trace = []
    for _ in range(steps):
        actions = _actions(obs, rng)
        obs, rewards, terms, _, infos = env.step(actions)
        trace.append((actions, rewards, [t["__all__"] for t in terms], infos))
    return trace


def test_turn_based_zero_sum_games_that_end_and_are_dealt_afresh_next_step() -> None:
    """Only the agent to act observes (a legal mask, int8); each seat's rewards since it last
    acted reach it with its next observation, the last ones at the end with both final
    observations (empty masks), so a game's rewards sum to each seat's result (scaled) and to
    zero between the seats; the step after, the game is dealt afresh (its action ignored, no
    reward); every move counts."""
    n = 8
    env = make_both_env({"num_envs": n, "rules": "standard", "mode": "deal", "reward_scale": 0.01})
    size = encoder_for(env.rules).size
    obs, infos = env.reset(seed=4)
    assert len(obs) == n and infos == [{} for _ in range(n)]
    rng = np.random.default_rng(0)
    returns = np.zeros((n, 2))
    waiting = np.zeros(n, dtype=bool)
    games = moves = 0
    while games < 20:
        for game in obs:
            if len(game) == 1:  # else a final observation, both seats'
                ((agent, o),) = game.items()
                assert agent in AGENTS and o["observation"].shape == (size,)
                assert o["action_mask"].dtype == np.int8 and o["action_mask"].any()
        actions = _actions(obs, rng)
        moves += int((~waiting).sum())
        obs, rewards, terms, truncs, infos = env.step(actions)
        for i in range(n):
            assert not truncs[i]["__all__"]
            if waiting[i]:  # dealt afresh
                assert rewards[i] == {} and not terms[i]["__all__"] and len(obs[i]) == 1
                continue
            for agent, r in rewards[i].items():
                returns[i, AGENTS.index(agent)] += r
            if terms[i]["__all__"]:
                assert set(obs[i]) == set(AGENTS) == set(rewards[i])
                assert not any(o["action_mask"].any() for o in obs[i].values())
                results = [infos[i][a]["result"] for a in AGENTS]
                np.testing.assert_allclose(returns[i], np.array(results) * 0.01, atol=1e-5)
                assert returns[i].sum() == pytest.approx(0.0, abs=1e-5)
                returns[i] = 0.0
                games += 1
            else:
                assert set(rewards[i]) == set(obs[i])  # the agent to act, its reward
        waiting = np.array([t["__all__"] for t in terms])
    assert env.moves == moves and env.take_moves() == moves and env.take_moves() == 0


def test_the_games_are_the_rules_games() -> None:
    """Beside each batched game, the game rebuilt on :class:`~piquet_env.game.Game` shows the
    agent to act the same observation and legal actions, move for move, and ends with it."""
    env = BothSeatsVectorEnv(4, rules="standard", mode="deal")
    enc = encoder_for(env.rules)
    obs, _ = env.reset(seed=7)
    games = [env.batch.to_game(i) for i in range(4)]
    rng = np.random.default_rng(2)
    live = np.ones(4, dtype=bool)
    checked = 0
    while live.any():
        for i in np.flatnonzero(live):
            g = games[i]
            ((agent, o),) = obs[i].items()
            assert agent == AGENTS[g.current_player]
            np.testing.assert_array_equal(o["observation"], enc.encode(g, g.current_player))
            legal = np.zeros(enc.n_actions, dtype=np.int8)
            legal[g.legal_actions()] = 1
            np.testing.assert_array_equal(o["action_mask"], legal)
            checked += 1
        actions = _actions(obs, rng)
        obs, _, terms, _, infos = env.step(actions)
        for i in np.flatnonzero(live):
            g = games[i]
            g.apply(actions[i][AGENTS[g.current_player]])
            assert g.is_over == terms[i]["__all__"]
            if g.is_over:
                assert [infos[i][a]["result"] for a in AGENTS] == list(g.result)
                live[i] = False
    assert checked > 80


def test_the_same_seed_plays_the_same_games() -> None:
    def run(seed: int) -> list:
        return _play(BothSeatsVectorEnv(6, rules=TINY, mode="deal"), seed, 60)

    first, again, other = run(3), run(3), run(4)
    assert repr(first) == repr(again)
    assert repr(first) != repr(other)


def test_critic_state_and_options() -> None:
    env = BothSeatsVectorEnv(3, rules=TINY, critic_state=True)
    obs, _ = env.reset(seed=0)
    state_size = encoder_for(env.rules).state_size
    assert all(o["state"].shape == (state_size,) for game in obs for o in game.values())
    assert env.single_observation_space["player_0"]["state"].shape == (state_size,)
    with pytest.raises(ValueError, match="unknown piquet env option"):
        BothSeatsVectorEnv(2, colour="red")


def test_self_play_both_needs_the_batched_engine() -> None:
    assert RLlibConfig().self_play == "inside"  # the default stays the opponent inside
    with pytest.raises(ConfigError, match="self_play='both' steps the batched engine"):
        RLlibConfig(self_play="both", vector_env=False, critic="obs").validate()
    with pytest.raises(ConfigError):
        RLlibConfig.from_dict({"self_play": "league"})


@pytest.fixture(scope="module")
def ray_local():
    """One local Ray instance for the module's RLlib tests."""
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    owns = not ray.is_initialized()
    if owns:
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield
    if owns:
        ray.shutdown()


def test_one_rllib_iteration_learns_on_both_seats(ray_local, tmp_path) -> None:
    """One iteration of ``piquet train --backend rllib --set self_play=both`` with the
    asymmetric critic (RLlib's run loop, env runner on the driver): every move applied is an env
    step, and the run's checkpoint and policy are written."""
    import torch

    from piquet_agents import checkpoint as ck
    from piquet_training.rllib.run import train

    cfg = RLlibConfig(
        updates=1,
        num_env_runners=0,
        num_envs_per_env_runner=8,
        out_dir=str(tmp_path),
        hidden=(16,),
        train_batch_size=160,
        minibatch_size=80,
        update_epochs=1,
        seed=2,
        rules=TINY,
        self_play="both",
        critic="state",  # the env gives each game's full-information state
        bc_games=20,  # the built-in's warm start, briefly: main starts from it (no opponent)
        final_eval_deals=0,
    )
    result = train(cfg, log=None)
    (row,) = result.history
    assert 160 <= row["env_steps"] < 160 + 8
    saved = ck.read_checkpoint(tmp_path / ck.LATEST_FILE)
    assert saved.meta["config"]["self_play"] == "both" and saved.meta["snapshots"] == []
    assert all(torch.isfinite(v).all() for v in saved.section("model").values())
    assert result.policy_path.exists()


def test_the_runner_samples_both_seats_as_rllib_does(ray_local) -> None:
    """Both agents' moves are ``main``'s trajectories, RLlib's env-step count is the moves
    applied, and the runner's faster connector pieces route the very actions RLlib's do: the
    same seeds give the same episodes with either."""
    import torch
    from ray.rllib.connectors.module_to_env.listify_data_for_vector_env import (
        ListifyDataForVectorEnv,
    )
    from ray.rllib.connectors.module_to_env.unbatch_to_individual_items import (
        UnBatchToIndividualItems,
    )

    from piquet_training.rllib.algo import both_config
    from piquet_training.rllib.both_seats import ListifyByIndex, UnBatchByIndex

    cfg = RLlibConfig(
        num_env_runners=0, num_envs_per_env_runner=8, hidden=(16,), rules=TINY, self_play="both"
    )
    algo = both_config(cfg).build_algo()
    try:
        runner = algo.env_runner_group.local_env_runner

        def sample() -> list:
            torch.manual_seed(0)
            runner._needs_initial_reset = True
            before = runner.env.moves
            episodes = runner.sample(num_timesteps=200)
            assert sum(len(e) for e in episodes) == runner.env.moves - before
            return [
                {
                    a: (list(s.get_actions()), s.get_return(), s.module_id)
                    for a, s in e.agent_episodes.items()
                }
                for e in episodes
            ]

        fast = sample()
        pieces = runner._module_to_env.connectors
        stock = {ListifyByIndex: ListifyDataForVectorEnv, UnBatchByIndex: UnBatchToIndividualItems}
        swapped = 0
        for i, piece in enumerate(pieces):
            if type(piece) in stock:
                pieces[i] = stock[type(piece)](
                    input_observation_space=piece.input_observation_space,
                    input_action_space=piece.input_action_space,
                )
                swapped += 1
        assert swapped == 2
        assert sample() == fast
    finally:
        algo.stop()
    assert {m for e in fast for _, _, m in e.values()} == {"main"}
    assert all(set(e) == {"player_0", "player_1"} for e in fast if len(e) == 2)
    assert sum(len(e) == 2 for e in fast) > len(fast) // 2


def test_the_speed_study_builds_each_path() -> None:
    """``studies.rllib_both_speed``: RLlib's sync vector of PettingZoo envs on its own runner,
    the batched engine on the runner subclass, the opponent inside on the single-agent runner."""
    from piquet_training.rllib.both_seats import BothSeatsEnvRunner
    from piquet_training.rllib.env import ENV_OPTIONS
    from piquet_training.studies.rllib_both_speed import PATHS, path_config

    configs = {path: path_config(path, TINY, 4, 64) for path in PATHS}
    assert configs["sync"].env == "piquet" and configs["sync"].env_runner_cls is None
    assert set(configs["sync"].env_config) <= set(ENV_OPTIONS)  # the PettingZoo env's only
    assert configs["sync"].is_multi_agent and configs["both"].is_multi_agent
    assert configs["both"].env_runner_cls is BothSeatsEnvRunner
    assert not configs["inside"].is_multi_agent
    with pytest.raises(ValueError, match="path must be one of"):
        path_config("async", TINY, 4, 64)
