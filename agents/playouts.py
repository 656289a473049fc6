"""Rollout policies of the search agent: cheap players that finish a determinized deal.

Two policies share the exchange and the declarations:

- exchange: discard the lowest-valued cards (rank plus 1.5 per card of the suit), as many as
  allowed;
- declarations: always declare when allowed.

They differ in trick play:

- ``heuristic`` (the default): the heuristic agent's trick play
  (:func:`piquet_agents.heuristic_play.choose_card`), which reasons from the acting player's
  knowledge within the determinized deal;
- ``greedy`` (cheaper per card): second to a trick, win with the lowest card that
  wins, else play the lowest card of the suit, else throw the lowest card; leading, cash a card the
  opponent's hand in the determinized deal cannot beat, else lead the lowest card of the longest
  suit; one lead in five is random.
"""

from __future__ import annotations

import random

from piquet_agents.heuristic_play import choose_card
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


RANDOM_LEAD = 0.2
"""Share of rollout leads chosen at random (keeps the rollouts varied)."""


def _lead(hand: int, opp: int) -> int:
    """A winning lead against the hand ``opp`` if there is one, else the lowest of the longest
    suit."""
    if hand >> JOKER & 1:
        return JOKER
    best, best_len = -1, -1
    low_best, low_len = -1, -1
    for s in range(4):
        mine = hand & SUIT_MASKS[s]
        if not mine:
            continue
        n = mine.bit_count()
        top = mine.bit_length() - 1
        theirs = opp & SUIT_MASKS[s]
        if (not theirs or theirs.bit_length() - 1 < top) and not opp >> JOKER & 1 and n > best_len:
            best, best_len = top, n
        if n > low_len:
            low_best, low_len = _low_bit(mine), n
    return best if best >= 0 else low_best


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
    """One action of the rollout policy for ``Game.current_player``."""
    p = game.current_player
    phase = game.phase
    n = game.rules.n_cards
    if phase == Phase.PLAY:
        hand = game.hands[p]
        trick = game.trick
        if not trick:
            if rng.random() < RANDOM_LEAD:
                legal = game.legal_actions()
                return legal[int(rng.random() * len(legal))]
            return _lead(hand, game.hands[1 - p])
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


def heuristic_rollout_action(game: Game, rng: random.Random) -> int:
    """The rollout policy with the heuristic's trick play
    (:func:`piquet_agents.heuristic_play.choose_card`) in place of the greedy one; exchange and
    declarations as :func:`rollout_action`."""
    if game.phase == Phase.PLAY:
        p = game.current_player
        return choose_card(game, p, game.legal_actions())
    return rollout_action(game, rng)


POLICIES = {"greedy": rollout_action, "heuristic": heuristic_rollout_action}
"""Rollout policies by name."""


def rollout(game: Game, rng: random.Random, deal_index: int, policy: str = "greedy") -> None:
    """Play ``game`` (a determinized copy) with a rollout policy until deal ``deal_index`` ends."""
    step = POLICIES[policy]
    while len(game.deal_scores) <= deal_index and game.current_player >= 0:
        game.apply(step(game, rng))
