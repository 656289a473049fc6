"""Observations, action masks and full states of a whole batch, identical to
:mod:`piquet_env.observation`.

:class:`BatchEncoder` reads the field layout (names and index ranges) from
``encoder_for(rules).fields`` and fills each field for every game at once: the 0/1 block is
assembled as ``uint64`` words (card planes are bitmasks already) and expanded with
``np.unpackbits``; the scalar block is the raw counts times the same float32 scale factors.
The differential test (``tests/test_vector_game.py``, ``python -m piquet_env.testing.difftest``)
checks every entry against :meth:`~piquet_env.observation.ObservationEncoder.encode`.
"""

from __future__ import annotations

import numpy as np

from piquet_env.actions import n_actions
from piquet_env.cards import JOKER
from piquet_env.game import scoring as sc
from piquet_env.observation import encoder_for
from piquet_env.rules import Rules
from piquet_env.vector.state import DECLARE, EXCHANGE, OVER, PLAY, BatchState

U64 = np.uint64
_DECL = list(sc.DECLARATION_FIELDS)
_PLANES = (
    "hand",
    "discards",
    "talon_seen",
    "opp_known",
    "opp_shown",
    "own_shown",
    "own_played",
    "opp_played",
    "trick",
)
_FLAGS = (
    "own_voids",
    "opp_voids",
    "elder",
    "phase",
    "category",
    "to_act",
    "leader",
    "pique_possible",
    "repique_possible",
    "capot_possible",
    "last_deal",
)
_RECORDS = (
    "decl_point_me",
    "decl_point_opp",
    "decl_sequence_me",
    "decl_sequence_opp",
    "decl_set_me",
    "decl_set_opp",
)


class _Words:
    """Bit fields packed into ``uint64`` words, expanded to 0/1 bytes."""

    def __init__(self, n_bits: int) -> None:
        self.n_bits = n_bits
        self.n_words = (n_bits + 63) // 64

    def new(self, k: int) -> np.ndarray:
        """Zeroed words for ``k`` games, ``(n_words, k)``."""
        return np.zeros((self.n_words, k), dtype=U64)

    @staticmethod
    def put(words: np.ndarray, pos: int, width: int, value: np.ndarray) -> None:
        """OR ``value`` (``uint64``, ``width`` bits) in at bit ``pos``."""
        w, off = divmod(pos, 64)
        words[w] |= value << U64(off)
        if off + width > 64:
            words[w + 1] |= value >> U64(64 - off)

    def unpack(self, words: np.ndarray) -> np.ndarray:
        """The 0/1 bytes ``(k, n_bits)`` of the packed words ``(n_words, k)``."""
        raw = np.ascontiguousarray(words.T).view(np.uint8)
        return np.unpackbits(raw, axis=1, count=self.n_bits, bitorder="little")


class _View:
    """The games ``g`` of a state (all when ``None``) seen from players ``seat``: per-game
    arrays by :meth:`get`, per-player ones flat by :meth:`flat` and indexed with ``pp`` (the
    seat) or ``oo`` (his opponent)."""

    def __init__(self, s: BatchState, g: np.ndarray | None, seat: np.ndarray) -> None:
        self.s, self.g = s, g
        self.k = seat.shape[0]
        self.ar = np.arange(self.k)
        self.p = seat.astype(np.int64)
        self.o = 1 - self.p
        self.pp = self.ar * 2 + self.p
        self.oo = self.pp ^ 1

    def get(self, name: str) -> np.ndarray:
        """The per-game array ``name`` of the viewed games."""
        a = getattr(self.s, name)
        return a if self.g is None else a[self.g]

    def flat(self, name: str) -> np.ndarray:
        """The per-player array ``name`` of the viewed games, flat (index with ``pp``/``oo``)."""
        return self.get(name).reshape(-1)


