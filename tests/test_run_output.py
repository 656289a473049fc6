"""What a training run shows: the terminal lines, the time cap, the learning curve."""

from __future__ import annotations

from pathlib import Path

import pytest

from piquet_training.ppo.console import Console
from piquet_training.ppo.curve import learning_curve_figure
from piquet_training.ppo.trainer import TimeCap
from piquet_training.run_log import RunLogger
from piquet_training.settings.train import TrainConfig, apply_overrides
from tests.train_helpers import TINY, train_cli


def _train(out: Path, *extra: str) -> int:
    return train_cli(out, TINY, *extra)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_time_cap_by_hand() -> None:
    clock = FakeClock()
    cap = TimeCap(2.0, start=clock.now, clock=clock)  # 120 s
    assert not cap.reached(120.0) and cap.reached(120.5)
    clock.now += 100.0  # 20 s left
    assert not cap.reached(20.0) and cap.reached(21.0)
    none = TimeCap(0.0, start=clock.now, clock=clock)
    assert not none.reached(1e9)


def test_console_lines_without_a_progress_bar(capsys: pytest.CaptureFixture) -> None:
    cfg = apply_overrides(TrainConfig(), ["updates=20", "progress=false"])
    console = Console(cfg)
    console.header(Path("/tmp/somewhere"), resumed=False)
    console.open_progress(0, 20)
    row = {"update": 2, "env_steps": 1000, "steps_per_s": 500.0, "approx_kl": 0.01, "minutes": 0.5}
    console.progress({**row, "train_vs_heuristic": 1.25})
    console.evaluation(
        "periodic",
        4,
        [
            {
                "opponent": "heuristic",
                "n_pairs": 30,
                "mean_diff": 1.5,
                "ci_low": -0.5,
                "ci_high": 3.5,
            }
        ],
        12.0,
    )
    console.progress({**row, "update": 3})  # not a tenth of the run: no line
    console.progress({**row, "update": 4})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "piquet train: output in /tmp/somewhere"
    assert "device cpu" in out[1] and "every 50 updates (30 pairs)" in out[3]
    assert "time cap none" in out[3]
    # the progress shows the latest evaluation against the heuristic, not training games
    assert out[4].startswith("update 2/20: 1,000 env steps, 500 steps/s")
    assert "last evaluation vs heuristic -;" in out[4]
    assert out[5] == (
        "eval (update 4, 30 pairs, 12 s): vs heuristic +1.50 [-0.50, +3.50] points/deal, 95% CI"
    )
    assert out[6].startswith("update 4/20:") and "last evaluation vs heuristic +1.50;" in out[6]
    assert "min left" in out[6]
    assert len(out) == 7


def test_the_progress_bar_shows_an_evaluation_as_soon_as_it_is_printed(
    capsys: pytest.CaptureFixture,
) -> None:
    """Issue 50: the bar's ``eval_vs_heur`` lagged one update behind the printed evaluation
    (it was set only at the next update). Update 4's evaluation (+1.50) is on the bar at once."""
    cfg = apply_overrides(TrainConfig(), ["updates=20", "progress=true"])
    console = Console(cfg)
    console.open_progress(0, 20)
    row = {"update": 4, "env_steps": 1000, "steps_per_s": 500.0, "approx_kl": 0.01, "minutes": 0.5}
    console.progress(row)
    assert console._bar is not None
    assert console._bar.postfix == "steps_s=500, kl=0.010, eval_vs_heur=-"
    evaluation = {"opponent": "heuristic", "n_pairs": 30, "mean_diff": 1.5}
    console.evaluation("periodic", 4, [{**evaluation, "ci_low": -0.5, "ci_high": 3.5}], 12.0)
    assert console._bar.postfix == "steps_s=500, kl=0.010, eval_vs_heur=+1.50"
    console.close_progress()
    capsys.readouterr()


