"""What a player is paid, and when: the one definition of rewards, for the env and the trainer.

A reward mode (:data:`REWARDS`) says what a player earns over an episode:

- ``"result"``: nothing until the episode ends, then his settled result (``Game.result``: the
  partie's settlement of RULES.md section 8, or in a single deal the deal's point difference).
- ``"deal_points"``: his deal score minus the opponent's, as it accrues, and at the episode's end
  the settlement's remainder (``result`` minus the deal differences paid: the 100 for the partie,
  the rubicon) times ``settle_weight``. With ``settle_weight = 1`` an episode pays exactly
  ``result``, as under ``"result"``, only earlier.
- ``"win"``: nothing until the end, then +1 for a won episode, -1 for a lost one, 0 for a tie.

:func:`reward_due` is a pure function of the game just after a move: the points due to one player
since he was last paid. The environment (:class:`piquet_env.piquet_v0.raw_env`) asks it at the end
of each deal (so ``"deal_points"`` pays each deal's difference when the deal ends); the trainer's
collector (:mod:`piquet_training.collector`) asks it after every move when it pays deal points
densely, crediting each point to the decision that scored it. Either caller multiplies by its
``reward_scale``.

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from piquet_env.game import Game

__all__ = ["REWARDS", "RewardError", "check_reward", "reward_due"]

REWARDS = ("result", "deal_points", "win")
"""The reward modes, in the order the environment documents them."""


class RewardError(ValueError):
    """A reward mode or reward setting that does not exist or is out of range."""


def check_reward(mode: str, *, scale: float = 1.0, settle_weight: float = 1.0) -> None:
    """Raise :class:`RewardError` naming the setting if ``mode``, ``scale`` (positive, finite) or
    ``settle_weight`` (finite, at least 0) is not usable."""
    if mode not in REWARDS:
        raise RewardError(f"reward must be one of {REWARDS}, got {mode!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise RewardError(f"reward_scale must be a positive number, got {scale!r}")
    if not (math.isfinite(scale) and scale > 0):
        raise RewardError(f"reward_scale must be a positive finite number, got {scale!r}")
    if isinstance(settle_weight, bool) or not isinstance(settle_weight, (int, float)):
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
