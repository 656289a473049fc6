"""Exact figures on a :class:`~piquet_env.exact.tree.GameTree`: expected values, best responses,
NashConv, and an equilibrium by CFR+.

A *policy* here is an array over the tree's slots (one probability per information state and
legal action, summing to 1 over each information state's slots): :func:`uniform_policy`, a
solver's average strategy, or any agent's, tabulated by :mod:`piquet_env.exact.policy`. Player 0
is elder (the tree's convention); values are in points per deal, elder's unless said.

Piquet's roles are not symmetric, but its seats are: the cut makes each seat elder half the time.
So for one policy :math:`\\pi` playing both seats, a best response in either seat is worth
:math:`\\tfrac12(b_E + b_Y)`, where :math:`b_E` is the best elder's value against
:math:`\\pi`'s younger and :math:`b_Y` the best younger's against :math:`\\pi`'s elder, and
:math:`\\mathrm{NashConv}(\\pi) = b_E + b_Y` (a game between two copies of one policy is worth 0
to each seat). That is what OpenSpiel's ``exploitability.nash_conv`` computes on the adapter's game
(which deals the cut as a chance node), as ``tests/test_exact.py`` checks.

Everything is computed level by level, bottom-up or top-down, with numpy segment sums: a best
response takes a few passes over the nodes, a CFR+ iteration four.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from piquet_env.exact.tree import GameTree

ELDER, YOUNGER = 0, 1


def uniform_policy(tree: GameTree) -> np.ndarray:
    """The uniform random policy: every legal action of every information state alike."""
    n_legal = np.diff(tree.slot_start)
    return np.repeat(1.0 / n_legal, n_legal)


def check_policy(tree: GameTree, policy: np.ndarray, atol: float = 1e-6) -> np.ndarray:
    """``policy`` as float64 if it is a policy of ``tree`` (one non-negative probability per
    slot, summing to 1 per information state), else a ``ValueError`` saying what is wrong."""
    p = np.asarray(policy, dtype=np.float64)
    if p.shape != (tree.n_slots,):
        raise ValueError(f"a policy of this tree has {tree.n_slots} slots, got shape {p.shape}")
    if not np.isfinite(p).all() or (p < -atol).any():
        raise ValueError("a policy's probabilities must be finite and non-negative")
    sums = np.add.reduceat(p, tree.slot_start[:-1])
    bad = np.flatnonzero(np.abs(sums - 1.0) > atol)
    if bad.size:
        raise ValueError(
            f"{bad.size} information states' probabilities do not sum to 1 (e.g. {sums[bad[0]]})"
        )
    return p


def _edge_probs(tree: GameTree, policy: np.ndarray, player: int | None) -> np.ndarray:
    """The probability of the move into every node under ``policy`` where ``player`` (or anyone,
    with ``None``) moves, 1 where the other moves; a deal's first node gets its chance."""
    first = tree.level(0)
    prob = policy[tree.edge_slot]  # the deals' first nodes (slot -1) are set below
    if player is not None:
        prob[tree.mover != player] = 1.0
    prob[first] = 1.0 / tree.n_deals
    return prob


def _reach(tree: GameTree, edge: np.ndarray) -> np.ndarray:
    """Top-down products of ``edge`` along each node's path."""
    reach = np.empty(tree.n_nodes, dtype=np.float64)
    first = tree.level(0)
    reach[first] = edge[first]
    for d in range(1, tree.depth_levels):
        kids = tree.level(d)
        reach[kids] = reach[tree.parent[kids]] * edge[kids]
    return reach


def expected_value(tree: GameTree, elder: np.ndarray, younger: np.ndarray | None = None) -> float:
    """Elder's expected deal points when ``elder`` plays elder and ``younger`` (default: the
    same policy) plays younger."""
    younger = elder if younger is None else younger
    mixed = np.where(np.repeat(tree.info_player, np.diff(tree.slot_start)) == ELDER, elder, younger)
    reach = _reach(tree, _edge_probs(tree, mixed, None))
    end = tree.player < 0
    return float(np.dot(reach[end], tree.value[end]))


