"""The RLlib backend: env wrapper, action-masking module, self-play league, CLI settings, and a
short real run on a local Ray instance whose exported policy must play legal moves."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

if not os.environ.get("CI"):  # CI installs the rllib extra: there a missing Ray fails
    pytest.importorskip("ray.rllib", reason="the rllib extra is not installed")

from ray.rllib.core.columns import Columns

from piquet_agents import checkpoint as ck
from piquet_agents.policy import MASKED_LOGIT, ActorCritic, PolicyAgent
from piquet_cli import train_rllib as cli
from piquet_env.piquet_v0 import env as piquet_env
from piquet_training import seeds
from piquet_training.evaluation.greedy import evaluate_policy
from piquet_training.rllib.algo import RLlibConfig
from piquet_training.rllib.env import make_env
from piquet_training.rllib.league import (
    MAIN,
    SelfPlayCallback,
    agent_to_module,
    copy_weights,
    snapshot_ids,
)
from piquet_training.rllib.module import MaskedActorCriticModule
from piquet_training.run_log import EVAL_CSV, read_csv

AGENTS = ("player_0", "player_1")


def _module(hidden=(16,)) -> MaskedActorCriticModule:
    e = piquet_env()
    return MaskedActorCriticModule(
        observation_space=e.observation_space("player_0"),
        action_space=e.action_space("player_0"),
        model_config={"hidden": list(hidden), "activation": "tanh"},
    )


def _observations(n: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Observations of the player to act along random legal play (deal mode)."""
    rng = np.random.default_rng(seed)
    e = piquet_env(mode="deal")
    e.reset(seed=seed)
    out = []
    while len(out) < n:
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.reset(seed=int(rng.integers(1 << 30)))
            continue
        out.append(obs)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def _batch(observations: list[dict[str, np.ndarray]]) -> dict:
    return {
        Columns.OBS: {
            "observation": torch.from_numpy(np.stack([o["observation"] for o in observations])),
            "action_mask": torch.from_numpy(np.stack([o["action_mask"] for o in observations])),
        }
    }


# ------------------------------------------------------------------------------------ env


def test_make_env_plays_a_deal_through_rllib_wrapper():
    e = make_env({"mode": "deal", "reward_scale": 0.01})
    obs, _ = e.reset(seed=3)
    rng = np.random.default_rng(3)
    totals = dict.fromkeys(AGENTS, 0.0)
    steps, done = 0, False
    while not done:
        ((agent, o),) = obs.items()  # turn-based: exactly one agent observes
        assert o["action_mask"].dtype == np.int8 and o["action_mask"].any()
        obs, rewards, terms, _, _ = e.step(
            {agent: int(rng.choice(np.flatnonzero(o["action_mask"])))}
        )
        for a, r in rewards.items():
            totals[a] += r
        steps += 1
        done = terms["__all__"]
    result = e.env.unwrapped.game.result
    # each player's rewards sum to his scaled deal result; zero-sum
    assert totals["player_0"] == pytest.approx(result[0] * 0.01)
    assert totals["player_1"] == pytest.approx(result[1] * 0.01)
    assert totals["player_0"] == pytest.approx(-totals["player_1"])
    assert set(obs) == set(AGENTS) and steps > 12


def test_make_env_rejects_unknown_option():
    with pytest.raises(ValueError, match="unknown piquet env option"):
        make_env({"episodes": "deal"})


# ------------------------------------------------------------------------------------ module


def test_module_masks_illegal_actions_and_matches_actor_critic():
    module = _module()
    observations = _observations(40)
    batch = _batch(observations)
    out = module.forward_exploration(batch)
    logits = out[Columns.ACTION_DIST_INPUTS]
    mask = batch[Columns.OBS]["action_mask"]
    assert torch.all(logits[mask == 0] == MASKED_LOGIT)
    assert torch.all(logits[mask == 1] > MASKED_LOGIT / 2)
    # sampling from RLlib's distribution never picks an illegal action
    dist = module.get_exploration_action_dist_cls().from_logits(logits)
    for _ in range(20):
        actions = dist.sample()
        assert torch.all(mask.gather(1, actions[:, None]) == 1)
    # the module's network is the project's ActorCritic: same weights, same outputs
    net = ActorCritic(module.model.obs_size, module.model.n_actions, (16,))
    net.load_state_dict(module.model.state_dict())
    ref_logits, ref_values = net(batch[Columns.OBS]["observation"], mask)
    assert torch.equal(logits, ref_logits)
    train_out = module.forward_train(batch)
    values = module.compute_values(batch, embeddings=train_out[Columns.EMBEDDINGS])
    assert torch.allclose(values, ref_values) and values.shape == (40,)
    assert torch.allclose(module.compute_values(batch), ref_values)


