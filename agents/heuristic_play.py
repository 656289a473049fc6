"""Trick play of the heuristic agent: what to lead and what to play second.

The rules of thumb, in the order they are tried (see :func:`choose_card`):

Leading

1. *Run the masters.* A *master* is a card no card the opponent may hold can beat: higher than every
   card of its suit still unaccounted for (not in my hand, not played, not a discard of mine, not a
   talon card I saw, not in a suit the opponent showed void in). Masters are cashed from the longest
   suit first: each wins its trick (lead point + trick point) and keeps the lead; a hand of nothing
   but masters thereby goes for capot, and an elder chasing pique takes his points at once.
2. *Establish the long suit.* Without a master, lead from the longest suit: the top of two touching
   honours (to drive out the one card above them), otherwise its lowest card, so the suit's later
   cards become masters.

Following

3. *Win cheaply.* When a card of the led suit beats the lead, play the lowest such card: a trick won
   is a point and the next lead (for younger it also kills elder's pique, for either it spoils a
   capot; the last trick is worth two).
4. *Follow low.* When the lead cannot be beaten, play the lowest card of the suit.
5. *Discard what is worth least.* With no card of the led suit, throw the card with the lowest keep
   value: masters and guards (a king with a small card, a queen with two) are kept, a card of a long
   suit that will become a winner is kept, and small cards of short suits go first. The joker is
   kept for the last trick, or played at once when the opponent is on his way to a capot or a pique.
"""

from __future__ import annotations

from piquet_env.cards import JOKER, SUIT_MASKS
from piquet_env.game import Game, hidden_cards, opponent_known


def opponent_possible(game: Game, player: int) -> int:
    """Cards the opponent may hold: known ones, plus hidden ones outside the suits he is void in."""
    o = 1 - player
    void_mask = 0
    for s in range(4):
        if game.voids[o] >> s & 1:
            void_mask |= SUIT_MASKS[s]
    return opponent_known(game, player) | (hidden_cards(game, player) & ~void_mask)


def is_master(card: int, opp: int) -> bool:
    """Whether ``card`` wins a trick it leads against any card of the mask ``opp``."""
    if card == JOKER:
        return True
    if opp >> JOKER & 1:
        return False
    above = SUIT_MASKS[card >> 3] & ~((2 << card) - 1)
    return not opp & above


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _keep_value(card: int, hand: int, opp: int, tricks_left: int) -> float:
    """How much a card is worth keeping for later tricks (higher: keep it)."""
    if card == JOKER:
        return 30.0 if tricks_left > 1 else 0.0
    s = card >> 3
    mine = hand & SUIT_MASKS[s]
    theirs = opp & SUIT_MASKS[s]
    n_mine = mine.bit_count()
    if is_master(card, opp):
        return 20.0 + (card & 7)
    higher_theirs = (theirs & ~((2 << card) - 1)).bit_count()
    below_mine = (mine & ((1 << card) - 1)).bit_count()
    v = (card & 7) * 0.5
    if higher_theirs == 1 and below_mine >= 1:
        v += 8.0  # a guarded second-best card (king with a small one)
    elif higher_theirs == 2 and below_mine >= 2:
        v += 5.0  # a twice-guarded third-best card
    if n_mine > theirs.bit_count():
        v += 4.0  # the long suit: its cards turn into winners
    return v + 0.3 * n_mine


def choose_card(game: Game, player: int, legal: list[int]) -> int:
    """The card the heuristic plays (``legal`` are the legal card ids)."""
    hand = game.hands[player]
    opp = opponent_possible(game, player)
    o = 1 - player
    tricks_left = game.rules.hand_size - game.tricks_won[0] - game.tricks_won[1]
    if not game.trick:
        return _lead(hand, opp, legal, tricks_left)
    lead = game.trick[0]
    if lead == JOKER:
        return min(legal, key=lambda c: _keep_value(c, hand, opp, tricks_left))
    suit = lead >> 3
    suited = [c for c in legal if c != JOKER and c >> 3 == suit]
    if suited:
        winners = [c for c in suited if c > lead]
        return min(winners) if winners else min(suited)
    # Void in the led suit: play the joker only when a trick is needed now.
    if JOKER in legal:
        danger = (game.tricks_won[player] == 0 and game.tricks_won[o] >= 8) or (
            game.pique_open and player != game.elder
        )
        if danger or tricks_left == 1:
            return JOKER
    others = [c for c in legal if c != JOKER] or legal
    return min(others, key=lambda c: (_keep_value(c, hand, opp, tricks_left), c & 7))


def _lead(hand: int, opp: int, legal: list[int], tricks_left: int) -> int:
    masters = [c for c in legal if c != JOKER and is_master(c, opp)]
    if masters:

        def length(c: int) -> tuple[int, int]:
            return ((hand & SUIT_MASKS[c >> 3]).bit_count(), c & 7)

        return max(masters, key=length)
    if JOKER in legal and (tricks_left <= 2 or len(legal) == 1):
        return JOKER
    cards = [c for c in legal if c != JOKER] or legal
    lengths = [(hand & SUIT_MASKS[s]).bit_count() for s in range(4)]
    suit = max(range(4), key=lambda s: (lengths[s], s) if lengths[s] else (-1, s))
    in_suit = sorted(_bits(hand & SUIT_MASKS[suit]), reverse=True)
    if not in_suit:
        return min(cards, key=lambda c: c & 7)
    top = in_suit[0]
    higher_opp = (opp & SUIT_MASKS[suit] & ~((2 << top) - 1)).bit_count()
    if higher_opp == 1 and len(in_suit) >= 2 and in_suit[1] == top - 1:
        return top  # drive out the one card above a touching pair
    return in_suit[-1]
