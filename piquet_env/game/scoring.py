"""Pure scoring functions: trick points, repique, the deal's score breakdown, settlement.

RULES.md sections 6-8. Nothing here mutates a game; :mod:`piquet_env.game.state` calls these.

>>> from piquet_env.rules import STANDARD, CLASSIC
>>> settle((97, 89), STANDARD), settle((97, 89), CLASSIC)
((108, -108), (286, -286))
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from piquet_env.rules import Rules

# Indices into a player's per-deal score list.
CARTE_BLANCHE, POINT, SEQUENCE, SET, LEADS, TRICKS, REPIQUE, PIQUE, CAPOT, CARDS = range(10)
SCORE_FIELD_NAMES = (
    "carte blanche",
    "point",
    "sequence",
    "set",
    "leads",
    "tricks",
    "repique",
    "pique",
    "capot",
    "cards",
)
"""Name of each field of a player's per-deal score list, by index (``SCORE_FIELD_NAMES[PIQUE]``
is ``'pique'``); the score events of the game's log use these names."""
N_SCORE_FIELDS = len(SCORE_FIELD_NAMES)
DECLARATION_FIELDS = (CARTE_BLANCHE, POINT, SEQUENCE, SET)
"""Score fields in reckoning order that count as declarations (for repique)."""

REPIQUE_BONUS, PIQUE_BONUS, CAPOT_BONUS, CARDS_BONUS, CARTE_BLANCHE_BONUS = 60, 30, 40, 10, 10
THRESHOLD = 30
"""Points that make a repique or pique."""
MAX_DEAL_POINTS = 250
"""More than one player can score in one deal under any rules: declarations (carte blanche 10,
point 8, sequences 32, sets 42) + repique 60 + play (12 leads, 13 for tricks, capot 40) are 217."""
MAX_TOTAL = 5000
"""The largest partie total a game can reach: :class:`~piquet_env.game.Game` refuses starting
totals from which the deals left could pass it (the observation encodes totals up to this)."""


@dataclass(frozen=True)
class DealScore:
    """One player's score breakdown for one deal (RULES.md: declarations + play + bonuses).

    ``play`` is the points for leading and winning tricks, after capot's replacement under
    ``standard``; ``cards`` is the ``classic`` 10 for winning 7 or more tricks.
    """

    carte_blanche: int = 0
    point: int = 0
    sequence: int = 0
    set: int = 0
    play: int = 0
    repique: int = 0
    pique: int = 0
    capot: int = 0
    cards: int = 0

    @property
    def declarations(self) -> int:
        """Points from carte blanche and the three declaration categories."""
        return self.carte_blanche + self.point + self.sequence + self.set

    @property
    def total(self) -> int:
        """The deal score: declarations + play + bonuses."""
        return self.declarations + self.play + self.repique + self.pique + self.capot + self.cards

    def to_dict(self) -> dict[str, int]:
        """JSON-serializable form (the :data:`DEAL_SCORE_FIELDS`), with ``total``."""
        d = {name: getattr(self, name) for name in DEAL_SCORE_FIELDS}
        d["total"] = self.total
        return d


DEAL_SCORE_FIELDS = tuple(f.name for f in fields(DealScore))
"""The fields of a :class:`DealScore` in reckoning order (``'carte_blanche'``, ``'point'``,
``'sequence'``, ``'set'``, ``'play'``, ``'repique'``, ``'pique'``, ``'capot'``, ``'cards'``): the
keys of :meth:`DealScore.to_dict` and of a record's deal scores, less ``'total'``."""


def trick_points(rules: Rules, leader: int, winner: int, last: bool) -> int:
    """Points the winner of a trick scores for winning it (the lead point is scored separately)."""
    if rules.trick_scoring == "standard":
        return 2 if last else 1
    return (winner != leader) + (1 if last else 0)


def repique_player(scores: list[list[int]], rules: Rules) -> int | None:
    """The player (0 or 1) who makes a repique from the declaration scores, or ``None``.

    ``standard``: his declarations total 30+ and the opponent's total 0. ``classic``: counting in
    reckoning order (carte blanche, point, sequence, set) he reaches 30 before the opponent has
    scored in any category that reckons earlier.
    """
    for p in (0, 1):
        mine, theirs = scores[p], scores[1 - p]
        if rules.repique_reckoning == "standard":
            if sum(mine[f] for f in DECLARATION_FIELDS) >= THRESHOLD and not any(
                theirs[f] for f in DECLARATION_FIELDS
            ):
                return p
            continue
        running = 0
        for k, f in enumerate(DECLARATION_FIELDS):
            running += mine[f]
            if running >= THRESHOLD:
                if not any(theirs[g] for g in DECLARATION_FIELDS[:k]):
                    return p
                break
    return None


def finish_deal(scores: list[list[int]], tricks_won: tuple[int, int], rules: Rules) -> None:
    """Add the end-of-deal bonuses in place: capot (every trick), and ``classic``'s 10 for the
    cards (more than half the tricks: 7 of 12).

    ``standard`` capot replaces the capot player's points for winning tricks; ``classic`` capot
    replaces the 10 for the cards.
    """
    for p in (0, 1):
        s = scores[p]
        if tricks_won[p] == rules.hand_size:
            s[CAPOT] = CAPOT_BONUS
            if rules.trick_scoring == "standard":
                s[TRICKS] = 0
        elif rules.trick_scoring == "classic" and 2 * tricks_won[p] > rules.hand_size:
            s[CARDS] = CARDS_BONUS


def breakdown(score: list[int]) -> DealScore:
    """The :class:`DealScore` of one player's internal score list."""
    return DealScore(
        carte_blanche=score[CARTE_BLANCHE],
        point=score[POINT],
        sequence=score[SEQUENCE],
        set=score[SET],
        play=score[LEADS] + score[TRICKS],
        repique=score[REPIQUE],
        pique=score[PIQUE],
        capot=score[CAPOT],
        cards=score[CARDS],
    )


def settle(totals: tuple[int, int] | list[int], rules: Rules) -> tuple[int, int]:
    """Zero-sum partie result for both players from their totals (RULES.md section 8).

    Equal totals give ``(0, 0)`` (a ``classic`` partie plays its tie-break deals before settling).
    """
    a, b = totals
    if a == b:
        return (0, 0)
    w, lo = max(a, b), min(a, b)
    # standard: only a loser under 100 facing a winner at 100+ is rubiconed; classic: any loser
    # under 100 is.
    rubicon = lo < 100 <= w if rules.settlement == "standard" else lo < 100
    score = w + lo + 100 if rubicon else w - lo + 100
    return (score, -score) if a > b else (-score, score)
