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
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

import numpy as np

from piquet_env.actions import n_actions
from piquet_env.agent import RandomAgent, Turn
from piquet_env.exact.keys import info_key
from piquet_env.exact.solve import CFRPlus, uniform_policy
from piquet_env.exact.tree import GameTree, TreeError, check_size, legal_bits, node_states
from piquet_env.files import whole_file
from piquet_env.game import Game
from piquet_env.rules import Rules, make_rules
from piquet_env.untrusted import UntrustedError, file_kind, parse_json, short_json
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
        """The action probabilities at ``player``'s turn in ``game``: :class:`ExactPolicyError`
        where the policy has no entry for it, or an entry whose actions are not the game's
        legal ones (a file that passed its checks but is of another tree)."""
        key = np.array([info_key(game, player)], dtype=np.uint64)
        i = int(self.lookup(key, np.array([0 if player == game.elder else 1]))[0])
        if i < 0:
            raise ExactPolicyError(
                "the tabular policy has no entry for this information state (a game of other "
                "rules, or a history its tree never reached)"
            )
        a, b = int(self.slot_start[i]), int(self.slot_start[i + 1])
        probs = {int(self.slot_action[s]): float(self.probs[s]) for s in range(a, b)}
        legal = sorted(game.legal_actions())
        if sorted(probs) != legal:
            raise ExactPolicyError(
                f"the tabular policy's information state {i} plays actions {sorted(probs)}, "
                f"where the game allows {legal} (a policy of another tree)"
            )
        return probs

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
        with whole_file(path) as f:
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
        return path

    @classmethod
    def load(cls, path: str | Path) -> TabularPolicy:
        """Read a tabular policy file (no pickles: plain arrays), checked before it is trusted
        (:func:`read_tabular_arrays`); :class:`ExactPolicyError`, one line naming the file and
        what is wrong, for a file that is not one."""
        path = Path(path)
        rules, arrays, meta = read_tabular_arrays(path)
        meta = {
            k: v for k, v in meta.items() if k not in ("format", "version", "rules", "rules_fields")
        }
        return cls(
            rules=rules,
            key=arrays["key"].astype(np.uint64, copy=False),
            player=arrays["player"].astype(np.int8, copy=False),
            legal=arrays["legal"].astype(np.uint64, copy=False),
            slot_start=arrays["slot_start"].astype(np.int64, copy=False),
            slot_action=arrays["slot_action"].astype(np.int8, copy=False),
            probs=arrays["probs"].astype(np.float64, copy=False),
            meta=meta,
        )


# ------------------------------------------------------------------ reading a policy file safely

MAX_TABULAR_FILE_BYTES = 4 << 30
"""The largest tabular policy file read (the ``mini`` solution is some tens of MiB)."""
MAX_META_BYTES = 1 << 20
"""The largest metadata member (JSON) of a tabular policy file."""
PROBABILITY_ATOL = 1e-4
"""How far from 1 an information state's stored probabilities (float32) may sum."""
CFR_CHECKPOINT_FORMAT = "piquet-cfr-checkpoint"
"""The ``format`` a CFR+ solver checkpoint's metadata names."""
CFR_CHECKPOINT_VERSION = 1
_FORMAT_NAMES = {
    TABULAR_FORMAT: "a tabular policy file",
    CFR_CHECKPOINT_FORMAT: "a CFR+ checkpoint",
}
_ARRAYS = {  # member: (dtype kinds accepted, dimensions)
    "key": ("u", 2),
    "player": ("iu", 1),
    "legal": ("u", 1),
    "slot_start": ("iu", 1),
    "slot_action": ("iu", 1),
    "probs": ("f", 1),
}


def read_tabular_arrays(path: str | Path) -> tuple[Rules, dict[str, np.ndarray], dict[str, Any]]:
    """The rules, arrays and metadata of the tabular policy file ``path``, read without trusting
    it (:func:`read_checked_npz`, with the members' declared sizes fitted together before any
    data is read: ``_fit_tabular``), and then its values: players 0 or 1, each information
    state's actions in range, ascending and its legal set, its probabilities finite,
    non-negative and summing to 1. Raises :class:`ExactPolicyError` naming the file and the
    first thing wrong."""
    path = Path(path)
    rules, arrays, meta = read_checked_npz(
        path, _ARRAYS, TABULAR_FORMAT, TABULAR_VERSION, fit=_fit_tabular
    )
    _check_values(path, rules, arrays)
    return rules, arrays, meta