def test_an_asymmetric_critic_reads_the_full_state_and_the_actor_never_does():
    """``critic="state"``: the values are the project's ActorCritic's over the batch's
    ``"state"`` (whatever the embeddings), and the logits do not depend on it; without a
    ``"state"`` in the observation space the module says what is missing."""
    e = piquet_env()
    space = e.observation_space("player_0")
    size = e.encoder.state_size
    with_state = gym.spaces.Dict({**space.spaces, "state": gym.spaces.Box(-9, 9, (size,))})
    module = MaskedActorCriticModule(
        observation_space=with_state,
        action_space=e.action_space("player_0"),
        model_config={"hidden": [16], "activation": "tanh", "critic": "state"},
    )
    batch = _batch(_observations(30))
    states = torch.randn(30, size)
    batch[Columns.OBS]["state"] = states
    net = ActorCritic(module.model.obs_size, module.model.n_actions, (16,), "tanh", size)
    net.load_state_dict(module.model.state_dict())
    obs, mask = batch[Columns.OBS]["observation"], batch[Columns.OBS]["action_mask"]
    ref_logits, ref_values = net(obs, mask, states)
    train_out = module.forward_train(batch)
    assert torch.equal(train_out[Columns.ACTION_DIST_INPUTS], ref_logits)
    values = module.compute_values(batch, embeddings=train_out[Columns.EMBEDDINGS])
    assert torch.allclose(values, ref_values) and torch.allclose(
        module.compute_values(batch), values
    )
    batch[Columns.OBS]["state"] = torch.randn(30, size)
    assert torch.equal(module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS], ref_logits)
    assert not torch.allclose(module.compute_values(batch), values)
    with pytest.raises(ValueError, match="'state', which this env does not give"):
        MaskedActorCriticModule(
            observation_space=space,
            action_space=e.action_space("player_0"),
            model_config={"critic": "state"},
        )


def test_module_rejects_a_flat_observation_space():
    with pytest.raises(ValueError, match="Dict observation space"):
        MaskedActorCriticModule(
            observation_space=gym.spaces.Box(0, 1, (4,), np.float32),
            action_space=gym.spaces.Discrete(3),
            model_config={},
        )


# ------------------------------------------------------------------------------------ league


@settings(max_examples=200, deadline=None)
@given(
    episode_id=st.text(min_size=1, max_size=12),
    n_snaps=st.integers(0, 12),
    self_play=st.sampled_from([0.0, 0.3, 1.0]),
    latest=st.sampled_from([0.0, 0.5, 1.0]),
    pool=st.integers(1, 5),
)
def test_agent_to_module_seats(episode_id, n_snaps, self_play, latest, pool):
    snaps = [f"main_v{i}" for i in range(n_snaps)]
    episode = SimpleNamespace(id_=episode_id)
    kw = {"snapshots": snaps, "self_play_weight": self_play, "latest_weight": latest}
    seats = [agent_to_module(a, episode, pool_size=pool, **kw) for a in AGENTS]
    assert seats == [agent_to_module(a, episode, pool_size=pool, **kw) for a in AGENTS]
    assert MAIN in seats  # main always plays
    if not snaps or self_play == 1.0:
        assert seats == [MAIN, MAIN]
    elif self_play == 0.0:
        (other,) = [s for s in seats if s != MAIN]
        assert other in snaps[-pool:]
        if latest == 1.0:
            assert other == snaps[-1]


def test_snapshot_ids_sorted_by_version():
    assert snapshot_ids(["main", "main_v10", "main_v2", "x", "main_vx", "main_v0"]) == [
        "main_v0",
        "main_v2",
        "main_v10",
    ]


