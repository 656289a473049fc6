"""Whole-batch scoring: pique, repique, capot and the cards, settlement (RULES.md sections 6-8).

Each function takes the :class:`~piquet_env.vector.state.BatchState` and the indices ``g`` of the
games concerned, and follows :mod:`piquet_env.game.scoring` and :class:`~piquet_env.game.Game`
to the letter.
"""

from __future__ import annotations

import numpy as np

from piquet_env.game import scoring as sc
from piquet_env.rules import Rules
from piquet_env.vector.state import PLAY, BatchState

_DECL = list(sc.DECLARATION_FIELDS)


def update_pique(s: BatchState, g: np.ndarray) -> None:
    """After scoring in games ``g``: a pique stays possible until younger scores anything; elder
    makes it on reaching 30 (declarations, leads and tricks) once play has begun.

    While a pique is possible nobody has a repique, pique, capot or the cards yet, so elder's
    deal points are exactly his declarations, leads and tricks."""
    g = g[s.pique_open[g]]
    if not g.size:
        return
    points = s.deal_points.reshape(-1)
    e = s.elder[g].astype(np.int64)
    closed = points[g * 2 + 1 - e] > 0
    s.pique_open[g[closed]] = False
    hit = ~closed & (s.phase[g] == PLAY) & (points[g * 2 + e] >= sc.THRESHOLD)
    if hit.any():
        g, e = g[hit], e[hit]
        s.scores[g, e, sc.PIQUE] = sc.PIQUE_BONUS
        s.deal_points[g, e] += sc.PIQUE_BONUS
        s.pique_open[g] = False


def repique_player(s: BatchState, g: np.ndarray, rules: Rules) -> np.ndarray:
    """The player who makes a repique in each game of ``g`` (-1 for none), as
    :func:`piquet_env.game.scoring.repique_player`."""
    decl = s.scores[g][:, :, _DECL].astype(np.int32)  # (k, 2, 4) in reckoning order
    out = np.full(g.size, -1, dtype=np.int8)
    for p in (1, 0):  # player 0 is looked at first: he wins a (theoretical) tie
        mine, theirs = decl[:, p], decl[:, 1 - p]
        if rules.repique_reckoning == "standard":
            ok = (mine.sum(axis=1) >= sc.THRESHOLD) & ~theirs.any(axis=1)
        else:
            running = np.cumsum(mine, axis=1)
            reached = running >= sc.THRESHOLD
            first = np.argmax(reached, axis=1)  # first category where he reaches 30
            earlier = np.cumsum(theirs != 0, axis=1)  # opponent categories scored up to k
            before = np.where(first > 0, earlier[np.arange(g.size), first - 1], 0)
            ok = reached.any(axis=1) & (before == 0)
        out[ok] = p
    return out


def finish_deal(s: BatchState, g: np.ndarray, rules: Rules) -> None:
    """End-of-deal bonuses in games ``g``: capot (replacing the trick points under ``standard``),
    and ``classic``'s 10 for the cards."""
    tw = s.tricks_won[g]
    sc_g = s.scores[g]
    capot = tw == rules.hand_size
    sc_g[:, :, sc.CAPOT] = np.where(capot, sc.CAPOT_BONUS, sc_g[:, :, sc.CAPOT])
    if rules.trick_scoring == "standard":
        sc_g[:, :, sc.TRICKS] = np.where(capot, 0, sc_g[:, :, sc.TRICKS])
    else:
        cards = ~capot & (2 * tw.astype(np.int64) > rules.hand_size)
        sc_g[:, :, sc.CARDS] = np.where(cards, sc.CARDS_BONUS, sc_g[:, :, sc.CARDS])
    s.scores[g] = sc_g
    s.deal_points[g] = sc_g.sum(axis=2)


def settle(totals: np.ndarray, rules: Rules) -> np.ndarray:
    """Zero-sum results ``(k, 2)`` of partie totals ``(k, 2)``, as
    :func:`piquet_env.game.scoring.settle`."""
    a, b = totals[:, 0].astype(np.int64), totals[:, 1].astype(np.int64)
    w, lo = np.maximum(a, b), np.minimum(a, b)
    # standard: only a loser under 100 facing a winner at 100+ is rubiconed; classic: any loser
    # under 100 is.
    rubicon = (lo < 100) & (w >= 100) if rules.settlement == "standard" else lo < 100
    score = np.where(rubicon, w + lo + 100, w - lo + 100)
    score = np.where(a > b, score, np.where(a < b, -score, 0))
    return np.stack([score, -score], axis=1).astype(np.int32)


def trick_points(
    rules: Rules, leader: np.ndarray, winner: np.ndarray, last: np.ndarray
) -> np.ndarray:
    """Points for winning each trick (the lead point is scored apart)."""
    if rules.trick_scoring == "standard":
        return 1 + last.astype(np.int16)
    return (winner != leader).astype(np.int16) + last.astype(np.int16)
