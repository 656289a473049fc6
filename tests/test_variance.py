"""The talon correction (AIVAT's chance terms): unbiased by construction, checked here by
sampling; it changes no game; identical play cancels exactly; the cross-fitted weight is
worked by hand; bad value functions are refused before any game."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from piquet_agents.heuristic import HeuristicAgent
from piquet_cli import main
from piquet_env.game import Game
from piquet_env.rules import STANDARD, make_rules
from piquet_training.evaluation.duplicate import (
    GameResult,
    evaluate,
    pair_deals,
    play_pair,
    report,
)
from piquet_training.evaluation.record import MatchRecord, read_line, record_line
from piquet_training.evaluation.variance import TalonCorrection, VarianceReductionError


@pytest.fixture(scope="module")
def value() -> TalonCorrection:
    return TalonCorrection.load("baseline", STANDARD, samples=4)


def _term_mean(value: TalonCorrection, trials: int = 1500) -> tuple[float, float, float]:
    """Hands and the elder's exchange fixed, the talon's actual order uniform: the terms' mean,
    its standard error and their spread."""
    e_hand, y_hand, talon = pair_deals(STANDARD, "deal", random.Random(11))[0]
    elder = HeuristicAgent(seed=0)  # its exchange depends on its hand only: the same each time
    shuffle = random.Random(5)
    terms = []
    for t in range(trials):
        order = shuffle.sample(talon, len(talon))
        g = Game(STANDARD, seed=1, mode="deal", deals=[(e_hand, y_hand, order)], first_elder=0)
        before = action = None
        while not g.exchanged[0]:
            before, action = g.clone(), _act(elder, g)
            g.apply(action)
        terms.append(value.term(before, action, g, 0, f"check {t}"))
    x = np.array(terms)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))), float(x.std())


class _LowCardLast(TalonCorrection):
    """A wrong sampler: the talon's lowest card is never drawn by the elder."""

    def orders(self, talon, key):
        low = min(talon)
        return [[c for c in o if c != low] + [low] for o in super().orders(talon, key)]


def test_a_term_has_mean_zero_over_the_talons_orders(value: TalonCorrection) -> None:
    """The defining property: the term's mean is 0 when the actual order is uniform and the
    elder's exchange does not depend on it. The same check finds a sampler that is not uniform
    over the talon's cards."""
    mean, se, spread = _term_mean(value)
    assert spread > 2.0  # the talon matters to the critic: the check has power
    assert abs(mean) < 4 * se, (mean, se)
    wrong = _LowCardLast(value.model, STANDARD, value.points_per_value, samples=4)
    mean, se, _ = _term_mean(wrong)
    assert abs(mean) > 4 * se, (mean, se)


def _act(agent, game: Game) -> int:
    from piquet_env.agent import Turn

    return agent.act(Turn(game, game.current_player))


def test_the_correction_changes_no_game(value: TalonCorrection) -> None:
    for pair in range(6):
        plain = play_pair(HeuristicAgent(), _random(), STANDARD, "partie", 3, pair)
        fixed = play_pair(
            HeuristicAgent(), _random(), STANDARD, "partie", 3, pair, None, None, value
        )
        for p, f in zip(plain, fixed):
            assert (p.result, p.points, p.deals) == (f.result, f.points, f.deals)
            assert p.correction == 0.0 and f.correction != 0.0


def _random():
    from piquet_env.agent import RandomAgent

    return RandomAgent()


def test_identical_play_cancels_exactly(value: TalonCorrection) -> None:
    """Both games of a pair draw the same sampled orders: where the two agents exchange and play
    alike (the greedy policy against itself), each pair's two terms cancel as its points do."""
    rep = evaluate("baseline", "baseline", STANDARD, 5, seed=2, variance_reduction="baseline")
    games = rep.games
    for g0, g1 in zip(games[::2], games[1::2]):
        assert g0.correction != 0.0 and g0.correction + g1.correction == pytest.approx(0, abs=1e-9)
    assert rep.points.mean == pytest.approx(0, abs=1e-9) and rep.plain_points.mean == 0