class BatchEncoder:
    """Batched :class:`~piquet_env.observation.ObservationEncoder` for one rules object and
    game mode (``"partie"`` or ``"deal"``: the ``last_deal`` and ``deals_left`` fields
    depend on it)."""

    def __init__(self, rules: Rules, mode: str = "partie") -> None:
        self.rules = rules
        self.mode = mode
        enc = encoder_for(rules)
        self.size = enc.size
        self.n_actions = n_actions(rules)
        self.n_cards = rules.n_cards
        self.high = enc.high
        """Upper bound of every observation entry (the encoder's, for the ``Box`` space)."""
        pos = {name: (a, b) for name, a, b, _ in enc.fields}
        self._pos = pos
        scales = {f.name: f.scale for f in enc.layout if f.scale}  # the layout's, never a copy
        self.n_bits = min(pos[name][0] for name in scales)  # the 0/1 block, then the scalars
        self._flag0 = pos["own_voids"][0]
        self._flag = {name: pos[name][0] - self._flag0 for name in _FLAGS}
        self._flag_width = pos["last_deal"][1] - self._flag0
        if self._flag_width > 64 or sorted(self._flag.values())[0] != 0:
            raise RuntimeError("observation flags are no longer one contiguous block")
        self._bits = _Words(self.n_bits)
        self.n_words = self._bits.n_words
        """``uint64`` words of the packed 0/1 block (:meth:`observe_packed`)."""
        scale = np.zeros(self.size - self.n_bits, dtype=np.float32)
        self._scalar = {}
        for name, (a, b) in pos.items():
            if a >= self.n_bits:
                self._scalar[name] = (a - self.n_bits, b - self.n_bits)
                scale[a - self.n_bits : b - self.n_bits] = np.float32(1.0 / scales[name])
        self._scale = scale
        sf = {name: (a, b) for name, a, b, _ in enc.state_fields}
        self.state_size = max(b for a, b in sf.values())
        self.seat_permutation = enc.seat_permutation
        """Column indices that turn the state seen from player 0 into player 1's (see
        :attr:`~piquet_env.observation.ObservationEncoder.seat_permutation`)."""
        self._state_planes = sf["hand_0"][0]
        self._state_order = sf["talon_order"][0]
        self._state_current = sf["current_player"][0]
        self._state_bits = _Words(5 * self.n_cards)
        self._talon_rank = (np.arange(rules.talon_size) + 1) / rules.talon_size

    # ------------------------------------------------------------------ observation

    def observe(
        self, s: BatchState, seat: np.ndarray, out: np.ndarray, g: np.ndarray | None = None
    ) -> np.ndarray:
        """Write the observation of player ``seat`` (one per game) of games ``g`` (all when
        ``None``) into ``out`` ``(k, size)`` float32, and return it."""
        words, raw = self.observe_packed(s, seat, g)
        return self.unpack(words, raw, out)

    def unpack(self, words: np.ndarray, raw: np.ndarray, out: np.ndarray) -> np.ndarray:
        """The observations ``(k, size)`` float32 (into ``out``) of :meth:`observe_packed`'s
        packed form: ``words`` ``(n_words, k)`` and the raw scalars ``raw`` ``(k, n_scalars)``."""
        nb = self.n_bits
        out[:, :nb] = self._bits.unpack(words)
        np.multiply(raw, self._scale, out=out[:, nb:])
        return out

    def observe_packed(
        self, s: BatchState, seat: np.ndarray, g: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The observations of :meth:`observe`, packed: the 0/1 block as ``uint64`` words
        ``(n_words, k)`` and the scalar block unscaled ``(k, n_scalars)`` float32 (small
        non-negative integers); :meth:`unpack` turns them into the observations."""
        v = _View(s, g, seat)
        words = self._bits.new(v.k)
        put, pos, n = self._bits.put, self._pos, self.n_cards
        hands, shown, blanche, seen = (
            v.flat("hands"),
            v.flat("shown"),
            v.flat("blanche"),
            v.flat("seen_talon"),
        )
        played, pp, oo = v.flat("played"), v.pp, v.oo
        seen_p, blanche_o, shown_o = seen[pp], blanche[oo], shown[oo]
        exchanged_o = v.flat("exchanged")[oo]
        known = shown_o | seen_p | np.where(exchanged_o, U64(0), blanche_o)
        lead = v.get("lead")
        trick = np.where(lead >= 0, U64(1) << lead.astype(np.int64).clip(0).astype(U64), U64(0))
        planes = (
            hands[pp],
            v.flat("discards")[pp],
            seen_p,
            hands[oo] & known,
            shown_o | blanche_o,
            shown[pp] | blanche[pp],
            played[pp],
            played[oo],
            trick,
        )
        for name, plane in zip(_PLANES, planes):
            put(words, pos[name][0], n, plane)
        put(words, self._flag0, self._flag_width, self._flags(s, v, lead))
        rec = v.get("record").reshape(v.k, 6)
        ar6 = v.ar * 6
        for i, name in enumerate(_RECORDS):
            cat, who = divmod(i, 2)
            col = ar6 + 2 * cat + (v.o if who else v.p)
            put(words, pos[name][0], 20, rec.reshape(-1)[col].astype(U64))
        return words, self._scalars(v)

    def _flags(self, s: BatchState, v: _View, lead: np.ndarray) -> np.ndarray:
        f = self._flag
        p, pp, oo = v.p, v.pp, v.oo
        phase, elder = v.get("phase"), v.get("elder")
        voids = v.flat("voids")
        flags = (voids[pp].astype(U64) << U64(f["own_voids"])) | (
            voids[oo].astype(U64) << U64(f["opp_voids"])
        )
        flags |= (elder == p).astype(U64) << U64(f["elder"])
        flags |= U64(1) << (phase.astype(U64) + U64(f["phase"]))
        declaring = phase == DECLARE
        cat = (v.get("decl_step") >> 1).astype(U64)
        flags |= np.where(declaring, U64(1) << (cat + U64(f["category"])), U64(0))
        to_act = v.get("current") == p
        flags |= to_act.astype(U64) << U64(f["to_act"])
        leader = (phase == PLAY) & (to_act != (lead >= 0))
        flags |= leader.astype(U64) << U64(f["leader"])
        live = phase != OVER
        pique = live & v.get("pique_open")
        flags |= np.where(
            pique, U64(1) << ((elder != p).astype(U64) + U64(f["pique_possible"])), U64(0)
        )
        before = np.flatnonzero(phase < PLAY)
        if before.size:
            gb = before if v.g is None else v.g[before]
            rp = [self._repique_possible(s, gb, x) for x in (0, 1)]
            pb = p[before]
            me = np.where(pb == 0, rp[0], rp[1]).astype(U64)
            them = np.where(pb == 0, rp[1], rp[0]).astype(U64)
            flags[before] |= (me << U64(f["repique_possible"])) | (
                them << U64(f["repique_possible"] + 1)
            )
        tw = v.flat("tricks_won")
        flags |= (live & (tw[oo] == 0)).astype(U64) << U64(f["capot_possible"])
        flags |= (live & (tw[pp] == 0)).astype(U64) << U64(f["capot_possible"] + 1)
        if self.mode == "deal":
            flags |= U64(1) << U64(f["last_deal"])
        else:
            last = v.get("deal_number") == v.get("planned") - 1
            flags |= last.astype(U64) << U64(f["last_deal"])
        return flags

    def _repique_possible(self, s: BatchState, g: np.ndarray, x: int) -> np.ndarray:
        """As ``piquet_env.observation``'s rule, in games ``g`` (exchanging or declaring): may
        ``x`` still make a repique, crediting him 30 in every category not yet settled that he
        has not passed."""
        scores = s.scores[g]
        mine = scores[:, x][:, _DECL].astype(np.int32)
        theirs = scores[:, 1 - x][:, _DECL]
        current = (s.decl_step[g] >> 1).astype(np.int64)
        passed_now = s.record.reshape(-1)[g * 6 + current.clip(0, 2) * 2 + x] == 1
        credit = mine
        for cat in range(3):
            open_ = (cat > current) | ((cat == current) & ~passed_now)
            credit[:, cat + 1] += np.where(open_, sc.THRESHOLD, 0)
        if self.rules.repique_reckoning == "standard":
            ok = (credit.sum(axis=1) >= sc.THRESHOLD) & ~theirs.any(axis=1)
        else:
            running = np.cumsum(credit, axis=1)
            reached = running >= sc.THRESHOLD
            first = np.argmax(reached, axis=1)
            earlier = np.cumsum(theirs != 0, axis=1)
            before = np.where(first > 0, earlier[np.arange(len(first)), first - 1], 0)
            ok = reached.any(axis=1) & (before == 0)
        return np.where(s.phase[g] == EXCHANGE, theirs[:, 0] == 0, ok)

    def _scalars(self, v: _View) -> np.ndarray:
        raw = np.empty((v.k, self.size - self.n_bits), dtype=np.float32)
        pos = self._scalar
        pp, oo = v.pp, v.oo

        def put(name: str, *cols: np.ndarray) -> None:
            a = pos[name][0]
            for i, c in enumerate(cols):
                raw[:, a + i] = c

        ph, tw, points, totals = (
            v.flat("point_height"),
            v.flat("tricks_won"),
            v.flat("deal_points"),
            v.flat("totals"),
        )
        put("decl_point_value", ph[pp], ph[oo])
        put("tricks_won", tw[pp], tw[oo])
        scores = v.get("scores").reshape(-1, sc.N_SCORE_FIELDS)
        a = pos["deal_points_me"][0]
        raw[:, a : a + sc.N_SCORE_FIELDS] = np.take(scores, pp, axis=0)
        a = pos["deal_points_opp"][0]
        raw[:, a : a + sc.N_SCORE_FIELDS] = np.take(scores, oo, axis=0)
        put("deal_total", points[pp], points[oo])
        put("partie_totals", totals[pp], totals[oo])
        dn = v.get("deal_number")
        put("deal_number", dn)
        if self.mode == "deal":
            put("deals_left", ~v.get("over"))
        else:
            put("deals_left", v.get("planned") - dn)
        taken = v.flat("taken")
        ee = v.ar * 2 + v.get("elder")
        put("exchanged", taken[ee], taken[ee ^ 1])
        put("discarding", v.get("n_discarded"))
        put("talon_left", self.rules.talon_size - v.get("talon_pos"))
        return raw

    # ------------------------------------------------------------------ mask and state

    def legal_bits(
        self,
        s: BatchState,
        can_declare: np.ndarray,
        exchange_min: np.ndarray,
    ) -> np.ndarray:
        """The legal actions of the player to act in every game as a ``uint64`` bitmask (bit
        ``a`` for action ``a``; 0 when over). ``can_declare`` and ``exchange_min`` hold, for
        every game, whether declaring is legal and the fewest cards to exchange."""
        n = self.n_cards
        ar = np.arange(s.n)
        p = s.current.astype(np.int64).clip(0)
        hand = s.hands[ar, p]
        lead = s.lead.astype(np.int64)
        suit = U64(0xFF) << ((lead.clip(0) >> 3).astype(U64) * U64(8))
        suited = hand & suit
        if self.rules.joker:
            suited = np.where(lead == JOKER, U64(0), suited)
        follow = (lead >= 0) & (suited != 0)
        play = np.where(follow, suited, hand)
        done = (s.n_discarded >= exchange_min).astype(U64) << U64(n)
        declare = (U64(1) << U64(n + 2)) | (can_declare.astype(U64) << U64(n + 1))
        phase = s.phase
        return np.where(
            phase == PLAY,
            play,
            np.where(phase == EXCHANGE, hand | done, np.where(phase == DECLARE, declare, U64(0))),
        )

    def mask_from_bits(self, bits: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Expand legal-action bitmasks into a bool mask ``out`` ``(k, n_actions)``."""
        raw = np.unpackbits(
            bits.view(np.uint8).reshape(-1, 8), axis=1, count=self.n_actions, bitorder="little"
        )
        out[...] = raw.view(bool)
        return out

    def state(self, s: BatchState, out: np.ndarray) -> np.ndarray:
        """Write the full-information state of every game into ``out`` ``(N, state_size)``:
        both observations, both hands and discards, the talon, its order and the player to act
        (as :meth:`~piquet_env.observation.ObservationEncoder.state`)."""
        size, n = self.size, self.n_cards
        k = s.n
        self.observe(s, np.zeros(k, np.int8), out[:, :size])
        self.observe(s, np.ones(k, np.int8), out[:, size : 2 * size])
        cols = np.arange(self.rules.talon_size)
        remaining = cols[None, :] >= s.talon_pos[:, None]
        talon_cards = np.where(remaining, s.talon, -1).astype(np.int64)
        talon = np.bitwise_or.reduce(
            np.where(talon_cards >= 0, U64(1) << talon_cards.clip(0).astype(U64), U64(0)), axis=1
        )
        words = self._state_bits.new(k)
        for i, plane in enumerate(
            (s.hands[:, 0], s.hands[:, 1], s.discards[:, 0], s.discards[:, 1], talon)
        ):
            self._state_bits.put(words, i * n, n, plane)
        a = self._state_planes
        out[:, a : a + 5 * n] = self._state_bits.unpack(words)
        order = out[:, self._state_order : self._state_order + n]
        order[...] = 0
        rank = cols[None, :] - s.talon_pos[:, None].astype(np.int64)
        rows = np.nonzero(remaining)
        order[rows[0], talon_cards[rows]] = self._talon_rank[rank[rows]].astype(np.float32)
        cur = out[:, self._state_current : self._state_current + 2]
        cur[...] = 0
        live = s.current >= 0
        cur[np.flatnonzero(live), s.current[live].astype(np.int64)] = 1.0
        return out
