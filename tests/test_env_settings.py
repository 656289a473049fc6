"""The env family's one settings object (``piquet_env.settings``): every constructor of the family
accepts or refuses the same value the same way, with the same message, and holds the same
:class:`EnvSettings`; plus the small misuses one validation closes.

Needs no extra: the CI run at the declared minimum versions runs it too."""

from __future__ import annotations

import math

import numpy as np
import pytest

from piquet_env import piquet_v0, piquet_v1
from piquet_env.adapters.gymnasium import PiquetGymEnv
from piquet_env.game import Game
from piquet_env.rules import CLASSIC, Rules, make_rules
from piquet_env.settings import PARAMETERS, EnvSettings, SettingsError, env_settings
from piquet_env.vector import BatchGame, PiquetVectorEnv, SelfPlayEnv, sample_legal
from piquet_env.vector import deal as vdeal

FAMILY = {
    "raw_env": piquet_v0.raw_env,
    "piquet_v1.env": piquet_v1.env,
    "PiquetGymEnv": PiquetGymEnv,
    "BatchGame": lambda **kw: BatchGame(n=2, **kw),
    "PiquetVectorEnv": lambda **kw: PiquetVectorEnv(num_envs=2, **kw),
    "SelfPlayEnv": lambda **kw: SelfPlayEnv(num_envs=2, **kw),
}


def _settings(made: object) -> EnvSettings:
    return made.unwrapped.settings if hasattr(made, "unwrapped") else made.settings


GOOD = [
    ({}, EnvSettings()),
    ({"rules": "classic"}, EnvSettings(rules=CLASSIC)),
    ({"rules": CLASSIC}, EnvSettings(rules=CLASSIC)),
    ({"rules": "Classic+Orbis"}, EnvSettings(rules=make_rules("classic+orbis"))),
    ({"variants": ["orbis"]}, EnvSettings(rules=make_rules("standard+orbis"))),
    ({"variants": "orbis"}, EnvSettings(rules=make_rules("standard+orbis"))),
    ({"variants": ("saison", "orbis")}, EnvSettings(rules=make_rules("standard+orbis+saison"))),
    ({"variants": "orbis+saison"}, EnvSettings(rules=make_rules("standard+orbis+saison"))),
    ({"rules": "classic", "variants": []}, EnvSettings(rules=CLASSIC)),
    ({"mode": "deal"}, EnvSettings(mode="deal")),
    ({"episode": "deal"}, EnvSettings(mode="deal")),
    ({"mode": "deal", "episode": "deal"}, EnvSettings(mode="deal")),
    ({"reward": "deal_points"}, EnvSettings(reward="deal_points")),
    ({"reward": "win"}, EnvSettings(reward="win")),
    ({"reward_scale": 0.5}, EnvSettings(reward_scale=0.5)),
    ({"reward_scale": 2}, EnvSettings(reward_scale=2.0)),
    ({"reward_scale": np.float32(0.25)}, EnvSettings(reward_scale=0.25)),
    ({"reward_scale": np.int64(3)}, EnvSettings(reward_scale=3.0)),
    ({"dense": True, "reward": "deal_points"}, EnvSettings(dense=True, reward="deal_points")),
    ({"dense": np.True_}, EnvSettings(dense=True)),
    ({"settle_weight": 0}, EnvSettings(settle_weight=0.0)),
    ({"settle_weight": 0.5}, EnvSettings(settle_weight=0.5)),
]