def test_a_run_tells_what_it_does(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "run"
    assert _train(out) == 0
    printed = capsys.readouterr().out
    for text in (
        f"piquet train: output in {out}",
        "warm start: recording 6 heuristic-vs-heuristic deals",
        "warm start: imitated",
        "evaluating the starting policy (2 pairs vs random)",
        "eval (starting policy, 2 pairs",
        "eval (update 1, 2 pairs",
        "update 2/2:",
        "final evaluation: 3 pairs vs random",
        "eval (final, 3 pairs",
    ):
        assert text in printed, text
    # the peak resident set once a line (issue 50: it was repeated in the same line)
    (memory,) = [line for line in printed.splitlines() if line.startswith("memory: ")]
    assert memory.count("peak resident set") == 1 and "MiB at the end" in memory, memory
    summary = (out / "summary.md").read_text()
    (wall,) = [line for line in summary.splitlines() if line.startswith("- wall time")]
    assert wall.count("peak resident set") == 1 and "; at the end its USS " in wall, wall
    # The figure: the final evaluation is its own labelled marker; six labelled panels.
    fig = learning_curve_figure(out)
    top, *panels = fig.axes
    assert [a.get_title() for a in panels] == [
        "policy loss",
        "value loss",
        "entropy (nats)",
        "approximate KL",
        "explained variance",
        "training return (per trajectory)",
    ]
    legend = [t.get_text() for t in top.get_legend().get_texts()]
    assert legend == ["vs random", "final vs random (3 pairs)"]
    (line,) = top.get_lines()[:1]
    assert list(line.get_xdata())[-1] < max(float(x) for x in _column(out / "eval.csv", 1))
    assert "warm start" in [t.get_text() for t in top.texts]
    # A cap too short for any update: PPO stops at once, saying it is not the configured run.
    capsys.readouterr()
    assert _train(tmp_path / "short", "time_budget_minutes=0.0001", "bc_games=0") == 0
    printed = capsys.readouterr().out
    assert (
        "stopping: the time cap (time_budget_minutes = 0.0001) was reached after 0 of 2 "
        "updates: this is not the configured run" in printed
    )
    summary = (tmp_path / "short" / "summary.md").read_text()
    assert "0 of 2 PPO updates" in summary and "**stopped early**" in summary


def _column(path: Path, k: int) -> list[str]:
    return [r.split(",")[k] for r in path.read_text().splitlines()[1:]]


def test_resume_marks_and_truncation(tmp_path: Path) -> None:
    log = RunLogger(tmp_path, tensorboard=False)
    for u in (1, 2, 3):
        log.log_update({"update": u, "env_steps": 10 * u, "policy_loss": 0.1})
    log.log_eval({"update": 3, "env_steps": 30, "minutes": 0.1, "kind": "periodic",
                  "opponent": "random", "n_pairs": 2, "mean_diff": 1.0, "ci_low": 0.0,
                  "ci_high": 2.0, "win_rate": 0.5, "significant": False})  # fmt: skip
    assert log.truncate(2) == 2
    log.log_event(2, 20, "resume")
    assert _column(tmp_path / "train.csv", 0) == ["1", "2"]
    assert _column(tmp_path / "eval.csv", 0) == []
    fig = learning_curve_figure(tmp_path)
    assert "resumed" in [t.get_text() for t in fig.axes[0].texts]
    assert fig.axes[1].get_title() == "policy loss"
    assert "not logged" in [t.get_text() for t in fig.axes[2].texts]  # no value loss column


def test_the_progress_bars_eta_is_steady_through_evaluations() -> None:
    """Issue 57: under load the bar's ETA swung between 29 min and 4 h 24 min. tqdm's default
    estimate follows the last updates, so an evaluation (a slow update every 20) threw it tenfold.
    The bar estimates from the run's average rate, as the line mode does: on a clock where every
    20th update takes 200 s and the others 10 s, the estimate never jumps by a third from one
    update to the next and stays within a factor of two of the time actually left."""
    pytest.importorskip("tqdm")
    cfg = apply_overrides(TrainConfig(), ["updates=100", "progress=true"])
    console = Console(cfg)
    console.open_progress(0, 100)
    bar = console._bar
    assert bar is not None
    now = [0.0]
    setattr(bar, "_time", lambda: now[0])  # tqdm's own clock, made this test's  # noqa: B010
    for name in ("start_t", "last_print_t"):
        setattr(bar, name, 0.0)
    etas, left = [], []
    row = {"env_steps": 1, "steps_per_s": 1.0, "approx_kl": 0.01, "minutes": 0.0}
    for update in range(1, 81):
        now[0] += 200.0 if update % 20 == 0 else 10.0
        console.progress({**row, "update": update})
        d = bar.format_dict
        etas.append((d["total"] - d["n"]) / (d["rate"] or d["n"] / d["elapsed"]))
        left.append((100 - update) * (19 * 10.0 + 200.0) / 20)
    console.close_progress()
    after = range(20, 79)  # from the first evaluation on
    assert all(0.75 < etas[i + 1] / etas[i] < 1.0 / 0.75 for i in after if etas[i + 1] > 0)
    assert all(0.5 < etas[i] / left[i] < 2.0 for i in after)


@pytest.mark.parametrize("progress", [True, False])
def test_the_warm_start_shows_its_progress(progress, tmp_path, capsys) -> None:
    """The warm start's games and its fitting show their progress (issue 57.30: 181 s without a
    line under load): a bar each, or with ``progress=false`` a line now and then."""
    from piquet_training.ppo.trainer import setup, warm_start

    overrides = [*TINY, f"out_dir={tmp_path}", f"progress={str(progress).lower()}"]
    run = setup(apply_overrides(TrainConfig(), overrides))
    run.console.line_seconds = 0.0  # a line at every game and batch, for the test
    warm_start(run)
    out = capsys.readouterr()
    if progress:
        assert "warm start: games: 100%" in out.err and "6/6" in out.err, out.err
        assert "warm start: fitting: 100%" in out.err, out.err
    else:
        assert "warm start: games: 1/6 games, " in out.out and "s left" in out.out, out.out
        assert "warm start: fitting" in out.out, out.out
    assert "warm start: imitated" in out.out
