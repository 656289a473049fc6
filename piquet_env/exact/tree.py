"""The whole game tree of one deal of a small rule set, built by the batched engine.

:func:`build_tree` enumerates every deal of the pack (elder's hand, younger's, the talon's order:
the deal's chance node, each outcome equally likely) and every decision after it, by stepping
:class:`~piquet_env.vector.state.BatchState` rows with the batched engine's own transitions
(:class:`~piquet_env.vector.steps.Transitions`, identical to :class:`~piquet_env.game.Game` under
the differential test), level by level, a chunk of deals at a time. Player 0 is elder in every
deal: the tree is one seat's view of the roles, and both seats' figures follow from it by the
cut's symmetry (:mod:`piquet_env.exact.solve`).

The result, :class:`GameTree`, is flat arrays, one entry per node (histories: decisions and ends
of the deal), numbered level by level (every node at depth ``d`` before those at ``d + 1``, and
within a level in the order of their parents, so a node's children are consecutive):
``parent``, ``action`` (the move from the parent), ``depth``, ``player`` (to act, -1 at an end),
``infoset`` (a dense id of the acting player's information state, :mod:`piquet_env.exact.keys`)
and ``value`` (elder's result at an end: the deal's point difference). Per information state:
its ``player``, its legal actions as a bitmask, its ``key`` and a representative node. Per
(information state, legal action) pair, a *slot*: policies and regrets are arrays over slots,
and ``edge_slot`` names the slot of the move into each node.

Building checks the information-state keys as it goes: every history of one information state
has the same legal actions and the same depth, or :class:`TreeError` says the keys are wrong. A
rule set whose tree would pass :data:`MAX_NODES` is refused before any work, with the counts.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from piquet_env.errors import Message, Setting
from piquet_env.exact.keys import BatchKeys
from piquet_env.rules import Rules
from piquet_env.vector.encoder import BatchEncoder
from piquet_env.vector.state import _FIELDS, DECLARE, EXCHANGE, PLAY, BatchState
from piquet_env.vector.steps import Events, Transitions
from piquet_env.vector.tables import popcount

MAX_NODES = 250_000_000
"""The most histories a tree may have (about 4 GB of arrays); larger rule sets are refused."""
PROBE_DEALS = 24
"""Deals built to estimate a tree's size before building it."""


class TreeError(RuntimeError):
    """The tree cannot be built: a rule set too large to enumerate, or keys that do not make a
    consistent partition of the histories."""


def count_deals(rules: Rules) -> int:
    """The deal's chance outcomes: elder's hand, younger's hand, the talon in its order."""
    n, h = rules.pack_size, rules.hand_size
    return math.comb(n, h) * math.comb(n - h, h) * math.factorial(n - 2 * h)


def enumerate_deals(rules: Rules) -> np.ndarray:
    """Every deal of the pack as rows ``(count_deals, pack_size)`` of card ids: elder's hand
    (ascending), younger's (ascending), then the talon top first."""
    pack, h = list(rules.pack), rules.hand_size
    rows = []
    for elder in itertools.combinations(pack, h):
        rest = [c for c in pack if c not in elder]
        for younger in itertools.combinations(rest, h):
            talon = [c for c in rest if c not in younger]
            for order in itertools.permutations(talon):
                rows.append((*elder, *younger, *order))
    return np.array(rows, dtype=np.int8).reshape(-1, rules.pack_size)


