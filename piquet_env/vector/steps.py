"""The rules as whole-batch state transitions: deal, exchange, declarations, tricks, deal end.

:class:`Transitions` applies one decision in each game of an index array ``g`` (all in the same
phase), mutating a :class:`~piquet_env.vector.state.BatchState` exactly as
:meth:`piquet_env.game.Game.apply` mutates one game, including the decisions it takes by itself
(a declaration with a single legal choice, the exchange's end at its maximum, the next deal).
What happened that the caller must report (deals ended, games ended) goes into a :class:`Events`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from piquet_env.cards import JOKER
from piquet_env.game import scoring as sc
from piquet_env.rules import Rules
from piquet_env.vector import scoring as vsc
from piquet_env.vector.state import DECLARE, EXCHANGE, NO_CARD, OVER, PLAY, BatchState
from piquet_env.vector.tables import COURTS, U64, all_combos

ONE = U64(1)
_SCORE_FIELD = (sc.POINT, sc.SEQUENCE, sc.SET)


class Events:
    """What one batch step produced: games whose deal ended (with both players' final deal score
    fields) and games whose episode ended. What anyone is paid for them is not the rules' business
    (:class:`piquet_env.rewards.BatchRewards`)."""

    def __init__(self) -> None:
        self.deal_games: list[np.ndarray] = []
        self.deal_scores: list[np.ndarray] = []
        self.deal_numbers: list[np.ndarray] = []
        self.ended: list[np.ndarray] = []


def mask_of(cards: np.ndarray) -> np.ndarray:
    """Bitmask of each row of card ids ``(k, m)`` (negative ids are ignored)."""
    bits = np.where(cards >= 0, ONE << cards.astype(np.int64).clip(0).astype(U64), U64(0))
    return np.bitwise_or.reduce(bits, axis=1)


class Transitions:
    """The rules of one :class:`~piquet_env.rules.Rules` object over a batch.

    ``deal_source(g)`` returns the shuffled packs ``(len(g), pack_size)`` for the deals starting in
    games ``g``; ``mode`` is ``"partie"`` or ``"deal"``.
    """

    def __init__(
        self,
        rules: Rules,
        mode: str,
        deal_source: Callable[[np.ndarray], np.ndarray],
    ) -> None:
        self.rules = rules
        self.mode = mode
        self.deal_source = deal_source
        self.n = rules.n_cards
        self.done, self.declare, self.pass_ = self.n, self.n + 1, self.n + 2
        self.talon_size = rules.talon_size
        ymax = rules.younger_max_exchange
        self.younger_max = 99 if ymax is None else ymax
        self.elder_max = min(rules.elder_max_exchange, rules.elder_part)

    # ------------------------------------------------------------------ deal

    def start_deal(self, s: BatchState, g: np.ndarray, ev: Events) -> None:
        """Deal the next deal in games ``g`` (``elder`` and ``deal_number`` already set)."""
        if not g.size:
            return
        packs = self.deal_source(g)
        e = s.elder[g].astype(np.int64)
        y = 1 - e
        s.phase[g] = EXCHANGE
        h = self.rules.hand_size
        s.hands[g, e] = mask_of(packs[:, :h])
        s.hands[g, y] = mask_of(packs[:, h : 2 * h])
        s.talon[g] = packs[:, 2 * h :]
        s.dealt[g] = s.hands[g]
        for name in (
            "discards",
            "seen_talon",
            "shown",
            "blanche",
            "taken",
            "exchanged",
            "played",
            "tricks_won",
            "voids",
            "point_height",
            "scores",
            "deal_points",
            "best_key",
            "best_cards",
            "won_value",
            "won_cards",
            "best_record",
            "declared_key",
            "record",
        ):
            getattr(s, name)[g] = 0
        s.n_discarded[g] = 0
        s.talon_pos[g] = 0
        s.decl_step[g] = 0
        s.leader[g] = e
        s.lead[g] = NO_CARD
        s.repique[g] = NO_CARD
        s.pique_open[g] = True
        if self.rules.carte_blanche:
            for p in (e, y):
                hand = s.hands[g, p]
                blank = (hand & COURTS) == 0
                gb, pb = g[blank], p[blank]
                s.scores[gb, pb, sc.CARTE_BLANCHE] += sc.CARTE_BLANCHE_BONUS
                s.deal_points[gb, pb] += sc.CARTE_BLANCHE_BONUS
                s.blanche[gb, pb] = hand[blank]
                vsc.update_pique(s, gb)
        if self.rules.exchange:
            s.current[g] = e
        else:
            self.start_declarations(s, g)

    # ------------------------------------------------------------------ exchange

    def exchange_max(self, s: BatchState, g: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Most cards player ``p`` may exchange now in games ``g``."""
        left = self.talon_size - s.talon_pos[g]
        cap = np.where(p == s.elder[g], self.elder_max, self.younger_max)
        return np.minimum(cap, left)

    def exchange_min(self, s: BatchState, g: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Fewest cards player ``p`` must exchange in games ``g``."""
        hi = self.exchange_max(s, g, p)
        return np.where(p == s.elder[g], 1, np.minimum(self.rules.younger_min_exchange, hi))

    def exchange(self, s: BatchState, g: np.ndarray, a: np.ndarray, ev: Events) -> None:
        """Discard a card or finish exchanging, in games ``g`` (all in the exchange)."""
        p = s.current[g].astype(np.int64)
        card = a < self.n
        gd, pd = g[card], p[card]
        bit = ONE << a[card].astype(U64)
        s.hands[gd, pd] ^= bit
        s.discards[gd, pd] |= bit
        s.n_discarded[gd] += 1
        at_max = s.n_discarded[gd] >= self.exchange_max(s, gd, pd)
        finish = np.concatenate([g[~card], gd[at_max]])
        if finish.size:
            self.finish_exchange(s, np.sort(finish), ev)

    def finish_exchange(self, s: BatchState, g: np.ndarray, ev: Events) -> None:
        """The player to act in games ``g`` takes as many talon cards as he discarded."""
        p = s.current[g].astype(np.int64)
        k = s.n_discarded[g].astype(np.int64)
        pos = s.talon_pos[g].astype(np.int64)
        cols = np.arange(self.talon_size)
        talon = s.talon[g]
        take = (cols >= pos[:, None]) & (cols < (pos + k)[:, None])
        s.hands[g, p] |= mask_of(np.where(take, talon, -1))
        s.taken[g, p] = k
        s.exchanged[g, p] = True
        s.n_discarded[g] = 0
        s.talon_pos[g] = pos + k
        is_elder = p == s.elder[g]
        ge = g[is_elder]
        if ge.size:
            ke = (pos + k)[is_elder]
            seen = (cols >= ke[:, None]) & (cols < self.rules.elder_part)
            s.seen_talon[ge, p[is_elder]] = mask_of(np.where(seen, talon[is_elder], -1))
            y = 1 - p[is_elder]
            s.current[ge] = y
            nothing = self.exchange_max(s, ge, y) == 0
            if nothing.any():
                self.finish_exchange(s, ge[nothing], ev)
        gy = g[~is_elder]
        if gy.size:
            self.start_declarations(s, gy)

    # ------------------------------------------------------------------ declarations

    def start_declarations(self, s: BatchState, g: np.ndarray) -> None:
        """Find both players' combinations in games ``g`` and open the declarations."""
        s.phase[g] = DECLARE
        k = g.size
        combos = all_combos(s.hands[g].reshape(-1))  # rows: game 0 player 0, player 1, game 1..
        for name, field in (
            ("best_key", "key"),
            ("best_cards", "cards"),
            ("won_value", "value"),
            ("won_cards", "won_cards"),
            ("best_record", "record"),
        ):
            rows = np.stack([getattr(c, field) for c in combos], axis=1)  # (2k, 3)
            getattr(s, name)[g] = rows.reshape(k, 2, 3).transpose(0, 2, 1)
        s.decl_step[g] = 0
        s.current[g] = s.elder[g]

    # Per-category arrays (N, 3, 2) are indexed flat: game * 6 + category * 2 + player.

    def can_declare(self, s: BatchState, g: np.ndarray) -> np.ndarray:
        """Whether the player to act in games ``g`` (declaring) may declare, i.e. has two
        choices: he holds a combination, and as younger one at least as good as elder's."""
        p = s.current[g].astype(np.int64)
        e = s.elder[g].astype(np.int64)
        base = g * 6 + (s.decl_step[g] >> 1).astype(np.int64) * 2
        mine = s.best_key.reshape(-1)[base + p]
        theirs = s.declared_key.reshape(-1)[base + e]
        return (mine > 0) & ((p == e) | (theirs == 0) | (mine >= theirs))

    def decide(self, s: BatchState, g: np.ndarray, a: np.ndarray, ev: Events) -> None:
        """Declare or pass the current category in games ``g``."""
        p = s.current[g].astype(np.int64)
        cat = (s.decl_step[g] >> 1).astype(np.int64)
        i = g * 6 + cat * 2 + p
        dec = a == self.declare
        s.record.reshape(-1)[i] = np.where(dec, s.best_record.reshape(-1)[i], 1)
        if dec.any():
            idd = i[dec]
            key = s.best_key.reshape(-1)[idd]
            s.declared_key.reshape(-1)[idd] = key
            gp = (g * 2 + p)[dec]
            s.shown.reshape(-1)[gp] |= s.best_cards.reshape(-1)[idd]
            point = cat[dec] == 0
            s.point_height.reshape(-1)[gp[point]] = key[point] & 127
        step = s.decl_step[g] + 1
        s.decl_step[g] = step
        odd = (step & 1) == 1
        s.current[g[odd]] = 1 - p[odd]
        even = ~odd
        if even.any():
            self.resolve(s, g[even], cat[even])

    def resolve(self, s: BatchState, g: np.ndarray, cat: np.ndarray) -> None:
        """Both decided category ``cat`` in games ``g``: the better declaration scores."""
        e = s.elder[g].astype(np.int64)
        base = g * 6 + cat * 2
        declared = s.declared_key.reshape(-1)
        ke, ky = declared[base + e], declared[base + 1 - e]
        scored = ke != ky
        if scored.any():
            w = np.where(ke > ky, e, 1 - e)[scored]
            gw, cw = g[scored], cat[scored]
            iw, gpw = base[scored] + w, gw * 2 + w
            s.shown.reshape(-1)[gpw] |= s.won_cards.reshape(-1)[iw]
            value = s.won_value.reshape(-1)[iw]
            field = np.asarray(_SCORE_FIELD)[cw]
            s.scores.reshape(-1)[gpw * sc.N_SCORE_FIELDS + field] += value
            s.deal_points.reshape(-1)[gpw] += value
            vsc.update_pique(s, gw)
        more = s.decl_step[g] < 6
        s.current[g[more]] = s.elder[g[more]]
        if not more.all():
            self.start_play(s, g[~more])

    def start_play(self, s: BatchState, g: np.ndarray) -> None:
        """After the declarations in games ``g``: repique, then elder leads."""
        if not g.size:
            return
        r = vsc.repique_player(s, g, self.rules)
        s.repique[g] = r
        made = r >= 0
        gr = g[made]
        s.scores[gr, r[made].astype(np.int64), sc.REPIQUE] += sc.REPIQUE_BONUS
        s.deal_points[gr, r[made].astype(np.int64)] += sc.REPIQUE_BONUS
        vsc.update_pique(s, gr)
        s.pique_open[gr] = False
        s.phase[g] = PLAY
        s.current[g] = s.elder[g]
        s.leader[g] = s.elder[g]
        vsc.update_pique(s, g)

    def auto_declarations(self, s: BatchState, g: np.ndarray, ev: Events) -> None:
        """Take every forced declaration decision (a single legal choice: pass) in games ``g``."""
        while g.size:
            g = g[s.phase[g] == DECLARE]
            g = g[~self.can_declare(s, g)]
            if g.size:
                self.decide(s, g, np.full(g.size, self.pass_), ev)

    # ------------------------------------------------------------------ play

    def play(self, s: BatchState, g: np.ndarray, a: np.ndarray, ev: Events) -> None:
        """Play card ``a`` in games ``g``: lead a trick, or follow and settle it."""
        # The hot path: per-player arrays are indexed flat (game * 2 + player), which numpy
        # does several times faster than a pair of index arrays.
        p = s.current[g].astype(np.int64)
        gp = g * 2 + p
        bit = ONE << a.astype(U64)
        hands, played = s.hands.reshape(-1), s.played.reshape(-1)
        scores, points = s.scores.reshape(-1), s.deal_points.reshape(-1)
        hands[gp] ^= bit
        played[gp] |= bit
        leads = s.lead[g] < 0
        gl, gpl = g[leads], gp[leads]
        s.lead[gl] = a[leads]
        scores[gpl * sc.N_SCORE_FIELDS + sc.LEADS] += 1
        points[gpl] += 1
        s.current[gl] = 1 - p[leads]
        follow = ~leads
        gf = g[follow]
        if gf.size:
            pf, card = p[follow], a[follow].astype(np.int64)
            lead = s.lead[gf].astype(np.int64)
            leader = s.leader[gf].astype(np.int64)
            joker = JOKER if self.rules.joker else -2
            same_suit = (card >> 3) == (lead >> 3)
            off_suit = (lead != joker) & ((card == joker) | ~same_suit)
            voids = s.voids.reshape(-1)
            vi = gp[follow][off_suit]
            voids[vi] |= (1 << (lead[off_suit] >> 3)).astype(np.uint8)
            follower_wins = (lead != joker) & ((card == joker) | (same_suit & (card > lead)))
            winner = np.where(follower_wins, pf, leader)
            gw = gf * 2 + winner
            tricks = s.tricks_won.reshape(-1)
            tricks[gw] += 1
            last = (tricks[gf * 2] + tricks[gf * 2 + 1]) == self.rules.hand_size
            s.lead[gf] = NO_CARD
            pts = vsc.trick_points(self.rules, leader, winner, last)
            scores[gw * sc.N_SCORE_FIELDS + sc.TRICKS] += pts
            points[gw] += pts
            s.leader[gf] = winner
            s.current[gf] = winner
        vsc.update_pique(s, g)
        if gf.size and last.any():
            self.end_deal(s, gf[last], ev)

    # ------------------------------------------------------------------ deal end

    def end_deal(self, s: BatchState, g: np.ndarray, ev: Events) -> None:
        """The last trick is over in games ``g``: bonuses, totals, next deal or end."""
        vsc.finish_deal(s, g, self.rules)
        scores = s.scores[g].copy()
        deal_total = scores.astype(np.int32).sum(axis=2)  # (k, 2)
        s.totals[g] += deal_total
        ev.deal_games.append(g)
        ev.deal_scores.append(scores)
        ev.deal_numbers.append(s.deal_number[g].copy())
        s.deal_number[g] += 1
        diff = deal_total[:, 0] - deal_total[:, 1]
        if self.mode == "deal":
            result = np.stack([diff, -diff], axis=1)
            over = np.ones(g.size, dtype=bool)
        else:
            reached = s.deal_number[g] >= s.planned[g]
            tie = (
                reached
                & (s.totals[g, 0] == s.totals[g, 1])
                & self.rules.tie_break_deals
                & (s.planned[g] == self.rules.deals)
            )
            s.planned[g[tie]] += 2
            over = reached & ~tie
            result = vsc.settle(s.totals[g], self.rules)
        go = g[over]
        if go.size:
            s.result[go] = result[over]
            s.phase[go] = OVER
            s.current[go] = -1
            s.over[go] = True
            ev.ended.append(go)
        gn = g[~over]
        if gn.size:
            s.elder[gn] = 1 - s.elder[gn]
            self.start_deal(s, gn, ev)
