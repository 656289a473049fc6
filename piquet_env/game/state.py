"""The partie state machine: cut, deals, exchange, declarations, tricks, bonuses, settlement.

:class:`Game` is the one place that mutates game state. A decision is an action id
(:mod:`piquet_env.actions`); :meth:`Game.legal_actions` lists them for ``Game.current_player``
and :meth:`Game.apply` plays one. Declaration decisions with a single legal choice, the move from
one deal to the next and the exchange's end at its maximum are taken automatically.

>>> g = Game(seed=7)
>>> while not g.is_over:
...     g.apply(g.legal_actions()[0])
>>> sum(g.result)
0
"""

from __future__ import annotations

import operator
import random
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from enum import IntEnum
from typing import NoReturn

from piquet_env import combinations as combos
from piquet_env.actions import ActionId, action_name
from piquet_env.cards import (
    COURT_MASK,
    JOKER,
    SUIT_MASKS,
    Card,
    card_str,
    cards_of,
    cards_str,
    parse_cards,
    rank,
    to_mask,
)
from piquet_env.game import scoring as sc
from piquet_env.rules import STANDARD, Rules

MODES = ("partie", "deal")
"""What one game is: a whole ``"partie"`` (RULES.md section 8) or a single ``"deal"``. Every
layer names it ``mode`` (the engine, the env, the batched engine, the config, the CLI)."""


def resolve_mode(mode: str | None, episode: str | None = None) -> str:
    """The game mode from ``mode`` or ``episode``, its former name (kept as an alias by the
    envs): ``"partie"`` when neither is given; a ``ValueError`` naming the argument for a mode
    that does not exist, or when both are given and differ.

    >>> resolve_mode(None), resolve_mode("deal"), resolve_mode(None, episode="deal")
    ('partie', 'deal', 'deal')
    """
    if episode is not None:
        if mode is not None and mode != episode:
            raise ValueError(f"mode={mode!r} and episode={episode!r} disagree: give mode alone")
        mode, name = episode, "episode"
    else:
        mode, name = ("partie" if mode is None else mode), "mode"
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"{name} must be one of {MODES}, got {short_repr(mode)}")
    return mode


DealCards = tuple[Sequence[Card], Sequence[Card], Sequence[Card]]
"""Cards of one deal: (elder's hand, younger's hand, talon top first), as card ids."""


class Phase(IntEnum):
    """Phase of the current deal."""

    EXCHANGE = 0
    DECLARE = 1
    PLAY = 2
    OVER = 3


PHASE_NAMES = ("exchange", "declarations", "play", "over")
"""The name of each :class:`Phase`, by value (``PHASE_NAMES[Phase.DECLARE]`` is
``'declarations'``)."""
_PART_LABELS = ("elder hand", "younger hand", "talon")

_EXCHANGE, _DECLARE, _PLAY, _OVER = Phase.EXCHANGE, Phase.DECLARE, Phase.PLAY, Phase.OVER
_NAMES = tuple(card_str(c) for c in range(33))