def test_corrected_and_plain_means_agree() -> None:
    """Over a whole match of fast agents, the per-pair corrections average to about zero, and
    the corrected and plain estimates' intervals overlap."""
    rep = evaluate("random", "heuristic", STANDARD, 160, seed=9, variance_reduction="baseline")
    by_pair = np.array(
        [sum(g.correction for g in rep.games[i : i + 2]) / 2 for i in range(0, 320, 2)]
    )
    se = by_pair.std(ddof=1) / math.sqrt(len(by_pair))
    assert abs(by_pair.mean()) < 4 * se
    p, q = rep.points, rep.plain_points
    assert p.low < q.high and q.low < p.high
    assert "without the correction" in rep.summary()
    assert rep.to_dict()["variance_reduction"] == "baseline"


def _pairs(xs: list[float], cs: list[float]) -> list[GameResult]:
    games = []
    for i, (x, c) in enumerate(zip(xs, cs)):  # both games alike: the pair's value is x
        games += [GameResult(i, k, k, 0, int(x), 1, c) for k in (0, 1)]
    return games


def test_the_weight_is_cross_fitted_by_hand() -> None:
    """Points 3 + 2c exactly: each half's least-squares weight is 2, so every corrected pair is
    3. With under 20 pairs a half, the weight is 1: points 5 + c give 5."""
    cs = [float((i * 7) % 11 - 5) for i in range(40)]
    rep = report(_pairs([3 + 2 * c for c in cs], cs), "a", "b", STANDARD, "deal", 0, "v")
    assert rep.points.mean == pytest.approx(3) and rep.points.stderr == pytest.approx(0, abs=1e-9)
    assert rep.plain_points.mean == pytest.approx(3 + 2 * np.mean(cs))
    few = report(_pairs([5 + c for c in cs[:10]], cs[:10]), "a", "b", STANDARD, "deal", 0, "v")
    assert few.points.mean == pytest.approx(5)


def test_corrections_of_rounding_noise_get_no_fitted_weight() -> None:
    """Under mini the talon is one card: every term is 0 up to float rounding. A least-squares
    weight fitted to that noise (10^5 and more) moved each pair by a twentieth of a point; the
    weight is then 1, and the corrected points are the plain ones."""
    rng = np.random.default_rng(0)
    xs = [float(v) for v in rng.integers(-40, 40, 60)]
    cs = [float(v) for v in rng.normal(0, 3e-7, 60)]
    rep = report(_pairs(xs, cs), "a", "b", STANDARD, "deal", 0, "v")
    assert rep.points.mean == pytest.approx(rep.plain_points.mean, abs=1e-5)
    assert rep.points.stderr == pytest.approx(rep.plain_points.stderr, abs=1e-5)


def test_bad_value_functions_are_refused() -> None:
    with pytest.raises(VarianceReductionError, match="no policy checkpoint"):
        TalonCorrection.load("heuristic", STANDARD)
    with pytest.raises(VarianceReductionError, match="no policy checkpoint"):
        TalonCorrection.load("baseline", make_rules("standard", variants=["normand"]))
    with pytest.raises(VarianceReductionError, match="samples"):
        TalonCorrection.load("baseline", STANDARD, samples=0)


def test_the_cli_option(capsys: pytest.CaptureFixture) -> None:
    argv = ["eval", "baseline", "heuristic", "--deals", "3", "--no-progress"]
    assert main([*argv, "--variance-reduction"]) == 0
    out = capsys.readouterr().out
    assert "talon luck removed by baseline" in out and "without the correction" in out
    assert main([*argv, "--variance-reduction", "heuristic"]) == 2
    err = capsys.readouterr().err
    assert "--variance-reduction: value 'heuristic'" in err and err.count("\n") == 1


def test_the_ladder_record_keeps_corrected_games_apart(tmp_path) -> None:
    key = MatchRecord.key("heuristic", "random", STANDARD, "deal", 0)
    corrected = MatchRecord.key("heuristic", "random", STANDARD, "deal", 0, "baseline")
    assert key != corrected and corrected[5].startswith("deal+talon:")
    games = [GameResult(0, 0, 0, 3, 3, 1, -1.25), GameResult(0, 1, 1, -2, -2, 1, 0.5)]
    assert read_line(record_line(corrected, games).encode(), "here") == (corrected, games)
