"""Training: config parsing, GAE by hand, self-play rollouts and rewards, a tiny end-to-end run,
and resuming that reproduces the uninterrupted run's next update exactly."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.policy import ActorCritic
from piquet_cli import main
from piquet_env.agent import RandomAgent
from piquet_env.observation import encoder_for
from piquet_env.rules import STANDARD, Rules, make_rules
from piquet_training.ppo.collector import Collection, Collector, Seat
from piquet_training.ppo.imitation import discounted_returns
from piquet_training.ppo.pool import Opponent, OpponentPool
from piquet_training.ppo.update import gae
from piquet_training.settings.train import TrainConfig, apply_overrides, load_toml, to_toml
from tests.train_helpers import TINY as TINY_RUN
from tests.train_helpers import finished_results, train_cli, trajectory_sums

ENC = encoder_for(STANDARD)

# ---------------------------------------------------------------------------- config


def test_toml_and_overrides(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(
        'seed = 4\nmode = "deal"\n[ppo]\nlearning_rate = 0.001\nhidden = [64, 32]\n'
        "[run]\ntensorboard = false\n"
    )
    cfg = load_toml(f)
    assert (cfg.seed, cfg.mode, cfg.learning_rate, cfg.hidden, cfg.tensorboard) == (
        4,
        "deal",
        0.001,
        (64, 32),
        False,
    )
    cfg = apply_overrides(cfg, ["seed=5", "hidden=128", "progress=no", "ent_coef=0"])
    assert (cfg.seed, cfg.hidden, cfg.progress, cfg.ent_coef) == (5, (128,), False, 0.0)
    f.write_text(to_toml(cfg))
    assert load_toml(f) == cfg


@pytest.mark.parametrize(
    "bad, message",
    [
        (["nonsense=1"], "unknown config key 'nonsense'"),
        (["seed=1.5"], "config key 'seed'"),
        (["progress=maybe"], "config key 'progress'"),
        (["seed"], "key=value"),
    ],
)
def test_bad_overrides_name_the_problem(bad: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        apply_overrides(TrainConfig(), bad)


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text("seed = = 3")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_toml(f)
    f.write_text("[a.b]\nseed = 3")
    with pytest.raises(ValueError, match="nested too deep"):
        load_toml(f)
    with pytest.raises(ValueError, match="mode must be"):
        apply_overrides(TrainConfig(), ["mode=tournament"]).validate()


# ---------------------------------------------------------------------------- returns


def test_gae_by_hand() -> None:
    # Two trajectories: [r=1, r=2] (values .5, 1.) and [r=4] (value 3).
    rewards = np.array([1.0, 2.0, 4.0], np.float32)
    values = np.array([0.5, 1.0, 3.0], np.float32)
    dones = np.array([False, True, True])
    adv, ret = gae(rewards, values, dones, gamma=0.9, lam=0.5)
    # t=1: delta = 2 - 1 = 1; t=0: delta = 1 + .9*1 - .5 = 1.4, adv = 1.4 + .45*1 = 1.85;
    # t=2: delta = 4 - 3 = 1 (nothing bootstrapped across the boundary).
    assert adv.tolist() == pytest.approx([1.85, 1.0, 1.0])
    assert ret.tolist() == pytest.approx([2.35, 2.0, 4.0])
    # lambda = 1, gamma = 1: advantages are reward-to-go minus value.
    adv, _ = gae(rewards, values, dones, 1.0, 1.0)
    togo = discounted_returns(rewards, dones, 1.0)
    assert togo.tolist() == [3.0, 2.0, 4.0]
    assert adv.tolist() == pytest.approx((togo - values).tolist())


# ---------------------------------------------------------------------------- self-play


def tiny_model() -> ActorCritic:
    torch.manual_seed(0)
    return ActorCritic(ENC.size, ENC.n_actions, hidden=(16,))


@pytest.mark.parametrize(
    "mode, dense, rules",
    [
        ("deal", False, STANDARD),
        ("deal", True, STANDARD),
        ("partie", True, STANDARD),
        ("partie", False, make_rules("classic")),
        ("partie", True, make_rules("classic+normand")),
    ],
)
def test_rollout_rewards_add_up_to_the_game_result(mode: str, dense: bool, rules: Rules) -> None:
    """With settle_weight 1, each seat's rewards sum to its final result times the scale."""
    enc = encoder_for(rules)
    torch.manual_seed(0)
    model = ActorCritic(enc.size, enc.n_actions, hidden=(16,))
    col = Collector(
        Collection(
            rules, mode, num_envs=3, reward_scale=0.5, settle_weight=1.0, dense_reward=dense
        ),
        np.random.default_rng(1),
    )
    results = finished_results(col)
    roll = col.collect(
        4, lambda rng: (Seat(model=model, record=True), Seat(model=model, record=True), "self")
    )
    assert roll.games == 4 and roll.dones.sum() == 8  # two trajectories per game
    sums = trajectory_sums(roll)
    # Trajectories are stored per game in seat order: seat 0 then seat 1.
    expected = [0.5 * r for res in results for r in res]
    assert sorted(sums) == pytest.approx(sorted(expected))
    assert sum(sums) == pytest.approx(0.0, abs=1e-4)
    # Every recorded action was legal under its stored mask, and log-probs are recomputable.
    assert np.all(roll.masks[np.arange(len(roll)), roll.actions] == 1)
    logp, _, value = model.evaluate_actions(
        torch.from_numpy(roll.obs), torch.from_numpy(roll.masks), torch.from_numpy(roll.actions)
    )
    assert torch.allclose(logp, torch.from_numpy(roll.logprobs), atol=1e-5)
    assert torch.allclose(value, torch.from_numpy(roll.values), atol=1e-5)
    # Dense rewards land on many decisions; sparse ones only on each deal's last decisions.
    assert (np.count_nonzero(roll.rewards) > 2 * roll.deals) == dense


