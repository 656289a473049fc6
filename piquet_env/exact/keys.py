"""Information-state keys: what one player knows at a decision, as a 128-bit hash.

A key is the player's own record of the deal (perfect recall), hashed: his dealt hand and seat,
then after every exchange move and card played, the move as he saw it (the opponent's discards
as a hidden card, the end of an exchange as itself), his hand and the talon cards he has looked at;
and at the decision itself, the public table: the phase, the declaration step, the card led, each
player's declaration decisions and declared combinations, the cards shown (declared, scored, a
carte blanche) and both players' scores. Declaration decisions leave no mark of their own, only
their outcome on the table, so a forced pass (taken by the engine) and a chosen one look alike,
as they do to a player at the table (and in OpenSpiel's ``information_state_string``).

One definition, two implementations: :func:`info_key` computes it from a
:class:`~piquet_env.game.Game` replayed from its deal's history (for agents such as the tabular
policy that play real games), :class:`BatchKeys` for every row of a batched state at once (for the
game tree). ``tests/test_exact.py`` checks that they agree and that the partition they make is
OpenSpiel's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from piquet_env.combinations import Combo
from piquet_env.game import Game, Phase
from piquet_env.vector.state import DECLARE, PLAY, BatchState

U64 = np.uint64
MASK64 = (1 << 64) - 1
HIDDEN = 255
"""The token of an opponent's discard, whose card is not seen."""
_GOLDEN = 0x9E3779B97F4A7C15
_M1, _M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
LANES = (0x243F6A8885A308D3, 0x13198A2E03707344)
"""The salts of the key's two 64-bit lanes."""
_POINT, _SEQUENCE, _SET = 0, 1, 2

Key = tuple[int, int]
"""An information-state key: two 64-bit lanes."""


def _splitmix(x: int) -> int:
    """SplitMix64's output function on a Python int (mod 2**64)."""
    z = (x + _GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * _M1) & MASK64
    z = ((z ^ (z >> 27)) * _M2) & MASK64
    return z ^ (z >> 31)


def _mix(h: int, x: int) -> int:
    """Fold the value ``x`` (an int of up to 64 bits) into the hash ``h``."""
    return _splitmix(h ^ _splitmix(x & MASK64))