_LIST_SLOTS = (
    "_preset",
    "deal_moves",
    "events",
    "deal_scores",
    "totals",
    "hands",
    "talon",
    "discards",
    "seen_talon",
    "shown",
    "blanche",
    "taken",
    "exchanged",
    "dealt",
    "trick",
    "played",
    "tricks_won",
    "voids",
)
_NESTED_SLOTS = ("declared", "decided", "best", "scores")


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left untouched."""


def check_deal(
    cards: DealCards | Sequence[str], rules: Rules
) -> tuple[list[Card], list[Card], list[Card]]:
    """Validate and parse one deal's cards: ``rules.hand_size`` (12) for elder, as many for
    younger, the talon (top first), every card of ``rules.pack``.

    Each part may be a string of card names or a sequence of integer card ids. Raises ``ValueError``
    naming the problem: a deal that is not three parts, a part that is neither, a card id that is
    not an integer (``0.5``, ``"0"``, ``True``), a malformed card, a card not in this pack, a
    duplicate, a wrong count.
    """
    if not _is_sequence(cards) or len(cards) != 3:  # type: ignore[arg-type]
        raise ValueError(
            f"a deal is three parts (elder hand, younger hand, talon), got {short_repr(cards)}"
        )
    parts = [_deal_part(label, part) for label, part in zip(_PART_LABELS, cards)]
    pack = set(rules.pack)
    for label, ids in zip(_PART_LABELS, parts):
        for c in ids:
            if c not in pack:
                name = f" ({card_str(c)})" if 0 <= c <= JOKER else ""
                raise ValueError(
                    f"{label}: card {c!r} is not in the {rules.pack_size}-card pack of "
                    f"{rules.name!r}{name}"
                )
    hand = rules.hand_size
    for label, part, n in zip(_PART_LABELS, parts, (hand, hand, rules.talon_size)):
        if len(part) != n:
            raise ValueError(f"{label} has {len(part)} cards, expected {n}")
    seen: dict[int, str] = {}
    for label, part in zip(_PART_LABELS, parts):
        for c in part:
            if c in seen:
                raise ValueError(f"card {card_str(c)} is both in the {seen[c]} and the {label}")
            seen[c] = label
    return parts[0], parts[1], parts[2]


def _deal_part(label: str, part: object) -> list[Card]:
    """The card ids of one part of a deal: a string of card names or a sequence of int ids."""
    if isinstance(part, str):
        try:
            return parse_cards(part)
        except ValueError as exc:
            raise ValueError(f"{label}: {exc}") from None
    if not _is_sequence(part):
        raise ValueError(
            f"{label} must be a string of card names or a sequence of card ids, "
            f"got {short_repr(part)}"
        )
    ids = []
    for c in part:  # type: ignore[attr-defined]
        if isinstance(c, bool):
            raise ValueError(f"{label}: card id {c!r} is a bool, not an integer card id")
        try:
            ids.append(operator.index(c))
        except TypeError:
            raise ValueError(
                f"{label}: card id {short_repr(c)} is not an integer (give ids as ints, or the "
                f"part as one string of names such as 'AS KS')"
            ) from None
    return ids


def _is_sequence(value: object) -> bool:
    """Whether ``value`` is an ordered collection of items: a list, a tuple, a 1-D array (not a
    string, a mapping or a set)."""
    if isinstance(value, (str, bytes, bytearray, Mapping, AbstractSet)):
        return False
    return isinstance(value, Sequence) or getattr(value, "ndim", None) == 1


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, with its type."""
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{text} ({type(value).__name__})"


