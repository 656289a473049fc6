"""The ladder's outputs, pinned: the summary text byte for byte and ``ladder.json`` field by field,
for a ladder built from made-up games (so neither the agents' play nor openskill can move them).

``tests/golden/`` holds what the ladder printed and wrote before its result was split into
modules (``ladder_stats``, ``ladder_data``, ``ladder_text``, ``ladder_figure``), but one field
changed on purpose since: a match of 6 pairs is ``"beats": "too few pairs to judge"`` (it said
``"no (worse)"``, where its own verdict said too few pairs; issue 37)."""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
from pathlib import Path

from piquet_env.rules import STANDARD
from piquet_training.evaluation.duplicate import GameResult, report
from piquet_training.evaluation.ladder.run import LadderResult, points_ratings

GOLDEN = Path(__file__).resolve().parent / "golden"
AGENTS = ["alpha", "beta", "gamma"]
PAIRS = {("alpha", "beta"): 12, ("alpha", "gamma"): 12, ("beta", "gamma"): 6}
EDGE = {("alpha", "beta"): 15, ("alpha", "gamma"): 60, ("beta", "gamma"): -25}
"""Points per game each pairing's first agent gains, before the noise: beta beats gamma's
ranking by its games against alpha, but loses to gamma head to head."""


def _games(a: str, b: str, n: int) -> list[GameResult]:
    rng = random.Random(f"{a}-{b}")
    out = []
    for pair in range(n):
        for game in (0, 1):
            pts = rng.randint(-30, 30) + EDGE[(a, b)]
            out.append(GameResult(pair, game, game, pts, pts, 1))
    return out


def golden_ladder() -> LadderResult:
    """Three agents, one pairing too short to judge, neighbours judged at two looks, one
    neighbours' verdict against the ranking."""
    matches = [report(_games(a, b, n), a, b, STANDARD, "deal", 7) for (a, b), n in PAIRS.items()]
    res = LadderResult(AGENTS, "standard", "deal", 4, 7, matches)
    res.ratings = {
        "alpha": (27.5, 4.25, 14.75),
        "beta": (25.0, 4.5, 11.5),
        "gamma": (22.5, 4.0, 10.5),
    }
    res.points = points_ratings(AGENTS, matches)
    ranked = [r["agent"] for r in res.table()]
    res.neighbour_pairs = 6
    res.neighbour_looks = [6, 12]
    res.judged = [("alpha", "beta"), ("beta", "gamma")]
    res.neighbours = list(itertools.pairwise(ranked))
    return res


def _same(got: object, want: object, where: str = "ladder.json") -> None:
    """``got`` equals ``want``, floats to 1e-9 relative (a last digit of the least squares may
    differ with the BLAS), everything else exactly."""
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {got} != {want}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{where}: keys differ"
        for k in want:
            _same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: lengths differ"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    else:
        assert type(got) is type(want) and got == want, f"{where}: {got!r} != {want!r}"


def test_the_summary_is_the_one_printed_before_the_split():
    res = golden_ladder()
    assert res.summary() + "\n" == (GOLDEN / "ladder_summary.txt").read_text(encoding="utf-8")
    assert res.verdict("beta", "gamma") == "separated, against the ranking"  # what it covers


def test_ladder_json_is_the_one_written_before_the_split(tmp_path):
    res = golden_ladder()
    res.write_json(tmp_path / "ladder.json")
    written = (tmp_path / "ladder.json").read_text(encoding="utf-8")
    assert written == json.dumps(res.to_dict(), indent=2)
    _same(json.loads(written), json.loads((GOLDEN / "ladder.json").read_text(encoding="utf-8")))


def test_the_figure_is_drawn_and_matplotlib_loads_only_then(tmp_path):
    res = golden_ladder()
    json_path, png_path = res.save(str(tmp_path / "out"))
    assert Path(png_path).read_bytes()[:4] == b"\x89PNG" and Path(json_path).is_file()
    code = (
        "import sys\n"
        "import piquet_training.evaluation.ladder.run\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_long_agent_names_keep_the_ranking_aligned():
    """Issue 50: a name over 24 characters pushed its row's columns right. The golden ladder's
    three agents renamed, one to a 43-character spec: every row's ``rating`` starts at the same
    column, right after the longest name (2 spaces + "1. " + 43 characters: index 48)."""
    long = "mcts:400:policy=runs/a-long-name/policy.npz"
    assert len(long) == 43
    names = {"alpha": "alpha", "beta": long, "gamma": "gamma"}
    plain = golden_ladder()
    matches = [
        report(_games(a, b, n), names[a], names[b], STANDARD, "deal", 7)
        for (a, b), n in PAIRS.items()
    ]
    agents = [names[a] for a in AGENTS]
    res = LadderResult(agents, "standard", "deal", 4, 7, matches)
    res.ratings = {names[a]: v for a, v in plain.ratings.items()}
    res.points = points_ratings(agents, matches)
    rows = [line for line in res.summary().splitlines() if " rating " in line]
    assert len(rows) == 3 and any(long in r for r in rows)
    assert [r.index(" rating ") for r in rows] == [48, 48, 48]
    # short names keep the 24 columns of before
    short = [line for line in plain.summary().splitlines() if " rating " in line]
    assert [r.index(" rating ") for r in short] == [2 + 3 + 24] * 3
