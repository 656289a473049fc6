"""A ladder's result as text for a terminal: the ranking, the head-to-head matrix, the neighbours.

:func:`summary` is what ``piquet ladder`` prints; :func:`matrix_text`, :func:`neighbours_text`
and :func:`pairs_text` are its parts (the last one is the figure's title too).
"""

from __future__ import annotations

from piquet_training.evaluation.ladder.data import LadderData
from piquet_training.evaluation.ladder.stats import Z95


def pairs_text(res: LadderData) -> str:
    """How many pairs each pairing played, in words."""
    text = f"{res.n_pairs} duplicate pairs per pairing"
    if len(res.neighbour_looks) > 1:
        looks = res.neighbour_looks
        text += f", {looks[0]} to {looks[-1]} between neighbours"
    elif res.neighbours:
        text += f", {res.neighbour_pairs} between neighbours"
    return text


def neighbours_text(res: LadderData) -> list[str]:
    """The neighbours' matches, one line each: points per deal of the better-ranked agent, the
    pairs played, ``p`` and whether they separate at the neighbours' level."""
    if not res.neighbours:
        return []
    rule = f"p < {res.neighbour_alpha:.3g}"
    if len(res.neighbour_looks) > 1:
        looks = ", ".join(str(k) for k in res.neighbour_looks)
        rule += f", judged at {looks} pairs: 0.05 over {len(res.neighbour_looks)} looks"
    out = [f"neighbours (separated at {rule}):"]
    for a, b in res.neighbours:
        m, sign = res.match(a, b)
        lo, hi = sorted((sign * m.points.low, sign * m.points.high))
        verdict = res.verdict(a, b)
        out.append(
            f"  {a} - {b}: {sign * m.points.mean:+.2f} [{lo:+.2f}, {hi:+.2f}] points per "
            f"deal, {m.n_pairs} pairs, p = {m.p_value:.2g}: {verdict}"
        )
    return out


def matrix_text(res: LadderData) -> list[str]:
    """The head-to-head matrix: rows and columns in ranking order, each cell the row agent's
    mean points per deal against the column agent with the half-width of its 95% interval,
    ``*`` where the interval excludes 0, ``?`` where too few pairs to judge."""
    names = [r["agent"] for r in res.table()]
    cells: list[list[str]] = []
    for a in names:
        row = []
        for b in names:
            if a == b:
                row.append("—")
                continue
            m, sign = res.match(a, b)
            p = m.points
            mark = "?" if m.too_small else ("*" if p.excludes(0.0) else " ")
            half = (p.high - p.low) / 2
            row.append(f"{sign * p.mean:+.1f}±{half:.1f}{mark}")
        cells.append(row)
    width = max(len(c) for row in cells for c in row)
    label = max(len(f"{k}. {n}") for k, n in enumerate(names, 1))
    head = " " * (label + 2) + "  ".join(f"{k:>{width}}" for k in range(1, len(names) + 1))
    out = [
        "head to head: mean points per deal, row minus column, ± half the 95% interval",
        "(* the interval excludes 0; ? too few pairs to judge)",
        head,
    ]
    for k, (n, row) in enumerate(zip(names, cells), 1):
        out.append(f"{f'{k}. {n}':<{label}}  " + "  ".join(f"{c:>{width}}" for c in row))
    return out


def summary(res: LadderData) -> str:
    """The ranking, the head-to-head matrix and the neighbours' verdicts as readable lines."""
    lines = [
        f"ladder: {res.rules}, {res.mode} mode, {pairs_text(res)}, seed {res.seed}",
        "ranked by rating: points per deal against an average agent of the ladder (± its"
        " 95% interval; openskill's mu - 3 sigma beside it)",
    ]
    table = res.table()
    name_width = max([24, *(len(r["agent"]) for r in table)])  # long names keep the columns
    rank_width = len(str(len(table)))
    for k, r in enumerate(table, 1):
        lines.append(
            f"  {k:>{rank_width}}. {r['agent']:<{name_width}} rating {r['rating']:+6.2f} ± "
            f"{Z95 * r['rating_stderr']:.2f}  openskill {r['ordinal']:6.2f}  "
            f"points/deal {r['points_per_deal']:+.2f}  win {100 * r['win_rate']:.1f}%"
        )
    lines.append("")
    lines.extend(matrix_text(res))
    if res.neighbours:
        lines.append("")
        lines.extend(neighbours_text(res))
    return "\n".join(lines)