@dataclass(frozen=True)
class BestResponse:
    """A best response's value and its choice at each of its player's information states."""

    player: int
    """The responder's role: 0 elder, 1 younger."""
    value: float
    """The responder's expected deal points against the target."""
    choice: np.ndarray
    """``(n_infosets,)``: the slot chosen at each of the responder's information states (-1 at
    the target's)."""

    def policy(self, tree: GameTree) -> np.ndarray:
        """The best response as a (pure) policy at its information states; uniform elsewhere."""
        p = uniform_policy(tree)
        mine = np.flatnonzero(self.choice >= 0)
        starts, ends = tree.slot_start[mine], tree.slot_start[mine + 1]
        for a, b in zip(starts.tolist(), ends.tolist()):
            p[a:b] = 0.0
        p[self.choice[mine]] = 1.0
        return p


def _sum_into_parents(tree: GameTree, d: int, weights: np.ndarray) -> np.ndarray:
    """Per node of level ``d``: the sum of ``weights`` over its children (level d + 1)."""
    local = tree.parent[tree.level(d + 1)] - tree.bounds[d]
    return np.bincount(local, weights=weights, minlength=int(tree.bounds[d + 1] - tree.bounds[d]))


def best_response(tree: GameTree, target: np.ndarray, player: int) -> BestResponse:
    """The exact best response of role ``player`` (0 elder, 1 younger) to ``target`` (a policy
    of the tree, played in the other role), by one top-down and one bottom-up pass: at each of
    the responder's information states the action of highest counterfactual value (the sum,
    over its histories, of the chance and target reach times the value below)."""
    sign = 1.0 if player == ELDER else -1.0
    reach = _reach(tree, _edge_probs(tree, target, 1 - player))
    value = np.where(tree.player < 0, sign * tree.value.astype(np.float64), 0.0)
    choice = np.full(tree.n_infosets, -1, dtype=np.int64)
    for d in range(tree.depth_levels - 2, -1, -1):
        ks = tree.level(d + 1)
        kid_value, slot = value[ks], tree.edge_slot[ks]
        par = tree.parent[ks]
        mine = tree.mover[ks] == player
        # the target's nodes: the expectation under its probabilities
        below = _sum_into_parents(tree, d, np.where(mine, 0.0, target[slot] * kid_value))
        level = tree.level(d)
        theirs = tree.player[level] == 1 - player
        value[level][theirs] = below[theirs]
        lo, hi, runs = tree.level_slots[2 * d + player]
        if hi == lo:
            continue
        pk = par[mine]
        qs = np.bincount(slot[mine] - lo, weights=reach[pk] * kid_value[mine], minlength=hi - lo)
        best = np.maximum.reduceat(qs, runs)
        n_run = np.diff(np.append(runs, hi - lo))
        top = np.flatnonzero(qs == np.repeat(best, n_run))
        owners = tree.slot_owner[lo + top]
        first = np.flatnonzero(np.diff(owners, prepend=-1) != 0)
        choice[owners[first]] = lo + top[first]
        chosen = slot[mine] == choice[tree.infoset[pk]]
        value[pk[chosen]] = kid_value[mine][chosen]
    total = float(value[tree.level(0)].sum() / tree.n_deals)
    return BestResponse(player=player, value=total, choice=choice)


@dataclass(frozen=True)
class Exploitability:
    """The exact exploitability of one policy played in both roles (see the module docstring);
    every figure in points per deal."""

    value: float
    """Elder's expected deal points when the policy plays itself."""
    br_elder: float
    """The best elder's value against the policy's younger."""
    br_younger: float
    """The best younger's value against the policy's elder."""

    @property
    def br_seat(self) -> float:
        """A best response's value in either seat (each seat is elder half the time)."""
        return 0.5 * (self.br_elder + self.br_younger)

    @property
    def nash_conv(self) -> float:
        """The sum of both seats' best-response gains: ``br_elder + br_younger``."""
        return self.br_elder + self.br_younger

    @property
    def exploitability(self) -> float:
        """OpenSpiel's exploitability: half the NashConv."""
        return 0.5 * self.nash_conv

    def to_dict(self) -> dict[str, float]:
        """The figures by name, for JSON."""
        return {
            "value_elder": self.value,
            "br_elder": self.br_elder,
            "br_younger": self.br_younger,
            "br_seat": self.br_seat,
            "nash_conv": self.nash_conv,
            "exploitability": self.exploitability,
        }


def exploitability(tree: GameTree, policy: np.ndarray) -> Exploitability:
    """The exact exploitability of ``policy`` (one policy of the tree, both roles)."""
    policy = check_policy(tree, policy)
    return Exploitability(
        value=expected_value(tree, policy),
        br_elder=best_response(tree, policy, ELDER).value,
        br_younger=best_response(tree, policy, YOUNGER).value,
    )


