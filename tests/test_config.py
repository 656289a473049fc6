"""Training settings: one loader for both backends, a parse-time check per setting, shared names."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from piquet_cli import main
from piquet_training.rllib.algo import RLlibConfig
from piquet_training.settings.train import (
    ConfigError,
    PPOSettings,
    TrainConfig,
    apply_overrides,
    load_toml,
    to_toml,
)

ROOT = Path(__file__).resolve().parent.parent

# One or more bad values per setting, as --set text. Every field must be listed: a new setting
# without a parse-time check fails test_every_setting_has_a_bad_value_here.
TRAIN_BAD: dict[str, list[str]] = {
    "seed": ["-1", "1.5", "x"],
    "rules": ["bezique", ""],
    "mode": ["tournament"],
    "out_dir": ["", "{file}/sub"],
    "updates": ["-1", "2.5"],
    "env_steps": ["-1", "1e3"],
    "time_budget_minutes": ["-1", "nan", "inf"],
    "torch_threads": ["0"],
    "progress": ["maybe"],
    "tensorboard": ["2"],
    "hidden": ["", "0", "64,-3", "a,b"],
    "activation": ["sigmoid"],
    "critic": ["both"],
    "device": ["gpu", "tpu:0"],
    "precision": ["fp16", "half"],
    "collector": ["threads"],
    "num_envs": ["0"],
    "chunk_games": ["0", "2.5"],
    "workers": ["0", "-2"],
    "ray": ["nonsense", "ray://host", "ray://:10001", "ray://host:0"],
    "games_per_update": ["0"],
    "self_play_weight": ["-0.1", "nan"],
    "heuristic_weight": ["-1"],
    "snapshot_weight": ["inf"],
    "random_weight": ["-2"],
    "opponents": [
        "nobody@0.5",
        "mcts:50",
        "mcts:50@-1",
        "mcts:50@x",
        "heuristic@0.2",
        "mcts:50@0.1,mcts:50@0.2",
    ],
    "opponent": ["bogus", "random,heuristic"],
    "snapshot_every": ["-1"],
    "pool_size": ["0"],
    "reward": ["points"],
    "reward_scale": ["nan", "0", "-1"],
    "dense_reward": ["perhaps"],
    "settle_weight": ["-0.5", "nan"],
    "learning_rate": ["nan", "-1", "0"],
    "anneal_lr": ["x"],
    "gamma": ["0", "1.5", "nan"],
    "gae_lambda": ["-0.1", "1.01"],
    "update_epochs": ["0"],
    "num_minibatches": ["0"],
    "norm_adv": ["x"],
    "clip_coef": ["-1", "0", "nan"],
    "clip_vloss": ["x"],
    "ent_coef": ["-0.01", "nan"],
    "vf_coef": ["-1"],
    "max_grad_norm": ["0", "inf"],
    "target_kl": ["-1", "nan"],
    "init_from": ["{missing}"],
    "bc_games": ["-1"],
    "bc_mode": ["trick"],
    "bc_epochs": ["0"],
    "bc_learning_rate": ["0", "nan"],
    "bc_batch_size": ["0"],
    "eval_every": ["-1"],
    "exact_every": ["-1", "1.5"],
    "magnet": ["{missing}", "gaussian"],
    "magnet_coef": ["-0.1", "x"],
    "magnet_schedule": ["cosine"],
    "magnet_coef_end": ["-1"],
    "magnet_power": ["-1"],
    "magnet_ema": ["1.5", "-0.1"],
    "ent_schedule": ["cosine"],
    "ent_coef_end": ["-1"],
    "ent_power": ["-1"],
    "eval_deals": ["0"],
    "final_eval_deals": ["-1"],
    "eval_mode": ["game"],
    "eval_workers": ["0"],
    "eval_opponents": ["bogus", "", "random,bogus", "mcts:-3"],
    "checkpoint_every": ["0", "-1"],
}

RLLIB_BAD: dict[str, list[str]] = {
    "updates": ["-1"],  # 0 is refused by validate(): RLlib makes at least one iteration
    "out_dir": ["{file}/sub"],
    "seed": ["-1"],
    "checkpoint_every": ["0"],
    "address": [],  # any text is an address; Ray judges it when joining
    "num_env_runners": ["-1"],
    "num_envs_per_env_runner": ["0"],
    "vector_env": ["maybe"],
    "self_play": ["league"],
    "torch_threads": ["0"],
    "num_cpus": ["0"],
    "rules": ["bezique"],
    "mode": ["trick"],
    "reward": ["points"],
    "reward_scale": ["nan", "0"],
    "hidden": ["0"],
    "activation": ["gelu"],
    "learning_rate": ["nan", "-1"],
    "gamma": ["0"],
    "gae_lambda": ["2"],
    "clip_coef": ["-1"],
    "ent_coef": ["-1"],
    "vf_coef": ["nan"],
    "max_grad_norm": ["0"],
    "train_batch_size": ["0"],
    "minibatch_size": ["0"],
    "update_epochs": ["0"],
    "critic": ["value"],
    "bc_games": ["-1"],
    "self_play_weight": ["1.5"],
    "latest_weight": ["-0.5"],
    "pool_size": ["0"],
    "win_rate_threshold": ["2"],
    "min_games": ["0"],
    "final_eval_deals": ["-1"],
    "eval_mode": ["game"],
    "eval_workers": ["0"],
    "eval_opponents": ["bogus", ""],
    "extra": [],  # a table; --set cannot write one (tested below)
}


def _cases(bad: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, values in bad.items() for value in values]


def _fill(value: str, tmp_path: Path) -> str:
    afile = tmp_path / "afile"
    afile.write_text("x")
    return value.format(file=afile, missing=tmp_path / "nothing-here")


@pytest.mark.parametrize("cls, bad", [(TrainConfig, TRAIN_BAD), (RLlibConfig, RLLIB_BAD)])
def test_every_setting_has_a_bad_value_here(cls, bad) -> None:
    assert set(bad) == set(cls.field_names())


@pytest.mark.parametrize("name, value", _cases(TRAIN_BAD))
def test_each_bad_train_setting_is_refused_at_parse_time(name, value, tmp_path) -> None:
    with pytest.raises(ConfigError, match=f"'?{name}'?"):
        apply_overrides(TrainConfig(), [f"{name}={_fill(value, tmp_path)}"])


@pytest.mark.parametrize("name, value", _cases(RLLIB_BAD))
def test_each_bad_rllib_setting_is_refused_at_parse_time(name, value, tmp_path) -> None:
    with pytest.raises(ConfigError, match=f"'?{name}'?"):
        apply_overrides(RLlibConfig(), [f"{name}={_fill(value, tmp_path)}"])


def test_bad_values_in_a_file_or_checkpoint_config_name_the_source(tmp_path) -> None:
    f = tmp_path / "c.toml"
    f.write_text("[ppo]\nclip_coef = -1\n")
    with pytest.raises(ConfigError, match=r"c\.toml: clip_coef must be a number > 0, got -1"):
        load_toml(f)
    f.write_text('eval_deals = "30"\n')  # a string where a number belongs, in a typed file
    with pytest.raises(ConfigError, match="eval_deals"):
        load_toml(f)
    with pytest.raises(ConfigError, match="ckpt: learning_rate"):
        TrainConfig.from_dict({"learning_rate": float("nan")}, source="ckpt")
    with pytest.raises(ConfigError, match="expected a table"):
        TrainConfig.from_dict([1, 2], source="ckpt")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="extra"):
        apply_overrides(RLlibConfig(), ["extra=1"])


def test_cross_field_checks() -> None:
    weights = ["self_play_weight=0", "heuristic_weight=0", "snapshot_weight=0", "random_weight=0"]
    with pytest.raises(ConfigError, match="must be positive"):
        apply_overrides(TrainConfig(), weights).validate()
    with pytest.raises(ConfigError, match="minibatch_size"):
        apply_overrides(RLlibConfig(), ["minibatch_size=500", "train_batch_size=100"]).validate()
    with pytest.raises(ConfigError, match="updates must be at least 1"):
        apply_overrides(RLlibConfig(), ["updates=0"]).validate()


def test_the_backends_share_one_declaration_of_each_ppo_setting() -> None:
    """Each setting of PPOSettings is declared once: both backends hold the very same rule and
    aliases, in the same place; they differ only in the defaults they state."""
    shared = PPOSettings.field_names()
    assert len(shared) == 23
    for cls in (TrainConfig, RLlibConfig):
        assert cls.field_names()[: len(shared)] == shared
        own = {f.name: f for f in dataclasses.fields(cls)}
        for base in dataclasses.fields(PPOSettings):
            assert own[base.name].metadata["rule"] is base.metadata["rule"], (cls, base.name)
            assert own[base.name].metadata["aliases"] == base.metadata["aliases"]
    differ = {
        name for name in shared if getattr(TrainConfig(), name) != getattr(RLlibConfig(), name)
    }
    assert differ == set(RLlibConfig.DEFAULTS) and len(differ) == 4
    assert TrainConfig.DEFAULTS == {}
    with pytest.raises(TypeError, match="no inherited setting"):
        type("Stray", (PPOSettings,), {"DEFAULTS": {"no_such_setting": 1}})


def test_one_name_per_hyperparameter_and_the_old_names_still_read() -> None:
    shared = {
        "learning_rate": "lr",
        "gae_lambda": "lambda_",
        "clip_coef": "clip_param",
        "ent_coef": "entropy_coeff",
        "vf_coef": "vf_loss_coeff",
        "max_grad_norm": "grad_clip",
        "update_epochs": "num_epochs",
        "updates": "iterations",
        "mode": "episode",
        "torch_threads": "learner_threads",
    }
    for cls in (TrainConfig, RLlibConfig):
        assert set(shared) <= set(cls.field_names())
        assert {cls.aliases()[old] for old in shared.values()} == set(shared)
    old_rllib = {"lr": 1e-4, "lambda_": 0.9, "iterations": 7, "mode": "partie", "num_epochs": 2}
    cfg = RLlibConfig.from_dict(old_rllib)
    assert (cfg.learning_rate, cfg.gae_lambda, cfg.updates, cfg.mode, cfg.update_epochs) == (
        1e-4,
        0.9,
        7,
        "partie",
        2,
    )
    cfg = apply_overrides(TrainConfig(), ["lr=0.01", "clip_param=0.1", "mode=deal"])
    assert (cfg.learning_rate, cfg.clip_coef, cfg.mode) == (0.01, 0.1, "deal")
    with pytest.raises(ConfigError, match="set twice"):
        TrainConfig.from_dict({"lr": 0.1, "learning_rate": 0.2})
    # A checkpoint config from before the one time budget holds both limits: the new one wins.
    old = dict(TrainConfig().to_dict(), max_minutes=3.0, time_budget_minutes=9.0)
    assert TrainConfig.from_dict(old).time_budget_minutes == 9.0
    assert TrainConfig.from_dict({"max_minutes": 3.0}).time_budget_minutes == 3.0


def test_show_config_is_toml_for_both_backends_and_reads_back(tmp_path, capsys) -> None:
    for argv, cls in (
        (["train", "--show-config", "--set", "seed=9", "--set", "lr=0.01"], TrainConfig),
        (["train", "--backend", "rllib", "--show-config", "--iterations", "3"], RLlibConfig),
    ):
        assert main(argv) == 0
        text = capsys.readouterr().out
        f = tmp_path / "shown.toml"
        f.write_text(text)
        cfg = load_toml(f, cls=cls)
        assert to_toml(cfg) == text
    assert "updates = 3" in text
    cfg = load_toml(f, cls=RLlibConfig)
    assert cfg == dataclasses.replace(RLlibConfig(), updates=3)


def test_cli_refuses_a_bad_setting_before_any_work(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert main(["train", "--set", "checkpoint_every=0", "--set", f"out_dir={out}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("piquet train: --set: checkpoint_every must be") and not out.exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["train", "--set", f"out_dir={afile}/run"]) == 2
    assert "out_dir" in capsys.readouterr().err
    assert main(["train", "--backend", "rllib", "--set", "lr=nan"]) == 2
    assert "lr (learning_rate) must be a number > 0, got nan" in capsys.readouterr().err
    # the league's PettingZoo env has no full state for the default (asymmetric) critic
    assert main(["train", "--backend", "rllib", "--set", "vector_env=false", "--show-config"]) == 2
    err = capsys.readouterr().err
    assert "critic='state' (the default)" in err and "or critic='obs'" in err
    argv = ["train", "--backend", "rllib", "--set", "vector_env=false", "--set", "critic=obs"]
    assert main([*argv, "--show-config"]) == 0
    assert 'critic = "obs"' in capsys.readouterr().out


def test_rllib_trains_with_the_built_in_trainers_recipe() -> None:
    """``piquet train --backend rllib`` takes the built-in trainer's PPO settings, mode, reward
    and critic (since 2026-12-05; it had RLlib's PPO defaults, which never beat the heuristic),
    and the built-in's update: the learner's decisions in 512 parties, in 16 minibatches."""
    from piquet_training.rllib.exploit import update_decisions

    rllib, built_in = RLlibConfig(), TrainConfig()
    for name in ("mode", "learning_rate", "update_epochs", "ent_coef", "gae_lambda", "critic"):
        assert getattr(rllib, name) == getattr(built_in, name), name
    assert (rllib.reward, rllib.reward_scale) == (built_in.reward, built_in.reward_scale)
    decisions = update_decisions(rllib.rules_obj, built_in.mode, built_in.games_per_update)
    assert rllib.train_batch_size == decisions
    assert rllib.minibatch_size == decisions // built_in.num_minibatches


def test_only_the_settings_module_reads_toml() -> None:
    """The Python 3.10 fallback (tomli) lives in one place: no other module imports tomllib."""
    users = [
        p.relative_to(ROOT).as_posix()
        for folder in ("training", "agents", "piquet_env")
        for p in (ROOT / folder).rglob("*.py")
        if "import tomllib" in p.read_text()
    ]
    assert users == ["training/settings/schema.py"]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**62),  # MAX_INT, the largest integer a setting takes
    lr=st.floats(1e-9, 10, allow_nan=False),
    lam=st.floats(0, 1),
    hidden=st.lists(st.integers(1, 4096), min_size=1, max_size=4),
    mode=st.sampled_from(["partie", "deal"]),
    reward=st.sampled_from(["result", "deal_points", "win"]),
    rllib=st.booleans(),
)
def test_toml_round_trip(seed, lr, lam, hidden, mode, reward, rllib, tmp_path_factory) -> None:
    """Any valid settings print as TOML that reads back to the same settings."""
    cls = RLlibConfig if rllib else TrainConfig
    cfg = cls.from_dict(
        {
            "seed": seed,
            "learning_rate": lr,
            "gae_lambda": lam,
            "hidden": hidden,
            "mode": mode,
            "reward": reward,
        }
    )
    f = tmp_path_factory.mktemp("rt") / "c.toml"
    f.write_text(to_toml(cfg))
    assert load_toml(f, cls=cls) == cfg


@pytest.mark.parametrize(
    "recipe", sorted((ROOT / "training" / "settings").glob("*.toml")), ids=lambda p: p.name
)
def test_every_shipped_recipe_reads_and_validates(recipe: Path) -> None:
    cfg = load_toml(recipe, cls=TrainConfig).validate()
    assert cfg.out_dir == f"runs/{recipe.stem}"  # each recipe writes a run folder of its name


def test_a_device_this_machine_lacks_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import torch

    if torch.cuda.is_available():  # pragma: no cover - a machine with a GPU
        pytest.skip("this machine has a CUDA device")
    out = tmp_path / "run"
    assert main(["train", "--device", "cuda", "--set", f"out_dir={out}"]) == 2
    assert "device 'cuda': torch finds no CUDA device" in capsys.readouterr().err
    assert not out.exists()
