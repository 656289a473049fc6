"""Duplicate-deal evaluation: the pairing, the statistics, the verdicts, the ladder."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from piquet_env.game import load_events, replay
from piquet_env.rules import CLASSIC, STANDARD
from piquet_training.evaluation.duplicate import GameResult, evaluate, report
from piquet_training.evaluation.ladder.run import run_ladder
from piquet_training.evaluation.stats import (
    MIN_PAIRS,
    effective_size,
    mean_ci,
    normal_two_sided_p,
    proportion_ci,
    t_quantile_975,
    t_two_sided_p,
    verdict_word,
    wilson_interval,
)


def test_mean_ci_by_hand():
    # mean 2.5, sample sd sqrt(5/3), se 0.6455, t(3) = 3.182: half-width 2.054.
    est = mean_ci([1, 2, 3, 4])
    assert est.mean == 2.5
    assert est.stderr == pytest.approx(math.sqrt(5 / 3) / 2)
    assert (est.low, est.high) == pytest.approx((2.5 - 2.0540, 2.5 + 2.0540), abs=1e-3)
    assert est.excludes(0) and not est.excludes(2)
    one = mean_ci([7.0])
    assert one.low == -math.inf and not one.excludes(0)
    with pytest.raises(ValueError):
        mean_ci([])


def test_t_quantiles():
    assert t_quantile_975(1) == 12.706
    assert t_quantile_975(30) == 2.042
    assert t_quantile_975(60) == pytest.approx(2.000, abs=2e-3)
    assert t_quantile_975(10**6) == pytest.approx(1.95996, abs=1e-4)
    with pytest.raises(ValueError):
        t_quantile_975(0)


def test_t_p_values_agree_with_the_quantiles():
    for df in (1, 2, 3, 5, 10, 30, 100, 1000):
        assert t_two_sided_p(t_quantile_975(df), df) == pytest.approx(0.05, abs=2e-4)
    assert t_two_sided_p(1.0, 1) == pytest.approx(0.5)  # Cauchy: P(|T| > 1) = 1/2
    assert t_two_sided_p(0.0, 7) == pytest.approx(1.0)
    assert t_two_sided_p(2.0, 10**6) == pytest.approx(normal_two_sided_p(2.0), abs=1e-6)
    est = mean_ci([1, 2, 3, 4])
    assert est.p_value(0.0) < 0.05 < est.p_value(0.5)  # the interval starts at 0.446


def test_report_from_games_by_hand():
    games = [
        GameResult(0, 0, 0, 10, 10, 1),
        GameResult(0, 1, 1, -4, -4, 1),  # pair mean +3, wins 0.5
        GameResult(1, 0, 0, 0, 0, 1),
        GameResult(1, 1, 1, 6, 6, 1),  # pair mean +3, wins 0.75
        GameResult(2, 0, 0, 2, 2, 1),
        GameResult(2, 1, 1, 4, 4, 1),  # pair mean +3, wins 1
    ]
    rep = report(games, "a", "b", STANDARD, "deal", 0)
    assert rep.mean_diff == 3.0 and rep.ci_low == 3.0 and rep.ci_high == 3.0
    assert rep.significant and rep.n_games == 6 and rep.n_pairs == 3
    assert rep.win_rate == pytest.approx(0.75)
    # pair win shares 0.5, 0.75, 1: s² = 0.0625, Kish n_eff = 3 * 0.1875 / 0.0625 = 9, capped at
    # the 6 games; Wilson at p 0.75, n 6: centre (0.75 + 0.3201) / 1.6403 = 0.6524, half-width
    # 1.96 * sqrt(0.03125 + 0.02668) / 1.6403 = 0.2876
    assert rep.wins.n_eff == 6.0 and rep.wins.method == "wilson"
    assert (rep.wins.low, rep.wins.high) == pytest.approx((0.3648, 0.9400), abs=2e-4)
    assert rep.partie_score is None
    assert rep.too_small and rep.beats == "too few pairs to judge"  # its interval is above 0
    text = rep.summary()
    assert f"verdict: too few pairs to judge (3 < {MIN_PAIRS}; play more pairs)" in text
    assert "significantly" not in text
    assert "95% CI [36.5%, 94.0%] (Wilson)" in text
    ten = report(
        [GameResult(p, k, k, 3, 3, 1) for p in range(MIN_PAIRS) for k in (0, 1)],
        "a",
        "b",
        STANDARD,
        "deal",
        0,
    )
    assert not ten.too_small and "a is significantly better than b" in ten.summary()
    with pytest.raises(ValueError, match="both games"):
        report(games[:3], "a", "b", STANDARD, "deal", 0)


def test_win_rate_interval_stays_between_0_and_1():
    games = [
        GameResult(0, 0, 0, 5, 5, 1),
        GameResult(0, 1, 1, 5, 5, 1),
        GameResult(1, 0, 0, -5, -5, 1),
        GameResult(1, 1, 1, -5, -5, 1),
    ]
    rep = report(games, "a", "b", STANDARD, "deal", 0)
    # pair shares 1 and 0: s² = 0.5, n_eff = 2 * 0.25 / 0.5 = 1; Wilson at p 0.5, n 1: centre 0.5,
    # half-width 1.96 * sqrt(0.25 + 3.8415 / 4) / 4.8415 = 0.4454
    assert rep.win_rate == 0.5 and rep.wins.n_eff == 1.0
    assert (rep.wins.low, rep.wins.high) == pytest.approx((0.0546, 0.9454), abs=2e-4)
    assert rep.ci_low < 0 < rep.ci_high and not rep.significant
    assert rep.beats == "too few pairs to judge" and "too few pairs to judge" in rep.summary()


def test_wilson_interval_by_hand():
    # 12 wins in 12 games: low = n / (n + z²) = 12 / 15.8415
    assert wilson_interval(1.0, 12) == pytest.approx((0.75750, 1.0), abs=1e-5)
    assert wilson_interval(0.0, 12) == pytest.approx((0.0, 0.24250), abs=1e-5)
    # p 0.5 over 4: centre 0.5, half-width 1.96 * sqrt(0.0625 + 0.06) / 1.96 = 0.35
    assert wilson_interval(0.5, 4) == pytest.approx((0.15, 0.85), abs=1e-4)
    for bad in ((1.5, 4), (-0.1, 4), (0.5, 0), (0.5, -2), (float("nan"), 3)):
        with pytest.raises(ValueError):
            wilson_interval(*bad)


def test_six_pairs_all_won_and_one_split_pair_no_longer_collapse():
    """The issue's examples: Student-t gave [100%, 100%] for six won pairs, [0%, 100%] for one."""
    six = proportion_ci([1.0] * 6, per_value=2)
    assert six.n_eff == 12.0 and six.low == pytest.approx(0.7575, abs=1e-4) and six.high == 1.0
    one = proportion_ci([0.5], per_value=2)  # n_eff 2: half-width 1.96*sqrt(.125+.2401)/2.9208
    assert (one.low, one.high) == pytest.approx((0.0945, 0.9055), abs=2e-4)
    games = [GameResult(p, k, k, 5, 5, 1) for p in range(6) for k in (0, 1)]
    rep = report(games, "a", "b", STANDARD, "deal", 0)
    assert "win rate of a: 100.0%  95% CI [75.8%, 100.0%] (Wilson)" in rep.summary()