class _Logger:
    def __init__(self):
        self.logged = []

    def log_value(self, key, value, reduce=None):
        self.logged.append((key, value, reduce))


def _episode(modules: dict[str, str], returns: dict[str, float]):
    return SimpleNamespace(
        module_for=modules.__getitem__,
        agent_episodes={a: SimpleNamespace(get_return=lambda a=a: returns[a]) for a in modules},
    )


@pytest.mark.parametrize(("ret_main", "score"), [(0.3, 1.0), (0.0, 0.5), (-0.2, 0.0)])
def test_on_episode_end_scores_main_against_snapshot(ret_main, score):
    log = _Logger()
    ep = _episode(
        {"player_0": "main_v3", "player_1": MAIN}, {"player_0": -ret_main, "player_1": ret_main}
    )
    SelfPlayCallback().on_episode_end(episode=ep, metrics_logger=log)
    assert log.logged == [
        (("selfplay", "main_v3", "games"), 1, "lifetime_sum"),
        (("selfplay", "main_v3", "wins"), score, "lifetime_sum"),
    ]
    log = _Logger()  # main against itself: nothing to score
    SelfPlayCallback().on_episode_end(
        episode=_episode(dict.fromkeys(AGENTS, MAIN), dict.fromkeys(AGENTS, 0.0)),
        metrics_logger=log,
    )
    assert log.logged == []


class _FakeAlgorithm:
    """Records the league operations of SelfPlayCallback; one env runner holding modules."""

    def __init__(self, snapshots):
        self.config = SimpleNamespace(policies=dict.fromkeys([MAIN, *snapshots]))
        self.module = _module((8,))
        self.added, self.learner_states = [], []
        main_state = {"model.w": np.arange(3.0)}
        runner = SimpleNamespace(module={})
        self.runner = runner
        self.learner_group = SimpleNamespace(
            get_state=lambda components: {
                "learner": {"rl_module": {components.rsplit("/", 1)[1]: main_state}}
            },
            set_state=self.learner_states.append,
        )
        self.env_runner_group = SimpleNamespace(
            foreach_env_runner=lambda fn, local_env_runner: [fn(runner)]
        )

    def get_module(self, module_id):
        return self.module

    def add_module(self, module_id, module_spec, new_agent_to_module_mapping_fn, **kw):
        self.added.append((module_id, new_agent_to_module_mapping_fn.keywords["snapshots"]))
        self.config.policies[module_id] = None
        state = {}
        self.runner.module[module_id] = SimpleNamespace(
            set_state=state.update, get_state=lambda: dict(state)
        )


def _result(opponent, games, wins):
    return {"env_runners": {"selfplay": {opponent: {"games": games, "wins": wins}}}}


@pytest.mark.parametrize(
    ("games", "wins", "added"),
    [(100, 60, True), (100, 55, True), (100, 54, False), (99, 99, False), (0, 0, False)],
)
def test_snapshot_frozen_when_main_beats_the_newest(games, wins, added):
    algo = _FakeAlgorithm(["main_v0", "main_v1"])
    cb = SelfPlayCallback(win_rate_threshold=0.55, min_games=100, verbose=False)
    result = _result("main_v1", games, wins)
    cb.on_train_result(algorithm=algo, result=result)
    if added:
        assert algo.added == [("main_v2", ("main_v0", "main_v1", "main_v2"))]
        # the new snapshot gets main's weights, on the learner and on the env runner
        (state,) = algo.learner_states
        np.testing.assert_array_equal(
            state["learner"]["rl_module"]["main_v2"]["model.w"], np.arange(3.0)
        )
        np.testing.assert_array_equal(
            algo.runner.module["main_v2"].get_state()["model.w"], np.arange(3.0)
        )
    else:
        assert algo.added == [] and algo.learner_states == []
    assert result["league"]["snapshots"] == (3 if added else 2)


def test_copy_weights_fails_loudly_when_env_runners_keep_old_weights():
    algo = _FakeAlgorithm(["main_v0"])
    algo.runner.module["main_v0"] = SimpleNamespace(
        set_state=lambda state: None, get_state=lambda: {"model.w": np.zeros(3)}
    )
    with pytest.raises(RuntimeError, match="did not take the weights of module 'main_v0'"):
        copy_weights(algo, MAIN, "main_v0")


