"""What one player knows, and complete deals sampled consistently with it (for search agents).

A player knows his own hand and discards, every card played, the cards his opponent has shown
(declared and scored combinations, a carte blanche), the untaken cards of elder's part of the talon
if he is elder and looked at them, and all public counts. Every other card is *hidden* from him: it
is in the opponent's hand, the opponent's discards or the talon, and he cannot tell which.

One case is in between: a carte blanche is shown before its holder exchanges, and the exchange is
face down, so afterwards the opponent knows each card of it is in the holder's hand *or discards*
(:func:`opponent_unplaced`), not which, until it is played or shown again.

:func:`determinize` deals the hidden cards afresh among those hidden places, keeping everything the
player knows: the counts, the opponent's known cards, the carte blanche cards out of the talon, the
suits the opponent showed void in, and his declared and scored combinations (a declared best stays
his best; a won category scores the same). The copy's history of the deal (``deal_cards`` and
``deal_moves``) is the one that dealing implies: the opponent's hidden cards dealt, taken from the
talon and discarded where the sample put them, so that replaying it reaches the copy (what a
search replays to weigh the copy by how likely the opponent was to play as he did in it).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from piquet_env import combinations as combos
from piquet_env.cards import JOKER, CardMask, cards_of
from piquet_env.game import scoring as sc
from piquet_env.game.state import Game, Phase

_CATEGORY_FIELDS = (sc.POINT, sc.SEQUENCE, sc.SET)


def opponent_unplaced(game: Game, player: int) -> CardMask:
    """Cards ``player`` knows to be in his opponent's hand or discards, not which: the opponent's
    carte blanche once he has exchanged, less what he has played or shown again since."""
    o = 1 - player
    if not game.exchanged[o]:
        return 0
    return game.blanche[o] & ~game.shown[o] & ~game.played[o]


def opponent_known(game: Game, player: int) -> CardMask:
    """Cards ``player`` knows to be in his opponent's hand now: shown (declared, scored, or a carte
    blanche before the exchange), or taken by him from the talon cards ``player`` saw."""
    o = 1 - player
    known = game.shown[o] | game.seen_talon[player]
    if not game.exchanged[o]:
        known |= game.blanche[o]
    return game.hands[o] & known


def talon_known(game: Game, player: int) -> CardMask:
    """Cards ``player`` knows to be (still) in the talon."""
    talon = 0
    for c in game.talon:
        talon |= 1 << c
    return talon & game.seen_talon[player]


def hidden_cards(game: Game, player: int) -> CardMask:
    """Bitmask of the cards whose exact place ``player`` does not know (this includes
    :func:`opponent_unplaced`)."""
    o = 1 - player
    everywhere = game.hands[o] | game.discards[o]
    for c in game.talon:
        everywhere |= 1 << c
    return everywhere & ~(opponent_known(game, player) | talon_known(game, player))


def _consistent(game: Game, hand: CardMask, opp: int) -> bool:
    """Whether ``hand``, a sampled hand of the opponent, agrees with his declarations and scores."""
    if game.phase == Phase.EXCHANGE:
        return True
    hand |= game.played[opp]
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
    """A copy of ``game`` with the cards hidden from ``player`` dealt afresh, consistent with what
    he knows (see the module docstring).

    The copy records no events and shuffles future deals with a fresh seed from ``rng``, so it leaks
    nothing. Up to ``max_tries`` samples are drawn to satisfy the opponent's declarations; if none
    does (very rare), the last sample is returned, which still honours the counts, the known cards,
    the carte blanche and the voids.
    """
    return _apply(game, 1 - player, _sample(game, player, rng, max_tries))


def determinize_hand(game: Game, player: int, rng: random.Random, max_tries: int = 100) -> CardMask:
    """The opponent's hand in ``determinize(game, player, rng, max_tries)``, without copying the
    game: the same draws from ``rng``, so the two agree and leave ``rng`` in the same state."""
    return _sample(game, player, rng, max_tries).hand


class _Sample(NamedTuple):
    """One dealing of the hidden cards: the opponent's new hand, where each hidden card went, his
    discards, the unseen talon slots' cards, and the seed of the copy's future deals."""

    hand: CardMask
    mapping: dict[int, int]
    discards: list[int]
    talon: list[int]
    talon_slots: list[int]
    deal_seed: int


def _sample(game: Game, player: int, rng: random.Random, max_tries: int) -> _Sample:
    """Deal the hidden cards until the opponent's hand agrees with his declarations and scores
    (at most ``max_tries`` times; the last dealing otherwise)."""
    if max_tries < 1:
        raise ValueError(f"max_tries must be at least 1, got {max_tries}")
    o = 1 - player
    hidden_hand = game.hands[o] & ~opponent_known(game, player)
    known = game.hands[o] & ~hidden_hand
    seen = game.seen_talon[player]
    talon_slots = [i for i, c in enumerate(game.talon) if not seen >> c & 1]
    pool = cards_of(hidden_hand) + cards_of(game.discards[o]) + [game.talon[i] for i in talon_slots]
    slots = (hidden_hand.bit_count(), game.discards[o].bit_count(), len(talon_slots))
    voids, unplaced = game.voids[o], opponent_unplaced(game, player)
    for _ in range(max_tries):
        hand, discards, talon = _deal_hidden(pool, slots, voids, unplaced, rng)
        mapping = dict(zip(pool, hand + discards + talon))
        deal_seed = rng.getrandbits(64)
        new_hand = known
        for c in cards_of(hidden_hand):
            new_hand |= 1 << mapping[c]
        if _consistent(game, new_hand, o):
            break
    return _Sample(new_hand, mapping, discards, talon, talon_slots, deal_seed)


def _deal_hidden(
    pool: list[int], slots: tuple[int, int, int], voids: int, unplaced: int, rng: random.Random
) -> tuple[list[int], list[int], list[int]]:
    """Split ``pool`` into the opponent's hidden hand, his discards and the unseen talon slots, at
    random, so that no card of a void suit is in his hand and no ``unplaced`` card in the talon."""
    _, n_discards, n_talon = slots  # the hand takes what is left
    pool = sorted(pool)  # the sample must not depend on where the hidden cards really are
    void = [c for c in pool if c != JOKER and voids >> (c >> 3) & 1]
    void_set = set(void)
    discards = [c for c in void if unplaced >> c & 1]  # void and unplaced: only the discards
    rest = [c for c in pool if c not in void_set or not unplaced >> c & 1]
    rest = [c for c in rest if c not in discards]
    talon_ok = [c for c in rest if not unplaced >> c & 1]
    if len(discards) > n_discards or len(talon_ok) < n_talon:
        raise RuntimeError("inconsistent knowledge: the hidden cards do not fit the hidden places")
    for _ in range(1000):
        talon = rng.sample(talon_ok, n_talon)
        taken = set(talon)
        left = [c for c in rest if c not in taken]
        must = [c for c in left if c in void_set]  # void cards not in the talon: discards
        if len(discards) + len(must) <= n_discards:
            break
    else:
        raise RuntimeError("inconsistent knowledge: too many void-suit cards for the hidden places")
    free = [c for c in left if c not in void_set]
    rng.shuffle(free)
    cut = n_discards - len(discards) - len(must)
    discards = discards + must + free[:cut]
    return free[cut:], discards, talon


def _remap(mask: int, mapping: dict[int, int]) -> int:
    out = 0
    for c in cards_of(mask):
        out |= 1 << mapping.get(c, c)
    return out


def _apply(game: Game, o: int, sample: _Sample) -> Game:
    """The copy of ``game`` in which the hidden cards lie as ``sample`` dealt them."""
    g = game.clone()
    g.record = False
    g.events = []
    g._preset = []
    g._rng = random.Random(sample.deal_seed)  # future deals unknown to the player
    g.hands[o] = sample.hand
    g.discards[o] = sum(1 << c for c in sample.discards)
    talon = list(g.talon)
    for i, c in zip(sample.talon_slots, sample.talon):
        talon[i] = c
    g.talon = talon
    g.seen_talon[o] = _remap(g.seen_talon[o], sample.mapping)
    g.dealt[o] = _remap(g.dealt[o], sample.mapping)
    # the deal's history as it went in this dealing: the hidden cards dealt, taken and discarded
    # where the sample put them (played cards and every other id are not hidden: kept)
    mapping, n = sample.mapping, g.rules.n_cards
    g.deal_cards = tuple(tuple(mapping.get(c, c) for c in part) for part in g.deal_cards)
    g.deal_moves = [mapping.get(a, a) if a < n else a for a in g.deal_moves]
    if g.phase != Phase.EXCHANGE:
        post = g.hands[o] | g.played[o]
        g.best[o] = [combos.best(cat, post) for cat in combos.CATEGORIES]
    return g