@dataclass(frozen=True)
class NpyMember:
    """One ``.npy`` member of an ``.npz`` file as its zip entry and its header declare it,
    before its data is read: ``info`` (the zip entry: ``file_size`` declared, ``compress_size``
    stored), ``shape``, ``dtype``, ``fortran`` order and the header's length in bytes."""

    info: zipfile.ZipInfo
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool
    header_bytes: int

    @property
    def data_bytes(self) -> int:
        """The bytes of data the header declares."""
        return int(np.prod(self.shape, dtype=object)) * self.dtype.itemsize


Fit = Callable[[Rules, dict[str, NpyMember]], None]
"""A format's check of its members' declared shapes and sizes against each other and against
its rules, made before any member's data is read (``_MemberError`` says what is wrong)."""


def read_checked_npz(
    path: Path,
    members: Mapping[str, tuple[str, int]],
    fmt: str,
    version: int,
    fit: Fit | None = None,
) -> tuple[Rules, dict[str, np.ndarray], dict[str, Any]]:
    """The rules, arrays and metadata of an ``.npz`` file of format ``fmt`` (a tabular policy,
    a solver's checkpoint), read without trusting it: a regular file of at most
    :data:`MAX_TABULAR_FILE_BYTES`; a zip whose members (``members``: name -> dtype kinds and
    dimensions, and ``meta``) are checked by their ``.npy`` headers alone (dtype, shape, the
    declared size exactly the header's and the data's), each and all together at most what the
    tree of its rules could need, and by ``fit`` (the format's own check of the declared
    sizes), before any member's data is decompressed; strict JSON metadata naming ``fmt``,
    ``version`` and readable rules. :class:`ExactPolicyError` names the file and the first thing
    wrong."""
    what = _FORMAT_NAMES.get(fmt, fmt)
    try:
        with _open_regular(path, what) as f, zipfile.ZipFile(f) as zf:
            found = {info.filename: info for info in zf.infolist()}
            lacking = [k for k in ["meta", *members] if f"{k}.npy" not in found]
            if lacking:
                raise ExactPolicyError(f"{path}: not {what} (lacks {lacking})")
            head = _member_head(zf, found["meta.npy"], "u", 1, MAX_META_BYTES)
            meta, rules = _read_meta(path, _member_data(zf, head), fmt, version)
            limit = _element_limit(path, rules)
            heads = {
                name: _member_head(zf, found[f"{name}.npy"], kinds, ndim, limit)
                for name, (kinds, ndim) in members.items()
            }
            declared = sum(h.data_bytes for h in heads.values())
            most = sum(limit * max(ndim, 1) * 8 for _, ndim in members.values())
            if declared > most:
                raise _MemberError(
                    f"its members declare {declared:,} bytes in all, more than the {most:,} a "
                    f"{what} of its rules could need"
                )
            if fit is not None:
                fit(rules, heads)
            arrays = {name: _member_data(zf, h) for name, h in heads.items()}
    except ExactPolicyError:
        raise
    except _MemberError as exc:
        raise ExactPolicyError(f"{path}: {exc}") from None
    except UntrustedError as exc:
        raise ExactPolicyError(str(exc)) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error) as exc:
        raise ExactPolicyError(f"{path}: not {what} (a broken zip: {exc})") from None
    except (OSError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise ExactPolicyError(f"{path}: not {what} ({exc})") from None
    return rules, arrays, meta


class _MemberError(ValueError):
    """A zip member that is not the array it should be (the file is named by the caller)."""


def _open_regular(path: Path, what: str) -> BinaryIO:
    """``path`` opened for reading, once it is known to be a regular file (a FIFO would block)
    of at most :data:`MAX_TABULAR_FILE_BYTES`; :class:`UntrustedError` otherwise."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UntrustedError(f"{path}: no such file") from None
    if not stat.S_ISREG(info.st_mode):
        raise UntrustedError(f"{path}: is {file_kind(info.st_mode)}, not {what}")
    if info.st_size > MAX_TABULAR_FILE_BYTES:
        raise UntrustedError(
            f"{path}: {info.st_size:,} bytes, over the {MAX_TABULAR_FILE_BYTES >> 30} GiB "
            f"{what} may take"
        )
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped in between
        f.close()
        raise UntrustedError(f"{path}: not a regular file")
    return f


_MAX_NPY_HEADER = 4096
"""The longest ``.npy`` header read (numpy writes some 128 bytes)."""


def _member_head(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, kinds: str, ndim: int, max_elements: int
) -> NpyMember:
    """One ``.npy`` member's header, read alone (a few hundred bytes decompressed): its dtype of
    one of ``kinds`` and its ``ndim``-dimensional shape of at most ``max_elements`` a dimension,
    and the zip entry's declared size exactly the header's and the data's, checked before any of
    its data is read."""
    name = info.filename[: -len(".npy")]
    bound = max_elements * 8 * max(ndim, 1) + _MAX_NPY_HEADER  # the data and a header
    if info.file_size > bound:
        raise _MemberError(
            f"member {name!r} declares {info.file_size:,} bytes, more than the {bound:,} a "
            "policy of its rules could need"
        )
    with zf.open(info) as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"npy format version {version}")
        except ValueError as exc:
            raise _MemberError(f"member {name!r} is not a plain array ({exc})") from None
        header_bytes = f.tell()
    if dtype.hasobject or dtype.kind not in kinds or dtype.itemsize > 8 or dtype.fields:
        raise _MemberError(f"member {name!r} has dtype {dtype}, not one of kind {kinds!r}")
    if len(shape) != ndim:
        raise _MemberError(f"member {name!r} has shape {shape}, not {ndim}-dimensional")
    head = NpyMember(info, tuple(shape), dtype, bool(fortran), header_bytes)
    if int(np.prod(shape, dtype=object)) > max_elements * max(ndim, 1):
        raise _MemberError(
            f"member {name!r} has shape {shape}, more than a policy of its rules could need"
        )
    if info.file_size != header_bytes + head.data_bytes:
        raise _MemberError(
            f"member {name!r} declares {info.file_size:,} bytes, not the "
            f"{header_bytes + head.data_bytes:,} of its header's shape {shape}"
        )
    return head


def _member_data(zf: zipfile.ZipFile, head: NpyMember) -> np.ndarray:
    """The data of a member whose header :func:`_member_head` checked: exactly the bytes it
    declares, read once, as an array (no copy)."""
    with zf.open(head.info) as f:
        f.read(head.header_bytes)
        data = f.read(head.data_bytes)
    if len(data) != head.data_bytes:
        raise _MemberError(f"member {head.info.filename[:-4]!r} is cut short")
    order = "F" if head.fortran else "C"
    return np.frombuffer(data, dtype=head.dtype).reshape(head.shape, order=order)


KEY_STORED_RATIO = 2
"""How many times its stored (compressed) size a tabular policy's ``key`` member may declare:
keys are 128-bit hashes, which deflate cannot shrink (a saved policy's are stored at 1.0)."""
_NARROW = {"player": 1, "slot_action": 1}
"""The widest dtype, in bytes, of the members a policy saves as ``int8``."""


def _fit_tabular(rules: Rules, heads: dict[str, NpyMember]) -> None:
    """A tabular policy's members declared as one policy, before any data is read: ``n``
    information states of keys (``(n, 2)``, declared at most :data:`KEY_STORED_RATIO` times
    their stored size, so ``n`` is bounded by the file's own bytes), players, legal sets and
    ``n + 1`` slot starts, and ``m`` slots of actions and probabilities, at most
    ``n`` times the rules' actions. Everything read is then a small multiple of the file."""
    key = heads["key"]
    n = key.shape[0]
    stored = key.info.compress_size
    if key.data_bytes > KEY_STORED_RATIO * stored + _MAX_NPY_HEADER:
        raise _MemberError(
            f"member 'key' declares {key.data_bytes:,} bytes stored in {stored:,}: keys are "
            "hashes, which do not compress"
        )
    for name, width in _NARROW.items():
        if heads[name].dtype.itemsize > width:
            raise _MemberError(f"member {name!r} has dtype {heads[name].dtype}, wider than int8")
    m = heads["slot_action"].shape[0]
    fits = (
        key.shape == (n, 2)
        and heads["player"].shape == (n,)
        and heads["legal"].shape == (n,)
        and heads["slot_start"].shape == (n + 1,)
        and heads["probs"].shape == (m,)
        and m <= n * n_actions(rules)
    )
    if not fits:
        shapes = ", ".join(f"{k} {h.shape}" for k, h in heads.items())
        raise _MemberError(f"its arrays do not fit together ({shapes})")


def _read_meta(path: Path, raw: np.ndarray, fmt: str, version: int) -> tuple[dict[str, Any], Rules]:
    """The metadata (strict JSON) and the rules it names, checked."""
    try:
        meta = parse_json(raw.tobytes().decode())
    except (UnicodeDecodeError, UntrustedError) as exc:
        raise ExactPolicyError(f"{path}: its metadata is not JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise ExactPolicyError(
            f"{path}: not {_FORMAT_NAMES.get(fmt, fmt)} (format {short_json(found)})"
        )
    if meta.get("version") != version:
        raise ExactPolicyError(
            f"{path}: format {fmt} version {short_json(meta.get('version'))}; this version "
            f"reads {version}"
        )
    if not isinstance(meta.get("rules"), str):
        raise ExactPolicyError(
            f"{path}: its rules are unreadable (not a name: {short_json(meta.get('rules'))})"
        )
    try:
        rules = make_rules(meta["rules"])
    except ValueError as exc:
        raise ExactPolicyError(f"{path}: its rules are unreadable ({exc})") from None
    return meta, rules


def _element_limit(path: Path, rules: Rules) -> int:
    """The most information states or slots a policy of ``rules`` could have: no more than the
    histories of its tree (twice the estimate, a margin)."""
    try:
        return 2 * check_size(rules) + 16
    except TreeError as exc:
        raise ExactPolicyError(f"{path}: {exc}") from None


def _check_values(path: Path, rules: Rules, arrays: dict[str, np.ndarray]) -> None:
    """Players, slots, actions and probabilities of a policy file, each checked."""
    player, start = arrays["player"], arrays["slot_start"].astype(np.int64, copy=False)
    if player.size == 0:
        raise ExactPolicyError(f"{path}: no information states (a policy plays none of its games)")
    action = arrays["slot_action"].astype(np.int64)
    probs = arrays["probs"].astype(np.float64, copy=False)
    bad = np.flatnonzero((player != 0) & (player != 1))
    if bad.size:
        raise ExactPolicyError(
            f"{path}: information state {bad[0]} has player {player[bad[0]]}, not 0 or 1"
        )
    n_slots = action.size
    if start[0] != 0 or start[-1] != n_slots or (np.diff(start) < 1).any():
        raise ExactPolicyError(
            f"{path}: its slot starts are not ascending from 0 to its {n_slots} slots"
        )
    if n_slots == 0:
        return
    n_act = n_actions(rules)
    bad = np.flatnonzero((action < 0) | (action >= n_act))
    if bad.size:
        raise ExactPolicyError(
            f"{path}: slot {bad[0]} plays action {action[bad[0]]}, outside 0..{n_act - 1}"
        )
    bits = np.left_shift(np.uint64(1), action.astype(np.uint64))
    rising = np.r_[True, np.diff(action) > 0]
    rising[start[:-1]] = True  # each information state's run starts afresh
    joined = np.bitwise_or.reduceat(bits, start[:-1])
    bad = np.flatnonzero(
        (joined != arrays["legal"].astype(np.uint64)) | ~np.logical_and.reduceat(rising, start[:-1])
    )
    if bad.size:
        raise ExactPolicyError(
            f"{path}: information state {bad[0]}'s actions are not its legal actions, each once "
            "in ascending order"
        )
    packed = arrays["key"][:, 0].astype(np.uint64) ^ player.astype(np.uint64)
    order = np.argsort(packed, kind="stable")
    same = np.flatnonzero(packed[order][1:] == packed[order][:-1])
    if same.size:
        i, j = sorted((int(order[same[0]]), int(order[same[0] + 1])))
        raise ExactPolicyError(
            f"{path}: information states {i} and {j} have the same key (one could never be found)"
        )
    bad = np.flatnonzero(~np.isfinite(probs) | (probs < 0))
    if bad.size:
        raise ExactPolicyError(
            f"{path}: slot {bad[0]} has probability {probs[bad[0]]}, not a finite number of "
            "at least 0"
        )
    sums = np.add.reduceat(probs, start[:-1])
    bad = np.flatnonzero(np.abs(sums - 1.0) > PROBABILITY_ATOL)
    if bad.size:
        raise ExactPolicyError(
            f"{path}: information state {bad[0]}'s probabilities sum to {sums[bad[0]]:.6g}, not 1"
        )


# ---------------------------------------------------------------------------- solver checkpoints

_CHECKPOINT_ARRAYS = {"regrets": ("f", 1), "strategy_sum": ("f", 1)}


def save_cfr_checkpoint(solver: CFRPlus, path: str | Path, **meta: Any) -> Path:
    """Write a CFR+ solver's state (its regrets and strategy sums, float64, and its iteration
    count and seconds) to ``path`` (``.npz``), whole or not at all (a temporary file beside it,
    then renamed over it); ``meta`` is kept beside (JSON). :func:`load_cfr_checkpoint` reads it
    back, and the run continues bit for bit."""
    path = Path(path)
    doc = {
        "format": CFR_CHECKPOINT_FORMAT,
        "version": CFR_CHECKPOINT_VERSION,
        "rules": solver.tree.rules.name,
        **meta,
        "iterations": solver.iterations,
        "seconds": solver.seconds,
    }
    with whole_file(path) as f:
        np.savez(
            f,
            regrets=np.asarray(solver.regrets, dtype=np.float64),
            strategy_sum=np.asarray(solver.strategy_sum, dtype=np.float64),
            meta=np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8),
        )
    return path


MAX_CHECKPOINT_VALUE = 1e300
"""The largest regret or strategy sum a checkpoint may hold: far beyond any run's (a strategy sum
grows as the square of the iterations), and far enough below a float's range that the sums over
an information state's slots, and the iterations to come, stay finite."""


def cfr_checkpoint_rules(path: str | Path) -> tuple[Rules, dict[str, Any]]:
    """The rules and metadata a CFR+ checkpoint names, read from its metadata alone (checked as
    :func:`read_checked_npz` checks it), so that a checkpoint of other rules is refused before
    their tree is built. :class:`ExactPolicyError` names the file and what is wrong."""
    rules, _, meta = read_checked_npz(Path(path), {}, CFR_CHECKPOINT_FORMAT, CFR_CHECKPOINT_VERSION)
    return rules, meta


def load_cfr_checkpoint(tree: GameTree, path: str | Path) -> tuple[CFRPlus, dict[str, Any]]:
    """A CFR+ solver of ``tree`` where the checkpoint ``path`` left it, and the checkpoint's
    other metadata; read as untrusting as a tabular policy (:func:`read_checked_npz`): of the
    tree's rules, one regret and strategy sum per slot, each from 0 to
    :data:`MAX_CHECKPOINT_VALUE`, a count of iterations and of seconds. :class:`ExactPolicyError`
    names the file and what is wrong."""
    path = Path(path)
    rules, arrays, meta = read_checked_npz(
        path, _CHECKPOINT_ARRAYS, CFR_CHECKPOINT_FORMAT, CFR_CHECKPOINT_VERSION
    )
    if rules != tree.rules:
        raise ExactPolicyError(
            f"{path}: a checkpoint of {rules.name!r}, not of {tree.rules.name!r}"
        )
    for name in _CHECKPOINT_ARRAYS:
        a = arrays[name]
        if a.shape != (tree.n_slots,):
            raise ExactPolicyError(
                f"{path}: {name} has shape {a.shape}, not the tree's {tree.n_slots} slots"
            )
        bad = np.flatnonzero(~np.isfinite(a) | (a < 0) | (a > MAX_CHECKPOINT_VALUE))
        if bad.size:
            raise ExactPolicyError(
                f"{path}: {name}[{bad[0]}] is {a[bad[0]]}, not a number from 0 to "
                f"{MAX_CHECKPOINT_VALUE:g}"
            )
    iterations, seconds = meta.get("iterations"), meta.get("seconds")
    if not (isinstance(iterations, int) and not isinstance(iterations, bool) and iterations >= 0):
        raise ExactPolicyError(f"{path}: iterations is {short_json(iterations)}, not a count")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        raise ExactPolicyError(f"{path}: seconds is {short_json(seconds)}, not a duration")
    solver = CFRPlus(
        tree,
        iterations=iterations,
        regrets=arrays["regrets"].astype(np.float64),
        strategy_sum=arrays["strategy_sum"].astype(np.float64),
        seconds=float(seconds),
    )
    rest = {
        k: v
        for k, v in meta.items()
        if k not in ("format", "version", "rules", "iterations", "seconds")
    }
    return solver, rest


def is_tabular_file(path: str | Path) -> bool:
    """Whether ``path`` names a tabular policy file: a ``.npz`` path that exists (what it holds
    is checked when it is read: :meth:`TabularPolicy.load`)."""
    path = Path(path)
    return path.suffix == ".npz" and os.path.lexists(path)


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
        try:
            probs = self.action_probabilities(turn)
        except ExactPolicyError as exc:
            raise ExactPolicyError(f"tabular policy {self.name}: {exc}") from None
        actions = sorted(probs)
        p = np.array([probs[a] for a in actions])
        return int(actions[int(self._rng.choice(len(actions), p=p / p.sum()))])
