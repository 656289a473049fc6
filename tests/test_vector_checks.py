"""One rule for the counts, seeds, slots and flags of ``BatchGame``, ``PiquetVectorEnv`` and
``SelfPlayEnv`` (``piquet_env.vector.checks``): a ``ValueError`` naming the argument, never a
silent rounding, parsing, flattening or wrap-around; and nothing changed by a refused call.

Needs no extra: the CI run at the declared minimum versions runs it too."""

from __future__ import annotations

import numpy as np
import pytest

from piquet_env.vector import BatchGame, PiquetVectorEnv, SelfPlayEnv, game_seed
from piquet_env.vector.checks import SEED_LIMIT

HOYLE = (
    "AS KS QS JS TS 9S 8S 7S AH KH QH JH",
    "AD KD QD JD TD 9D 8D AC KC QC JC TC",
    "TH 9H 8H 7H 7D 9C 8C 7C",
)

COUNTS = [
    (1.5, r"must be an int, got 1\.5 \(float\)"),
    ("8", r"must be an int, got '8' \(str\)"),
    (True, "must be an int, got True"),
    (None, r"must be an int, got None \(NoneType\)"),
    (0, "must be at least 1, got 0"),
    (-3, "must be at least 1, got -3"),
]
SEEDS = [
    (-1, r"must be in 0\.\.2\*\*64 - 1, got -1"),
    (SEED_LIMIT, r"must be in 0\.\.2\*\*64 - 1, got 18446744073709551616"),
    (1.5, r"must be an int, got 1\.5 \(float\)"),
    ("7", r"must be an int, got '7' \(str\)"),
    (True, "must be an int, got True"),
]
MAKERS = {
    "BatchGame": (lambda **kw: BatchGame("standard", **kw), "n"),
    "PiquetVectorEnv": (lambda **kw: PiquetVectorEnv(**kw), "num_envs"),
    "SelfPlayEnv": (lambda **kw: SelfPlayEnv(**kw), "num_envs"),
}


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize(("value", "message"), COUNTS)
def test_counts(maker, value, message):
    make, name = MAKERS[maker]
    with pytest.raises(ValueError, match=f"^{name} {message}"):
        make(**{name: value})


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize(("value", "message"), SEEDS)
def test_seeds_at_construction_and_reset(maker, value, message):
    make, name = MAKERS[maker]
    with pytest.raises(ValueError, match=f"^seed {message}"):
        make(**{name: 2, "seed": value})
    made = make(**{name: 2, "seed": 3})
    reset = made.reset if maker != "PiquetVectorEnv" else (lambda s: made.reset(seed=s))
    first = reset(3)
    with pytest.raises(ValueError, match=f"^seed {message}"):
        reset(value)
    with pytest.raises(ValueError, match=rf"^seed\[1\] {message}"):
        reset([0, value])
    obs = first[0] if maker == "PiquetVectorEnv" else first.obs
    again = reset(3)
    assert np.array_equal(obs, again[0] if maker == "PiquetVectorEnv" else again.obs)


def test_the_largest_seed_and_numpy_integers():
    b = BatchGame("standard", n=2, seed=SEED_LIMIT - 1)
    b.reset()
    assert b.batch_seed == SEED_LIMIT - 1
    assert b.game_seed(1) == int(game_seed(SEED_LIMIT - 1, 1, 0))
    b2 = BatchGame("standard", n=np.int64(2), seed=np.uint64(SEED_LIMIT - 1))
    assert b2.n == 2 and type(b2.n) is int
    assert np.array_equal(b2.reset().obs, b.reset(seed=SEED_LIMIT - 1).obs)


@pytest.mark.parametrize(
    ("games", "message"),
    [
        ([1.5], r"games\[0\] must be an int, got 1\.5 \(float\)"),
        ([[0, 1]], r"games\[0\] must be an int, got \[0, 1\] \(list\)"),
        (
            np.array([[0, 1]]),
            r"games must be a flat sequence of slot indices, got an array of shape",
        ),
        (np.array([True, False, False]), "dtype bool"),
        ([True], r"games\[0\] must be an int, got True"),
        (1, r"games must be a sequence of slot indices, got 1 \(int\)"),
        ("01", "games must be a sequence of slot indices"),
        ([3], r"games must be slot indices in 0\.\.2, got \[3\]"),
        ([-1], r"games must be slot indices in 0\.\.2, got \[-1\]"),
        ([1, 1], r"games names a slot twice: \[1, 1\]"),
    ],
)
def test_slots(games, message):
    b = BatchGame("standard", n=3, seed=0)
    b.reset()
    before = {k: v.copy() for k, v in b.state.arrays().items()}
    with pytest.raises(ValueError, match=message):
        b.reset_games(games)
    with pytest.raises(ValueError, match=message):
        b.load(games, [HOYLE])
    assert all(np.array_equal(before[k], v) for k, v in b.state.arrays().items())


def test_slot_lists_that_are_fine():
    b = BatchGame("standard", n=3, seed=0)
    b.reset()
    for games in ([2, 0], (1,), range(3), np.array([0, 2], dtype=np.uint8), [], np.array([])):
        b.reset_games(games)
    assert b.state.episode.tolist() == [3, 2, 3]
    b.load(np.array([1]), [HOYLE], first_elder=[0])
    b.load([2, 0], [HOYLE, HOYLE], first_elder=1)
    assert b.first_elder.tolist() == [1, 0, 1]


def test_load_deals_and_first_elder():
    b = BatchGame("standard", n=3, seed=0)
    b.reset()
    with pytest.raises(ValueError, match=r"^deals must be a sequence of one deal .* got NoneType"):
        b.load([0], None)
    with pytest.raises(ValueError, match="1 deal lists for 2 games"):
        b.load([0, 1], [HOYLE])
    for elder, message in (
        (True, "first_elder must be an int, got True"),
        (2, r"first_elder must be 0 or 1, got 2 \(int\)"),
        (0.0, r"first_elder must be an int, got 0\.0"),
        ([0], "one of them for each of 2 games, got 1 values"),
        ([0, 1.5], r"first_elder\[1\] must be an int"),
    ):
        with pytest.raises(ValueError, match=message):
            b.load([0, 1], [HOYLE, HOYLE], first_elder=elder)


def test_one_slot_and_flags():
    b = BatchGame("standard", n=3, seed=0)
    b.reset()
    for call in (b.to_game, b.game_seed, b.events):
        for bad, message in ((3, "got 3"), (-1, "got -1"), (1.0, "an int, got 1.0")):
            with pytest.raises(
                ValueError, match=rf"^i must be (a slot index in 0\.\.2, )?{message}"
            ):
                call(bad)
    assert b.to_game(np.int64(2)).hands == b.to_game(2).hands  # numpy integers are slots too
    for name in ("autoreset", "record", "observe"):
        with pytest.raises(ValueError, match=rf"^{name} must be True or False, got 1 \(int\)"):
            BatchGame("standard", n=2, **{name: 1})
    for name in ("critic_state", "copy"):
        with pytest.raises(ValueError, match=rf"^{name} must be True or False, got 'yes'"):
            SelfPlayEnv(num_envs=2, **{name: "yes"})
