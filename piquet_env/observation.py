"""What one player knows as a fixed-size float32 vector; the action mask; the full state.

:class:`ObservationEncoder` turns a :class:`~piquet_env.game.Game` seen from one player into a
vector of ``encoder.size`` float32 values. It reads only what that player knows (his own hand and
discards, the talon cards he looked at, the cards the opponent showed, public counts and scores, see
:mod:`piquet_env.game.knowledge`), never the opponent's hidden cards or the talon's order.

The vector has two blocks. The first ``encoder.n_bits`` entries are 0/1 features: nine card planes
of ``n_cards`` entries each (card id ``suit * 8 + rank``, clubs 7 first, spades A last, then the
joker under ``normand``), flags and one-hot codes. The rest are scaled counts and points. Every
field, with its index range and meaning, is listed in :attr:`ObservationEncoder.fields`, printed by
:func:`field_table` (``python -m piquet_env.observation``) and tabled in
:mod:`piquet_env.piquet_v0`'s docstring. :meth:`ObservationEncoder.state` is the
full-information vector for centralized critics (:attr:`ObservationEncoder.state_fields`).

"me" is the observing player, "opp" his opponent. The encoder is built once per rules object:
use :func:`encoder_for`.

>>> from piquet_env.game import Game
>>> enc = encoder_for(Game().rules)
>>> g = Game(seed=1)
>>> obs = enc.encode(g, g.current_player)
>>> obs.shape == (enc.size,), obs.dtype.name, int(obs[:32].sum())
(True, 'float32', 12)
"""

from __future__ import annotations

import struct
from functools import cache

import numpy as np

from piquet_env.combinations import POINT, SEQUENCE, SET, Combo
from piquet_env.game import scoring as sc
from piquet_env.game.knowledge import opponent_known
from piquet_env.game.state import Game, Phase
from piquet_env.rules import Rules

OBS_VERSION = 1
"""Version of the observation layout; bump it whenever a field changes (checkpoints record it)."""

Field = tuple[str, int, int, str]
"""One documented field: (name, start, stop, description); entries ``start..stop-1``."""