@dataclass
class GameTree:
    """The tree of one deal (see the module docstring); build it with :func:`build_tree`."""

    rules: Rules
    deals: np.ndarray
    """``(n_deals, pack_size)`` card ids of every deal (:func:`enumerate_deals`)."""
    parent: np.ndarray
    action: np.ndarray
    depth: np.ndarray
    player: np.ndarray
    infoset: np.ndarray
    value: np.ndarray
    deal: np.ndarray
    """The deal (a row of :attr:`deals`) of every node."""
    info_player: np.ndarray
    info_legal: np.ndarray
    info_key: np.ndarray
    info_node: np.ndarray
    """A node of each information state (its first)."""
    info_words: np.ndarray
    """``(n_infosets, n_words)``: each information state's observation, its 0/1 block packed
    (:meth:`~piquet_env.vector.encoder.BatchEncoder.observe_packed`)."""
    info_scalars: np.ndarray
    """``(n_infosets, n_scalars)``: the observation's scalar block, unscaled (``uint8``: in one
    deal every scalar is a small count)."""
    slot_start: np.ndarray
    """``(n_infosets + 1,)``: information state ``i``'s slots are ``slot_start[i]:slot_start[i+1]``
    (its legal actions in ascending order)."""
    slot_action: np.ndarray
    edge_slot: np.ndarray
    """The slot of the move into each node (-1 for a deal's first node)."""
    mover: np.ndarray
    """Who made the move into each node: its parent's player (-1 for a deal's first node)."""
    seconds: float = 0.0
    """How long building took."""
    bounds: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64), repr=False)
    """Where each level starts: the nodes at depth ``d`` are ``bounds[d]:bounds[d + 1]``."""
    slot_owner: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    """The information state of each slot."""
    level_slots: list[tuple[int, int, np.ndarray]] = field(default_factory=list, repr=False)
    """Per depth and player (``level_slots[2 * d + player]``): the range ``lo, hi`` of the slots
    of that player's information states at that depth (information states are numbered by depth,
    then player), and where each one's run of slots starts within it."""

    @property
    def depth_levels(self) -> int:
        """Levels of the tree (the greatest depth plus one)."""
        return int(self.bounds.size - 1)

    def level(self, d: int) -> slice:
        """The nodes at depth ``d``, as a slice of the node arrays."""
        return slice(int(self.bounds[d]), int(self.bounds[d + 1]))

    @property
    def roots(self) -> np.ndarray:
        """Each deal's first node (depth 0), in the order of :attr:`deals`' rows as built."""
        return np.arange(int(self.bounds[1]))

    @property
    def n_nodes(self) -> int:
        """Histories: decision nodes and ends of the deal."""
        return int(self.parent.size)

    @property
    def n_deals(self) -> int:
        """The deal's chance outcomes."""
        return int(self.deals.shape[0])

    @property
    def n_infosets(self) -> int:
        """Information states of both players."""
        return int(self.info_player.size)

    @property
    def n_slots(self) -> int:
        """(Information state, legal action) pairs."""
        return int(self.slot_action.size)

    def counts(self) -> dict[str, int]:
        """The tree's sizes: deals, histories, terminal histories, decisions, information states
        of each player (elder, younger), slots, the most decisions in one deal."""
        decisions = int((self.player >= 0).sum())
        return {
            "deals": self.n_deals,
            "histories": self.n_nodes,
            "terminal_histories": self.n_nodes - decisions,
            "decision_histories": decisions,
            "infosets_elder": int((self.info_player == 0).sum()),
            "infosets_younger": int((self.info_player == 1).sum()),
            "slots": self.n_slots,
            "max_decisions_per_deal": int(self.depth.max()),
        }


@functools.lru_cache(maxsize=32)
def estimate_nodes(rules: Rules, deals: int = PROBE_DEALS, seed: int = 0) -> int:
    """About how many histories :func:`build_tree` would make: a few deals' trees, scaled
    (a few seconds for ``mini``; the same rules, deals and seed give the same figure, so it is
    worked out once per process)."""
    n = count_deals(rules)
    if n > 10 * MAX_NODES:
        return n  # at least one history per deal
    rng = np.random.default_rng(seed)
    all_deals = enumerate_deals(rules)
    pick = rng.choice(len(all_deals), size=min(deals, len(all_deals)), replace=False)
    sizes = [_build_chunk(rules, all_deals[[i]])["parent"].size for i in pick]
    return int(np.mean(sizes) * n)


def check_size(rules: Rules) -> int:
    """The estimated number of histories, or a :class:`TreeError` saying why ``rules`` is too
    large to enumerate."""
    n = count_deals(rules)
    if n > 10 * MAX_NODES:
        raise TreeError(
            Message(
                f"{rules.name!r} is too large to solve exactly: its deal alone has {n:.3g} "
                f"outcomes (a {rules.pack_size}-card pack, {rules.hand_size} cards each), and an "
                f"exact figure needs every history (at most {MAX_NODES:,}); use ",
                Setting("rules", "mini"),
            )
        )
    est = estimate_nodes(rules)
    if est > MAX_NODES:
        raise TreeError(
            Message(
                f"{rules.name!r} is too large to solve exactly: about {est:,} histories over "
                f"{n:,} deals, more than {MAX_NODES:,}; use ",
                Setting("rules", "mini"),
            )
        )
    return est