def test_learner_against_an_agent_records_only_its_own_seat() -> None:
    model = tiny_model()
    random_agent = Opponent("random", RandomAgent, random=True)
    pool = OpponentPool(model, {"random": 1.0}, opponents={"random": random_agent})
    col = Collector(Collection(STANDARD, "deal", num_envs=4), np.random.default_rng(2))
    roll = col.collect(6, pool.matchup)
    assert roll.games == 6 and roll.dones.sum() == 6
    assert roll.env_steps > len(roll)  # the random agent's decisions are played, not recorded
    assert len(roll.points["random"]) == 6


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "rubber"}, "mode must be one of"),
        ({"num_envs": 0}, "num_envs must be at least 1, got 0"),
        ({"reward": "points"}, "reward"),
    ],
)
def test_collector_refuses_bad_arguments(kwargs: dict, message: str) -> None:
    args = {"mode": "deal", "num_envs": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        Collection(STANDARD, args.pop("mode"), args.pop("num_envs"), **args)


def test_opponent_pool_keeps_the_newest_snapshots() -> None:
    model = tiny_model()
    pool = OpponentPool(model, {"self": 1.0, "snapshot": 1.0}, size=2, opponents={})
    for update in (1, 2, 3):
        pool.add_snapshot(update)
    assert pool.snapshot_updates == [2, 3]
    with torch.no_grad():
        model.value_head.bias.add_(1.0)
    assert not torch.equal(pool.snapshots[-1].value_head.bias, model.value_head.bias)
    with pytest.raises(ValueError, match="unknown opponent kinds"):
        OpponentPool(model, {"bots": 1.0}, opponents={})


def test_the_pools_older_arguments_still_work_and_warn() -> None:
    model = tiny_model()
    with pytest.warns(DeprecationWarning, match="pass opponents="):
        pool = OpponentPool(model, {"random": 1.0}, agent_factories={"random": RandomAgent})
    assert list(pool.opponents) == ["random"] and pool.opponents["random"].random
    with pytest.warns(DeprecationWarning, match="pass opponents="):
        pool = OpponentPool(model, {"target": 1.0}, target=(model, False))
    assert pool.opponents["target"].network is model and not pool.opponents["target"].greedy


# ---------------------------------------------------------------------------- end to end

TINY = [
    *TINY_RUN,
    "snapshot_every=1",
    "checkpoint_every=1",
    "hidden=32",
    "heuristic_weight=0.3",
    "random_weight=0.2",
]


def run_cli(out: Path, *extra: str) -> int:
    return train_cli(out, TINY, *extra)


def latest_model(out: Path) -> dict[str, torch.Tensor]:
    return ck.read_checkpoint(out / ck.LATEST_FILE).section("model")


def test_tiny_run_writes_every_output(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "run"
    threads = torch.get_num_threads()
    assert run_cli(out, f"torch_threads={threads + 1}") == 0
    # the run trained on its own thread count and gave the caller's back
    assert torch.get_num_threads() == threads
    assert ck.read_checkpoint(out / ck.LATEST_FILE).meta["config"]["torch_threads"] == threads + 1
    printed = capsys.readouterr().out
    assert "policy vs random" in printed and "peak resident set" in printed and "USS" in printed
    for name in (
        "config.toml",
        "train.csv",
        "eval.csv",
        "learning_curve.png",
        "summary.md",
        ck.POLICY_FILE,
        ck.LATEST_FILE,
    ):
        assert (out / name).is_file(), name
    assert len((out / "train.csv").read_text().splitlines()) == 3  # header + 2 updates
    rows = list(csv.DictReader((out / "train.csv").open()))
    if sys.platform.startswith("linux"):  # the memory of each update, read from /proc
        assert all(0 < float(r["rss_mib"]) <= float(r["peak_rss_mib"]) for r in rows)
    # Evaluated before the first update, after update 1, and at the end (the final evaluation).
    assert [r.split(",")[0] for r in (out / "eval.csv").read_text().splitlines()[1:]] == [
        "0",
        "1",
        "2",
    ]
    assert "| random | 3 |" in (out / "summary.md").read_text()
    meta = ck.read_checkpoint(out / ck.LATEST_FILE).meta
    assert meta["train"]["counters"]["update"] == 2 and meta["config"]["hidden"] == [32]


@pytest.mark.parametrize(
    "collector,precision", [("vector", "bf16"), ("vector", "fp32"), ("game", "auto")]
)
def test_resume_reproduces_the_uninterrupted_run(
    tmp_path: Path, collector: str, precision: str
) -> None:
    full, part = tmp_path / "full", tmp_path / "part"
    given = ("final_eval_deals=0", f"collector={collector}", f"precision={precision}")
    assert run_cli(full, *given) == 0
    assert run_cli(part, "updates=1", *given) == 0
    assert not all(
        torch.equal(a, b) for a, b in zip(latest_model(full).values(), latest_model(part).values())
    )
    assert main(["train", "--resume", str(part), "--set", "updates=2"]) == 0
    resumed, uninterrupted = latest_model(part), latest_model(full)
    assert resumed.keys() == uninterrupted.keys()
    for key in resumed:
        assert torch.equal(resumed[key], uninterrupted[key]), key


def test_the_same_config_gives_the_same_policy(tmp_path: Path) -> None:
    """A run's length is its updates: two runs of one config give the same weights bit for bit,
    whatever the machine's speed (no time limit takes part)."""
    one, two = tmp_path / "one", tmp_path / "two"
    assert run_cli(one, "final_eval_deals=0") == 0
    assert run_cli(two, "final_eval_deals=0") == 0
    a, b = latest_model(one), latest_model(two)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    p1 = ck.read_checkpoint(one / ck.POLICY_FILE).section("model")
    p2 = ck.read_checkpoint(two / ck.POLICY_FILE).section("model")
    assert all(torch.equal(p1[k], p2[k]) for k in p1)


def test_a_second_run_in_the_same_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "run"
    assert run_cli(out, "final_eval_deals=0") == 0
    before = (out / ck.POLICY_FILE).read_bytes()
    capsys.readouterr()
    assert run_cli(out, "final_eval_deals=0", "seed=5") == 2
    err = capsys.readouterr().err
    assert f"piquet train: {out} holds a run already" in err and "--resume" in err
    assert "--overwrite" in err
    assert (out / ck.POLICY_FILE).read_bytes() == before  # untouched
    args = ["train", "--overwrite", "--seed", "5"]
    for item in [*TINY, f"out_dir={out}", "final_eval_deals=0"]:
        args += ["--set", item]
    assert main(args) == 0
    assert (out / ck.POLICY_FILE).read_bytes() != before


def test_initial_weights_of_another_network_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    narrow = ck.save_policy(tmp_path / "narrow.safetensors", tiny_model(), STANDARD)  # hidden 16
    assert run_cli(tmp_path / "run", f"init_from={narrow}") == 2  # TINY: hidden 32
    err = capsys.readouterr().err
    assert f"{narrow}: metadata.arch: network" in err and "'hidden': [16]" in err, err
    assert not (tmp_path / "run" / ck.POLICY_FILE).exists()


def test_train_takes_the_shared_rules_options(tmp_path: Path) -> None:
    out = tmp_path / "classic"
    args = ["train", "--rules", "classic", "--variant", "orbis", "--seed", "3"]
    for item in [*TINY, f"out_dir={out}", "final_eval_deals=0", "eval_every=0"]:
        args += ["--set", item]
    assert main(args) == 0
    meta = ck.read_checkpoint(out / ck.POLICY_FILE).meta
    assert meta["config"]["rules"] == "classic+orbis" and meta["config"]["seed"] == 3
    assert main(["train", "--resume", str(out), "--rules", "standard"]) == 2


def test_resume_from_a_corrupt_checkpoint_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "run"
    (out / "checkpoints").mkdir(parents=True)
    (out / ck.LATEST_FILE).write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{broken")
    assert main(["train", "--resume", str(out)]) == 2
    assert "corrupt" in capsys.readouterr().err


def test_backend_switch(capsys: pytest.CaptureFixture) -> None:
    assert main(["train", "--show-config", "--set", "seed=9"]) == 0
    assert "seed = 9" in capsys.readouterr().out
    assert main(["train", "--iterations", "3"]) == 2  # an RLlib-only flag with the torch backend
    assert "--iterations only apply to --backend rllib" in capsys.readouterr().err
    assert main(["train", "--backend", "rllib", "--show-config"]) == 0
    assert "updates = 190" in capsys.readouterr().out  # RLlib's own length of the recipe


# ---------------------------------------------------------------------------- resume: no traces


def test_resume_drops_log_rows_it_redoes_and_stale_temporaries(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli(out, "final_eval_deals=0", "eval_every=0") == 0
    # A run killed after logging updates 3 and 4 but before their checkpoint: the rows are in
    # train.csv, the checkpoint is at update 2; and a save killed mid-write left a temporary.
    train_csv = out / "train.csv"
    lines = train_csv.read_text().splitlines()
    train_csv.write_text("\n".join([*lines, "3" + lines[-1][1:], "4" + lines[-1][1:]]) + "\n")
    stale = out / "checkpoints" / "latest.safetensors.k1ll3d.tmp"
    stale.write_bytes(b"half a checkpoint")
    assert main(["train", "--resume", str(out), "--set", "updates=4"]) == 0
    updates = [r.split(",")[0] for r in train_csv.read_text().splitlines()[1:]]
    assert updates == ["1", "2", "3", "4"]
    assert not stale.exists()
    assert [r.split(",")[2] for r in (out / "events.csv").read_text().splitlines()[1:]] == [
        "warm_start",
        "resume",
    ]


def _tamper(path: Path, change) -> None:
    """Rewrite a checkpoint with its metadata changed by ``change(meta)`` (re-signed, as a
    crafted file would be)."""
    ckpt = ck.read_checkpoint(path)
    meta = {k: v for k, v in ckpt.meta.items() if k not in ("format", "format_version", "sha256")}
    change(meta)
    ck.save_checkpoint(path, ckpt.tensors, meta)


def _set(*keys_and_value):
    *keys, value = keys_and_value

    def change(meta):
        d = meta
        for k in keys[:-1]:
            d = d[k]
        if value is _DELETE:
            del d[keys[-1]]
        else:
            d[keys[-1]] = value

    return change


_DELETE = object()
TAMPERED = [
    (_set("train", _DELETE), "train"),
    (_set("train", "counters", _DELETE), "train.counters"),
    (_set("train", "counters", "update", _DELETE), "train.counters.update"),
    (_set("train", "counters", "update", "three"), "train.counters.update"),
    (_set("train", "counters", "update", -1), "train.counters.update"),
    (_set("train", "counters", "env_steps", 1.5), "train.counters.env_steps"),
    (_set("train", "counters", "train_seconds", None), "train.counters.train_seconds"),
    (_set("train", "counters", "eval_s_per_pair", "slow"), "train.counters.eval_s_per_pair"),
    (_set("train", "python_rng", 5), "train.python_rng"),
    (_set("train", "python_rng", [3, [1, 2], None]), "train.python_rng"),
    (_set("train", "python_rng", [3, ["a"] * 625, None]), "train.python_rng"),
    (_set("train", "python_rng", _DELETE), "train.python_rng"),
    (_set("train", "numpy_rng", {}), "train.numpy_rng"),
    (_set("train", "numpy_rng", "x"), "train.numpy_rng"),
    (_set("train", "numpy_rng", {"bit_generator": "PCG64", "state": 3}), "train.numpy_rng"),
    (_set("train", "optimizer", {}), "train.optimizer"),
    (_set("train", "optimizer", "param_groups", _DELETE), "train.optimizer"),
    (_set("train", "optimizer", "param_groups", [{}]), "train.optimizer"),
    (_set("train", "optimizer", "param_groups", 7), "train.optimizer"),
    (_set("train", "pool_updates", "x"), "train.pool_updates"),
    (_set("train", "pool_updates", [1, 2, 3, 4, 5, 6, 7, 8, 9]), "train.pool_updates"),
]


@pytest.fixture(scope="module")
def trained_checkpoint(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tamper") / "run"
    assert run_cli(out, "final_eval_deals=0", "eval_every=0", "updates=1") == 0
    return out


@pytest.mark.parametrize("change, field", TAMPERED)
def test_tampered_training_metadata_is_a_checkpoint_error(
    change, field, trained_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "run"
    (out / "checkpoints").mkdir(parents=True)
    latest = out / ck.LATEST_FILE
    latest.write_bytes((trained_checkpoint / ck.LATEST_FILE).read_bytes())
    _tamper(latest, change)
    assert main(["train", "--resume", str(out), "--set", "updates=2"]) == 2
    err = capsys.readouterr().err
    if field == "train":  # no training section at all: a policy, said before anything is read
        assert err.startswith(f"piquet train: {out}: a policy of the built-in trainer, not a "
                              "training state"), err  # fmt: skip
    else:
        assert err.startswith(f"piquet train: {latest}: {field}"), err
    assert "Traceback" not in err


GOLDEN_RUNS = {
    "tiny": [],
    "magnet": ["magnet=uniform", "magnet_coef=0.2", "ent_schedule=linear", "ent_coef_end=0"],
    "partie": ["mode=partie", "critic=obs", "updates=1"],
}


@pytest.mark.parametrize("name", GOLDEN_RUNS)
def test_golden_runs_keep_their_policies(tmp_path: Path, name: str) -> None:
    """Refactoring pins: three tiny runs give the policies recorded when the collection became
    chunks of their own seeds (``tests/golden/tiny_runs.json``, made at ``1593c3e``, the same at
    ``4d0adbf`` and after the round's merges; before, at ``8bdae92``): the sum, the sum of
    squares and the first weights, to float precision (another CPU's kernels may round
    differently). They were recorded in float32: ``precision`` is pinned, since ``auto`` takes
    bf16 on a CPU with native bf16 (AVX-512 BF16, AMX) and the same run then ends elsewhere."""
    golden = json.loads((Path(__file__).parent / "golden" / "tiny_runs.json").read_text())[name]
    settings = [*TINY_RUN, "final_eval_deals=0", "torch_threads=1", "precision=fp32"]
    assert train_cli(tmp_path, settings, *GOLDEN_RUNS[name]) == 0
    model = ck.read_checkpoint(tmp_path / ck.POLICY_FILE).section("model")
    flat = torch.cat([v.double().flatten() for _, v in sorted(model.items())])
    assert float(flat.sum()) == pytest.approx(golden["sum"], rel=1e-5, abs=1e-6)
    assert float((flat**2).sum()) == pytest.approx(golden["sumsq"], rel=1e-5)
    assert [float(x) for x in flat[:4]] == pytest.approx(golden["first"], rel=1e-4, abs=1e-7)