BAD = [
    ({"rules": 5}, "rules must be a preset name"),
    ({"rules": None, "variants": 5}, "variants must be a variant name or a list"),
    ({"rules": "cavendish"}, "unknown rules preset 'cavendish'"),
    ({"variants": 5}, "variants must be a variant name or a list"),
    ({"variants": [5]}, "variants must be a variant name or a list"),
    ({"variants": {"orbis": 1}}, "variants must be a variant name or a list"),
    ({"variants": ["turbo"]}, "unknown variant 'turbo'"),
    ({"variants": ["orbis", "orbis"]}, "variant given twice"),
    ({"rules": "standard+orbis", "variants": ["orbis"]}, "variant given twice"),
    ({"mode": "game"}, "mode must be one of"),
    ({"mode": 1}, "mode must be one of"),
    ({"episode": "season"}, "episode must be one of"),
    ({"mode": "deal", "episode": "partie"}, "disagree"),
    ({"reward": "points"}, "reward must be one of"),
    ({"reward": 1}, "reward must be one of"),
    ({"reward_scale": "0.5"}, "reward_scale must be a positive number"),
    ({"reward_scale": True}, "reward_scale must be a positive number"),
    ({"reward_scale": 0}, "reward_scale must be a positive finite number"),
    ({"reward_scale": -1.0}, "reward_scale must be a positive finite number"),
    ({"reward_scale": math.nan}, "reward_scale must be a positive finite number"),
    ({"reward_scale": math.inf}, "reward_scale must be a positive finite number"),
    ({"dense": "yes"}, "dense must be True or False"),
    ({"dense": 1}, "dense must be True or False"),
    ({"settle_weight": -1}, "settle_weight must be a finite number >= 0"),
    ({"settle_weight": "1"}, "settle_weight must be a number"),
    ({"settle_weight": math.nan}, "settle_weight must be a finite number >= 0"),
    ({"settle_weight": False}, "settle_weight must be a number"),
]


@pytest.mark.parametrize(("options", "expected"), GOOD, ids=lambda v: repr(v)[:40])
@pytest.mark.parametrize("maker", sorted(FAMILY))
def test_every_constructor_accepts_a_good_value_alike(maker, options, expected):
    assert env_settings(**options) == expected
    assert _settings(FAMILY[maker](**options)) == expected
    # the settings object itself, and options beside it replacing its values
    assert _settings(FAMILY[maker](settings=expected)) == expected
    assert _settings(FAMILY[maker](settings=expected, reward="win")).reward == "win"


@pytest.mark.parametrize(("options", "message"), BAD, ids=lambda v: repr(v)[:40])
def test_every_constructor_refuses_a_bad_value_alike(options, message):
    with pytest.raises(ValueError, match=message) as first:
        env_settings(**options)
    for maker, make in FAMILY.items():
        with pytest.raises(ValueError) as exc:
            make(**options)
        assert str(exc.value) == str(first.value), maker


def test_settings_validate_when_built_directly_too():
    with pytest.raises(SettingsError, match="rules must be a Rules object"):
        EnvSettings(rules="standard")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reward_scale"):
        EnvSettings(reward_scale="1")  # type: ignore[arg-type]
    with pytest.raises(SettingsError, match=r"unknown env option\(s\) \['seat'\]"):
        env_settings(seat=0)
    with pytest.raises(SettingsError, match="settings must be an EnvSettings"):
        env_settings({"rules": "classic"})  # type: ignore[arg-type]


def test_the_flat_form_round_trips_and_is_the_parameter_table():
    s = env_settings(rules="classic+normand", mode="deal", reward="deal_points", dense=True)
    params = s.to_params()
    assert set(params) == set(PARAMETERS) - {"variants"}
    assert params["rules"] == "classic+normand"
    assert EnvSettings.from_params(params) == s
    assert EnvSettings.from_params({}) == EnvSettings()
    for name, p in PARAMETERS.items():
        if name != "variants":
            assert EnvSettings().to_params()[name] == (p.default if name != "rules" else "standard")
    custom = EnvSettings(rules=Rules(deals=8))  # named with its fields: 'standard[deals=8]'
    assert custom.to_params()["rules"] == "standard[deals=8]"
    assert EnvSettings.from_params(custom.to_params()) == custom


def test_the_openspiel_parameters_come_from_the_settings():
    pytest.importorskip("pyspiel")
    from piquet_env.adapters.openspiel import DEFAULT_PARAMS, PiquetGame

    defaults = EnvSettings().to_params()
    assert {k: DEFAULT_PARAMS[k] for k in ("rules", "mode", "reward")} == {
        k: defaults[k] for k in ("rules", "mode", "reward")
    }
    with pytest.raises(ValueError, match="reward_scale must be a positive number"):
        env_settings(reward_scale="x")
    with pytest.raises(ValueError, match="terminal reward model"):
        PiquetGame({"reward": "deal_points"})
    with pytest.raises(ValueError, match="unknown rules preset"):
        PiquetGame({"rules": "cavendish"})