def test_effective_size_by_hand():
    # p 0.75, s² = (0.5625 + 3 * 0.0625) / 3 = 0.25: n_eff = 4 * 0.1875 / 0.25 = 3
    assert effective_size([0.0, 1.0, 1.0, 1.0], 2) == pytest.approx(3.0)
    assert effective_size([0.5, 0.5, 0.5], 2) == 6.0  # no spread: the cap, every game
    assert effective_size([1.0], 2) == 2.0
    # 10 pairs, nine split (0.5) and one 0.75: p 0.525, s² = (9 * 0.025² + 0.225²) / 9 = 0.00625,
    # n_eff = 10 * 0.249375 / 0.00625 = 399 (not capped at 20 games from 10 pairs on)
    assert effective_size([0.5] * 9 + [0.75], 2) == pytest.approx(399.0)
    assert effective_size([0.5] * 8 + [0.75], 2) == 18.0  # 9 pairs: too few to trust s², cap
    with pytest.raises(ValueError, match="rates in"):
        proportion_ci([0.5, 1.5])
    with pytest.raises(ValueError, match="at least one"):
        proportion_ci([])


@given(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=60),
)
def test_proportion_interval_invariants(values):
    est = proportion_ci(values, per_value=2)
    assert 0.0 <= est.low <= est.mean <= est.high <= 1.0
    assert est.n_eff > 0.0
    if len(values) < MIN_PAIRS or len(set(values)) == 1:
        assert est.n_eff <= 2 * len(values)
    assert est.high - est.low > 0  # never collapses to a point
    if 0.0 < est.mean < 1.0:  # the score test the interval inverts: p = 0.05 at its ends
        assert est.p_value(est.mean) == pytest.approx(1.0)
        for end in (est.low, est.high):
            if 0.0 < end < 1.0:
                assert est.p_value(end) == pytest.approx(0.05, abs=1e-6)