def _int_arg(name: str, value: object) -> int:
    """``value`` as an int, or a ``ValueError`` naming the argument (bools and floats refused)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an int, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{name} must be an int, got {short_repr(value)}") from None


def max_deals_left(rules: Rules, deal_number: int = 0) -> int:
    """The most deals a partie can still play from ``deal_number`` on (0-based), ``classic``'s
    tie-break deals included."""
    return rules.deals - deal_number + (2 if rules.tie_break_deals else 0)


def max_start_total(rules: Rules, deal_number: int = 0) -> int:
    """The largest partie total a game may start with at ``deal_number``: one that stays within
    :data:`~piquet_env.game.scoring.MAX_TOTAL` whatever the deals left (tie-break deals included)
    score."""
    return sc.MAX_TOTAL - sc.MAX_DEAL_POINTS * max_deals_left(rules, deal_number)


class Game:
    """A partie of Piquet (or a single deal with ``mode="deal"``) under the given rules.

    Players are 0 and 1; :attr:`elder` says which is elder hand in the current deal. ``seed`` drives
    the cut and every shuffle. ``deals`` optionally gives the cards of the first deals (see
    :func:`check_deal`), ``first_elder`` the elder of the first deal (otherwise the cut decides),
    ``deal_number`` and ``totals`` start a partie part-way through (each total at most
    :func:`max_start_total`). ``record=False`` skips the event log (for search). A bad argument
    raises ``ValueError`` naming it (``TypeError`` for ``rules`` that are not a :class:`Rules`).

    State, read-only for callers (card sets are bitmasks, per-player lists are indexed by player):

    - ``phase``, ``current_player`` (-1 when over), ``deal_number`` (0-based), ``planned_deals``,
      ``totals``, ``deal_scores`` (a ``(DealScore, DealScore)`` per finished deal), ``result``.
    - ``deal_cards`` (the deal under way as dealt: elder's hand, younger's, the talon top first,
      card ids in dealing order) and ``deal_moves`` (the actions the players took in it, in
      order; the engine's own forced passes are not among them): the deal's history, kept even
      without the event log.
    - ``hands``, ``discards``, ``talon`` (list, top first; under ``orbis`` it stays aside),
      ``dealt`` (hands as dealt), ``taken`` and ``exchanged`` (per player), ``n_discarded`` (in the
      exchange under way), ``seen_talon`` (the talon cards each player looked at).
    - ``shown`` (cards of each player's declared and scored combinations), ``blanche`` (a carte
      blanche hand, shown), ``decl_step`` (0..5: category ``decl_step // 2``, elder then younger),
      ``declared[category][player]`` (the declared :class:`~piquet_env.combinations.Combo` or
      ``None``), ``decided[category][player]``.
    - ``leader``, ``trick`` (the card led, if any), ``played``, ``tricks_won``, ``last_trick``
      ``(leader, lead, follow, winner)``, ``voids`` (4-bit suit masks a player showed void in),
      ``scores`` (per-player lists indexed by :mod:`~piquet_env.game.scoring` fields),
      ``repique`` (who made one, or ``None``), ``pique_open`` (a pique is still possible).

    A player's view of hidden cards goes through :mod:`piquet_env.game.knowledge`.
    """

    __slots__ = (
        "_declare",
        "_done",
        "_n",
        "_pass",
        "_preset",
        "_rng",
        "_rng_state",
        "best",
        "blanche",
        "current_player",
        "deal_cards",
        "deal_moves",
        "deal_number",
        "deal_scores",
        "dealt",
        "decided",
        "decl_step",
        "declared",
        "discards",
        "elder",
        "events",
        "exchanged",
        "hands",
        "last_trick",
        "leader",
        "mode",
        "n_discarded",
        "phase",
        "pique_open",
        "planned_deals",
        "played",
        "record",
        "repique",
        "result",
        "rules",
        "scores",
        "seen_talon",
        "shown",
        "taken",
        "talon",
        "totals",
        "trick",
        "tricks_won",
        "voids",
    )

    def __init__(
        self,
        rules: Rules = STANDARD,
        seed: int | None = None,
        *,
        mode: str = "partie",
        deals: Sequence[DealCards] = (),
        first_elder: int | None = None,
        deal_number: int = 0,
        totals: tuple[int, int] = (0, 0),
        record: bool = True,
    ) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(
                f"rules must be a Rules object (see make_rules), got {type(rules).__name__}"
            )
        if seed is not None:
            seed = _int_arg("seed", seed)
        if not isinstance(mode, str) or mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {short_repr(mode)}")
        if first_elder is not None:
            first_elder = _int_arg("first_elder", first_elder)
            if first_elder not in (0, 1):
                raise ValueError(f"first_elder must be 0, 1 or None, got {first_elder!r}")
        deal_number = _int_arg("deal_number", deal_number)
        if not 0 <= deal_number < rules.deals:
            raise ValueError(f"deal_number must be in 0..{rules.deals - 1}, got {deal_number}")
        if not _is_sequence(totals) or len(totals) != 2:  # type: ignore[arg-type]
            raise ValueError(
                f"totals must be two ints (player 0, player 1), got {short_repr(totals)}"
            )
        limit = max_start_total(rules, deal_number)
        if max_start_total(rules) < 0:
            most = sc.MAX_TOTAL // sc.MAX_DEAL_POINTS - (2 if rules.tie_break_deals else 0)
            raise ValueError(
                f"a partie of {rules.deals} deals could pass the largest total, {sc.MAX_TOTAL}: "
                f"at most {most - most % 2} deals (tie-break deals included)"
            )
        totals = (_int_arg("totals[0]", totals[0]), _int_arg("totals[1]", totals[1]))
        for p, t in enumerate(totals):
            if not 0 <= t <= limit:
                raise ValueError(
                    f"totals[{p}] must be in 0..{limit} (what keeps every later total within "
                    f"{sc.MAX_TOTAL} at deal {deal_number} of {rules.name!r}), got {t}"
                )
        if not _is_sequence(deals):
            raise ValueError(f"deals must be a sequence of deals, got {short_repr(deals)}")
        if not isinstance(record, bool):
            raise ValueError(f"record must be True or False, got {short_repr(record)}")
        self.rules = rules
        self.mode = mode
        self._rng: random.Random | None = random.Random(seed)
        self._rng_state: tuple | None = None
        most = 1 if mode == "deal" else max_deals_left(rules, deal_number)
        if len(deals) > most:
            what = (
                "a single deal"
                if mode == "deal"
                else (f"a partie of {rules.name!r} from deal {deal_number + 1} on")
            )
            raise ValueError(f"deals: {len(deals)} deals given, but {what} plays at most {most}")
        self._preset = []
        for i, d in enumerate(deals):
            try:
                self._preset.append(check_deal(d, rules))
            except ValueError as exc:
                raise ValueError(f"deals[{i}]: {exc}") from None
        self.record = record
        self.events: list[dict] = []
        self._n = rules.n_cards
        self._done, self._declare, self._pass = self._n, self._n + 1, self._n + 2
        self.deal_number = deal_number
        self.planned_deals = 1 if mode == "deal" else rules.deals
        self.totals = [int(totals[0]), int(totals[1])]
        self.deal_scores: list[tuple[sc.DealScore, sc.DealScore]] = []
        self.result: tuple[int, int] | None = None
        self._log(
            type="partie",
            rules=rules.to_dict(),
            mode=mode,
            deal_number=deal_number,
            totals=list(self.totals),
        )
        if first_elder is None:
            first_elder = self._cut()
        self.elder = first_elder
        self._start_deal()

    # ------------------------------------------------------------------ public queries

    @property
    def younger(self) -> int:
        """The player who is younger hand (the dealer) in the current deal."""
        return 1 - self.elder

    @property
    def is_over(self) -> bool:
        """True once the partie (or the single deal) is finished and :attr:`result` is set."""
        return self.result is not None

    @property
    def n_actions(self) -> int:
        """Size of the action space for these rules."""
        return self._n + 3

    @property
    def category(self) -> int:
        """Declaration category being decided (0 point, 1 sequence, 2 set); meaningful in
        DECLARE."""
        return self.decl_step >> 1

    def returns(self) -> tuple[int, int]:
        """The final result per player (zero-sum), or ``(0, 0)`` while the game runs."""
        return self.result if self.result is not None else (0, 0)

    def legal_actions(self) -> list[ActionId]:
        """Legal action ids for :attr:`current_player`, ascending; empty when the game is over."""
        p = self.current_player
        if p < 0:
            return []
        phase = self.phase
        if phase == _PLAY:
            hand = self.hands[p]
            if self.trick:
                lead = self.trick[0]
                if lead != JOKER:
                    suited = hand & SUIT_MASKS[lead >> 3]
                    if suited:
                        return cards_of(suited)
            return cards_of(hand)
        if phase == _EXCHANGE:
            lo, _ = self.exchange_limits(p)
            acts = cards_of(self.hands[p])
            if self.n_discarded >= lo:
                acts.append(self._done)
            return acts
        return self._declaration_choices(p)

    def action_name(self, action: ActionId) -> str:
        """Readable name of an action id in the current phase: ``'discard QH'``, ``'play TS'``,
        ``'done'``, ``'declare point'``, ``'pass sequence'``."""
        name = action_name(action, self.rules)
        if action < self._n:
            return ("discard " if self.phase == _EXCHANGE else "play ") + name
        if action == self._done:
            return name
        return f"{name} {combos.CATEGORY_NAMES[self.category]}"

    def deal_score(self, player: int) -> sc.DealScore:
        """Score breakdown of ``player`` in the current deal so far."""
        return sc.breakdown(self.scores[player])

    # ------------------------------------------------------------------ acting

    def apply(self, action: ActionId) -> None:
        """Play ``action`` for :attr:`current_player`.

        Raises :class:`IllegalActionError` (a ``ValueError``) naming the action and the legal ones
        if it is not legal; the state is then unchanged.
        """
        try:
            action = operator.index(action)
        except TypeError:
            self._reject(action)
        if not self.is_legal(action):
            self._reject(action)
        p = self.current_player
        self.deal_moves.append(action)
        if self.record:
            event = {"type": "action", "player": p, "action": action}
            if self.phase == _DECLARE:
                event["category"] = combos.CATEGORY_NAMES[self.decl_step >> 1]
            self.events.append(event)
        if self.phase == _PLAY:
            self._play(p, action)
        elif self.phase == _EXCHANGE:
            self._exchange(p, action)
        else:
            self._decide(p, action)
        if self.phase == _DECLARE:
            self._auto()

    def is_legal(self, action: ActionId) -> bool:
        """Whether ``action`` (an int) is legal for :attr:`current_player` now; cheaper than
        ``action in legal_actions()``."""
        p = self.current_player
        if p < 0 or not 0 <= action < self._n + 3:
            return False
        phase = self.phase
        if action < self._n:
            bit = 1 << action
            if not self.hands[p] & bit:
                return False
            if phase == _PLAY:
                if not self.trick or self.trick[0] == JOKER:
                    return True
                suited = self.hands[p] & SUIT_MASKS[self.trick[0] >> 3]
                return not suited or bool(suited & bit)
            return phase == _EXCHANGE
        if phase == _EXCHANGE:
            return action == self._done and self.n_discarded >= self.exchange_limits(p)[0]
        return phase == _DECLARE and action in self._declaration_choices(p)

    def _reject(self, action: object) -> NoReturn:
        legal = self.legal_actions()
        if self.result is not None:
            raise IllegalActionError(f"action {action!r}: the game is over")
        names = ", ".join(f"{a}={self.action_name(a)}" for a in legal)
        try:
            what = f"{action} ({action_name(action, self.rules)})"  # type: ignore[arg-type]
        except ValueError:
            what = repr(action)
        raise IllegalActionError(
            f"illegal action {what} for player {self.current_player} in {self.phase.name}; "
            f"legal: {names}"
        )

    # ------------------------------------------------------------------ the deal

    def _cut(self) -> int:
        """Cut for deal; the lower card deals (is younger). Returns the first elder."""
        pack = list(self.rules.pack)
        while True:
            a, b = self._random().sample(pack, 2)
            ra = 8 if a == JOKER else rank(a)
            rb = 8 if b == JOKER else rank(b)
            if ra != rb:
                elder = 0 if ra > rb else 1
                self._log(type="cut", cards=[card_str(a), card_str(b)], elder=elder)
                return elder

    def _start_deal(self) -> None:
        rules = self.rules
        self.phase = _EXCHANGE
        if self._preset:
            e_hand, y_hand, talon = self._preset.pop(0)
        else:
            pack = list(rules.pack)
            self._random().shuffle(pack)
            h = rules.hand_size
            e_hand, y_hand, talon = pack[:h], pack[h : 2 * h], pack[2 * h :]
        e, y = self.elder, 1 - self.elder
        self.deal_cards = (tuple(e_hand), tuple(y_hand), tuple(talon))
        self.deal_moves: list[int] = []
        self.hands = [0, 0]
        self.hands[e], self.hands[y] = to_mask(e_hand), to_mask(y_hand)
        self.dealt = list(self.hands)
        self.talon = list(talon)
        self.discards = [0, 0]
        self.seen_talon = [0, 0]
        self.shown = [0, 0]
        self.blanche = [0, 0]
        self.taken = [0, 0]
        self.exchanged = [False, False]
        self.n_discarded = 0
        self.decl_step = 0
        self.declared: list[list[combos.Combo | None]] = [[None, None] for _ in range(3)]
        self.decided = [[False, False] for _ in range(3)]
        self.best: list[list[combos.Combo | None]] = [[None] * 3, [None] * 3]
        self.scores = [[0] * sc.N_SCORE_FIELDS, [0] * sc.N_SCORE_FIELDS]
        self.leader = e
        self.trick: list[int] = []
        self.played = [0, 0]
        self.tricks_won = [0, 0]
        self.voids = [0, 0]
        self.repique: int | None = None
        self.pique_open = True
        self.last_trick: tuple[int, int, int, int] | None = None
        if self.record:
            self._log(
                type="deal",
                deal=self.deal_number,
                elder=e,
                elder_hand=cards_str(e_hand),
                younger_hand=cards_str(y_hand),
                talon=" ".join(card_str(c) for c in talon),
                totals=list(self.totals),
            )
        if rules.carte_blanche:
            for p in (e, y):
                if not self.hands[p] & COURT_MASK:
                    self._score(p, sc.CARTE_BLANCHE, sc.CARTE_BLANCHE_BONUS)
                    self.blanche[p] = self.hands[p]
        if rules.exchange:
            self.current_player = e
        else:  # orbis: the talon stays set aside, unseen, for the whole deal
            self._start_declarations()
        self._auto()

    def exchange_limits(self, p: int) -> tuple[int, int]:
        """Fewest and most cards player ``p`` may exchange now."""
        n_talon = len(self.talon)
        if p == self.elder:
            return 1, min(self.rules.elder_max_exchange, self.rules.elder_part, n_talon)
        hi = self.rules.younger_max_exchange
        hi = n_talon if hi is None else min(hi, n_talon)
        return min(self.rules.younger_min_exchange, hi), hi

    def _exchange(self, p: int, action: int) -> None:
        if action != self._done:
            bit = 1 << action
            self.hands[p] ^= bit
            self.discards[p] |= bit
            self.n_discarded += 1
            if self.n_discarded < self.exchange_limits(p)[1]:
                return
        self._finish_exchange(p)

    def _finish_exchange(self, p: int) -> None:
        k = self.n_discarded
        took, self.talon = self.talon[:k], self.talon[k:]
        taken = to_mask(took)
        self.hands[p] |= taken
        self.taken[p] = k
        self.exchanged[p] = True
        self.n_discarded = 0
        if p == self.elder:
            # Elder may look at the untaken cards of his part: they become known to him.
            self.seen_talon[p] = to_mask(self.talon[: self.rules.elder_part - k])
            self.current_player = 1 - p
            if self.exchange_limits(1 - p)[1] == 0:
                self._finish_exchange(1 - p)
        else:
            self._start_declarations()

    # ------------------------------------------------------------------ declarations

    def _start_declarations(self) -> None:
        self.phase = _DECLARE
        for p in (0, 1):
            for cat in combos.CATEGORIES:
                self.best[p][cat] = combos.best(cat, self.hands[p])
        self.decl_step = 0
        self.current_player = self.elder

    def _declaration_choices(self, p: int) -> list[int]:
        cat = self.decl_step >> 1
        mine = self.best[p][cat]
        if mine is None:
            return [self._pass]
        if p != self.elder:
            theirs = self.declared[cat][self.elder]
            if theirs is not None and mine.key < theirs.key:
                return [self._pass]
        return [self._declare, self._pass]

    def _decide(self, p: int, action: int) -> None:
        cat = self.decl_step >> 1
        self.decided[cat][p] = True
        if action == self._declare:
            c = self.best[p][cat]
            self.declared[cat][p] = c
            self.shown[p] |= c.cards
        self.decl_step += 1
        if self.decl_step & 1:
            self.current_player = 1 - p
            return
        self._resolve_category(cat)
        if self.decl_step < 6:
            self.current_player = self.elder
            return
        self.repique = sc.repique_player(self.scores, self.rules)
        if self.repique is not None:
            self._score(self.repique, sc.REPIQUE, sc.REPIQUE_BONUS)
            self.pique_open = False
        self.phase = _PLAY
        self.current_player = self.leader = self.elder
        self._update_pique_open()

    def _resolve_category(self, cat: int) -> None:
        e, y = self.elder, 1 - self.elder
        verdict = combos.compare(self.declared[cat][e], self.declared[cat][y])
        if verdict == 0:
            return
        w = e if verdict > 0 else y
        won = combos.scoring(cat, self.hands[w])
        for c in won:
            self.shown[w] |= c.cards
        field = (sc.POINT, sc.SEQUENCE, sc.SET)[cat]
        self._score(w, field, sum(c.value for c in won))

    # ------------------------------------------------------------------ play

    def _play(self, p: int, card: int) -> None:
        bit = 1 << card
        self.hands[p] ^= bit
        self.played[p] |= bit
        if not self.trick:
            self.trick = [card]
            self._score(p, sc.LEADS, 1, log=False)
            self.current_player = 1 - p
            return
        lead = self.trick[0]
        leader = self.leader
        if lead != JOKER and (card == JOKER or card >> 3 != lead >> 3):
            self.voids[p] |= 1 << (lead >> 3)
        if lead == JOKER:
            winner = leader
        elif card == JOKER or (card >> 3 == lead >> 3 and card > lead):
            winner = p
        else:
            winner = leader
        self.tricks_won[winner] += 1
        n_tricks = self.tricks_won[0] + self.tricks_won[1]
        last = n_tricks == self.rules.hand_size
        self.last_trick = (leader, lead, card, winner)
        self.trick = []
        if self.record:
            self.events.append(
                {
                    "type": "trick",
                    "number": n_tricks,
                    "leader": leader,
                    "lead": _NAMES[lead],
                    "follow": _NAMES[card],
                    "winner": winner,
                }
            )
        pts = sc.trick_points(self.rules, leader, winner, last)
        if pts:
            self._score(winner, sc.TRICKS, pts, log=False)
        if last:
            self._end_deal()
        else:
            self.leader = self.current_player = winner

    def _update_pique_open(self) -> None:
        if not self.pique_open:
            return
        y = 1 - self.elder
        if any(self.scores[y]):
            self.pique_open = False
            return
        s = self.scores[self.elder]
        if self.phase == _PLAY and sum(s[: sc.TRICKS + 1]) >= sc.THRESHOLD:
            self.pique_open = False
            s[sc.PIQUE] = sc.PIQUE_BONUS
            if self.record:
                self._log(
                    type="score",
                    player=self.elder,
                    category=sc.SCORE_FIELD_NAMES[sc.PIQUE],
                    points=sc.PIQUE_BONUS,
                )

    def _score(self, p: int, field: int, points: int, *, log: bool = True) -> None:
        self.scores[p][field] += points
        if self.record and log:
            self._log(type="score", player=p, category=sc.SCORE_FIELD_NAMES[field], points=points)
        if self.pique_open:
            self._update_pique_open()

    def _end_deal(self) -> None:
        sc.finish_deal(self.scores, (self.tricks_won[0], self.tricks_won[1]), self.rules)
        ds = (sc.breakdown(self.scores[0]), sc.breakdown(self.scores[1]))
        self.deal_scores.append(ds)
        self.totals[0] += ds[0].total
        self.totals[1] += ds[1].total
        if self.record:
            self._log(
                type="deal_end",
                deal=self.deal_number,
                scores=[ds[0].to_dict(), ds[1].to_dict()],
                totals=list(self.totals),
            )
        self.deal_number += 1
        if self.mode == "deal":
            diff = ds[0].total - ds[1].total
            self._finish((diff, -diff))
            return
        if self.deal_number >= self.planned_deals:
            if (
                self.totals[0] == self.totals[1]
                and self.rules.tie_break_deals
                and self.planned_deals == self.rules.deals
            ):
                self.planned_deals += 2
                self._log(type="tie_break", deals=self.planned_deals)
            else:
                self._finish(sc.settle(self.totals, self.rules))
                return
        self.elder = 1 - self.elder
        self._start_deal()

    def _finish(self, result: tuple[int, int]) -> None:
        self.result = result
        self.phase = _OVER
        self.current_player = -1
        self._log(type="result", totals=list(self.totals), result=list(result))

    # ------------------------------------------------------------------ plumbing

    def _auto(self) -> None:
        """Take every decision that has a single legal choice in the declarations."""
        while self.phase == _DECLARE:
            choices = self._declaration_choices(self.current_player)
            if len(choices) > 1:
                return
            if self.record:
                self.events.append(
                    {
                        "type": "action",
                        "player": self.current_player,
                        "action": choices[0],
                        "category": combos.CATEGORY_NAMES[self.decl_step >> 1],
                        "auto": True,
                    }
                )
            self._decide(self.current_player, choices[0])

    def _random(self) -> random.Random:
        """The game's random generator (rebuilt from a clone's saved state on first use)."""
        if self._rng is None:
            self._rng = random.Random()
            self._rng.setstate(self._rng_state)
        return self._rng

    def _log(self, **event: object) -> None:
        if self.record:
            self.events.append(event)

    def clone(self) -> Game:
        """An independent copy of the whole state, event log and random generator included."""
        g = Game.__new__(Game)
        for name in _SCALAR_SLOTS:
            setattr(g, name, getattr(self, name))
        for name in _LIST_SLOTS:
            setattr(g, name, getattr(self, name).copy())
        for name in _NESTED_SLOTS:
            setattr(g, name, [x.copy() for x in getattr(self, name)])
        # The copy's generator is rebuilt from this state only if it shuffles (most clones in a
        # search never reach another deal): creating a Random costs more than the rest of a clone.
        g._rng = None
        g._rng_state = self._rng.getstate() if self._rng is not None else self._rng_state
        return g

    def __deepcopy__(self, memo: dict) -> Game:
        """:meth:`clone`: ``copy.deepcopy`` of a game (or of anything holding one, as OpenSpiel's
        ``child`` copies its state) costs a clone, not a walk through every object it holds."""
        return self.clone()

    def __repr__(self) -> str:
        return (
            f"Game({self.rules.name}, deal {self.deal_number + 1}/{self.planned_deals}, "
            f"{self.phase.name}, to act: {self.current_player}, totals {self.totals})"
        )


_SCALAR_SLOTS = tuple(
    n
    for n in Game.__slots__
    if n not in _LIST_SLOTS and n not in _NESTED_SLOTS and n not in ("_rng", "_rng_state")
)
