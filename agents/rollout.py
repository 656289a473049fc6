"""The cheap default policy of the search agent's rollouts (fast, a little better than random).

In a determinized game every card is known, but the rollout policy looks only at the acting
player's own hand and the trick, as a quick human would:

- exchange: discard the lowest-valued cards (rank plus suit length), as many as allowed;
- declarations: always declare when allowed;
- play: second to a trick, win with the lowest card that wins, else play the lowest card of the
  suit, else throw the lowest card; leading, play a random card.
"""

from __future__ import annotations

import random

from piquet_env.cards import JOKER, SUIT_MASKS
from piquet_env.game import Game, Phase


def _low_bit(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _lowest_rank(mask: int) -> int:
    """The card of lowest rank in a non-empty mask (ties: the lowest suit)."""
    best, best_r = -1, 99
    while mask:
        low = mask & -mask
        c = low.bit_length() - 1
        mask ^= low
        r = 9 if c == JOKER else c & 7
        if r < best_r:
            best, best_r = c, r
    return best


def rollout_discards(hand: int, k: int) -> list[int]:
    """The ``k`` cards of lowest keep value (rank plus 1.5 per card of its suit)."""
    lengths = [(hand & SUIT_MASKS[s]).bit_count() for s in range(4)]
    cards = []
    mask = hand
    while mask:
        low = mask & -mask
        c = low.bit_length() - 1
        mask ^= low
        cards.append((99.0 if c == JOKER else (c & 7) + 1.5 * lengths[c >> 3], c))
    cards.sort()
    return [c for _, c in cards[:k]]


def rollout_action(game: Game, rng: random.Random) -> int:
    """One action of the rollout policy for :attr:`Game.current_player`."""
    p = game.current_player
    phase = game.phase
    n = game.rules.n_cards
    if phase == Phase.PLAY:
        hand = game.hands[p]
        trick = game.trick
        if not trick:
            legal = game.legal_actions()
            return legal[int(rng.random() * len(legal))]
        lead = trick[0]
        if lead == JOKER:
            return _lowest_rank(hand)
        suited = hand & SUIT_MASKS[lead >> 3]
        if suited:
            above = suited & ~((2 << lead) - 1)
            return _low_bit(above) if above else _low_bit(suited)
        if hand >> JOKER & 1:
            return JOKER
        return _lowest_rank(hand)
    if phase == Phase.EXCHANGE:
        legal = game.legal_actions()
        if n in legal and game.n_discarded >= _target(game, p):
            return n
        return rollout_discards(game.hands[p], 1)[0]
    legal = game.legal_actions()
    return n + 1 if n + 1 in legal else legal[0]


def _target(game: Game, p: int) -> int:
    """How many cards the rollout policy exchanges: as many as allowed."""
    n_talon = len(game.talon)
    if p == game.elder:
        return min(game.rules.elder_max_exchange, n_talon)
    hi = game.rules.younger_max_exchange
    return n_talon if hi is None else min(hi, n_talon)


def rollout(game: Game, rng: random.Random, deal_index: int) -> None:
    """Play ``game`` (a determinized copy) with the rollout policy until deal ``deal_index`` ends."""
    while len(game.deal_scores) <= deal_index and game.current_player >= 0:
        game.apply(rollout_action(game, rng))