@given(st.floats(0.0, 1.0), st.floats(0.5, 1e6))
def test_wilson_interval_holds_its_estimate_and_narrows_with_n(p, n):
    low, high = wilson_interval(p, n)
    assert 0.0 <= low <= p + 1e-12 and p - 1e-12 <= high <= 1.0
    low2, high2 = wilson_interval(p, 4 * n)
    assert high2 - low2 <= high - low + 1e-12


def test_verdict_words():
    assert verdict_word(0.1, 2.0) == "yes" == verdict_word(0.1, 2.0, n_pairs=10)
    assert verdict_word(-2.0, -0.1, n_pairs=9) == "too few pairs to judge"
    assert verdict_word(-2.0, -0.1) == "no (worse)"
    assert verdict_word(-0.1, 0.1) == "not demonstrated"
    assert verdict_word(0.0, 1.0) == "not demonstrated"  # touching 0 is not excluding it


def test_partie_report_uses_the_settled_score_and_points_per_deal():
    games = [
        GameResult(0, 0, 0, 150, 60, 6),
        GameResult(0, 1, 1, -110, -30, 6),
        GameResult(1, 0, 0, 200, 90, 6),
        GameResult(1, 1, 1, 120, 30, 6),
    ]
    rep = report(games, "a", "b", STANDARD, "partie", 0)
    assert rep.partie_score.mean == pytest.approx((20 + 160) / 2)
    assert rep.mean_diff == rep.partie_score.mean
    assert rep.points.mean == pytest.approx(((60 - 30) / 12 + (90 + 30) / 12) / 2)
    # the verdict names what it judges: the points per deal are printed first, and at 10 pairs
    # their interval can exclude 0 while the settled score's holds it (a new user's run did)
    ten = report(
        [GameResult(p, k, k, 150 - 290 * (p % 2), -6, 6) for p in range(MIN_PAIRS) for k in (0, 1)],
        "a", "b", STANDARD, "partie", 0,
    )  # fmt: skip
    assert ten.points.high < 0 < ten.partie_score.high and ten.partie_score.low < 0
    assert "verdict: no difference demonstrated on the settled partie score (p = " in ten.summary()
    deal = report([GameResult(p, k, k, 3, 3, 1) for p in range(10) for k in (0, 1)],
                  "a", "b", STANDARD, "deal", 0)  # fmt: skip
    assert "verdict: a is significantly better than b (p " in deal.summary()


def test_an_agent_against_itself_is_not_significantly_different():
    """At the 95% level, matches of random against itself are called significant about one time
    in twenty: 40 matches may not give more than 7 (under a 0.1% tail for a correct interval), and
    intervals that are too wide would never reject (nor catch a real difference, see below)."""
    reports = [evaluate("random", "random", STANDARD, n=100, seed=s) for s in range(40)]
    assert sum(r.significant for r in reports) <= 7
    assert sum(r.ci_low < 0 < r.ci_high for r in reports) >= 33
    assert all(r.n_games == 200 and 0.3 < r.win_rate < 0.7 for r in reports)
    mean = sum(r.mean_diff for r in reports) / len(reports)
    assert abs(mean) < 1.0


