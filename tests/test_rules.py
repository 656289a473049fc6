"""Rules: presets, variants composing, validation."""

import pytest

from piquet_env.rules import CLASSIC, STANDARD, Rules, all_presets, make_rules


def test_standard_is_default_and_matches_rules_md():
    r = make_rules()
    assert r == STANDARD and r.name == "standard"
    assert (r.exchange, r.deals, r.joker, r.n_cards, r.talon_size) == (True, 6, False, 32, 8)
    assert (r.elder_part, r.younger_part) == (5, 3)
    assert (r.younger_min_exchange, r.younger_max_exchange) == (0, 3)
    assert not r.carte_blanche and not r.tie_break_deals


def test_classic_switches():
    r = make_rules("classic")
    assert r == CLASSIC
    assert r.younger_min_exchange == 1 and r.younger_max_exchange is None
    assert r.carte_blanche and r.tie_break_deals
    assert (r.trick_scoring, r.repique_reckoning, r.settlement) == ("classic",) * 3


def test_variants_compose():
    r = make_rules("classic", ["normand", "saison", "orbis"])
    assert r.name == "classic+orbis+saison+normand"
    assert (r.exchange, r.deals, r.joker, r.n_cards, r.talon_size, r.younger_part) == (
        False,
        12,
        True,
        33,
        9,
        4,
    )
    assert r.carte_blanche  # the rule set's switches survive
    assert make_rules("CLASSIC+Normand") == make_rules("classic", ("normand",))
    assert make_rules(make_rules("standard+orbis"), ["saison"]).name == "standard+orbis+saison"
    assert len({p.name for p in all_presets()}) == 32


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("cavendish",), "unknown rules preset 'cavendish'"),
        (("standard", ["turbo"]), "unknown variant 'turbo'"),
        (("standard", ["orbis", "orbis"]), "variant given twice"),
        (("standard+saison", ["saison"]), "variant given twice"),
    ],
)
def test_bad_presets(args, message):
    with pytest.raises(ValueError, match=message):
        make_rules(*args)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"deals": 5}, "deals must be a positive even number"),
        ({"base": "modern"}, "unknown rule set"),
        ({"trick_scoring": "fast"}, "trick_scoring must be one of"),
        ({"younger_max_exchange": -1}, "younger_max_exchange must be at least 0"),
        ({"suits": 0}, "suits must be 1..4"),
        ({"ranks": 9}, "ranks must be 1..8"),
        ({"hand_size": 16}, "hand_size must be 1..15"),
        ({"hand_size": 0}, "hand_size must be 1..15"),
        ({"elder_part": 9}, "elder_part must be 0..8"),
        ({"elder_part": 0}, "elder_part must be at least 1 with an exchange"),
        ({"younger_min_exchange": 3, "younger_max_exchange": 2}, "younger_min_exchange"),
        ({"elder_max_exchange": 0}, "elder_max_exchange"),
    ],
)
def test_inconsistent_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rules(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # 32 cards: a talon of 8; elder takes up to 5, so 3 are sure to be left for younger
        ({"younger_max_exchange": 7}, "younger_max_exchange must be at most 3, got 7"),
        ({"younger_max_exchange": 4}, "younger_max_exchange must be at most 3, got 4"),
        # elder limited to 1 of his 5: 7 are left (his 4 leftovers, then younger's 3)
        ({"elder_max_exchange": 1, "younger_max_exchange": 8}, "at most 7, got 8"),
        # the joker: a talon of 9, elder's 5, 4 left
        ({"joker": True, "younger_max_exchange": 5}, "at most 4, got 5"),
        # all that remain, but at least more than can be left
        (
            {"younger_max_exchange": None, "younger_min_exchange": 4},
            "younger_min_exchange must be at most 3, got 4",
        ),
    ],
)
def test_exchange_limits_that_cannot_be_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rules(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"younger_max_exchange": 3},  # the standard rules
        {"younger_max_exchange": None},  # classic: all that remain
        {"elder_max_exchange": 1, "younger_max_exchange": 7},  # 8 - 1 left
        {"elder_max_exchange": 4, "younger_max_exchange": 4},  # 8 - 4 left
        {"joker": True, "younger_max_exchange": 4},  # 9 - 5 left
        {"suits": 3, "ranks": 3, "hand_size": 4, "elder_part": 1},  # mini: 3 holds, never binds
    ],
)
def test_exchange_limits_that_can_be_are_accepted(kwargs):
    assert Rules(**kwargs).younger_max_exchange == kwargs.get("younger_max_exchange", 3)