def test_initial_snapshot_on_algorithm_init():
    algo = _FakeAlgorithm([])
    SelfPlayCallback(verbose=False).on_algorithm_init(algorithm=algo)
    assert [a[0] for a in algo.added] == ["main_v0"]
    algo = _FakeAlgorithm(["main_v0", "main_v4"])  # resumed league: left alone
    SelfPlayCallback(verbose=False).on_algorithm_init(algorithm=algo)
    assert algo.added == []


def test_optimizer_state_round_trips_through_a_checkpoint(tmp_path):
    from piquet_training.rllib.export import optimizer_state, set_optimizer_state

    rng = np.random.default_rng(0)
    adam = {
        "state": {
            i: {
                "step": np.array(7.0, np.float32),
                "exp_avg": rng.normal(size=(3, i + 1)),
                "exp_avg_sq": rng.random((3, i + 1)),
            }
            for i in range(2)
        },
        "param_groups": [
            {
                "params": [0, 1],
                "lr": np.float64(3e-4),
                "betas": (0.9, 0.999),
                "eps": 1e-8,
                "amsgrad": False,
                "foreach": None,
            }
        ],
    }
    snapshot_adam = {"state": {0: {"step": np.array(1.0)}}, "param_groups": []}
    saved = {
        "learner": {
            "optimizer": {
                "main_default": {"module_id": MAIN, "state": adam},
                "main_v0_default": {"module_id": "main_v0", "state": snapshot_adam},
            }
        }
    }
    received = []
    algo = SimpleNamespace(
        learner_group=SimpleNamespace(get_state=lambda components: saved, set_state=received.append)
    )
    tensors, meta = optimizer_state(algo)
    assert set(meta) == {"main_default"}  # snapshots are frozen: their optimizers are not kept
    path = ck.save_checkpoint(tmp_path / "c.safetensors", tensors, {"optimizer": meta})
    set_optimizer_state(algo, ck.read_checkpoint(path, check_obs_version=False))
    (state,) = received
    got = state["learner"]["optimizer"]["main_default"]
    assert got["module_id"] == MAIN
    assert got["state"]["param_groups"] == [dict(adam["param_groups"][0], lr=3e-4)]
    assert isinstance(got["state"]["param_groups"][0]["betas"], tuple)
    for i, per_param in adam["state"].items():
        assert got["state"]["state"][i].keys() == per_param.keys()
        for key, value in per_param.items():
            np.testing.assert_array_equal(got["state"]["state"][i][key], value)


# ------------------------------------------------------------------------------------ CLI


def _args(*argv: str) -> argparse.Namespace:
    return cli.build_parser().parse_args(list(argv))


def test_rllibs_ppo_loss_is_the_built_in_trainers():
    """No adaptive KL penalty, no clip of the critic's error, and the critic's term at half
    ``vf_coef`` (RLlib's squared error has no half); the other names translate one to one."""
    from piquet_training.rllib.algo import ppo_config

    cfg = RLlibConfig(vf_coef=0.6, ent_coef=0.003, max_grad_norm=0.7, learning_rate=2e-4)
    ppo = ppo_config(cfg)
    assert ppo.use_kl_loss is False and ppo.vf_clip_param == float("inf")
    assert ppo.vf_loss_coeff == pytest.approx(0.3)
    assert (ppo.entropy_coeff, ppo.grad_clip, ppo.lr) == (0.003, 0.7, 2e-4)


def test_a_learner_row_takes_the_learned_modules_figures():
    from piquet_training.rllib.run import learner_row

    stats = {"policy_loss": -0.1, "vf_loss": 0.5, "entropy": 1.2, "vf_explained_var": 0.4}
    row = learner_row({"learners": {"default_policy": stats, "__all_modules__": {}}})
    assert row == {
        "policy_loss": -0.1,
        "value_loss": 0.25,
        "entropy": 1.2,
        "explained_variance": 0.4,
    }
    assert learner_row({"learners": {"main": {"entropy": 0.9}}}) == {"entropy": 0.9}
    assert learner_row({}) == {}