def _splitmix_np(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + U64(_GOLDEN)
        z = (z ^ (z >> U64(30))) * U64(_M1)
        z = (z ^ (z >> U64(27))) * U64(_M2)
        return z ^ (z >> U64(31))


def _mix_np(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    return _splitmix_np(h ^ _splitmix_np(np.asarray(x).astype(U64)))


def combo_code(category: int, combo: Combo | None) -> int:
    """A declared combination as the batched engine's comparison key (0 for none): point
    ``size * 128 + pips``, sequence ``length * 8 + top``, set ``size * 8 + rank``."""
    if combo is None:
        return 0
    if category == _POINT:
        return combo.size * 128 + combo.height
    return combo.size * 8 + combo.height


# ---------------------------------------------------------------------------- one game


def _start(hand: int, elder: bool) -> list[int]:
    return [_mix(_mix(lane, int(elder)), hand) for lane in LANES]


def _step(log: list[int], token: int, hand: int, seen: int) -> list[int]:
    return [_mix(_mix(_mix(h, token), hand), seen) for h in log]


def _table_words(g: Game) -> list[int]:
    """The public table of ``g`` as 64-bit words (see the module docstring), each player's part
    in role order: elder's, then younger's."""
    roles = (g.elder, 1 - g.elder)
    decided = 0
    declared = []
    for cat in range(3):
        for r, p in enumerate(roles):
            decided |= int(g.decided[cat][p]) << (cat * 2 + r)
            declared.append(combo_code(cat, g.declared[cat][p]))
    lead = g.trick[0] + 1 if g.trick else 0
    words = [
        int(g.phase) | g.decl_step << 4 | lead << 8 | decided << 16,
        declared[0] | declared[1] << 16 | declared[2] << 32 | declared[3] << 48,
        declared[4] | declared[5] << 16,
        *(g.shown[p] for p in roles),
        *(g.blanche[p] for p in roles),
    ]
    return words + _score_words([g.scores[p] for p in roles])


def _score_words(scores: Sequence[Sequence[int]]) -> list[int]:
    """Both players' score fields, 16 bits each, four to a word."""
    flat = [int(v) & 0xFFFF for row in scores for v in row]
    return [sum(v << (16 * i) for i, v in enumerate(flat[k : k + 4])) for k in range(0, 20, 4)]


def _key(log: list[int], role: int, words: list[int]) -> Key:
    out = []
    for h in log:
        h = _mix(h, role)
        for w in words:
            h = _mix(h, w)
        out.append(h)
    return out[0], out[1]


def info_key(game: Game, player: int) -> Key:
    """The information-state key of ``player`` in the deal under way of ``game``, as
    :class:`BatchKeys` computes it.

    The deal is replayed from its history (``game.deal_cards`` and ``game.deal_moves``), so the
    key is the same whatever game object (a search's clone, another process) reached this point
    the same way.
    """
    elder_hand, younger_hand, talon = game.deal_cards
    replay = Game(
        game.rules,
        mode="deal",
        deals=[(list(elder_hand), list(younger_hand), list(talon))],
        first_elder=game.elder,
        record=False,
    )
    n = game.rules.n_cards
    logs = [_start(replay.hands[p], p == replay.elder) for p in (0, 1)]
    for action in game.deal_moves:
        phase, mover = replay.phase, replay.current_player
        replay.apply(action)
        if phase == Phase.DECLARE:
            continue
        for p in (0, 1):
            seen_token = HIDDEN if phase == Phase.EXCHANGE and p != mover and action < n else action
            logs[p] = _step(logs[p], seen_token, replay.hands[p], replay.seen_talon[p])
    return _key(logs[player], int(player != game.elder), _table_words(game))


# ---------------------------------------------------------------------------- a batch


class BatchKeys:
    """The players' hashed records for every row of a batched state, kept beside it: ``log``
    ``(n, 2, 2)`` (row, player, lane). :meth:`start` after the deal, :meth:`step` after each
    decision, :meth:`key` at a decision."""

    def __init__(self, log: np.ndarray) -> None:
        self.log = log

    @classmethod
    def start(cls, s: BatchState) -> BatchKeys:
        """The records at the deal of every row of ``s`` (its hands as dealt)."""
        log = np.empty((s.n, 2, 2), dtype=U64)
        for p in (0, 1):
            elder = (s.elder == p).astype(U64)
            for lane, salt in enumerate(LANES):
                h = _mix_np(np.full(s.n, salt, dtype=U64), elder)
                log[:, p, lane] = _mix_np(h, s.hands[:, p])
        return cls(log)

    def take(self, rows: np.ndarray) -> BatchKeys:
        """The records of ``rows`` (children inherit their parent's)."""
        return BatchKeys(self.log[rows])

    def step(
        self, s: BatchState, phase: np.ndarray, mover: np.ndarray, action: np.ndarray, n: int
    ) -> None:
        """After each row moved: ``phase`` and ``mover`` before the move, ``action`` its id
        (``n`` the number of card ids: ids below are cards)."""
        moved = phase != DECLARE
        rows = np.flatnonzero(moved)
        if not rows.size:
            return
        a = action[rows].astype(np.int64)
        for p in (0, 1):
            hidden = (phase[rows] != PLAY) & (mover[rows] != p) & (a < n)
            token = np.where(hidden, HIDDEN, a)
            hand, seen = s.hands[rows, p], s.seen_talon[rows, p]
            for lane in range(2):
                h = _mix_np(self.log[rows, p, lane], token)
                h = _mix_np(_mix_np(h, hand), seen)
                self.log[rows, p, lane] = h

    def key(self, s: BatchState, player: np.ndarray) -> np.ndarray:
        """The key ``(n, 2)`` of ``player`` (one per row) at every row's decision."""
        ar = np.arange(s.n)
        e = s.elder.astype(np.int64)
        y = 1 - e
        decided = np.zeros(s.n, dtype=U64)
        dk = s.declared_key.astype(np.int64).astype(U64) & U64(0xFFFF)
        declared = []
        for cat in range(3):
            for r, p in enumerate((e, y)):
                decided |= (s.record[ar, cat, p] != 0).astype(U64) << U64(cat * 2 + r)
                declared.append(dk[ar, cat, p])
        lead = (s.lead.astype(np.int64) + 1).astype(U64)
        phase, step = s.phase.astype(U64), s.decl_step.astype(U64)
        words = [
            phase | step << U64(4) | lead << U64(8) | decided << U64(16),
            declared[0] | declared[1] << U64(16) | declared[2] << U64(32) | declared[3] << U64(48),
            declared[4] | declared[5] << U64(16),
            s.shown[ar, e],
            s.shown[ar, y],
            s.blanche[ar, e],
            s.blanche[ar, y],
        ]
        scores = np.concatenate([s.scores[ar, e], s.scores[ar, y]], axis=1)
        scores = scores.astype(np.int64).astype(U64) & U64(0xFFFF)
        for k in range(0, 20, 4):
            w = np.zeros(s.n, dtype=U64)
            for i in range(4):
                w |= scores[:, k + i] << U64(16 * i)
            words.append(w)
        out = np.empty((s.n, 2), dtype=U64)
        p = player.astype(np.int64)
        role = (p != e).astype(U64)
        for lane in range(2):
            h = _mix_np(self.log[ar, p, lane], role)
            for w in words:
                h = _mix_np(h, w)
            out[:, lane] = h
        return out