def build_tree(
    rules: Rules, chunk_deals: int = 128, progress: Callable[[int, int], None] | None = None
) -> GameTree:
    """The whole tree of one deal under ``rules`` (see the module docstring). ``progress(done,
    total)`` is called after each chunk of deals. Refuses a rule set too large
    (:func:`check_size`)."""
    start = time.perf_counter()
    check_size(rules)
    deals = enumerate_deals(rules)
    parts = []
    offset = 0
    for lo in range(0, len(deals), chunk_deals):
        chunk = _build_chunk(rules, deals[lo : lo + chunk_deals])
        chunk["parent"] = np.where(chunk["parent"] >= 0, chunk["parent"] + offset, -1)
        chunk["deal"] += lo
        offset += chunk["parent"].size
        parts.append(chunk)
        if progress is not None:
            progress(min(lo + chunk_deals, len(deals)), len(deals))
    # each array joined and its parts let go before the next (the peak is the index's, below)
    cat = {k: np.concatenate([p.pop(k) for p in parts]) for k in list(parts[0])}
    del parts
    tree = _index(rules, deals, cat)
    tree.seconds = time.perf_counter() - start
    return tree


# ---------------------------------------------------------------------------- building


def take_rows(s: BatchState, rows: np.ndarray) -> BatchState:
    """A new batched state of ``s``'s ``rows`` (copies)."""
    out = BatchState.__new__(BatchState)
    for name in _STATE_ARRAYS:
        setattr(out, name, getattr(s, name).take(rows, axis=0))
    out.n = rows.size
    return out


_STATE_ARRAYS = (*_FIELDS, "talon", "history")


def deal_state(rules: Rules, packs: np.ndarray) -> tuple[BatchState, Transitions]:
    """A batched state dealt from ``packs`` (rows of card ids, elder's hand first; player 0
    elder, a single deal), its forced declarations taken, and the transitions that step it."""
    k = packs.shape[0]
    s = BatchState(rules, k)
    s.planned[:] = 1
    rs = Transitions(rules, "deal", lambda g: packs[g])
    rs.start_deal(s, np.arange(k), Events())
    return s, rs


def apply_actions(s: BatchState, rs: Transitions, actions: np.ndarray) -> None:
    """One move in every row of ``s`` (each row's player to act), as
    :meth:`piquet_env.vector.BatchGame.step` does, except that a forced declaration decision is
    a move of its own here (see :func:`legal_bits`)."""
    ev = Events()
    phase = s.phase.copy()
    for code, apply in ((EXCHANGE, rs.exchange), (DECLARE, rs.decide), (PLAY, rs.play)):
        g = np.flatnonzero(phase == code)
        if g.size:
            apply(s, g, actions[g].astype(np.int64), ev)


def legal_bits(s: BatchState, rs: Transitions, encoder: BatchEncoder) -> np.ndarray:
    """The legal actions of every row's player to act, as bitmasks. A declaration decision the
    engine takes by itself (a pass, the one legal choice) is a node of the tree with that one
    action, so that every history of an information state lies at the same depth (the number of
    moves so far, forced ones included, is public)."""
    low = np.zeros(s.n, dtype=np.int64)
    g = np.flatnonzero(s.phase == EXCHANGE)
    if g.size:
        low[g] = rs.exchange_min(s, g, s.current[g].astype(np.int64))
    can = np.zeros(s.n, dtype=bool)
    d = np.flatnonzero(s.phase == DECLARE)
    if d.size:
        can[d] = rs.can_declare(s, d)
    return encoder.legal_bits(s, can, low)