def test_heuristic_beats_random_significantly():
    rep = evaluate("heuristic", "random", STANDARD, n=25, seed=1)
    assert rep.significant and rep.mean_diff > 0 and rep.win_rate > 0.6
    flipped = evaluate("random", "heuristic", STANDARD, n=25, seed=1)
    assert flipped.significant and flipped.mean_diff < 0 and flipped.win_rate < 0.4


def test_duplicate_pairs_play_the_same_cards_with_seats_swapped(tmp_path):
    rep = evaluate("random", "heuristic", STANDARD, n=3, seed=5, save_dir=str(tmp_path))
    files = sorted(tmp_path.iterdir())
    assert len(files) == 6 == rep.n_games
    for pair in range(3):
        docs = [json.loads((tmp_path / f"pair{pair:06d}-game{k}.json").read_text()) for k in (0, 1)]
        assert docs[0]["agents"] == ["random", "heuristic"]
        assert docs[1]["agents"] == ["heuristic", "random"]
        deals = [[e for e in load_events(d) if e["type"] == "deal"] for d in docs]
        assert deals[0][0]["elder"] == deals[1][0]["elder"] == 0
        for key in ("elder_hand", "younger_hand", "talon"):
            assert deals[0][0][key] == deals[1][0][key]
        for d in docs:
            replay(d)  # the saved logs are complete and consistent


def test_partie_mode_plays_whole_parties_with_identical_deals():
    rep = evaluate("heuristic", "random", STANDARD, n=3, mode="partie", seed=2)
    assert all(g.deals == 6 for g in rep.games)
    assert rep.partie_score is not None and rep.mean_diff == rep.partie_score.mean
    classic = evaluate("random", "random", CLASSIC, n=2, mode="partie", seed=2)
    assert all(g.deals in (6, 8) for g in classic.games)


def test_workers_give_the_same_report_as_one_process():
    one = evaluate("heuristic", "random", STANDARD, n=12, seed=7)
    two = evaluate("heuristic", "random", STANDARD, n=12, seed=7, workers=2)
    assert one.to_dict(games=True) == two.to_dict(games=True)
    assert evaluate("heuristic", "random", STANDARD, n=12, seed=8).mean_diff != one.mean_diff


def test_agent_objects_work_too_and_bad_input_is_refused():
    from piquet_agents.heuristic import HeuristicAgent
    from piquet_env.agent import RandomAgent

    rep = evaluate(HeuristicAgent(0), RandomAgent(0), STANDARD, n=4, seed=1, workers=2)
    assert rep.agent_a == "heuristic" and rep.n_games == 8
    with pytest.raises(ValueError, match="positive"):
        evaluate("random", "random", STANDARD, n=0)
    with pytest.raises(ValueError, match="mode"):
        evaluate("random", "random", STANDARD, n=2, mode="match")
    with pytest.raises(ValueError, match="'randmo'"):
        evaluate("randmo", "random", STANDARD, n=2)


def test_report_to_dict_is_json():
    rep = evaluate("heuristic", "random", STANDARD, n=5, seed=1)
    d = json.loads(json.dumps(rep.to_dict(games=True)))
    for key in ("mean_diff", "ci_low", "ci_high", "win_rate", "significant", "n_games"):
        assert key in d
    assert len(d["games"]) == 10