def test_cli_settings_and_flags():
    cfg = cli.build_config(
        _args(
            "--set",
            "hidden=64,32",
            "--set",
            "lr=1e-4",
            "--num-env-runners",
            "2",
            "--address",
            "auto",
            "--iterations",
            "7",
            "--out",
            "x",
            "--set",
            "num_cpus=none",
        )
    )
    assert (
        cfg.hidden,
        cfg.learning_rate,
        cfg.num_env_runners,
        cfg.address,
        cfg.updates,
        cfg.out_dir,
    ) == (
        (64, 32),
        1e-4,
        2,
        "auto",
        7,
        "x",
    )
    assert cfg.num_cpus is None
    assert RLlibConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "foo=1"], "unknown config key 'foo'"),
        (["--set", "lr"], "key=value"),
        (["--set", "lr=fast"], "config key 'lr' (learning_rate): bad text 'fast'"),
        (["--set", "mode=trick"], "mode must be one of 'partie', 'deal'"),
        (["--num-env-runners", "-1"], "num_env_runners"),
        (["--set", "rules=bezique"], "unknown rules preset"),
    ],
)
def test_cli_bad_settings_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_cli_unreachable_cluster_exits_2_with_a_hint(monkeypatch, capsys):
    import piquet_training.rllib.run as train_module

    def refuse(cfg, resume=None, overwrite=False):
        raise ConnectionError(f"Failed to connect to Ray cluster at {cfg.address}")

    monkeypatch.setattr(train_module, "train", refuse)
    assert cli.main(["--address", "127.0.0.1:9", "--eval-games", "0"]) == 2
    err = capsys.readouterr().err
    assert "cannot join the Ray cluster at '127.0.0.1:9'" in err and "RAY_AUTH_MODE=token" in err


def test_ray_names_the_cluster_and_address_is_its_deprecated_alias(capsys):
    """``--ray`` as on ``piquet eval`` and ``exploit`` (``local``: a Ray instance started here);
    ``--address`` still works, saying it is deprecated; both at once is one line, exit 2."""
    assert cli.build_config(_args("--ray", "auto")).address == "auto"
    assert cli.build_config(_args("--ray", "local")).address is None
    assert capsys.readouterr().err == ""
    assert cli.build_config(_args("--address", "auto")).address == "auto"
    assert "--address is deprecated: use --ray ADDRESS" in capsys.readouterr().err
    assert cli.main(["--ray", "auto", "--address", "auto", "--show-config"]) == 2
    assert "give --ray ADDRESS alone" in capsys.readouterr().err


def test_add_rllib_arguments_keeps_existing_flags():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="mine")
    cli.add_rllib_arguments(p)
    args = p.parse_args(["--num-env-runners", "3"])
    assert args.out == "mine" and args.rllib_num_env_runners == 3
    assert cli.rllib_flags_given(args) == ["--num-env-runners"]
    assert cli.rllib_flags_given(p.parse_args([])) == []


# ------------------------------------------------------------------------------------ Ray run