def nash_conv(tree: GameTree, policy: np.ndarray) -> float:
    """``exploitability(tree, policy).nash_conv``."""
    return exploitability(tree, policy).nash_conv


# ---------------------------------------------------------------------------- CFR+


@dataclass
class CFRPlus:
    """CFR+ (Tammelin 2014) on the whole tree: regret matching+ with alternating updates and a
    linearly weighted average strategy (iteration ``t`` weighs ``t``), which converges to a Nash
    equilibrium of the deal. :meth:`run` iterates; :attr:`average` is the solution so far."""

    tree: GameTree
    iterations: int = 0
    regrets: np.ndarray | None = None
    strategy_sum: np.ndarray | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        n = self.tree.n_slots
        self.regrets = np.zeros(n) if self.regrets is None else self.regrets
        self.strategy_sum = np.zeros(n) if self.strategy_sum is None else self.strategy_sum
        self._slot_player = self.tree.info_player[self.tree.slot_owner]

    def current(self) -> np.ndarray:
        """The current strategy: regret matching on the positive regrets (uniform where none)."""
        pos = np.maximum(self.regrets, 0.0)
        sums = np.add.reduceat(pos, self.tree.slot_start[:-1])
        n_legal = np.diff(self.tree.slot_start)
        per = np.repeat(sums, n_legal)
        return np.where(
            per > 0, pos / np.where(per > 0, per, 1.0), np.repeat(1.0 / n_legal, n_legal)
        )

    @property
    def average(self) -> np.ndarray:
        """The average strategy (the solution), normalised; uniform where never reached."""
        s = self.strategy_sum
        sums = np.add.reduceat(s, self.tree.slot_start[:-1])
        n_legal = np.diff(self.tree.slot_start)
        per = np.repeat(sums, n_legal)
        return np.where(per > 0, s / np.where(per > 0, per, 1.0), np.repeat(1.0 / n_legal, n_legal))

    def _update(self, player: int, weight: float) -> None:
        tree = self.tree
        sigma = self.current()
        edge = sigma[tree.edge_slot]
        mine_edge = tree.mover == player
        own_edge = np.where(mine_edge, edge, 1.0)
        own_edge[tree.level(0)] = 1.0
        other_edge = np.where(mine_edge, 1.0, edge)
        other_edge[tree.level(0)] = 1.0 / tree.n_deals
        own, other = _reach(tree, own_edge), _reach(tree, other_edge)
        sign = 1.0 if player == ELDER else -1.0
        value = np.where(tree.player < 0, sign * tree.value.astype(np.float64), 0.0)
        cf_action = np.zeros(tree.n_slots)
        for d in range(tree.depth_levels - 2, -1, -1):
            ks = tree.level(d + 1)
            kid_value, slot = value[ks], tree.edge_slot[ks]
            below = _sum_into_parents(tree, d, edge[ks] * kid_value)
            level = tree.level(d)
            live = tree.player[level] >= 0
            value[level][live] = below[live]
            lo, hi, _ = tree.level_slots[2 * d + player]
            if hi > lo:
                mine = mine_edge[ks]
                par = tree.parent[ks][mine]
                cf_action[lo:hi] += np.bincount(
                    slot[mine] - lo, weights=other[par] * kid_value[mine], minlength=hi - lo
                )
        mine_slots = self._slot_player == player
        # the counterfactual value of each information state, spread over its slots
        cf_info = np.add.reduceat(cf_action * sigma, tree.slot_start[:-1])
        regret = cf_action - np.repeat(cf_info, np.diff(tree.slot_start))
        self.regrets[mine_slots] = np.maximum(self.regrets[mine_slots] + regret[mine_slots], 0.0)
        info_reach = own[tree.info_node]
        contrib = weight * np.repeat(info_reach, np.diff(tree.slot_start)) * sigma
        self.strategy_sum[mine_slots] += contrib[mine_slots]

    def run(
        self,
        iterations: int,
        every: int = 0,
        on_check: Callable[[CFRPlus], None] | None = None,
    ) -> CFRPlus:
        """``iterations`` more iterations; ``on_check(self)`` every ``every`` iterations."""
        for _ in range(iterations):
            start = time.perf_counter()
            self.iterations += 1
            for player in (ELDER, YOUNGER):
                self._update(player, float(self.iterations))
            self.seconds += time.perf_counter() - start
            if every and on_check is not None and self.iterations % every == 0:
                on_check(self)
        return self
