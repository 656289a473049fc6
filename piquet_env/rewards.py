"""What a player is paid, and when: the one definition of rewards, for the env and the trainer.

A reward mode (:data:`REWARDS`) says what a player earns over an episode:

- ``"result"``: nothing until the episode ends, then his settled result (``Game.result``: the
  partie's settlement of RULES.md section 8, or in a single deal the deal's point difference).
- ``"deal_points"``: his deal score minus the opponent's, as it accrues, and at the episode's end
  the settlement's remainder (``result`` minus the deal differences paid: the 100 for the partie,
  the rubicon) times ``settle_weight``. With ``settle_weight = 1`` an episode pays exactly
  ``result``, as under ``"result"``, only earlier.
- ``"win"``: nothing until the end, then +1 for a won episode, -1 for a lost one, 0 for a tie.

When it is paid: at the end of each deal (the environment's way), or *densely*, after every move,
so that each point is credited to the decision that scored it (the trainer's way). Only
``"deal_points"`` pays anything before the episode's end, and an episode pays the same sum either
way.

:func:`reward_due` is a pure function of one game just after a move: the points due to one player
since he was last paid. The environment (:class:`piquet_env.piquet_v0.raw_env`) asks it at the end
of each deal; the per-game training collector (:mod:`piquet_training.ppo.collector`) after every
move. :class:`BatchRewards` is the same definition over N games of the batched engine
(:class:`piquet_env.vector.BatchGame` pays with it, dense or not; the differential test checks it
against :func:`reward_due` step by step). Every caller multiplies by its ``reward_scale``.

>>> from piquet_env.game import Game
>>> g = Game(seed=3, mode="deal")
>>> while not g.is_over:
...     g.apply(g.legal_actions()[0])
>>> due = [reward_due("deal_points", g, p, deal_ended=True) for p in (0, 1)]
>>> [points for points, _ in due] == [float(r) for r in g.result]
True
>>> reward_due("win", g, 0, deal_ended=True)[0] == (g.result[0] > 0) - (g.result[0] < 0)
True
"""

from __future__ import annotations

import math
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from piquet_env.game import Game

__all__ = ["REWARDS", "BatchRewards", "RewardError", "check_reward", "reward_due"]

REWARDS = ("result", "deal_points", "win")
"""The reward modes, in the order the environment documents them."""


class RewardError(ValueError):
    """A reward mode or reward setting that does not exist or is out of range."""


def check_reward(
    mode: str, *, scale: float = 1.0, settle_weight: float = 1.0, dense: bool = False
) -> None:
    """Raise :class:`RewardError` naming the setting if ``mode``, ``scale`` (a real number,
    positive and finite), ``settle_weight`` (a real number, finite, at least 0) or ``dense`` (a
    bool) is not usable. Bools and strings are no numbers here (``"0.5"`` is refused, not
    parsed). The env family's settings (:mod:`piquet_env.settings`) check their reward options
    here."""
    if not isinstance(dense, (bool, np.bool_)):
        raise RewardError(f"dense must be True or False, got {dense!r}")
    if not isinstance(mode, str) or mode not in REWARDS:
        raise RewardError(f"reward must be one of {REWARDS}, got {mode!r}")
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, Real):
        raise RewardError(f"reward_scale must be a positive number, got {scale!r}")
    if not (math.isfinite(scale) and scale > 0):
        raise RewardError(f"reward_scale must be a positive finite number, got {scale!r}")
    if isinstance(settle_weight, (bool, np.bool_)) or not isinstance(settle_weight, Real):
        raise RewardError(f"settle_weight must be a number, got {settle_weight!r}")
    if not (math.isfinite(settle_weight) and settle_weight >= 0):
        raise RewardError(f"settle_weight must be a finite number >= 0, got {settle_weight!r}")