def test_rules_are_frozen_and_round_trip():
    with pytest.raises(AttributeError):
        STANDARD.deals = 12  # type: ignore[misc]
    for r in all_presets():
        assert Rules.from_dict(r.to_dict()) == r
    with pytest.raises(ValueError, match="unknown rule options"):
        Rules.from_dict({"deals": 6, "bogus": 1})


@pytest.mark.parametrize("variants", [5, 1.5, [5], [None], object()])
def test_variants_of_the_wrong_type_are_named(variants):
    with pytest.raises(ValueError, match="variant"):
        make_rules("standard", variants)


def test_variants_as_one_string():
    assert make_rules("standard", "orbis+saison") == make_rules("standard", ["orbis", "saison"])
    assert make_rules("classic", "normand").variants == ("normand",)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        # issue 57: each constructed, and then could not be played (or named)
        (lambda: Rules(variants=("mini", "mini")), "variants must be given once each"),
        (lambda: Rules(variants=("saison", "orbis")), "in the order"),
        (
            lambda: Rules(exchange=False, suits=1, ranks=2, hand_size=1, elder_part=0),
            "a talon of at least one card",
        ),
        (lambda: make_rules("standard[deals=22]"), "deals must be at most 20"),
        (lambda: make_rules("classic[deals=20]"), "deals must be at most 18"),
        (
            lambda: Rules(joker=True, suits=1, ranks=6, hand_size=1, younger_min_exchange=1),
            None,
        ),
        (
            lambda: Rules(suits=1, ranks=7, hand_size=2, elder_part=1, younger_min_exchange=3),
            "younger_min_exchange 3 is more than the 2 cards of a hand",
        ),
    ],
)
def test_rule_sets_that_cannot_be_played_are_refused_on_construction(build, message):
    if message is None:  # the limit itself is playable
        build()
        return
    with pytest.raises(ValueError, match=message):
        build()


def test_the_most_deals_is_what_the_game_can_keep():
    from piquet_env.game import Game
    from piquet_env.game.scoring import MAX_DEAL_POINTS, MAX_TOTAL
    from piquet_env.rules import MAX_PARTIE_DEALS

    assert MAX_PARTIE_DEALS == MAX_TOTAL // MAX_DEAL_POINTS
    Game(make_rules("standard[deals=20]"), seed=0)
    Game(make_rules("classic[deals=18]"), seed=0)


def test_the_cli_names_a_rule_set_that_cannot_be_played(capsys):
    from piquet_cli import main

    assert main(["play", "--rules", "standard[deals=22]", "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "deals must be at most 20" in err


def test_every_rule_set_that_constructs_plays_a_deal():
    """Rule sets drawn field by field (a seeded sample): each either is refused on construction
    or names itself, reads back from its name and plays a deal to its end through the env, with
    a legal move at every turn (issue 57: some constructed, then could not be named or played)."""
    import random

    from piquet_env import piquet_v1

    rng = random.Random(57)
    played = 0
    for i in range(400):
        try:
            rules = Rules(
                base=rng.choice(["standard", "classic"]),
                exchange=rng.random() < 0.7,
                deals=rng.choice([2, 6, 18, 20]),
                joker=rng.random() < 0.2,
                suits=rng.randint(1, 4),
                ranks=rng.randint(1, 8),
                hand_size=rng.randint(1, 16),
                elder_part=rng.randint(0, 8),
                elder_max_exchange=rng.randint(1, 5),
                younger_min_exchange=rng.randint(0, 3),
                younger_max_exchange=rng.choice([None, 0, 1, 3, 4, 6]),
                carte_blanche=rng.random() < 0.5,
                tie_break_deals=rng.random() < 0.5,
            )
        except ValueError:
            continue
        assert make_rules(rules.name) == rules
        env = piquet_v1.env(rules=rules, mode="deal")
        env.reset(seed=i)
        for _ in env.agent_iter(max_iter=2000):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = [a for a, ok in enumerate(obs["action_mask"]) if ok]
            assert legal, rules.name
            env.step(rng.choice(legal))
        assert not env.agents, rules.name
        played += 1
    assert played >= 20