def _expand(bits: np.ndarray, n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """The (row, action) pairs of legal-action bitmasks, row-major, actions ascending."""
    mask = np.unpackbits(bits.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    rows, actions = np.nonzero(mask[:, :n_actions])
    return rows, actions.astype(np.int8)


def _build_chunk(rules: Rules, packs: np.ndarray) -> dict[str, np.ndarray]:
    """The subtree of ``packs``' deals: per-node arrays with chunk-local node indices, the
    decisions' keys, legal actions and packed observations (of the player to act), the ends'
    values."""
    encoder = BatchEncoder(rules, "deal")
    s, rs = deal_state(rules, packs)
    keys = BatchKeys.start(s)
    k = packs.shape[0]
    ids, deal_of = np.arange(k, dtype=np.int64), np.arange(k, dtype=np.int32)
    edges: dict[str, list[np.ndarray]] = {
        "parent": [np.full(k, -1, np.int64)],
        "action": [np.full(k, -1, np.int8)],
        "depth": [np.zeros(k, np.int8)],
        "deal": [deal_of],
    }
    decisions: dict[str, list[np.ndarray]] = {n: [] for n in ("id", "player", "key", "legal")}
    # one observation per information state: all of a state's histories lie at one depth (the
    # index checks it), so the first of each key within its level is its first in the chunk
    obs: dict[str, list[np.ndarray]] = {n: [] for n in ("key", "player", "words", "scalars")}
    ends: dict[str, list[np.ndarray]] = {"id": [], "value": []}
    next_id, depth = k, 0
    while True:
        player = s.current.astype(np.int8)
        bits = legal_bits(s, rs, encoder)
        key = keys.key(s, player)
        for name, value in (("id", ids), ("player", player), ("key", key), ("legal", bits)):
            decisions[name].append(value)
        _, first = np.unique(_key_bytes(key, player), return_index=True)
        words, scalars = encoder.observe_packed(s, player[first], first)
        if scalars.size and scalars.max() > 255:
            raise TreeError("an observation scalar above 255: the tree stores them as bytes")
        for name, value in (
            ("key", key[first]),
            ("player", player[first]),
            ("words", np.ascontiguousarray(words.T)),
            ("scalars", scalars.astype(np.uint8)),
        ):
            obs[name].append(value)
        rows, actions = _expand(bits, encoder.n_actions)
        child = take_rows(s, rows)
        apply_actions(child, rs, actions)
        child_keys = keys.take(rows)
        child_keys.step(child, s.phase[rows], player[rows], actions, rules.n_cards)
        child_ids = np.arange(next_id, next_id + rows.size, dtype=np.int64)
        next_id += rows.size
        depth += 1
        edges["parent"].append(ids[rows])
        edges["action"].append(actions)
        edges["depth"].append(np.full(rows.size, depth, np.int8))
        edges["deal"].append(deal_of[rows])
        over = child.over
        ends["id"].append(child_ids[over])
        ends["value"].append(child.result[over, 0].astype(np.float32))
        live = np.flatnonzero(~over)
        if not live.size:
            break
        del s, keys  # the level's states, before the next level's are copied out (the peak)
        if live.size == child.n:
            s, keys = child, child_keys
        else:
            s, keys = take_rows(child, live), child_keys.take(live)
        del child, child_keys
        ids, deal_of = child_ids[live], deal_of[rows][live]
    n = next_id
    out = {name: np.concatenate(parts) for name, parts in edges.items()}
    dec = np.concatenate(decisions.pop("id"))
    player = np.concatenate(decisions.pop("player"))
    key = np.concatenate(decisions.pop("key"))
    out["player"] = np.full(n, -1, np.int8)
    out["player"][dec] = player
    out["key"] = np.zeros((n, 2), np.uint64)
    out["key"][dec] = key
    out["legal"] = np.zeros(n, np.uint64)
    out["legal"][dec] = np.concatenate(decisions.pop("legal"))
    out["value"] = np.zeros(n, np.float32)
    out["value"][np.concatenate(ends["id"])] = np.concatenate(ends["value"])
    for name, parts in obs.items():
        out[f"obs_{name}"] = np.concatenate(parts)
    return out


def _key_bytes(key: np.ndarray, player: np.ndarray) -> np.ndarray:
    """Keys ``(n, 2)`` and their players as one 16-byte value each (for ``np.unique``)."""
    full = np.stack([key[:, 0] ^ player.astype(np.uint64), key[:, 1]], axis=1)
    return np.ascontiguousarray(full).view(np.dtype((np.void, 16))).ravel()


def _index(rules: Rules, deals: np.ndarray, nodes: dict[str, np.ndarray]) -> GameTree:
    """Renumber the built nodes level by level, number the information states and slots, and
    check the keys."""
    obs = {k: nodes.pop(k) for k in ("obs_key", "obs_player", "obs_words", "obs_scalars")}
    order = np.argsort(nodes["depth"], kind="stable")
    renumber = np.empty(order.size, np.int64)
    renumber[order] = np.arange(order.size)
    for k in list(nodes):  # reordered in place: each old array let go as its copy is made
        nodes[k] = nodes[k][order]
    has = nodes["parent"] >= 0
    nodes["parent"] = np.where(has, renumber[np.where(has, nodes["parent"], 0)], -1)
    del order, renumber, has
    decision = np.flatnonzero(nodes["player"] >= 0)
    # A key holds its role; the player is added once more so that the two can never merge.
    packed = _key_bytes(nodes["key"][decision], nodes["player"][decision])
    uniq, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    del packed
    # information states numbered by (depth, player), so that a level's states of one player,
    # and their slots, are consecutive
    info_order = np.lexsort(
        (first, nodes["player"][decision[first]], nodes["depth"][decision[first]])
    )
    rank = np.empty(info_order.size, np.int64)
    rank[info_order] = np.arange(info_order.size)
    first = first[info_order]
    inverse = rank[inverse.ravel()]
    n_info = first.size
    info_node = decision[first]
    info_key = nodes.pop("key")[info_node]
    # each information state's observation: the chunks' ones, matched by key
    obs_bytes = _key_bytes(obs["obs_key"], obs["obs_player"])
    o_uniq, o_first = np.unique(obs_bytes, return_index=True)
    at = o_first[np.searchsorted(o_uniq, uniq[info_order])]
    del uniq, o_uniq, obs_bytes
    infoset = np.full(nodes["parent"].size, -1, np.int32)
    infoset[decision] = inverse
    legal = nodes["legal"][info_node]
    depth = nodes["depth"]
    bad = np.flatnonzero(nodes.pop("legal")[decision] != legal[inverse])
    if bad.size:
        raise TreeError(
            f"{bad.size} histories share an information state but not its legal actions: the "
            "information-state keys merge what a player can tell apart"
        )
    if (depth[decision] != depth[info_node][inverse]).any():
        raise TreeError("an information state's histories lie at different depths")
    n_legal = popcount(legal).astype(np.int64)
    slot_start = np.concatenate([[0], np.cumsum(n_legal)])
    slot_rows, slot_action = _expand(legal, 64)
    del slot_rows
    parent = nodes["parent"]
    action = nodes["action"].astype(np.int64)
    edge_slot = np.full(parent.size, -1, np.int64)
    has = np.flatnonzero(parent >= 0)
    pinfo = infoset[parent[has]]
    below = legal[pinfo] & ((np.uint64(1) << action[has].astype(np.uint64)) - np.uint64(1))
    edge_slot[has] = slot_start[pinfo] + popcount(below).astype(np.int64)
    bounds = np.searchsorted(depth, np.arange(int(depth.max()) + 2)).astype(np.int64)
    slot_owner = np.repeat(np.arange(n_info), n_legal)
    info_depth = depth[info_node].astype(np.int64)
    info_player = nodes["player"][info_node]
    # per (depth, player): the range of its slots and where each information state's run starts
    group = info_depth * 2 + info_player.astype(np.int64)
    group_start = np.searchsorted(group, np.arange(2 * (bounds.size - 1) + 1))
    level_slots = []
    for g in range(2 * (bounds.size - 1)):
        lo, hi = slot_start[group_start[g]], slot_start[group_start[g + 1]]
        level_slots.append((int(lo), int(hi), slot_start[group_start[g] : group_start[g + 1]] - lo))
    return GameTree(
        rules=rules,
        deals=deals,
        parent=parent.astype(np.int64),
        action=nodes["action"],
        depth=depth,
        player=nodes["player"],
        infoset=infoset,
        value=nodes["value"],
        deal=nodes["deal"],
        info_player=info_player,
        info_legal=legal,
        info_key=info_key,
        info_node=info_node,
        info_words=obs["obs_words"][at],
        info_scalars=obs["obs_scalars"][at],
        slot_start=slot_start,
        slot_action=slot_action.astype(np.int8),
        edge_slot=edge_slot,
        mover=np.where(parent >= 0, nodes["player"][np.maximum(parent, 0)], -1).astype(np.int8),
        bounds=bounds,
        slot_owner=slot_owner,
        level_slots=level_slots,
    )


def node_states(
    tree: GameTree, nodes: np.ndarray, chunk: int = 200_000
) -> Iterator[tuple[np.ndarray, BatchState]]:
    """The batched states of ``nodes`` (replayed from their deals along their moves), a chunk
    at a time: ``(node indices, state)`` pairs, the state's rows in the same order."""
    rules = tree.rules
    for lo in range(0, nodes.size, chunk):
        part = nodes[lo : lo + chunk]
        depth = tree.depth[part].astype(np.int64)
        top = int(depth.max()) if part.size else 0
        # up[j]: each node's j-th ancestor (itself for j = 0), clamped at its deal's first node
        up = [part]
        for _ in range(top):
            prev = up[-1]
            parent = tree.parent[prev]
            up.append(np.where(parent >= 0, parent, prev))
        ancestors = np.stack(up)
        s, rs = deal_state(rules, tree.deals[tree.deal[part]])
        cols = np.arange(part.size)
        for d in range(1, top + 1):
            moving = np.flatnonzero(depth >= d)
            at = ancestors[depth[moving] - d, cols[moving]]  # the node at depth d on the path
            sub = take_rows(s, moving)
            apply_actions(sub, rs, tree.action[at].astype(np.int64))
            for name in _STATE_ARRAYS:
                getattr(s, name)[moving] = getattr(sub, name)
        yield part, s