def reward_due(
    mode: str,
    game: Game,
    player: int,
    *,
    deal_ended: bool,
    credited: int = 0,
    settle_weight: float = 1.0,
) -> tuple[float, int]:
    """Points due to ``player`` (0 or 1) just after a move, unscaled, and what he is then
    credited with: ``(points, credited)``.

    ``deal_ended`` says whether that move ended a deal (a new entry in ``game.deal_scores``).
    ``credited`` is the deal-point difference (own minus opponent's) already paid to him in the
    deal under way, 0 at a deal's start: pass back the value returned. Under ``"deal_points"``,
    calling after every move pays the difference as it accrues; calling only when deals end pays
    each deal's difference at its end: the sum is the same.
    """
    if mode == "deal_points":
        if deal_ended:
            d0, d1 = game.deal_scores[-1]
            diff = d0.total - d1.total
        else:
            diff = sum(game.scores[0]) - sum(game.scores[1])
        mine = diff if player == 0 else -diff
        points = float(mine - credited)
        if deal_ended and game.result is not None:
            paid = sum(d[player].total - d[1 - player].total for d in game.deal_scores)
            points += settle_weight * (game.result[player] - paid)
        return points, 0 if deal_ended else mine
    if mode not in REWARDS:
        raise RewardError(f"reward must be one of {REWARDS}, got {mode!r}")
    if game.result is None:
        return 0.0, credited
    result = game.result[player]
    if mode == "result":
        return float(result), credited
    return float((result > 0) - (result < 0)), credited


class BatchRewards:
    """What :func:`reward_due` pays, for ``n`` games at once (unscaled, both players).

    ``mode``, ``settle_weight`` and ``dense`` as above (``dense``: pay the running deal-point
    difference after every step, else each deal's difference at its end). Call :meth:`start`
    for the slots whose episode starts, and :meth:`pay` once per step with what the step did.

    >>> r = BatchRewards(1, "deal_points", settle_weight=0.5, dense=True)
    >>> r.pay(np.array([[10, 4]]))[0].tolist()  # 6 points ahead in the deal so far
    [6.0, -6.0]
    >>> r.pay(np.array([[0, 0]]), deal_games=np.array([0]), deal_totals=np.array([[12, 4]]),
    ...       ended_games=np.array([0]), results=np.array([[108, -108]]))[0].tolist()
    [52.0, -52.0]

    (The deal's remaining 2 points, then half the settlement's remainder: 0.5 * (108 - 8).)
    """

    def __init__(
        self, n: int, mode: str, *, settle_weight: float = 1.0, dense: bool = False
    ) -> None:
        check_reward(mode, settle_weight=settle_weight, dense=dense)
        self.mode, self.settle_weight, self.dense = mode, float(settle_weight), bool(dense)
        self.credited = np.zeros(n, dtype=np.int64)
        """Player 0's deal-point difference already paid in the deal under way (dense)."""
        self.paid = np.zeros(n, dtype=np.int64)
        """Player 0's deal differences paid this episode (for the settlement's remainder)."""

    def start(self, games: np.ndarray) -> None:
        """Episodes start in slots ``games``: nothing is owed there."""
        self.credited[games] = 0
        self.paid[games] = 0

    def pay(
        self,
        points: np.ndarray,
        *,
        deal_games: np.ndarray | None = None,
        deal_totals: np.ndarray | None = None,
        ended_games: np.ndarray | None = None,
        results: np.ndarray | None = None,
    ) -> np.ndarray:
        """The points ``(n, 2)`` due to each player for one step, unscaled (float64).

        ``points`` ``(n, 2)``: each player's points so far in the deal under way after the step;
        ``deal_games`` the games whose deal ended in the step, ``deal_totals`` ``(k, 2)`` those
        deals' totals; ``ended_games`` the games whose episode ended, ``results`` ``(k, 2)``
        their settled results."""
        n = self.credited.shape[0]
        none = np.zeros(0, dtype=np.int64)
        dg = none if deal_games is None else np.asarray(deal_games, dtype=np.int64)
        eg = none if ended_games is None else np.asarray(ended_games, dtype=np.int64)
        due0 = np.zeros(n, dtype=np.float64)  # player 0's due; player 1's is its negative
        if self.mode == "deal_points":
            if self.dense:
                running = points[:, 0].astype(np.int64) - points[:, 1]
                running[dg] = self.credited[dg]  # a deal that ended is paid by its total below
                due0 += running - self.credited
                self.credited[:] = running
            if dg.size:
                diff = deal_totals[:, 0].astype(np.int64) - deal_totals[:, 1]
                due0[dg] += diff - self.credited[dg]
                self.credited[dg] = 0
                self.paid[dg] += diff
            if eg.size:
                rest = results[:, 0].astype(np.int64) - self.paid[eg]
                due0[eg] += self.settle_weight * rest
                if self.dense:  # a finished game owes nothing more (until :meth:`start`)
                    self.credited[eg] = points[eg, 0].astype(np.int64) - points[eg, 1]
        elif eg.size:
            res = results[:, 0].astype(np.float64)
            due0[eg] = res if self.mode == "result" else np.sign(res)
        return np.stack([due0, -due0], axis=1)
