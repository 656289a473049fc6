"""Agents as policies of a game tree, and tabular policies as files and agents.

:func:`tabulate` asks an agent for its action probabilities at one history of each information
state of a :class:`~piquet_env.exact.tree.GameTree` and returns the policy array over the tree's
slots that :mod:`piquet_env.exact.solve` takes. Two ways to ask, by what the agent offers:

- ``batch_probabilities(obs, mask) -> probs``: many observations at once (a policy network,
  :class:`piquet_agents.policy.PolicyAgent`); the states come from the batched engine
  (:func:`~piquet_env.exact.tree.node_states`);
- ``action_probabilities(turn) -> {action: probability}``: one :class:`~piquet_env.agent.Turn` at
  a time (random, the heuristic, a tabular policy); the games are replayed along the tree, depth
  first, one clone per history.

An agent whose moves are not a function of what its player knows (a search that samples, an
agent that reads hidden cards) has no such policy: with ``check=True`` every history is asked and
a disagreement inside one information state is an error. :class:`TabularPolicy` is a policy with
its information-state keys (:mod:`piquet_env.exact.keys`), saved as a ``.npz`` file (plain
arrays, never pickles) and played as an agent (:class:`TabularAgent`) through
:func:`~piquet_env.exact.keys.info_key`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from piquet_env.agent import RandomAgent, Turn
from piquet_env.exact.keys import info_key
from piquet_env.exact.solve import uniform_policy
from piquet_env.exact.tree import GameTree, legal_bits, node_states
from piquet_env.files import temp_beside
from piquet_env.game import Game
from piquet_env.rules import Rules, make_rules
from piquet_env.vector.encoder import BatchEncoder
from piquet_env.vector.steps import Transitions

TABULAR_FORMAT = "piquet-tabular-policy"
"""The ``format`` a tabular policy file's metadata names."""
TABULAR_VERSION = 1


class ExactPolicyError(ValueError):
    """An agent that cannot be read as a policy of the tree, or a tabular policy file that is
    not one (unreadable, of other rules, or inconsistent)."""


@runtime_checkable
class ExactAgent(Protocol):
    """An agent that can say how likely each of its legal actions is at a turn."""

    name: str

    def action_probabilities(self, turn: Turn) -> Mapping[int, float]:
        """The probability of each legal action of ``turn`` (omitted actions: 0)."""
        ...