def test_ladder_ranks_and_writes_json_and_png(tmp_path):
    res = run_ladder(["random", "heuristic", "mcts:4"], STANDARD, n=4, seed=0)
    assert len(res.matches) == 3
    table = res.table()
    assert {r["agent"] for r in table} == {"random", "heuristic", "mcts:4"}
    assert table[-1]["agent"] == "random"
    mat = res.matrix()
    assert mat[0][1] == pytest.approx(-mat[1][0]) and mat[0][0] is None
    json_path, png_path = res.save(str(tmp_path))
    with open(json_path, encoding="utf-8") as f:
        data = json.load(f)
    assert data["table"][0]["agent"] == table[0]["agent"]
    with open(png_path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert len(data["points_interval_matrix"][0]) == 3 and data["ranked_by"].startswith("rating")
    with pytest.raises(ValueError, match="distinct"):
        run_ladder(["random", "random"], STANDARD, n=2)


def test_ladder_picture_shows_what_the_table_ranks_by():
    import matplotlib.pyplot as plt

    res = run_ladder(["random", "heuristic", "mcts:3"], STANDARD, n=3, seed=2)
    rows = res.table()
    fig = res.figure()
    try:
        ax1, ax2, cbar = fig.axes
        assert "points rating" in ax1.get_title()
        diamonds = [c for c in ax1.collections if "ranked by" in c.get_label()]
        assert len(diamonds) == 1
        xs = [float(x) for x, _ in diamonds[0].get_offsets()]
        ys = [float(y) for _, y in diamonds[0].get_offsets()]
        assert xs == pytest.approx([r["rating"] for r in rows])
        assert xs == sorted(xs, reverse=True)
        assert ys == sorted(ys, reverse=True)  # the first-ranked on top
        labels = [t.get_text() for t in ax1.get_yticklabels()]
        assert labels == [f"{k}. {r['agent']}" for k, r in enumerate(rows, 1)]
        assert cbar.get_ylabel() == "mean points per deal, row − column"
        cells = [t.get_text() for t in ax2.texts if t.get_text() != "—"]
        assert len(cells) == 6
        m, sign = res.match(rows[0]["agent"], rows[1]["agent"])
        lo, hi = sorted((sign * m.points.low, sign * m.points.high))
        assert any(f"[{lo:+.1f}, {hi:+.1f}]" in c for c in cells)
        assert all(c.split("\n")[0].endswith("?") for c in cells)  # 3 pairs: too few to judge
    finally:
        plt.close(fig)


def test_ladder_matrix_text_marks_significance():
    res = run_ladder(["random", "heuristic"], STANDARD, n=12, seed=0)
    text = res.matrix_text()
    assert text[0].startswith("head to head")
    h = next(line for line in text if line.startswith("1. heuristic"))
    m, sign = res.match("heuristic", "random")
    half = (m.points.high - m.points.low) / 2
    assert sign * m.points.mean > 0
    assert f"{sign * m.points.mean:+.1f}±{half:.1f}*" in h  # heuristic beats random, significantly
    r = next(line for line in text if line.startswith("2. random"))
    assert f"{-sign * m.points.mean:+.1f}±{half:.1f}*" in r


def test_a_match_extended_from_a_later_pair_is_the_match_played_in_one_go():
    from piquet_training.evaluation.duplicate import DuplicateMatch, play_games
    from piquet_training.evaluation.executor import Fanout

    whole = play_games(DuplicateMatch("heuristic", "random", STANDARD, 6, seed=3))
    parts = play_games(DuplicateMatch("heuristic", "random", STANDARD, 2, seed=3)) + play_games(
        DuplicateMatch("heuristic", "random", STANDARD, 4, seed=3, start=2), fanout=Fanout(2)
    )
    assert parts == whole
    assert [g.pair for g in parts] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    with pytest.raises(ValueError, match="first pair's number"):
        DuplicateMatch("random", "random", STANDARD, 2, start=-1)
    with pytest.raises(ValueError, match="positive int"):
        DuplicateMatch("random", "random", STANDARD, 0)
    with pytest.raises(ValueError, match="mode"):
        DuplicateMatch("random", "random", STANDARD, 2, mode="rubber")


def test_ladder_extends_only_the_matches_between_neighbours():
    agents = ["random", "heuristic", "mcts:3"]
    res = run_ladder(agents, STANDARD, n=3, seed=4, neighbour_pairs=5)
    ranked = [r["agent"] for r in res.table()]
    plain = run_ladder(agents, STANDARD, n=3, seed=4)
    first = [r["agent"] for r in plain.table()]  # the round robin's ranking picks the neighbours
    assert res.judged[:2] == [(first[0], first[1]), (first[1], first[2])]
    assert res.neighbours == list(itertools.pairwise(ranked))  # the final ranking's, all judged
    assert {frozenset(p) for p in res.neighbours} <= {frozenset(p) for p in res.judged}
    for a, b in res.judged:
        m, _ = res.match(a, b)
        assert m.n_pairs == 5
        whole = evaluate(m.agent_a, m.agent_b, STANDARD, 5, seed=4)
        assert m.points.mean == pytest.approx(whole.points.mean)  # as if played in one go
    for a, b in itertools.combinations(agents, 2):
        if (a, b) not in res.judged and (b, a) not in res.judged:
            assert res.match(a, b)[0].n_pairs == 3
    assert res.to_dict()["neighbour_pairs"] == 5
    assert "3 duplicate pairs per pairing, 5 between neighbours" in res.summary()
    with pytest.raises(ValueError, match="must exceed"):
        run_ladder(agents, STANDARD, n=3, neighbour_pairs=3)


def test_neighbours_of_a_reordered_ranking_are_judged_too():
    agents = ["heuristic", "mcts:2", "mcts:3", "random"]
    res = run_ladder(agents, STANDARD, n=2, seed=4, neighbour_pairs=4)
    first = [r["agent"] for r in run_ladder(agents, STANDARD, n=2, seed=4).table()]
    ranked = [r["agent"] for r in res.table()]
    assert res.judged[:3] == list(itertools.pairwise(first))
    assert ranked != first and len(res.judged) == 5  # the extensions reordered it: 2 more judged
    assert res.neighbours == list(itertools.pairwise(ranked))
    assert {frozenset(p) for p in res.neighbours} <= {frozenset(p) for p in res.judged}
    for a, b in itertools.combinations(agents, 2):
        m, _ = res.match(a, b)
        judged = (a, b) in res.judged or (b, a) in res.judged
        assert m.n_pairs == (4 if judged else 2)
        if judged:
            whole = evaluate(m.agent_a, m.agent_b, STANDARD, 4, seed=4)
            assert m.points.mean == pytest.approx(whole.points.mean)
    assert res.to_dict()["judged"] == [list(p) for p in res.judged]


def test_points_ratings_by_hand():
    """x - y: +2 (stderr 1), y - z: +1 (stderr 1), x - z: 0 (stderr 0.5, so weight 4). With
    a = x - y and b = y - z, least squares on (a - 2)^2 + (b - 1)^2 + 4 (a + b)^2 gives
    10a + 8b = 4 and 8a + 10b = 2: a = 2/3, b = -1/3; summing to zero, x = 1/3, y = -1/3, z = 0.
    One match of stderr s between two agents gives each rating the stderr s / 2."""
    from types import SimpleNamespace as NS

    from piquet_training.evaluation.ladder.run import points_ratings

    def m(a, b, mean, se):
        return NS(agent_a=a, agent_b=b, points=NS(mean=mean, stderr=se))

    r = points_ratings(["x", "y", "z"], [m("x", "y", 2, 1), m("y", "z", 1, 1), m("x", "z", 0, 0.5)])
    assert [r[a][0] for a in "xyz"] == pytest.approx([1 / 3, -1 / 3, 0], abs=1e-12)
    two = points_ratings(["a", "b"], [m("b", "a", 3.0, 0.8)])
    assert two["a"] == pytest.approx((-1.5, 0.4)) and two["b"] == pytest.approx((1.5, 0.4))


def test_a_neighbours_verdict_says_when_the_match_goes_against_the_ranking():
    res = run_ladder(["random", "heuristic"], STANDARD, n=12, seed=0)
    assert res.verdict("heuristic", "random") == "separated"
    assert res.verdict("random", "heuristic") == "separated, against the ranking"
    close = run_ladder(["mcts:2", "mcts:3"], STANDARD, n=3, seed=0)
    assert close.verdict("mcts:2", "mcts:3") == "not separated"


# ---------------------------------------------------------------------------- the ladder's record


def _games_of(res):
    return {(m.agent_a, m.agent_b): [g.to_dict() for g in m.games] for m in res.matches}


def _no_play(*args, **kwargs):
    raise AssertionError("a recorded pair was played again")


def test_a_resumed_ladder_takes_the_recorded_pairs_and_plays_only_the_rest(tmp_path, monkeypatch):
    from piquet_training.evaluation import record as recording
    from piquet_training.evaluation.ladder import run as ladder

    agents, path = ["random", "heuristic", "mcts:3"], tmp_path / "matches.jsonl"
    whole = run_ladder(agents, STANDARD, n=3, seed=4, neighbour_pairs=5)
    first = run_ladder(agents, STANDARD, n=3, seed=4, neighbour_pairs=5,
                       record=ladder.MatchRecord(path))  # fmt: skip
    assert _games_of(first) == _games_of(whole)
    lines = path.read_text().splitlines()
    assert len(lines) == 5  # 3 pairings, then 2 neighbours' extensions (pairs 3 and 4)
    assert [len(json.loads(x)["games"]) for x in lines] == [6, 6, 6, 4, 4]
    # everything recorded: nothing is played, the same ladder comes out
    monkeypatch.setattr(recording, "play_games", _no_play)
    again = run_ladder(agents, STANDARD, n=3, seed=4, neighbour_pairs=5,
                       record=ladder.MatchRecord(path, resume=True))  # fmt: skip
    assert _games_of(again) == _games_of(whole) and again.ratings == whole.ratings
    # a ladder stopped after two matches: the third and the extensions are played, the same
    monkeypatch.undo()
    path.write_text("\n".join(lines[:2]) + "\n")
    played = []
    real = recording.play_games

    def counting(match, **kwargs):
        numbers = list(kwargs.get("numbers") or match.numbers)
        played.append((match.agent_a, match.agent_b, numbers))
        return real(match, **kwargs)

    monkeypatch.setattr(recording, "play_games", counting)
    seen = []
    record = ladder.MatchRecord(path, resume=True)
    resumed = run_ladder(agents, STANDARD, n=3, seed=4, neighbour_pairs=5,
                         record=record, on_match=seen.append)  # fmt: skip
    assert _games_of(resumed) == _games_of(whole)
    assert played[0] == ("heuristic", "mcts:3", [0, 1, 2])
    assert [p[2] for p in played[1:]] == [[3, 4]] * 2
    assert len(seen) == 5 and [m.n_pairs for m in seen] == [3, 3, 3, 5, 5]
    # without resume the record starts anew
    ladder.MatchRecord(path)
    assert path.read_text() == ""


def test_the_record_knows_a_checkpoint_by_its_bytes(tmp_path):
    from piquet_agents.registry import spec_files
    from piquet_training.evaluation.ladder.run import MatchRecord, agent_id

    ckpt = tmp_path / "run" / "policy.safetensors"
    ckpt.parent.mkdir()
    ckpt.write_bytes(b"first")
    assert spec_files(str(ckpt.parent)) == [str(ckpt)]  # a run directory: its policy file
    assert spec_files(f"mcts:50:policy={ckpt.parent}:margin=2") == [str(ckpt)]
    assert spec_files("heuristic") == [] and agent_id("heuristic") == agent_id(" heuristic ")
    before = agent_id(str(ckpt))
    key = MatchRecord.key(str(ckpt), "random", STANDARD, "deal", 1)
    ckpt.write_bytes(b"retrained")
    assert agent_id(str(ckpt)) != before  # so its recorded games are not taken
    assert MatchRecord.key(str(ckpt), "random", STANDARD, "deal", 1) != key
    assert MatchRecord.key(str(ckpt), "random", STANDARD, "deal", 2) != key
    assert agent_id("baseline") != agent_id("mcts:100:policy=baseline")
    from piquet_env.agent import RandomAgent

    assert MatchRecord.key(RandomAgent(seed=0), "random", STANDARD, "deal", 1) is None


def test_a_record_cut_short_drops_its_last_line_and_a_corrupt_one_is_an_error(tmp_path, capsys):
    from piquet_env.untrusted import sha256_hex
    from piquet_training.evaluation.ladder.run import LadderRecordError, MatchRecord

    path = tmp_path / "matches.jsonl"
    run_ladder(["random", "heuristic"], STANDARD, n=2, seed=0, record=MatchRecord(path))
    line = path.read_text()
    path.write_text(line + line[:30])  # killed while writing a second line
    rec = MatchRecord(path, resume=True)
    assert "dropping its last line, cut short (30 bytes)" in capsys.readouterr().err
    assert path.read_text() == line
    key = MatchRecord.key("random", "heuristic", STANDARD, "deal", 0)
    assert sorted(rec.recorded(key)) == [0, 1]
    path.write_text(line + "{not json\n")
    with pytest.raises(LadderRecordError, match="line 2: not a recorded batch"):
        MatchRecord(path, resume=True)

    def signed(entry: dict) -> str:  # a line changed and its checksum made again
        entry.pop("sha256")
        return json.dumps({**entry, "sha256": sha256_hex(entry)}) + "\n"

    entry = json.loads(line)
    entry["games"] = entry["games"][:3]  # pair 1 lost a game
    path.write_text(signed(entry))
    with pytest.raises(LadderRecordError, match="line 1: pair 1 lacks one of its two games"):
        MatchRecord(path, resume=True)
    other = json.loads(line)
    other["games"][0]["points"] += 1
    path.write_text(line + signed(other))
    with pytest.raises(LadderRecordError, match="line 2: pair 0 recorded twice, differently"):
        MatchRecord(path, resume=True)


def test_neighbours_double_their_pairs_until_they_separate():
    from piquet_training.evaluation.ladder.run import looks

    agents = ["heuristic", "mcts:2", "random"]
    res = run_ladder(agents, STANDARD, n=2, seed=6, neighbour_pairs=3, neighbour_max=12)
    assert res.neighbour_looks == looks(3, 12) == [3, 6, 12]
    assert res.neighbour_alpha == pytest.approx(0.05 / 3)
    extended = 0
    for a, b in res.neighbours:
        m, _ = res.match(a, b)
        assert m.n_pairs in (3, 6, 12)
        # it stopped at the first look where it separated, or at the most pairs
        assert res.separated(a, b) == (m.p_value < 0.05 / 3)
        assert res.separated(a, b) or m.n_pairs == 12
        for earlier in (k for k in (3, 6) if k < m.n_pairs):
            part = report([g for g in m.games if g.pair < earlier], a, b, STANDARD, "deal", 6)
            assert part.p_value >= 0.05 / 3  # not yet separated at that look
        whole = evaluate(m.agent_a, m.agent_b, STANDARD, m.n_pairs, seed=6)
        assert [g.to_dict() for g in m.games] == [g.to_dict() for g in whole.games]
        extended += m.n_pairs > 3
    assert extended  # the seed gives a pair of neighbours that needed more than one look
    text = res.summary()
    assert "2 duplicate pairs per pairing, 3 to 12 between neighbours" in text
    assert "judged at 3, 6, 12 pairs: 0.05 over 3 looks" in text
    assert res.to_dict()["neighbours_separated"] == [res.separated(a, b) for a, b in res.neighbours]
    with pytest.raises(ValueError, match="needs neighbour_pairs"):
        run_ladder(agents, STANDARD, n=2, neighbour_max=12)
    with pytest.raises(ValueError, match="must exceed the first look's 3"):
        run_ladder(agents, STANDARD, n=2, neighbour_pairs=3, neighbour_max=3)


def test_the_train_tables_verdict_is_the_summarys():
    """piquet train's final table said "no (worse)" after 4 pairs where the match's verdict said
    "too few pairs to judge" (issue 37)."""
    from piquet_training.ppo.summary import summary_table

    row = {"opponent": "heuristic", "n_pairs": 4, "n_deals": 8, "mean_diff": -3.0}
    row |= {"ci_low": -5.0, "ci_high": -1.0, "win_rate": 0.25}
    assert summary_table([row]).endswith("| too few pairs to judge |")
    assert summary_table([{**row, "n_pairs": 10}]).endswith("| no (worse) |")