# ---------------------------------------------------------------------- the misuses closed


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"deals": "6"}, r"Rules\.deals must be int, got '6' \(str\)"),
        ({"elder_max_exchange": 2.5}, r"Rules\.elder_max_exchange must be int, got 2\.5"),
        ({"exchange": 0}, r"Rules\.exchange must be bool, got 0"),
        ({"younger_max_exchange": 2.0}, r"Rules\.younger_max_exchange must be int or None"),
        ({"deals": True}, r"Rules\.deals must be int, got True"),
    ],
)
def test_rules_fields_of_the_wrong_type_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rules(**kwargs)


@pytest.mark.parametrize(
    ("seed", "options", "message"),
    [
        (-1, None, r"seed must be None or an int >= 0, got -1"),
        (1.5, None, "seed must be None or an int >= 0"),
        (True, None, "seed must be None or an int >= 0"),
        (None, {"first_elder": 1.0}, "first_elder must be 0, 1"),
        (None, {"first_elder": True}, "first_elder must be 0, 1"),
        (None, {"first_elder": 2}, "first_elder must be 0, 1"),
    ],
)
def test_bad_reset_arguments_are_refused(seed, options, message):
    env = piquet_v0.env()
    with pytest.raises(ValueError, match=message):
        env.reset(seed=seed, options=options)
    env.reset(seed=0, options={"first_elder": np.int64(1)})
    assert env.unwrapped.game.elder == 1


def test_more_preset_deals_than_the_game_plays_are_refused():
    g = Game(seed=1)
    hands = (_bits(g.dealt[g.elder]), _bits(g.dealt[1 - g.elder]), g.talon)
    Game(deals=[hands] * 6)
    with pytest.raises(ValueError, match="7 deals given, but a partie of 'standard'.*at most 6"):
        Game(deals=[hands] * 7)
    Game(CLASSIC, deals=[hands] * 8)  # the tie-break deals may need them
    with pytest.raises(ValueError, match="2 deals given, but a single deal plays at most 1"):
        Game(mode="deal", deals=[hands] * 2)
    env = piquet_v0.env()
    with pytest.raises(ValueError, match="7 deals given"):
        env.reset(options={"deals": [hands] * 7})


def _bits(mask: int) -> list[int]:
    return [c for c in range(33) if mask >> c & 1]


def test_the_env_names_its_agents_and_asks_for_a_reset():
    env = piquet_v0.env()
    with pytest.raises(ValueError, match=r"agent must be one of \['player_0', 'player_1'\], got 0"):
        env.reset(seed=0) or env.observe(0)
    fresh = piquet_v0.env()
    with pytest.raises(ValueError):
        fresh.reset(options={"first_elder": 7})
    with pytest.raises(AssertionError, match="reset"):  # as before any reset (PettingZoo's)
        fresh.step(0)
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        fresh.unwrapped.step(0)
    gym = PiquetGymEnv()
    with pytest.raises(RuntimeError, match=r"action_masks\(\) called before reset\(\)"):
        gym.action_masks()


@pytest.mark.parametrize("settle_weight", [1.0, 0.5])
def test_the_aec_env_pays_densely_as_the_batched_engine(settle_weight):
    """``dense`` and ``settle_weight`` on the AEC env: the same rewards, move by move, as
    ``BatchGame`` pays in the same game."""
    options = {"reward": "deal_points", "dense": True, "settle_weight": settle_weight}
    batch = BatchGame(n=1, seed=11, **options)
    out = batch.reset(seed=11)
    seed = int(vdeal.game_seed(11, 0, 0))
    deals = vdeal.game_deals(batch.rules, seed)
    elder = int(vdeal.first_elder(np.array([seed], dtype=np.uint64))[0])
    env = piquet_v0.raw_env(**options)
    env.reset(options={"deals": deals, "first_elder": elder})
    rng = np.random.default_rng(0)
    paid, total = 0, np.zeros(2)
    while True:
        action = sample_legal(out.mask, rng)
        env.step(int(action[0]))
        out = batch.step(action)
        rewards = np.array([env.rewards["player_0"], env.rewards["player_1"]])
        np.testing.assert_allclose(rewards, out.rewards[0], atol=1e-9)
        total += rewards
        paid += bool(rewards.any())
        if out.ended[0]:
            break
    assert paid > 6  # paid move by move, not only at the deals' ends
    result = np.array(env.game.result, dtype=float)
    if settle_weight == 1.0:
        np.testing.assert_allclose(total, result)
    else:
        assert not np.allclose(total, result)