@runtime_checkable
class BatchExactAgent(Protocol):
    """An agent that gives the action probabilities of many observations at once."""

    name: str

    def batch_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(k, n_actions)`` probabilities for observations ``(k, size)`` and masks
        ``(k, n_actions)`` (0 off the mask)."""
        ...


def tabulate(
    tree: GameTree,
    agent: object,
    *,
    check: bool = False,
    batched: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """The policy of ``agent`` over ``tree``'s slots (see the module docstring). ``check`` asks
    at every history, not one per information state, and refuses an agent whose answer differs
    within one. ``batched=False`` asks one turn at a time even an agent that can answer many
    observations at once (a network's batched pass rounds differently from its one-row pass, by
    about 1e-10 in a probability)."""
    if isinstance(agent, TabularAgent) and agent.policy.rules == tree.rules:
        return agent.tree_policy(tree)
    if type(agent) is RandomAgent and not check:
        return uniform_policy(tree)  # its action_probabilities, without asking every state
    if batched and isinstance(agent, BatchExactAgent):
        return _tabulate_batch(tree, agent, check, progress)
    if isinstance(agent, ExactAgent):
        return _tabulate_games(tree, agent, check, progress)
    name = getattr(agent, "name", type(agent).__name__)
    raise ExactPolicyError(
        f"agent {name!r} has no exact action probabilities (a search's moves depend on its own "
        "random playouts): exact figures take random, the heuristic, a policy (greedy or "
        "sampled) or a tabular policy"
    )


def slots_of(slot_start: np.ndarray, infos: np.ndarray) -> np.ndarray:
    """The slots of information states ``infos``, in order (each one's run ascending)."""
    n = np.diff(slot_start)[infos]
    runs = np.cumsum(n) - n
    return np.repeat(slot_start[infos] - runs, n) + np.arange(int(n.sum()))


def _slot_probs(
    tree: GameTree, infos: np.ndarray, probs: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """The slots of ``infos`` and, for each, the column of ``probs`` (rows: those information
    states) of the slot's action, checked to be a distribution over the legal actions."""
    n_legal = np.diff(tree.slot_start)[infos]
    rows = np.repeat(np.arange(infos.size), n_legal)
    slots = slots_of(tree.slot_start, infos)
    out = probs[rows, tree.slot_action[slots].astype(np.int64)]
    sums = np.bincount(rows, weights=out, minlength=infos.size)
    bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-5)
    if bad.size:
        raise ExactPolicyError(
            f"agent {name!r} gives {bad.size} information states probabilities that do not sum "
            f"to 1 over their legal actions (e.g. {sums[bad[0]]:.6f})"
        )
    return slots, out


def _tabulate_batch(
    tree: GameTree,
    agent: BatchExactAgent,
    check: bool,
    progress: Callable[[int, int], None] | None,
    chunk: int = 100_000,
) -> np.ndarray:
    """The agent asked for many observations at once: each information state's, stored packed in
    the tree; with ``check``, every decision's, replayed from its deal."""
    if check:
        return _tabulate_batch_replayed(tree, agent, progress)
    policy = np.zeros(tree.n_slots)
    for infos, obs, mask in info_observations(tree, chunk):
        probs = np.asarray(agent.batch_probabilities(obs, mask), dtype=np.float64)
        slots, values = _slot_probs(tree, infos, probs, agent.name)
        policy[slots] = values
        if progress is not None:
            progress(int(infos[-1]) + 1, tree.n_infosets)
    return policy


def info_observations(
    tree: GameTree, chunk: int = 100_000
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every information state's observation and action mask, a chunk at a time: ``(infos,
    obs (k, size) float32, mask (k, n_actions) bool)``, unpacked from the tree."""
    enc = BatchEncoder(tree.rules, "deal")
    for lo in range(0, tree.n_infosets, chunk):
        infos = np.arange(lo, min(lo + chunk, tree.n_infosets))
        obs = np.empty((infos.size, enc.size), dtype=np.float32)
        enc.unpack(
            np.ascontiguousarray(tree.info_words[infos].T),
            tree.info_scalars[infos].astype(np.float32),
            obs,
        )
        mask = np.zeros((infos.size, enc.n_actions), dtype=bool)
        enc.mask_from_bits(tree.info_legal[infos], mask)
        yield infos, obs, mask


def probs_on_slots(
    tree: GameTree, infos: np.ndarray, probs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The slots of ``infos`` and their entries of ``probs`` (rows: those information states,
    columns: actions), checked to sum to 1 over each one's legal actions."""
    return _slot_probs(tree, infos, probs, "policy")


def _tabulate_batch_replayed(
    tree: GameTree, agent: BatchExactAgent, progress: Callable[[int, int], None] | None
) -> np.ndarray:
    enc = BatchEncoder(tree.rules, "deal")
    policy = np.zeros(tree.n_slots)
    ask = np.flatnonzero(tree.player >= 0)
    done = 0
    seen: dict[int, np.ndarray] = {}
    rs = Transitions(tree.rules, "deal", lambda g: None)
    for nodes, s in node_states(tree, ask):
        bits = legal_bits(s, rs, enc)
        mask = np.zeros((s.n, enc.n_actions), dtype=bool)
        enc.mask_from_bits(bits, mask)
        obs = np.empty((s.n, enc.size), dtype=np.float32)
        enc.observe(s, s.current.astype(np.int8), obs)
        probs = np.asarray(agent.batch_probabilities(obs, mask), dtype=np.float64)
        infos = tree.infoset[nodes]
        slots, values = _slot_probs(tree, infos, probs, agent.name)
        for i, row in zip(infos.tolist(), probs):
            first = seen.setdefault(i, row)
            if not np.allclose(first, row, atol=1e-6):
                raise ExactPolicyError(_inconsistent(agent.name))
        policy[slots] = values
        done += nodes.size
        if progress is not None:
            progress(done, ask.size)
    return policy


def _inconsistent(name: str) -> str:
    return (
        f"agent {name!r} acts differently in histories its player cannot tell apart: its moves "
        "are not a function of what it knows (a search's samples, hidden cards), so it has no "
        "exact policy"
    )


def forced_nodes(tree: GameTree) -> np.ndarray:
    """Whether each node is a declaration decision the engine takes by itself (its one legal
    action is to pass): no agent is asked there, and a :class:`~piquet_env.game.Game` has
    already taken it on arriving."""
    out = np.zeros(tree.n_nodes, dtype=bool)
    dec = np.flatnonzero(tree.player >= 0)
    info = tree.infoset[dec]
    single = np.diff(tree.slot_start)[info] == 1
    passing = tree.slot_action[tree.slot_start[info]] == tree.rules.n_cards + 2
    out[dec] = single & passing
    return out


def children_index(tree: GameTree) -> tuple[np.ndarray, np.ndarray]:
    """Each node's first child and number of children (children are contiguous)."""
    has = np.flatnonzero(tree.parent >= 0)
    count = np.bincount(tree.parent[has], minlength=tree.n_nodes)
    first = np.full(tree.n_nodes, -1, np.int64)
    parents, idx = np.unique(tree.parent[has], return_index=True)
    first[parents] = has[idx]
    return first, count


def deal_game(rules: Rules, deal_row: np.ndarray, record: bool = False) -> Game:
    """The :class:`~piquet_env.game.Game` of one of the tree's deals (player 0 elder)."""
    h = rules.hand_size
    row = [int(c) for c in deal_row]
    return Game(
        rules,
        mode="deal",
        deals=[(row[:h], row[h : 2 * h], row[2 * h :])],
        first_elder=0,
        record=record,
    )


def _tabulate_games(
    tree: GameTree,
    agent: ExactAgent,
    check: bool,
    progress: Callable[[int, int], None] | None,
) -> np.ndarray:
    first, count = children_index(tree)
    n_legal = np.diff(tree.slot_start)
    forced = forced_nodes(tree)
    dec = tree.player >= 0
    ask = np.zeros(tree.n_nodes, dtype=bool)
    ask[np.flatnonzero(dec) if check else tree.info_node] = True
    ask &= ~forced
    policy = np.zeros(tree.n_slots)
    single = np.flatnonzero(n_legal == 1)
    policy[tree.slot_start[single]] = 1.0
    answered = np.zeros(tree.n_infosets, dtype=bool)
    first_list, count_list = first.tolist(), count.tolist()
    slot_start, slot_action = tree.slot_start.tolist(), tree.slot_action.tolist()
    infoset, action, forced_l, ask_l = (
        tree.infoset.tolist(),
        tree.action.tolist(),
        forced.tolist(),
        ask.tolist(),
    )
    done, total = 0, int(ask.sum())
    for d, root in enumerate(tree.roots.tolist()):
        stack = [(root, deal_game(tree.rules, tree.deals[tree.deal[root]]))]
        while stack:
            node, game = stack.pop()
            if ask_l[node]:
                i = infoset[node]
                probs = agent.action_probabilities(Turn(game, game.current_player))
                a, b = slot_start[i], slot_start[i + 1]
                row = [float(probs.get(slot_action[s], 0.0)) for s in range(a, b)]
                if answered[i]:
                    if not np.allclose(row, policy[a:b], atol=1e-9):
                        raise ExactPolicyError(_inconsistent(agent.name))
                else:
                    if abs(sum(row) - 1.0) > 1e-6:
                        raise ExactPolicyError(
                            f"agent {agent.name!r}: probabilities summing to {sum(row)} over "
                            "the legal actions"
                        )
                    policy[a:b] = row
                    answered[i] = True
                done += 1
            c0, nc = first_list[node], count_list[node]
            for c in range(c0, c0 + nc):
                if forced_l[node]:
                    stack.append((c, game))  # the engine took the forced pass already
                else:
                    child = game.clone()
                    child.apply(action[c])
                    stack.append((c, child))
        if progress is not None and d % 16 == 15:
            progress(done, total)
    if progress is not None:
        progress(done, total)
    return policy


# ---------------------------------------------------------------------------- tabular policies


@dataclass
class TabularPolicy:
    """A policy over information-state keys: per information state its ``key`` ``(n, 2)``,
    ``player`` (0 elder, 1 younger) and legal actions (``legal``, a bitmask), and ``probs`` over
    its slots (``slot_start`` as in the tree). ``meta`` holds the rules and how it was made."""

    rules: Rules
    key: np.ndarray
    player: np.ndarray
    legal: np.ndarray
    slot_start: np.ndarray
    slot_action: np.ndarray
    probs: np.ndarray
    meta: dict[str, Any]

    @classmethod
    def from_tree(cls, tree: GameTree, policy: np.ndarray, **meta: Any) -> TabularPolicy:
        """The tree's policy ``policy`` with the tree's keys."""
        return cls(
            rules=tree.rules,
            key=tree.info_key,
            player=tree.info_player,
            legal=tree.info_legal,
            slot_start=tree.slot_start,
            slot_action=tree.slot_action,
            probs=np.asarray(policy, dtype=np.float64),
            meta=dict(meta),
        )

    def on_tree(self, tree: GameTree) -> np.ndarray:
        """This policy as a policy array of ``tree`` (the same rules and keys), or
        :class:`ExactPolicyError` when the tree's information states are not all here."""
        if tree.rules != self.rules:
            raise ExactPolicyError(
                f"a tabular policy of {self.rules.name!r} cannot play {tree.rules.name!r}"
            )
        idx = self.lookup(tree.info_key, tree.info_player)
        if (idx < 0).any():
            raise ExactPolicyError(
                f"the tabular policy lacks {int((idx < 0).sum())} of the tree's information states"
            )
        if (self.legal[idx] != tree.info_legal).any():
            raise ExactPolicyError("the tabular policy's legal actions differ from the tree's")
        return self.probs[slots_of(self.slot_start, idx)]

    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        if not hasattr(self, "_order"):
            packed = self.key[:, 0] ^ self.player.astype(np.uint64)
            self._order = np.argsort(packed, kind="stable")
            self._packed = packed[self._order]
        return self._order, self._packed

    def lookup(self, keys: np.ndarray, players: np.ndarray) -> np.ndarray:
        """The index of each key ``(k, 2)`` of ``players`` (-1 where absent)."""
        order, packed = self._sorted()
        want = np.asarray(keys)[:, 0] ^ np.asarray(players).astype(np.uint64)
        pos = np.searchsorted(packed, want).clip(0, max(packed.size - 1, 0))
        idx = order[pos] if packed.size else np.zeros(want.size, np.int64)
        hit = (packed.size > 0) & (packed[pos] == want)
        hit &= self.key[idx, 1] == np.asarray(keys)[:, 1]
        return np.where(hit, idx, -1)

    def probabilities(self, game: Game, player: int) -> dict[int, float]:
        """The action probabilities at ``player``'s turn in ``game``."""
        key = np.array([info_key(game, player)], dtype=np.uint64)
        i = int(self.lookup(key, np.array([0 if player == game.elder else 1]))[0])
        if i < 0:
            raise ExactPolicyError(
                "the tabular policy has no entry for this information state (a game of other "
                "rules, or a history its tree never reached)"
            )
        a, b = int(self.slot_start[i]), int(self.slot_start[i + 1])
        return {int(self.slot_action[s]): float(self.probs[s]) for s in range(a, b)}

    def save(self, path: str | Path) -> Path:
        """Write the policy to ``path`` (``.npz``), whole or not at all."""
        path = Path(path)
        meta = {
            "format": TABULAR_FORMAT,
            "version": TABULAR_VERSION,
            "rules": self.rules.name,
            "rules_fields": self.rules.to_dict(),
            **self.meta,
        }
        fd, tmp = temp_beside(path)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez_compressed(
                    f,
                    key=self.key,
                    player=self.player,
                    legal=self.legal,
                    slot_start=self.slot_start,
                    slot_action=self.slot_action,
                    probs=self.probs.astype(np.float32),
                    meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                )
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def load(cls, path: str | Path) -> TabularPolicy:
        """Read a tabular policy file (no pickles: plain arrays); :class:`ExactPolicyError` for a
        file that is not one."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise ExactPolicyError(f"{path}: not a tabular policy file ({exc})") from None
        need = {"key", "player", "legal", "slot_start", "slot_action", "probs", "meta"}
        if not need <= set(arrays):
            raise ExactPolicyError(
                f"{path}: not a tabular policy file (lacks {sorted(need - set(arrays))})"
            )
        try:
            meta = json.loads(arrays["meta"].tobytes().decode())
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ExactPolicyError(f"{path}: its metadata is not JSON") from None
        if not isinstance(meta, dict) or meta.get("format") != TABULAR_FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else None
            raise ExactPolicyError(f"{path}: not a tabular policy file (format {found!r})")
        if meta.get("version") != TABULAR_VERSION:
            raise ExactPolicyError(
                f"{path}: tabular policy format version {meta.get('version')!r}; this version "
                f"reads {TABULAR_VERSION}"
            )
        try:
            rules = make_rules(str(meta["rules"]))
        except (KeyError, ValueError) as exc:
            raise ExactPolicyError(f"{path}: its rules are unreadable ({exc})") from None
        n = arrays["key"].shape[0]
        ok = (
            arrays["key"].shape == (n, 2)
            and arrays["player"].shape == (n,)
            and arrays["legal"].shape == (n,)
            and arrays["slot_start"].shape == (n + 1,)
            and arrays["probs"].shape
            == arrays["slot_action"].shape
            == (int(arrays["slot_start"][-1]),)
        )
        if not ok:
            raise ExactPolicyError(f"{path}: its arrays do not fit together")
        meta = {
            k: v for k, v in meta.items() if k not in ("format", "version", "rules", "rules_fields")
        }
        return cls(
            rules=rules,
            key=arrays["key"].astype(np.uint64),
            player=arrays["player"].astype(np.int8),
            legal=arrays["legal"].astype(np.uint64),
            slot_start=arrays["slot_start"].astype(np.int64),
            slot_action=arrays["slot_action"].astype(np.int8),
            probs=arrays["probs"].astype(np.float64),
            meta=meta,
        )


def is_tabular_file(path: str | Path) -> bool:
    """Whether ``path`` is a ``.npz`` file naming the tabular policy format."""
    path = Path(path)
    if path.suffix != ".npz" or not path.is_file():
        return False
    try:
        with np.load(path, allow_pickle=False) as z:
            if "meta" not in z.files:
                return False
            return json.loads(z["meta"].tobytes().decode()).get("format") == TABULAR_FORMAT
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return False


class TabularAgent:
    """A :class:`TabularPolicy` as an agent: plays its probabilities (sampled, seeded; or the
    most probable action with ``greedy=True``)."""

    def __init__(
        self,
        policy: TabularPolicy,
        *,
        greedy: bool = False,
        seed: int | None = None,
        name: str = "tabular",
    ) -> None:
        self.policy = policy
        self.greedy = greedy
        self.name = name
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def tree_policy(self, tree: GameTree) -> np.ndarray:
        """This agent as a policy of ``tree`` (read from the table, not asked turn by turn)."""
        probs = self.policy.on_tree(tree)
        if not self.greedy:
            return probs
        best = np.maximum.reduceat(probs, tree.slot_start[:-1])
        top = np.flatnonzero(probs == np.repeat(best, np.diff(tree.slot_start)))
        owners = tree.slot_owner[top]
        first = top[np.r_[True, owners[1:] != owners[:-1]]]  # ties: the lowest action
        out = np.zeros_like(probs)
        out[first] = 1.0
        return out

    def action_probabilities(self, turn: Turn) -> dict[int, float]:
        """The policy's probabilities at ``turn`` (one action at 1 when greedy)."""
        probs = self.policy.probabilities(turn.game, turn.player)
        if self.greedy:
            best = max(sorted(probs), key=lambda a: probs[a])  # ties: the lowest action
            return {best: 1.0}
        return probs

    def act(self, turn: Turn) -> int:
        """An action drawn from the policy (its most probable with ``greedy``)."""
        if turn.game.rules != self.policy.rules:
            raise ExactPolicyError(
                f"tabular policy {self.name!r} is of {self.policy.rules.name!r}, not "
                f"{turn.game.rules.name!r}"
            )
        probs = self.action_probabilities(turn)
        actions = sorted(probs)
        p = np.array([probs[a] for a in actions])
        return int(actions[int(self._rng.choice(len(actions), p=p / p.sum()))])