_EXCHANGE, _DECLARE, _PLAY, _OVER = Phase.EXCHANGE, Phase.DECLARE, Phase.PLAY, Phase.OVER
_CATEGORY_FIELDS = (sc.POINT, sc.SEQUENCE, sc.SET)
_SCORE_FIELD_NAMES = (
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
_U8, _U16 = np.dtype(np.uint8), np.dtype("<u2")
_POINT_SCALE = 100.0
"""Points (deal scores, partie totals, point pip values) are divided by this."""

# Width of one player's declaration record in each category (see _decl_layout).
_DECL_WIDTHS = {POINT: 2 + 8 + 4, SEQUENCE: 2 + 6 + 8 + 4, SET: 2 + 2 + 5}


class _Layout:
    """Accumulates named fields and their index ranges."""

    def __init__(self) -> None:
        self.fields: list[Field] = []
        self.size = 0

    def add(self, name: str, width: int, description: str) -> int:
        start = self.size
        self.fields.append((name, start, start + width, description))
        self.size += width
        return start


def _combo_bits(combo: Combo) -> int:
    """The declaration record of a declared combination, as bits relative to the record's start.

    Bit 0 "decided" and bit 1 "declared" are set; then point: length one-hot (1..8), suit one-hot;
    sequence: length one-hot (3..8), top rank one-hot (7..A), suit one-hot; set: trio/quatorze,
    rank one-hot (10..A).
    """
    bits = 0b11
    if combo.category == POINT:
        bits |= 1 << (2 + combo.size - 1)
        bits |= 1 << (10 + combo.suit)
    elif combo.category == SEQUENCE:
        bits |= 1 << (2 + combo.size - 3)
        bits |= 1 << (8 + combo.height)
        bits |= 1 << (16 + combo.suit)
    else:
        bits |= 1 << (2 + combo.size - 3)
        bits |= 1 << (4 + combo.height - 3)
    return bits


class ObservationEncoder:
    """Encodes games under one rules object: observations, action masks and the full state.

    ``size`` is the observation length, ``state_size`` the full-state length, ``n_actions`` the
    action-space size, ``fields`` the documented layout (see the module docstring). Build it with
    :func:`encoder_for` so that it is shared.
    """

    def __init__(self, rules: Rules) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(
                f"rules must be a Rules object (see make_rules), got {type(rules).__name__}"
            )
        self.rules = rules
        n = self.n_cards = rules.n_cards
        self.n_actions = n + 3
        lay = _Layout()
        # ---- bit block: card planes
        planes = (
            ("hand", "own hand"),
            ("discards", "own discards (this deal)"),
            (
                "talon_seen",
                "talon cards the player looked at (elder's untaken part), wherever they are now",
            ),
            (
                "opp_known",
                "cards known to be in the opponent's hand now (declared or scored by "
                "him, his carte blanche before his exchange, or taken by him from talon "
                "cards the player saw)",
            ),
            (
                "opp_shown",
                "every card the opponent has shown this deal (carte blanche, declared "
                "and scored combinations), played since or not",
            ),
            ("own_shown", "every card the player has shown to the opponent this deal"),
            ("own_played", "cards the player has played to tricks this deal"),
            ("opp_played", "cards the opponent has played to tricks this deal"),
            ("trick", "the card led to the current trick (empty when no card is led)"),
        )
        for name, desc in planes:
            lay.add(name, n, desc)
        # ---- bit block: flags
        self._flags = lay.add("own_voids", 4, "suits (C D H S) the player showed void in")
        lay.add("opp_voids", 4, "suits (C D H S) the opponent showed void in")
        lay.add("elder", 1, "1 if the player is elder hand this deal, 0 if younger")
        lay.add("phase", 4, "phase one-hot: exchange, declarations, play, over")
        lay.add(
            "category", 3, "declarations: category being decided, one-hot (point, sequence, set)"
        )
        lay.add("to_act", 1, "1 if the player is the one to act")
        lay.add("leader", 1, "play: 1 if the player leads (or led) the current trick")
        lay.add(
            "pique_possible",
            2,
            "pique still possible for (me, opp): elder only, open until "
            "younger scores, elder reaches 30 in play, or a repique",
        )
        lay.add(
            "repique_possible",
            2,
            "repique not yet ruled out for (me, opp) by the public "
            "scores and decisions (0 once play begins)",
        )
        lay.add(
            "capot_possible",
            2,
            "capot still possible for (me, opp): the other has won no "
            "trick this deal and it is not over",
        )
        lay.add("last_deal", 1, "1 in the last deal of the partie (or of a single-deal game)")
        # ---- bit block: declarations
        self._decl: list[list[int]] = [[0, 0], [0, 0], [0, 0]]
        cat_desc = {
            POINT: "decided, declared, length one-hot (1..8), suit one-hot (C D H S)",
            SEQUENCE: "decided, declared, length one-hot (3..8), top card rank one-hot (7..A), "
            "suit one-hot (C D H S)",
            SET: "decided, declared, trio/quatorze, rank one-hot (10 J Q K A)",
        }
        for cat, cname in ((POINT, "point"), (SEQUENCE, "sequence"), (SET, "set")):
            for who, wname in ((0, "me"), (1, "opp")):
                self._decl[cat][who] = lay.add(
                    f"decl_{cname}_{wname}",
                    _DECL_WIDTHS[cat],
                    f"{cname} declaration of {wname}: {cat_desc[cat]} (decided and not declared "
                    f"= passed)",
                )
        self.n_bits = lay.size
        self._n_bytes = (self.n_bits + 7) // 8
        self._decl_start = self._decl[0][0]
        self._decl_rel = self._decl_start - self._flags
        if n == 32:  # nine 32-bit card planes fill 36 whole bytes: pack them with struct
            self._pack_planes = struct.Struct("<9I").pack
            self._tail_bytes = self._n_bytes - 36
        else:
            self._pack_planes = None
        self._decl_offsets = [[a - self._decl_start for a in pair] for pair in self._decl]
        self._decl_memo: list[tuple | None] = [None, None]
        # ---- scalar block
        scales: list[float] = []
        highs: list[float] = [1.0] * self.n_bits

        def scalar(name: str, width: int, scale: float, high: float, desc: str) -> None:
            lay.add(name, width, f"{desc} (divided by {scale:g})")
            scales.extend([1.0 / scale] * width)
            highs.extend([high] * width)

        scalar(
            "decl_point_value",
            2,
            _POINT_SCALE,
            1.0,
            "pip value of the point declared by (me, opp), 0 if none",
        )
        scalar("tricks_won", 2, 12, 1.0, "tricks won this deal by (me, opp)")
        scalar(
            "deal_points_me",
            sc.N_SCORE_FIELDS,
            _POINT_SCALE,
            1.0,
            "my points this deal by source: " + ", ".join(_SCORE_FIELD_NAMES),
        )
        scalar(
            "deal_points_opp",
            sc.N_SCORE_FIELDS,
            _POINT_SCALE,
            1.0,
            "the opponent's points this deal, same sources",
        )
        scalar("deal_total", 2, _POINT_SCALE, 3.0, "points this deal so far of (me, opp)")
        scalar(
            "partie_totals", 2, _POINT_SCALE, 50.0, "partie totals of (me, opp) before this deal"
        )
        scalar("deal_number", 1, rules.deals, 2.0, "deals played before this one")
        scalar("deals_left", 1, rules.deals, 1.0, "deals left including this one")
        scalar("exchanged", 2, 5, 2.0, "cards exchanged this deal by (elder, younger)")
        scalar(
            "discarding", 1, 5, 2.0, "exchange: cards discarded so far in the exchange under way"
        )
        scalar("talon_left", 1, rules.talon_size, 1.0, "cards left in the talon")
        self.high = np.asarray(highs, dtype=np.float32)
        """Upper bound of every observation entry (the lower bound is 0), for the Box space."""
        self._scale = np.asarray(scales, dtype=np.float32)
        self._pack = struct.Struct(f"<{len(scales)}H").pack
        self.size = lay.size
        self.fields: list[Field] = lay.fields
        self._fields_by_name = {name: (a, b) for name, a, b, _ in lay.fields}
        # ---- full state: both observations, then the hidden places
        self.state_fields: list[Field] = [
            ("obs_player_0", 0, self.size, "observation of player 0"),
            ("obs_player_1", self.size, 2 * self.size, "observation of player 1"),
        ]
        start = 2 * self.size
        for name, desc in (
            ("hand_0", "hand of player 0"),
            ("hand_1", "hand of player 1"),
            ("discards_0", "discards of player 0"),
            ("discards_1", "discards of player 1"),
            ("talon", "cards in the talon"),
            ("talon_order", "position in the talon (1 = top) / talon size"),
        ):
            self.state_fields.append((name, start, start + n, desc))
            start += n
        self.state_fields.append(
            ("current_player", start, start + 2, "one-hot of the player to act (zeros when over)")
        )
        self.state_size = start + 2
        self._combo_cache: dict[Combo, int] = {}

    def __reduce__(self) -> tuple:
        """Pickle (and deep-copy) as the shared encoder of the same rules."""
        return (encoder_for, (self.rules,))

    # ------------------------------------------------------------------ observation

    def field(self, name: str) -> slice:
        """The slice of the observation holding field ``name``."""
        try:
            a, b = self._fields_by_name[name]
        except KeyError:
            raise KeyError(
                f"no observation field {name!r}; fields: {[f[0] for f in self.fields]}"
            ) from None
        return slice(a, b)

    def _bits(self, g: Game, p: int) -> int:
        """The 0/1 block as one integer, bit ``i`` for observation entry ``i`` (reference form of
        :meth:`_bit_bytes`)."""
        return int.from_bytes(self._bit_bytes(g, p), "little")

    def _bit_bytes(self, g: Game, p: int) -> bytes:
        """The 0/1 block as ``_n_bytes`` little-endian bytes, bit ``i`` for entry ``i``."""
        o = 1 - p
        trick = g.trick
        planes = (
            g.hands[p],
            g.discards[p],
            g.seen_talon[p],
            opponent_known(g, p),
            g.shown[o] | g.blanche[o],
            g.shown[p] | g.blanche[p],
            g.played[p],
            g.played[o],
            1 << trick[0] if trick else 0,
        )
        # Flags, relative to the flag block (see __init__ for the order).
        phase = g.phase
        to_act = g.current_player == p
        flags = g.voids[p] | g.voids[o] << 4 | 1 << (9 + phase)
        if g.elder == p:
            flags |= 1 << 8
        if to_act:
            flags |= 1 << 16
        if phase == _PLAY:
            if to_act != bool(trick):
                flags |= 1 << 17  # leader (derived: Game.clone() did not always copy leader)
        elif phase == _DECLARE:
            flags |= 1 << (13 + (g.decl_step >> 1))
        if phase != _OVER:
            if g.pique_open:
                flags |= 1 << (18 + (g.elder != p))
            if phase != _PLAY:
                if _repique_possible(g, p):
                    flags |= 1 << 20
                if _repique_possible(g, o):
                    flags |= 1 << 21
            tw = g.tricks_won
            if not tw[o]:
                flags |= 1 << 22
            if not tw[p]:
                flags |= 1 << 23
        if g.mode == "deal" or g.deal_number == g.planned_deals - 1:
            flags |= 1 << 24
        if phase != _EXCHANGE:
            flags |= self._decl_bits(g, p) << self._decl_rel
        if self._pack_planes is not None:  # 32 cards: each plane is 4 whole bytes
            return self._pack_planes(*planes) + flags.to_bytes(self._tail_bytes, "little")
        n = self.n_cards
        bits = flags << self._flags
        for i, plane in enumerate(planes):
            bits |= plane << (i * n)
        return bits.to_bytes(self._n_bytes, "little")

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
                    if c is None:
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
        o = 1 - p
        e = g.elder
        pt = g.declared[POINT]
        sp, so = g.scores[p], g.scores[o]
        cp, co = pt[p], pt[o]
        # deals left, this one included (a single-deal game counts its own deal)
        left = (g.result is None) if g.mode == "deal" else g.planned_deals - g.deal_number
        return self._pack(
            cp.height if cp is not None else 0,
            co.height if co is not None else 0,
            g.tricks_won[p],
            g.tricks_won[o],
            *sp,
            *so,
            sum(sp),
            sum(so),
            g.totals[p],
            g.totals[o],
            g.deal_number,
            left,
            g.taken[e],
            g.taken[1 - e],
            g.n_discarded,
            len(g.talon),
        )

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

    def action_mask(self, game: Game, player: int) -> np.ndarray:
        """int8 mask over the ``n_actions`` ids: 1 for each legal action of ``player``; all zeros
        when ``player`` is not the one to act or the game is over."""
        mask = np.zeros(self.n_actions, dtype=np.int8)
        if game.current_player == player:
            mask[game.legal_actions()] = 1
        return mask

    # ------------------------------------------------------------------ full state

    def state(self, game: Game) -> np.ndarray:
        """The full-information vector (for centralized critics): both players' observations,
        both hands, both discards, the talon and its order, and the player to act (see
        :attr:`state_fields`)."""
        n = self.n_cards
        out = np.zeros(self.state_size, dtype=np.float32)
        self.encode_into(game, 0, out[: self.size])
        self.encode_into(game, 1, out[self.size : 2 * self.size])
        start = 2 * self.size
        bits = (
            game.hands[0]
            | game.hands[1] << n
            | game.discards[0] << 2 * n
            | game.discards[1] << 3 * n
        )
        for c in game.talon:
            bits |= 1 << (4 * n + c)
        nb = 5 * n
        raw = np.frombuffer(bits.to_bytes((nb + 7) // 8, "little"), np.uint8)
        out[start : start + nb] = np.unpackbits(raw, count=nb, bitorder="little")
        order = start + nb
        size = self.rules.talon_size
        for i, c in enumerate(game.talon):
            out[order + c] = (i + 1) / size
        if game.current_player >= 0:
            out[order + n + game.current_player] = 1.0
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