@pytest.fixture(scope="module")
def ray_run(tmp_path_factory):
    """One short run on a local Ray instance (1 env runner), then a resumed iteration with 2."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    import ray

    from piquet_training.rllib.run import train

    out = tmp_path_factory.mktemp("rllib")
    # every game against the newest snapshot, and a new snapshot after every iteration
    cfg = RLlibConfig(
        updates=1,
        num_env_runners=1,
        num_envs_per_env_runner=1,
        out_dir=str(out),
        hidden=(32,),
        train_batch_size=200,
        minibatch_size=100,
        update_epochs=2,
        seed=1,
        bc_games=0,
        vector_env=False,
        critic="obs",  # the PettingZoo env gives no full state
        mode="deal",  # games short enough that one iteration's 200 decisions finish some
        self_play_weight=0.0,
        latest_weight=1.0,
        win_rate_threshold=0.0,
        min_games=1,
        final_eval_deals=0,
    )
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        ignore_reinit_error=True,
        log_to_driver=False,
    )
    try:
        first = train(cfg, log=None)
        first_ckpt = ck.read_checkpoint(out / ck.LATEST_FILE)
        resumed_cfg = RLlibConfig.from_dict(
            dict(first_ckpt.meta["config"], updates=2, num_env_runners=2)
        )
        second = train(resumed_cfg, resume=out, log=None)
        vector_out = out / "vector"
        vector_cfg = RLlibConfig(
            updates=1,
            num_env_runners=1,
            num_envs_per_env_runner=8,
            out_dir=str(vector_out),
            mode="deal",  # games that end within an iteration's 200 decisions: their returns
            hidden=(32,),
            train_batch_size=200,
            minibatch_size=100,
            update_epochs=2,
            seed=1,
            bc_games=6,
            # the built-in trainer's final evaluation, in brief
            final_eval_deals=2,
            eval_mode="deal",
            eval_opponents="random",
            eval_workers=1,
        )
        vector = [train(vector_cfg, log=None)]
        vector_ckpt = ck.read_checkpoint(vector_out / ck.LATEST_FILE)
        vector.append(
            train(dataclasses.replace(vector_cfg, updates=2), resume=vector_out, log=None)
        )
    finally:
        ray.shutdown()
    return out, first, first_ckpt, second, (vector_out, *vector, vector_ckpt)


def test_a_new_rllib_run_never_replaces_one(ray_run, capsys):
    """``piquet train --backend rllib`` into a folder that holds a run (issue 58: it replaced
    the policy and appended to metrics.jsonl): one line, exit 2, before Ray starts, and the run's
    files as they were; ``--overwrite`` is the way to replace it."""
    from piquet_cli import main

    out = ray_run[0]
    before = {name: (out / name).read_bytes() for name in ("metrics.jsonl", ck.POLICY_FILE)}
    argv = ["train", "--backend", "rllib", "--out", str(out), "--iterations", "1"]
    assert main([*argv, "--eval-games", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("piquet train: ") and err.count("\n") == 1, err
    assert f"{out} holds a run already (checkpoints/latest.safetensors, policy.safetensors)" in err
    assert all((out / name).read_bytes() == data for name, data in before.items())


def test_rllib_run_on_local_ray(ray_run):
    """One test for the whole run, so that pytest-xdist never starts it twice."""
    _check_checkpoints_and_resume(*ray_run[:4])
    _check_exported_policy_plays_legal_moves(ray_run[0])
    _check_self_play_on_the_batched_engine(*ray_run[4])


def _check_self_play_on_the_batched_engine(out, first, second, first_ckpt):
    """The default self-play: the learner against itself inside the batched env, no league;
    every move applied counts as an env step (RLlib counts only the learner's decisions, 200
    an iteration here, and the opponent's moves lie between them)."""
    assert first.snapshots == [] and first_ckpt.meta["snapshots"] == []
    assert first_ckpt.meta["config"]["vector_env"] is True
    rows = [_strict(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert all(np.isfinite(r["main_return_mean"]) for r in rows)  # the learner's games' returns
    assert all(r["win_rate_vs_latest"] is None for r in rows)  # no league: none measured
    # the learner's figures under the built-in train.csv's names
    assert all(r["entropy"] > 0 and np.isfinite(r["value_loss"]) for r in rows), rows
    assert all({"policy_loss", "explained_variance"} <= set(r) for r in rows)
    assert all(1.6 * 200 <= r["env_steps"] <= 2.4 * 200 + 8 * 40 for r in rows), rows
    assert second.iterations == 2
    assert second.env_steps == first.env_steps + rows[1]["env_steps"]
    # the built-in trainer's final evaluation after each sitting: eval.csv in its columns, the
    # policy's greedy play on the final evaluation's deals (the same figure when played again)
    evals = read_csv(out / EVAL_CSV)
    assert [(r["update"], r["kind"], r["opponent"], r["n_pairs"]) for r in evals] == [
        ("1", "final", "random", "2"),
        ("2", "final", "random", "2"),
    ]
    assert [f["mean_diff"] for f in (*first.finals, *second.finals)] == [
        float(r["mean_diff"]) for r in evals
    ]
    cfg = RLlibConfig.from_dict(first_ckpt.meta["config"])
    (again,) = evaluate_policy(str(out / ck.POLICY_FILE), cfg, 2, seed=seeds.final_eval(cfg.seed))
    assert again["mean_diff"] == second.finals[0]["mean_diff"]
    # the built-in trainer's warm start (6 games imitated), made in the run's folder, was its start
    assert (out / "warm_start" / "bc.safetensors").is_file()
    main = first_ckpt.section("model")
    after = ck.read_checkpoint(out / ck.LATEST_FILE).section("model")
    assert any(not torch.equal(main[k], after[k]) for k in main)  # the resumed run learned
    _check_exported_policy_plays_legal_moves(out)


def _strict(line: str) -> dict:
    """One line of ``metrics.jsonl``, read as strict JSON (``NaN`` refused, as ``jq`` does)."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


def _check_checkpoints_and_resume(out, first, first_ckpt, second):
    assert first.iterations == 1 and first.env_steps >= 200
    # main_v0 frozen at the start, main_v1 after the iteration (threshold 0)
    assert first.snapshots == ["main_v0", "main_v1"]
    assert first_ckpt.meta["trainer"] == "rllib"
    assert first_ckpt.meta["snapshots"] == ["main_v0", "main_v1"]
    assert first_ckpt.meta["counters"]["iteration"] == 1
    # main's Adam state travels with the checkpoint
    assert first_ckpt.meta["optimizer"] and any(k.startswith("optim.") for k in first_ckpt.tensors)
    # PPO moved main away from its initial weights; main_v1 is a copy of main at its freezing
    main, v0 = first_ckpt.section("model"), first_ckpt.section("snapshot.main_v0")
    v1 = first_ckpt.section("snapshot.main_v1")
    assert main.keys() == v0.keys() == v1.keys()
    assert any(not torch.equal(main[k], v0[k]) for k in main)
    assert all(torch.equal(main[k], v1[k]) for k in main)
    # resumed: one more iteration, counters carried over, the league restored unchanged, grown
    assert second.iterations == 2
    assert second.env_steps == first.env_steps + second.history[0]["env_steps"]
    assert second.snapshots == ["main_v0", "main_v1", "main_v2"]
    ckpt = ck.read_checkpoint(out / ck.LATEST_FILE)
    counters = ckpt.meta["counters"]
    assert (counters["iteration"], counters["env_steps"]) == (2, second.env_steps)
    for sid, before in (("main_v0", v0), ("main_v1", v1)):
        after = ckpt.section(f"snapshot.{sid}")
        assert all(torch.equal(before[k], after[k]) for k in before)
    main2, v2 = ckpt.section("model"), ckpt.section("snapshot.main_v2")
    assert all(torch.equal(main2[k], v2[k]) for k in main2)
    assert any(not torch.equal(main2[k], main[k]) for k in main)
    rows = [_strict(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2] and all(r["env_steps"] > 0 for r in rows)
    assert [r["snapshot_added"] for r in rows] == ["main_v1", "main_v2"]


def _check_exported_policy_plays_legal_moves(out):
    agent = PolicyAgent.load(out / ck.POLICY_FILE)
    ckpt = ck.read_checkpoint(out / ck.LATEST_FILE)
    exported = ck.read_checkpoint(out / ck.POLICY_FILE)
    assert all(torch.equal(exported.tensors[k], ckpt.tensors[k]) for k in exported.tensors)
    for greedy in (True, False):
        gen = torch.Generator().manual_seed(0)
        for seed in range(3):
            e = piquet_env(mode="deal")
            e.reset(seed=seed)
            for _agent in e.agent_iter():
                obs, _, term, trunc, _ = e.last()
                if term or trunc:
                    e.step(None)
                    continue
                action, _, _ = agent.model.act(
                    torch.from_numpy(obs["observation"])[None],
                    torch.from_numpy(obs["action_mask"])[None],
                    greedy=greedy,
                    generator=gen,
                    with_value=False,  # an asymmetric critic reads a state the env does not give
                )
                assert obs["action_mask"][int(action)] == 1
                e.step(int(action))
            # an illegal move would have ended the deal with a -1 penalty and no result
            assert e.unwrapped.game.is_over and e.unwrapped.game.result is not None
    # and through the Agent protocol, as piquet eval / ladder / play use it
    from piquet_training.evaluation.duplicate import evaluate

    report = evaluate(agent, "random", agent.rules, 2, mode="deal", seed=0)
    assert report.n_games == 4
