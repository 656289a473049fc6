"""Everything a state shows, from one place: observations, the full state, action masks.

:class:`ObservationEncoder` turns a :class:`~piquet_env.game.Game` seen from one player into a
vector of ``encoder.size`` float32 values. It reads only what that player knows (his own hand and
discards, the talon cards he looked at, the cards the opponent showed, public counts and scores, see
:mod:`piquet_env.game.knowledge`), never the opponent's hidden cards or the talon's order. The same
object gives the full-information state (:meth:`ObservationEncoder.state`, for centralized and
asymmetric critics) and the action mask (:meth:`ObservationEncoder.action_mask`): nothing else in
the project builds any of the three.

The layout is declared once, as data: :func:`observation_layout` and :func:`state_layout` list
every field (:class:`FieldSpec`: name, width, description, and for counts their scale and upper
bound) in order, and the encoder writes each field at the place the layout gives it, looked up by
name: no bit position is written anywhere else. The observation has two blocks. The first
``encoder.n_bits`` entries are 0/1 features: nine card planes of ``n_cards`` entries each (card id
``suit * 8 + rank``, clubs 7 first, spades A last, then the joker under ``normand``), flags and
one-hot codes, the declaration records. The rest are scaled counts and points. Every field, with
its index range and meaning, is listed in :attr:`ObservationEncoder.fields`, printed by
:func:`field_table` (``python -m piquet_env.observation``) and tabled in
:mod:`piquet_env.piquet_v0`'s docstring.

"me" is the observing player, "opp" his opponent. The encoder is built once per rules object:
use :func:`encoder_for`.

>>> from piquet_env.game import Game
>>> enc = encoder_for(Game().rules)
>>> g = Game(seed=1)
>>> obs = enc.encode(g, g.current_player)
>>> obs.shape == (enc.size,), obs.dtype.name, int(obs[enc.field("hand")].sum())
(True, 'float32', 12)
>>> [f.name for f in observation_layout(g.rules)][:3]
['hand', 'discards', 'talon_seen']
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from piquet_env.combinations import POINT, SEQUENCE, SET, Combo
from piquet_env.game import scoring as sc
from piquet_env.game.knowledge import opponent_known
from piquet_env.game.state import Game, Phase
from piquet_env.rules import Rules

__all__ = [
    "OBS_VERSION",
    "Field",
    "FieldSpec",
    "ObservationEncoder",
    "encoder_for",
    "field_table",
    "observation_layout",
    "state_layout",
]

OBS_VERSION = 1
"""Version of the observation layout; bump it whenever a field changes (checkpoints record it)."""

Field = tuple[str, int, int, str]
"""One documented field as the encoder lists it: (name, start, stop, description); entries
``start..stop-1``."""


@dataclass(frozen=True)
class FieldSpec:
    """One field of a layout: ``width`` entries named ``name``.

    ``scale == 0`` marks a 0/1 field; otherwise the entries are counts or points divided by
    ``scale``, at most ``high`` after scaling (the Box space's upper bound).
    """

    name: str
    width: int
    description: str
    scale: float = 0.0
    high: float = 1.0


_EXCHANGE, _DECLARE, _PLAY, _OVER = Phase.EXCHANGE, Phase.DECLARE, Phase.PLAY, Phase.OVER
_U8, _U16 = np.dtype(np.uint8), np.dtype("<u2")
_POINT_SCALE = 100.0
"""Points (deal scores, partie totals, point pip values) are divided by this."""

# ------------------------------------------------------------------------------------ layout

_CATEGORIES = ((POINT, "point"), (SEQUENCE, "sequence"), (SET, "set"))
_WHO = ("me", "opp")

_DECL_RECORDS: dict[int, tuple[tuple[str, int, int], ...]] = {
    POINT: (("decided", 1, 0), ("declared", 1, 0), ("length", 8, 1), ("suit", 4, 0)),
    SEQUENCE: (
        ("decided", 1, 0),
        ("declared", 1, 0),
        ("length", 6, 3),
        ("top", 8, 0),
        ("suit", 4, 0),
    ),
    SET: (("decided", 1, 0), ("declared", 1, 0), ("kind", 2, 3), ("rank", 5, 3)),
}
"""One player's declaration record per category: (part, width, value of its first entry).
A one-hot part sets entry ``value - first``: point length 1..8, sequence length 3..8 and top
rank 7..A (rank index 0..7), set size 3 (trio) or 4 (quatorze) and rank 10..A (rank 3..7)."""

_DECL_DESCRIPTIONS = {
    POINT: "decided, declared, length one-hot (1..8), suit one-hot (C D H S)",
    SEQUENCE: "decided, declared, length one-hot (3..8), top card rank one-hot (7..A), "
    "suit one-hot (C D H S)",
    SET: "decided, declared, trio/quatorze, rank one-hot (10 J Q K A)",
}


def _record_parts(category: int) -> dict[str, tuple[int, int]]:
    """Offset within the record and first value of each part of a declaration record."""
    parts, at = {}, 0
    for name, width, first in _DECL_RECORDS[category]:
        parts[name] = (at, first)
        at += width
    return parts


def _record_width(category: int) -> int:
    return sum(w for _, w, _ in _DECL_RECORDS[category])


def observation_layout(rules: Rules) -> tuple[FieldSpec, ...]:
    """The observation's fields in order (planes, flags, declarations, then scaled counts).

    >>> [(f.name, f.width) for f in observation_layout(Game().rules)][9:11]
    [('own_voids', 4), ('opp_voids', 4)]
    """
    n = rules.n_cards
    planes = (
        FieldSpec("hand", n, "own hand"),
        FieldSpec("discards", n, "own discards (this deal)"),
        FieldSpec(
            "talon_seen",
            n,
            "talon cards the player looked at (elder's untaken part), wherever they are now",
        ),
        FieldSpec(
            "opp_known",
            n,
            "cards known to be in the opponent's hand now (declared or scored by him, his carte "
            "blanche before his exchange, or taken by him from talon cards the player saw)",
        ),
        FieldSpec(
            "opp_shown",
            n,
            "every card the opponent has shown this deal (carte blanche, declared and scored "
            "combinations), played since or not",
        ),
        FieldSpec("own_shown", n, "every card the player has shown to the opponent this deal"),
        FieldSpec("own_played", n, "cards the player has played to tricks this deal"),
        FieldSpec("opp_played", n, "cards the opponent has played to tricks this deal"),
        FieldSpec("trick", n, "the card led to the current trick (empty when no card is led)"),
    )
    flags = (
        FieldSpec("own_voids", 4, "suits (C D H S) the player showed void in"),
        FieldSpec("opp_voids", 4, "suits (C D H S) the opponent showed void in"),
        FieldSpec("elder", 1, "1 if the player is elder hand this deal, 0 if younger"),
        FieldSpec("phase", 4, "phase one-hot: exchange, declarations, play, over"),
        FieldSpec(
            "category", 3, "declarations: category being decided, one-hot (point, sequence, set)"
        ),
        FieldSpec("to_act", 1, "1 if the player is the one to act"),
        FieldSpec("leader", 1, "play: 1 if the player leads (or led) the current trick"),
        FieldSpec(
            "pique_possible",
            2,
            "pique still possible for (me, opp): elder only, open until younger scores, elder "
            "reaches 30 in play, or a repique",
        ),
        FieldSpec(
            "repique_possible",
            2,
            "repique not yet ruled out for (me, opp) by the public scores and decisions (0 once "
            "play begins)",
        ),
        FieldSpec(
            "capot_possible",
            2,
            "capot still possible for (me, opp): the other has won no trick this deal and it is "
            "not over",
        ),
        FieldSpec("last_deal", 1, "1 in the last deal of the partie (or of a single-deal game)"),
    )
    declarations = tuple(
        FieldSpec(
            f"decl_{cname}_{who}",
            _record_width(cat),
            f"{cname} declaration of {who}: {_DECL_DESCRIPTIONS[cat]} (decided and not declared "
            f"= passed)",
        )
        for cat, cname in _CATEGORIES
        for who in _WHO
    )

    def scalar(name: str, width: int, scale: float, high: float, desc: str) -> FieldSpec:
        return FieldSpec(name, width, f"{desc} (divided by {scale:g})", scale, high)

    points = ", ".join(sc.SCORE_FIELD_NAMES)
    scalars = (
        scalar(
            "decl_point_value",
            2,
            _POINT_SCALE,
            1.0,
            "pip value of the point declared by (me, opp), 0 if none",
        ),
        scalar("tricks_won", 2, 12, 1.0, "tricks won this deal by (me, opp)"),
        scalar(
            "deal_points_me",
            sc.N_SCORE_FIELDS,
            _POINT_SCALE,
            1.0,
            f"my points this deal by source: {points}",
        ),
        scalar(
            "deal_points_opp",
            sc.N_SCORE_FIELDS,
            _POINT_SCALE,
            1.0,
            "the opponent's points this deal, same sources",
        ),
        scalar("deal_total", 2, _POINT_SCALE, 3.0, "points this deal so far of (me, opp)"),
        scalar(
            "partie_totals",
            2,
            _POINT_SCALE,
            sc.MAX_TOTAL / _POINT_SCALE,
            "partie totals of (me, opp) before this deal",
        ),
        scalar("deal_number", 1, rules.deals, 2.0, "deals played before this one"),
        scalar("deals_left", 1, rules.deals, 1.0, "deals left including this one"),
        scalar("exchanged", 2, 5, 2.0, "cards exchanged this deal by (elder, younger)"),
        scalar(
            "discarding", 1, 5, 2.0, "exchange: cards discarded so far in the exchange under way"
        ),
        scalar("talon_left", 1, rules.talon_size, 1.0, "cards left in the talon"),
    )
    return planes + flags + declarations + scalars


def state_layout(rules: Rules, obs_size: int) -> tuple[FieldSpec, ...]:
    """The full state's fields in order: both observations, then the hidden places.

    Seen from player ``p`` (:meth:`ObservationEncoder.state` with ``player=p``), "player 0" is
    ``p`` and "player 1" his opponent; the plain state is the state seen from player 0.
    """
    n = rules.n_cards
    return (
        FieldSpec("obs_player_0", obs_size, "observation of player 0"),
        FieldSpec("obs_player_1", obs_size, "observation of player 1"),
        FieldSpec("hand_0", n, "hand of player 0"),
        FieldSpec("hand_1", n, "hand of player 1"),
        FieldSpec("discards_0", n, "discards of player 0"),
        FieldSpec("discards_1", n, "discards of player 1"),
        FieldSpec("talon", n, "cards in the talon"),
        FieldSpec(
            "talon_order", n, "position in the talon (1 = top) / talon size", rules.talon_size
        ),
        FieldSpec("current_player", 2, "one-hot of the player to act (zeros when over)"),
    )


# ------------------------------------------------------------------------------ field values

_PLANE_VALUES: dict[str, str] = {
    "hand": "g.hands[p]",
    "discards": "g.discards[p]",
    "talon_seen": "g.seen_talon[p]",
    "opp_known": "opponent_known(g, p)",
    "opp_shown": "g.shown[o] | g.blanche[o]",
    "own_shown": "g.shown[p] | g.blanche[p]",
    "own_played": "g.played[p]",
    "opp_played": "g.played[o]",
    "trick": "(1 << g.trick[0] if g.trick else 0)",
}
"""Each card plane of :func:`observation_layout` as a card mask of game ``g`` seen by player ``p``
(``o`` is his opponent): a Python expression, compiled with the others by :func:`_compile`."""

_SCALAR_VALUES: dict[str, str] = {
    "decl_point_value": "point_value(g.declared[POINT][p]), point_value(g.declared[POINT][o])",
    "tricks_won": "g.tricks_won[p], g.tricks_won[o]",
    "deal_points_me": "*g.scores[p]",
    "deal_points_opp": "*g.scores[o]",
    "deal_total": "sum(g.scores[p]), sum(g.scores[o])",
    "partie_totals": "g.totals[p], g.totals[o]",
    "deal_number": "g.deal_number",
    "deals_left": "deals_left(g)",
    "exchanged": "g.taken[g.elder], g.taken[1 - g.elder]",
    "discarding": "g.n_discarded",
    "talon_left": "len(g.talon)",
}
"""Each scaled field of :func:`observation_layout` as its raw (unscaled, non-negative) counts,
in the same way."""


def _point_value(combo: Combo | None) -> int:
    return combo.height if combo is not None else 0


def _deals_left(g: Game) -> int:
    """Deals left, this one included (a single-deal game counts its own deal)."""
    return (g.result is None) if g.mode == "deal" else g.planned_deals - g.deal_number


def _compile(name: str, expressions: Sequence[str]) -> Callable[[Game, int, int], tuple]:
    """One function ``(g, p, o) -> tuple`` of the given field expressions, in order (compiled
    once per encoder, as :mod:`dataclasses` compiles ``__init__``: the per-field calls of a
    table of functions would cost a quarter of the encoding time)."""
    namespace = {
        "opponent_known": opponent_known,
        "point_value": _point_value,
        "deals_left": _deals_left,
        "POINT": POINT,
    }
    body = ", ".join(expressions)
    exec(f"def {name}(g, p, o):\n    return ({body},)\n", namespace)
    return namespace[name]


def _combo_bits(combo: Combo) -> int:
    """The declaration record of a declared combination, as bits relative to the record's start
    (parts as in ``_DECL_RECORDS``: decided and declared set, then the one-hot parts)."""
    parts = _record_parts(combo.category)

    def one_hot(part: str, value: int) -> int:
        at, first = parts[part]
        return 1 << (at + value - first)

    bits = one_hot("decided", 0) | one_hot("declared", 0)
    if combo.category == POINT:
        return bits | one_hot("length", combo.size) | one_hot("suit", combo.suit)
    if combo.category == SEQUENCE:
        return (
            bits
            | one_hot("length", combo.size)
            | one_hot("top", combo.height)
            | one_hot("suit", combo.suit)
        )
    return bits | one_hot("kind", combo.size) | one_hot("rank", combo.height)


class _Flags:
    """The bit of each flag, relative to the first flag, from the layout's field positions."""

    def __init__(self, start: dict[str, int]) -> None:
        base = start["own_voids"]

        def at(name: str, i: int = 0) -> int:
            return 1 << (start[name] - base + i)

        self.own_voids_shift = start["own_voids"] - base
        self.opp_voids_shift = start["opp_voids"] - base
        self.elder = at("elder")
        self.phase = tuple(at("phase", i) for i in range(4))
        self.category = tuple(at("category", i) for i in range(3))
        self.to_act = at("to_act")
        self.leader = at("leader")
        self.pique = (at("pique_possible", 0), at("pique_possible", 1))
        self.repique = (at("repique_possible", 0), at("repique_possible", 1))
        self.capot = (at("capot_possible", 0), at("capot_possible", 1))
        self.last_deal = at("last_deal")
        self.decl_shift = start["decl_point_me"] - base


# ------------------------------------------------------------------------------------ encoder


class ObservationEncoder:
    """Encodes games under one rules object: observations, action masks and the full state.

    ``size`` is the observation length, ``state_size`` the full-state length, ``n_actions`` the
    action-space size, ``fields`` and ``state_fields`` the documented layouts (see the module
    docstring), ``high`` the observation's upper bounds. Build it with :func:`encoder_for` so
    that it is shared.
    """

    def __init__(self, rules: Rules) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(
                f"rules must be a Rules object (see make_rules), got {type(rules).__name__}"
            )
        self.rules = rules
        n = self.n_cards = rules.n_cards
        self.n_actions = n + 3
        self.layout = observation_layout(rules)
        self.fields: list[Field] = _positions(self.layout)
        self.size = self.fields[-1][2]
        start = {name: a for name, a, _, _ in self.fields}
        self._fields_by_name = {name: (a, b) for name, a, b, _ in self.fields}
        bit_specs = [f for f in self.layout if not f.scale]
        scalar_specs = [f for f in self.layout if f.scale]
        self.n_bits = sum(f.width for f in bit_specs)
        if self.layout[: len(bit_specs)] != tuple(bit_specs):
            raise AssertionError("the layout's 0/1 fields must come before its counts")
        # ---- bit block: planes (first), flags and declaration records (one integer after them)
        plane_names = [f.name for f in self.layout if f.name in _PLANE_VALUES]
        self._planes = _compile("planes", [_PLANE_VALUES[name] for name in plane_names])
        self._plane_starts = tuple(start[name] for name in plane_names)
        self._flags_start = start["own_voids"]
        self._flag = _Flags(start)
        self._n_bytes = (self.n_bits + 7) // 8
        packed = self._plane_starts == tuple(i * n for i in range(9)) and n == 32
        if packed:  # nine 32-bit card planes fill 36 whole bytes: pack them with struct
            self._pack_planes: Callable[..., bytes] | None = struct.Struct("<9I").pack
            self._tail_bytes = self._n_bytes - 36
        else:
            self._pack_planes = None
        decl0 = start["decl_point_me"]
        self._decl_offsets = [
            [start[f"decl_{cname}_{who}"] - decl0 for who in _WHO] for _, cname in _CATEGORIES
        ]
        self._decl_memo: list[tuple | None] = [None, None]
        self._combo_cache: dict[Combo, int] = {}
        # ---- scalar block
        self._scalar_values = _compile("scalars", [_SCALAR_VALUES[f.name] for f in scalar_specs])
        scales = [1.0 / f.scale for f in scalar_specs for _ in range(f.width)]
        highs = [1.0] * self.n_bits + [f.high for f in scalar_specs for _ in range(f.width)]
        self.high = np.asarray(highs, dtype=np.float32)
        """Upper bound of every observation entry (the lower bound is 0), for the Box space."""
        self._scale = np.asarray(scales, dtype=np.float32)
        self._pack = struct.Struct(f"<{len(scales)}H").pack
        # ---- full state
        self.state_layout = state_layout(rules, self.size)
        self.state_fields: list[Field] = _positions(self.state_layout)
        self.state_size = self.state_fields[-1][2]
        s = {name: a for name, a, _, _ in self.state_fields}
        self._state_obs = (s["obs_player_0"], s["obs_player_1"])
        self._state_planes = s["hand_0"]
        self._state_plane_order = tuple(
            s[name] - s["hand_0"]
            for name in ("hand_0", "hand_1", "discards_0", "discards_1", "talon")
        )
        self.seat_permutation = _seat_permutation(self.state_fields, self.state_size)
        """Column indices that turn :meth:`state` seen from player 0 into the state seen from
        player 1 (and back): the two observations, hands and discards trade places and the
        player-to-act flags swap."""
        self._state_order = s["talon_order"]
        self._state_current = s["current_player"]
        self._no_actions = bytes(self.n_actions)

    def __reduce__(self) -> tuple:
        """Pickle (and deep-copy) as the shared encoder of the same rules."""
        return (encoder_for, (self.rules,))

    # ------------------------------------------------------------------ named views

    def field(self, name: str) -> slice:
        """The slice of the observation holding field ``name``."""
        try:
            a, b = self._fields_by_name[name]
        except KeyError:
            raise KeyError(
                f"no observation field {name!r}; fields: {[f[0] for f in self.fields]}"
            ) from None
        return slice(a, b)

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The entries of field ``name`` in observation ``obs`` (a view: writes go through)."""
        return obs[..., self.field(name)]

    # ------------------------------------------------------------------ observation

    def _bits(self, g: Game, p: int) -> int:
        """The 0/1 block as one integer, bit ``i`` for observation entry ``i`` (reference form of
        :meth:`_bit_bytes`)."""
        return int.from_bytes(self._bit_bytes(g, p), "little")

    def _bit_bytes(self, g: Game, p: int) -> bytes:
        """The 0/1 block as ``_n_bytes`` little-endian bytes, bit ``i`` for entry ``i``."""
        o = 1 - p
        planes = self._planes(g, p, o)
        flags = self._flag_bits(g, p, o)
        if self._pack_planes is not None:  # 32 cards: each plane is 4 whole bytes
            return self._pack_planes(*planes) + flags.to_bytes(self._tail_bytes, "little")
        bits = flags << self._flags_start
        for at, plane in zip(self._plane_starts, planes):
            bits |= plane << at
        return bits.to_bytes(self._n_bytes, "little")

    def _flag_bits(self, g: Game, p: int, o: int) -> int:
        """The flags and declaration records as one integer, bit 0 at the first flag."""
        f = self._flag
        phase = g.phase
        to_act = g.current_player == p
        flags = g.voids[p] << f.own_voids_shift | g.voids[o] << f.opp_voids_shift | f.phase[phase]
        if g.elder == p:
            flags |= f.elder
        if to_act:
            flags |= f.to_act
        if phase == _PLAY:
            if to_act != bool(g.trick):
                flags |= f.leader  # derived: Game.clone() did not always copy leader
        elif phase == _DECLARE:
            flags |= f.category[g.decl_step >> 1]
        if phase != _OVER:
            if g.pique_open:
                flags |= f.pique[g.elder != p]
            if phase != _PLAY:
                if _repique_possible(g, p):
                    flags |= f.repique[0]
                if _repique_possible(g, o):
                    flags |= f.repique[1]
            tw = g.tricks_won
            if not tw[o]:
                flags |= f.capot[0]
            if not tw[p]:
                flags |= f.capot[1]
        if g.mode == "deal" or g.deal_number == g.planned_deals - 1:
            flags |= f.last_deal
        if phase != _EXCHANGE:
            flags |= self._decl_bits(g, p) << f.decl_shift
        return flags

    def _decl_bits(self, g: Game, p: int) -> int:
        """The declaration records of both players, relative to the first record.

        Memoized per observing player on the identity of the game's ``declared`` list (replaced at
        every deal and copied by ``clone()``) and the declaration step, which together fix it.
        """
        memo = self._decl_memo[p]
        declared, step = g.declared, g.decl_step
        if memo is not None and memo[0] is declared and memo[1] == step:
            return memo[2]
        o = 1 - p
        decided, offsets, cache = g.decided, self._decl_offsets, self._combo_cache
        bits = 0
        for cat in range(3):
            d = decided[cat]
            for who, q in ((0, p), (1, o)):
                if d[q]:
                    c = declared[cat][q]
                    if c is None:  # passed: "decided" alone
                        bits |= 1 << offsets[cat][who]
                    else:
                        cb = cache.get(c)
                        if cb is None:
                            cb = cache[c] = _combo_bits(c)
                        bits |= cb << offsets[cat][who]
        self._decl_memo[p] = (declared, step, bits)
        return bits

    def _scalars(self, g: Game, p: int) -> bytes:
        """The scalar block's raw (unscaled, non-negative) values, packed as uint16."""
        return self._pack(*self._scalar_values(g, p, 1 - p))

    def encode(self, game: Game, player: int) -> np.ndarray:
        """The observation of ``player`` (0 or 1): a new float32 array of shape ``(size,)``."""
        # Five numpy calls, arguments positional: numpy's per-call overhead, not the data, is the
        # cost here.
        bits = np.unpackbits(
            np.frombuffer(self._bit_bytes(game, player), _U8), None, self.n_bits, "little"
        )
        scalars = np.frombuffer(self._scalars(game, player), _U16) * self._scale
        return np.concatenate((bits, scalars))

    def encode_into(self, game: Game, player: int, out: np.ndarray) -> None:
        """Write the observation of ``player`` into ``out`` (float32, shape ``(size,)``)."""
        nb = self.n_bits
        out[:nb] = np.unpackbits(
            np.frombuffer(self._bit_bytes(game, player), _U8), None, nb, "little"
        )
        np.multiply(np.frombuffer(self._scalars(game, player), _U16), self._scale, out=out[nb:])

    # ------------------------------------------------------------------ action mask

    def action_mask(
        self, game: Game, player: int, legal: Sequence[int] | None = None
    ) -> np.ndarray:
        """int8 mask over the ``n_actions`` ids: 1 for each legal action of ``player``; all zeros
        when ``player`` is not the one to act or the game is over. ``legal`` may pass the game's
        :meth:`~piquet_env.game.Game.legal_actions` when the caller already has them."""
        mask = bytearray(self._no_actions)
        if game.current_player == player:
            for a in game.legal_actions() if legal is None else legal:
                mask[a] = 1
        return np.frombuffer(mask, np.int8)

    def action_mask_into(self, game: Game, player: int, out: np.ndarray) -> None:
        """Write :meth:`action_mask` into ``out`` (any numeric dtype, shape ``(n_actions,)``)."""
        out[:] = 0
        if game.current_player == player:
            out[game.legal_actions()] = 1

    # ------------------------------------------------------------------ full state

    def state(self, game: Game, player: int = 0) -> np.ndarray:
        """The full-information vector (for centralized and asymmetric critics): both players'
        observations, both hands, both discards, the talon and its order, and the player to act
        (see :attr:`state_fields`). With ``player=1`` the two players trade places (his
        observation first, his hand as ``hand_0``...): the state seen from the player the critic
        values; ``state(game)`` is the PettingZoo ``state()``."""
        out = np.zeros(self.state_size, dtype=np.float32)
        self.state_into(game, player, out)
        return out

    def state_into(self, game: Game, player: int, out: np.ndarray) -> None:
        """Write :meth:`state` seen from ``player`` into ``out`` (float32, ``(state_size,)``)."""
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, got {player!r}")
        n, size = self.n_cards, self.size
        o = 1 - player
        a0, a1 = self._state_obs
        self.encode_into(game, player, out[a0 : a0 + size])
        self.encode_into(game, o, out[a1 : a1 + size])
        talon = 0
        for c in game.talon:
            talon |= 1 << c
        bits = 0
        for at, mask in zip(
            self._state_plane_order,
            (game.hands[player], game.hands[o], game.discards[player], game.discards[o], talon),
        ):
            bits |= mask << at
        nb = 5 * n
        raw = np.frombuffer(bits.to_bytes((nb + 7) // 8, "little"), np.uint8)
        start = self._state_planes
        out[start : start + nb] = np.unpackbits(raw, count=nb, bitorder="little")
        order = out[self._state_order : self._state_order + n]
        order[:] = 0.0
        size_t = self.rules.talon_size
        for i, c in enumerate(game.talon):
            order[c] = (i + 1) / size_t
        current = out[self._state_current : self._state_current + 2]
        current[:] = 0.0
        if game.current_player >= 0:
            current[int(game.current_player != player)] = 1.0


def _seat_permutation(fields: Sequence[Field], size: int) -> np.ndarray:
    """See :attr:`ObservationEncoder.seat_permutation`."""
    pos = {name: (a, b) for name, a, b, _ in fields}
    perm = np.arange(size)
    for x, y in (
        ("obs_player_0", "obs_player_1"),
        ("hand_0", "hand_1"),
        ("discards_0", "discards_1"),
    ):
        (a0, b0), (a1, b1) = pos[x], pos[y]
        perm[a0:b0], perm[a1:b1] = np.arange(a1, b1), np.arange(a0, b0)
    a, b = pos["current_player"]
    perm[a:b] = np.arange(b - 1, a - 1, -1)
    perm.flags.writeable = False
    return perm


def _positions(layout: Sequence[FieldSpec]) -> list[Field]:
    """(name, start, stop, description) of each field of ``layout``, contiguous from 0."""
    out, at = [], 0
    for f in layout:
        out.append((f.name, at, at + f.width, f.description))
        at += f.width
    return out


def _repique_possible(g: Game, x: int) -> bool:
    """Whether the public scores and decisions still allow ``x`` a repique (before play).

    Best case for ``x``: every declaration category not yet settled that he can still win (he has
    not passed it) is credited to him with 30 points, the opponent scoring nothing more; the
    repique rule of the rules object (RULES.md section 7) then decides.
    """
    theirs = g.scores[1 - x]
    if g.phase == _EXCHANGE:  # nothing declared yet: only a carte blanche can stand in the way
        return not theirs[sc.CARTE_BLANCHE]
    mine = g.scores[x]
    step = g.decl_step
    current = step >> 1
    credit = [mine[sc.CARTE_BLANCHE], mine[sc.POINT], mine[sc.SEQUENCE], mine[sc.SET]]
    for cat in range(current, 3):
        if not (cat == current and g.decided[cat][x] and g.declared[cat][x] is None):
            credit[cat + 1] += sc.THRESHOLD
    if g.rules.repique_reckoning == "standard":
        return sum(credit) >= sc.THRESHOLD and not (
            theirs[sc.CARTE_BLANCHE] or theirs[sc.POINT] or theirs[sc.SEQUENCE] or theirs[sc.SET]
        )
    running = 0
    for k in range(4):
        running += credit[k]
        if running >= sc.THRESHOLD:
            return not any(theirs[h] for h in sc.DECLARATION_FIELDS[:k])
    return False


@cache
def encoder_for(rules: Rules) -> ObservationEncoder:
    """The shared :class:`ObservationEncoder` of a rules object (built once, then cached)."""
    return ObservationEncoder(rules)


def field_table(rules: Rules | None = None, *, state: bool = False) -> str:
    """The observation (or, with ``state``, the full-state) layout as a text table: index range,
    field name and meaning."""
    from piquet_env.rules import STANDARD

    enc = encoder_for(rules or STANDARD)
    rows = enc.state_fields if state else enc.fields
    return "\n".join(f"{a:>4}-{b - 1:<4} {name:<18} {desc}" for name, a, b, desc in rows)


if __name__ == "__main__":  # pragma: no cover - documentation helper
    print(field_table())
