"""The shipped recipes are package data named by their names: ``piquet train --config wide``,
``--list-configs`` (a wheel installed in a fresh venv: tests/test_wheel.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from piquet_cli import main
from piquet_training.settings.train import ConfigError, load_toml


def test_the_recipes_are_named_by_name_and_a_bad_name_lists_them(tmp_path, monkeypatch) -> None:
    from piquet_training.settings.recipes import describe, recipe_names, resolve_config

    assert set(recipe_names()) >= {"long", "wide", "wide-magnet", "classic", "classic-magnet"}
    assert resolve_config("wide") == resolve_config("wide.toml")
    assert load_toml(resolve_config("wide")).hidden == (512, 512)
    assert describe("long") == "A longer run of `piquet train`."
    with pytest.raises(ConfigError, match="no config file 'wider' and no shipped recipe of that"):
        resolve_config("wider")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wide").write_text("updates = 3\n")  # a file of that name wins
    assert load_toml(resolve_config("wide")).updates == 3
    assert resolve_config("sub/none.toml") == Path("sub/none.toml")  # a path stays a path


def test_list_configs_and_a_bad_name(capsys) -> None:
    assert main(["train", "--list-configs"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("classic         The wider recipe under classic")
    assert "\nclassic-magnet  The recipe of the shipped `baseline` under classic" in out
    assert "\nwide-magnet     The recipe of the shipped `baseline`: the wider recipe" in out
    assert "\nlong            A longer run of `piquet train`." in out and "--config NAME" in out
    assert main(["train", "--config", "nope", "--show-config"]) == 2
    err = capsys.readouterr().err
    assert "no config file 'nope' and no shipped recipe of that name; the recipes are" in err


@pytest.mark.parametrize(
    ("recipe", "rules"), [("wide-magnet", "standard"), ("classic-magnet", "classic")]
)
def test_each_baseline_recipe_is_the_config_its_policy_was_trained_with(recipe, rules) -> None:
    """Each shipped policy's metadata holds its run's full config: its recipe gives it again
    (the progress display aside), so ``piquet train --config wide-magnet`` (standard) and
    ``--config classic-magnet`` (classic) retrain them with their settings. The settings added
    since they were trained (the collection's chunks, and where they are collected) are not in
    their metadata: since chunks came, a retrained policy deals other games than the shipped
    one did, so it is the same recipe, not the same weights."""
    from piquet_agents.baseline import BASELINES, baseline_info
    from piquet_training.settings.recipes import resolve_config

    trained = baseline_info(BASELINES[rules])["config"]
    recipe_config = load_toml(resolve_config(recipe)).to_dict()
    differ = {
        k for k in trained.keys() | recipe_config.keys() if trained.get(k) != recipe_config.get(k)
    }
    added = {k for k in ("chunk_games", "workers", "ray") if k not in trained}
    assert differ <= {"progress", *added}, {
        k: (trained.get(k), recipe_config.get(k)) for k in differ
    }
    assert trained["rules"] == rules and trained["magnet"] == "uniform"
