"""What one player knows, and complete deals sampled consistently with it (for search agents).

A player knows his own hand and discards, every card played, the cards his opponent has shown
(carte blanche, declared and scored combinations), the untaken cards of elder's part of the talon if
he is elder and looked at them, and all public counts. Every other card is *hidden* from him: it is in
the opponent's hand, the opponent's discards or the talon, and he cannot tell which.

:func:`determinize` deals the hidden cards afresh among those hidden places, keeping everything the
player knows: the counts, the opponent's known cards, the suits he showed void in, and his declared
and scored combinations (a declared best stays his best; a won category scores the same).
"""

from __future__ import annotations

import random

from piquet_env import combinations as combos
from piquet_env.cards import JOKER, cards_of
from piquet_env.game import scoring as sc
from piquet_env.game.state import Game, Phase

_CATEGORY_FIELDS = (sc.POINT, sc.SEQUENCE, sc.SET)


def opponent_known(game: Game, player: int) -> int:
    """Cards ``player`` knows to be in his opponent's hand now (shown, or taken from the talon
    cards he saw)."""
    o = 1 - player
    return game.hands[o] & (game.shown[o] | game.seen_talon[player])


def talon_known(game: Game, player: int) -> int:
    """Cards ``player`` knows to be (still) in the talon."""
    talon = 0
    for c in game.talon:
        talon |= 1 << c
    return talon & game.seen_talon[player]


def hidden_cards(game: Game, player: int) -> int:
    """Bitmask of the cards whose place ``player`` does not know."""
    o = 1 - player
    everywhere = game.hands[o] | game.discards[o]
    for c in game.talon:
        everywhere |= 1 << c
    return everywhere & ~(opponent_known(game, player) | talon_known(game, player))


def _consistent(game: Game, sample: Game, opp: int) -> bool:
    """Whether the opponent's sampled hand agrees with his declarations and scores."""
    if sample.phase == Phase.EXCHANGE:
        return True
    hand = sample.hands[opp] | sample.played[opp]
    for cat in combos.CATEGORIES:
        if not game.decided[cat][opp]:
            continue
        declared = game.declared[cat][opp]
        if declared is not None and combos.best(cat, hand).key != declared.key:
            return False
        won = game.scores[opp][_CATEGORY_FIELDS[cat]]
        if won and combos.category_value(cat, hand) != won:
            return False
    return True


def determinize(game: Game, player: int, rng: random.Random, max_tries: int = 100) -> Game:
    """A copy of ``game`` with the cards hidden from ``player`` dealt afresh, consistent with what he
    knows (see the module docstring).

    The copy records no events and shuffles future deals with a fresh seed from ``rng``, so it leaks
    nothing. Up to ``max_tries`` samples are drawn to satisfy the opponent's declarations; if none
    does (very rare), the last sample is returned, which still honours the counts, the known cards and
    the voids.
    """
    o = 1 - player
    hidden_hand = game.hands[o] & ~opponent_known(game, player)
    seen = game.seen_talon[player]
    talon_slots = [i for i, c in enumerate(game.talon) if not seen >> c & 1]
    n_hand = hidden_hand.bit_count()
    n_discards = game.discards[o].bit_count()
    pool = cards_of(hidden_hand) + cards_of(game.discards[o]) + [game.talon[i] for i in talon_slots]
    n_other = len(pool) - n_hand
    voids = game.voids[o]
    restricted = [c for c in pool if c != JOKER and voids >> (c >> 3) & 1]
    free = [c for c in pool if c == JOKER or not voids >> (c >> 3) & 1]
    if len(restricted) > n_other:
        raise RuntimeError("inconsistent knowledge: more void-suit cards than hidden places")
    sample = game
    for _ in range(max_tries):
        rng.shuffle(free)
        cut = n_other - len(restricted)
        others = restricted + free[:cut]
        rng.shuffle(others)
        new_hand = free[cut:]
        mapping = dict(zip(pool, new_hand + others))
        sample = _apply(game, o, mapping, hidden_hand, n_discards, others, talon_slots, rng)
        if _consistent(game, sample, o):
            break
    return sample


def _remap(mask: int, mapping: dict[int, int]) -> int:
    out = 0
    for c in cards_of(mask):
        out |= 1 << mapping.get(c, c)
    return out


def _apply(
    game: Game,
    o: int,
    mapping: dict[int, int],
    hidden_hand: int,
    n_discards: int,
    others: list[int],
    talon_slots: list[int],
    rng: random.Random,
) -> Game:
    g = game.clone()
    g.record = False
    g.events = []
    g._preset = []
    g._rng = random.Random(rng.getrandbits(64))
    known = g.hands[o] & ~hidden_hand
    new_hand = 0
    for c in cards_of(hidden_hand):
        new_hand |= 1 << mapping[c]
    g.hands[o] = known | new_hand
    g.discards[o] = sum(1 << c for c in others[:n_discards])
    talon = list(g.talon)
    for i, c in zip(talon_slots, others[n_discards:]):
        talon[i] = c
    g.talon = talon
    g.seen_talon[o] = _remap(g.seen_talon[o], mapping)
    g.dealt[o] = _remap(g.dealt[o], mapping)
    if g.phase != Phase.EXCHANGE:
        post = g.hands[o] | g.played[o]
        g.best[o] = [combos.best(cat, post) for cat in combos.CATEGORIES]
    return g
