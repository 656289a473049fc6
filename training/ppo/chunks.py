"""Collection fanned out by numbered chunks, learning in one place.

An update's ``games_per_update`` games are cut into chunks of ``chunk_games`` (:func:`plan_chunks`),
each with its own seed (:func:`piquet_training.seeds.chunk_seed`: the run's seed, the update, the
chunk's number). A chunk is played on the batched engine by
:meth:`~piquet_training.ppo.vector_collector.VectorCollector.play_chunk`, every random draw from
its seed, with the update's weights: so a chunk gives the same rows wherever it is collected.

:class:`ChunkedCollection` is the driver's side. With one worker and no Ray it plays the chunks
here, one after the other, straight into its collector's row store. Otherwise it fans them out
through the evaluation's executor (:class:`~piquet_training.evaluation.executor.Fanout`: local
processes or Ray tasks), sending the update's weights once (:class:`Weights`, Ray's object store
holds them for every task of the update), checks each chunk's rows as untrusted input
(:func:`check_chunk_rows`), and appends them to the row store in chunk order. Either way the
learner's values are computed here, in one batched pass, and the rollout is the same, bit for bit.

The executor's tasks are plain functions (:func:`collect_chunk`), not actors: a worker process
keeps the collector it built for a run (``_WORKERS``, its batched engine and row store), so
what a long-lived collector would hold survives between tasks, while a killed worker or a lost
node costs only its chunk, which the executor runs again from the chunk's seed. Collectors run on
the CPU with one torch thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from piquet_agents.network import ActorCritic
from piquet_env.rules import Rules
from piquet_training.evaluation.executor import AgentFiles, Executor, Fanout, ResultError
from piquet_training.ppo.collector import Collection, CollectionCounts, Rollout
from piquet_training.ppo.pool import Opponent, OpponentPool
from piquet_training.ppo.vector_collector import Played, VectorCollector
from piquet_training.seeds import chunk_seed

__all__ = [
    "Chunk",
    "ChunkRows",
    "ChunkedCollection",
    "CollectorSpec",
    "Weights",
    "check_chunk_rows",
    "collect_chunk",
    "plan_chunks",
]


@dataclass(frozen=True)
class Chunk:
    """Chunk ``index`` of an update: ``games`` games numbered from ``first``, played from
    ``seed``."""

    index: int
    first: int
    games: int
    seed: int


def plan_chunks(seed: int, update: int, games: int, chunk_games: int) -> list[Chunk]:
    """Update ``update``'s ``games`` games in chunks of ``chunk_games`` (the last one smaller),
    each seeded by :func:`~piquet_training.seeds.chunk_seed`.

    >>> [(c.index, c.first, c.games) for c in plan_chunks(0, 0, 10, 4)]
    [(0, 0, 4), (1, 4, 4), (2, 8, 2)]
    """
    if games < 1 or chunk_games < 1:
        raise ValueError(f"games and chunk_games must be at least 1, got {games}, {chunk_games}")
    return [
        Chunk(k, first, min(chunk_games, games - first), chunk_seed(seed, update=update, chunk=k))
        for k, first in enumerate(range(0, games, chunk_games))
    ]


# ------------------------------------------------------------------------ what travels


@dataclass(frozen=True)
class CollectorSpec:
    """What a collector is built from, the same for a whole run (small, hashable: a worker
    keeps the collector it built for it): the collection, the learner's architecture, the
    pool's weights and size, and each agent opponent's spec and how it acts."""

    collection: Collection
    arch: tuple[tuple[str, Any], ...]
    """The learner's :meth:`~piquet_agents.network.ActorCritic.arch`, as sorted items."""
    weights: tuple[tuple[str, float], ...]
    """The pool's kinds and weights, as configured (the pool derives its probabilities)."""
    pool_size: int
    opponents: tuple[tuple[str, str, str, bool], ...]
    """Each opponent: ``(label, spec, how, greedy)``, ``how`` one of ``"network"`` (its weights
    travel in :class:`Weights`), ``"random"`` or ``"agent"`` (made from its spec on the node)."""
    precision: str
    seed: int
    """The run's seed: the agents' own (each game reseeds them)."""

    @classmethod
    def of(
        cls,
        collection: Collection,
        pool: OpponentPool,
        weights: dict[str, float],
        precision: str,
        seed: int,
    ) -> CollectorSpec:
        """The spec of the collector that collects ``collection`` against ``pool`` (built with
        ``weights``)."""
        opponents = []
        for label, opponent in pool.opponents.items():
            how = (
                "network"
                if opponent.network is not None
                else "random"
                if opponent.random
                else "agent"
            )
            opponents.append((label, opponent.spec, how, bool(opponent.greedy)))
        arch = pool.learner.arch()
        return cls(
            collection,
            tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in arch.items())),
            tuple(weights.items()),
            pool.size,
            tuple(opponents),
            precision,
            seed,
        )

    def agent_specs(self) -> list[str]:
        """The specs of the opponents made on the node (their files are checked there)."""
        return [spec for _, spec, how, _ in self.opponents if how == "agent"]


def _state(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """A network's weights as NumPy arrays (CPU, float32 as trained)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


@dataclass(frozen=True)
class Weights:
    """What an update's collectors need that changes: the learner's weights, the pool's
    snapshots (with the update each was taken at) and the network opponents' weights. Sent once
    per update."""

    learner: dict[str, np.ndarray]
    snapshots: tuple[tuple[int, dict[str, np.ndarray]], ...]
    networks: dict[str, dict[str, np.ndarray]]

    @classmethod
    def of(cls, pool: OpponentPool) -> Weights:
        """The weights ``pool``'s games are played with now."""
        return cls(
            _state(pool.learner),
            tuple(zip(pool.snapshot_updates, map(_state, pool.snapshots))),
            {
                label: _state(o.network)
                for label, o in pool.opponents.items()
                if o.network is not None
            },
        )


@dataclass
class ChunkRows:
    """What a collector sends back for a chunk: the rows it recorded in batch (the row store's
    columns, in recording order), the agent games' rollouts and the counts."""

    index: int
    rows: dict[str, np.ndarray]
    played: Played


# --------------------------------------------------------------------------- the node side


class _Worker:
    """A collector built for one :class:`CollectorSpec`, kept by a worker process between
    tasks: the batched engine, the row store, the learner's and the snapshots' networks."""

    def __init__(self, spec: CollectorSpec) -> None:
        from piquet_agents.registry import make_agent
        from piquet_env.agent import RandomAgent

        self.spec = spec
        arch = dict(spec.arch)
        self.arch = {**arch, "hidden": list(arch["hidden"])}
        self.collector = VectorCollector(
            spec.collection, np.random.default_rng(0), precision=spec.precision
        )
        self.learner = self._network()
        rules: Rules = spec.collection.rules
        opponents: dict[str, Opponent] = {}
        self.networks: dict[str, ActorCritic] = {}
        for label, agent_spec, how, greedy in spec.opponents:
            if how == "network":
                net = self.networks[label] = self._network()
                opponents[label] = Opponent(agent_spec, network=net, greedy=greedy)
            elif how == "random":
                opponents[label] = Opponent(agent_spec, RandomAgent, random=True)
            else:
                opponents[label] = Opponent(
                    agent_spec,
                    lambda s=agent_spec: make_agent(s, rules, seed=spec.seed),
                )
        self.pool = OpponentPool(
            self.learner, dict(spec.weights), size=spec.pool_size, opponents=opponents
        )
        self.snapshots: dict[int, ActorCritic] = {}

    def _network(self) -> ActorCritic:
        return ActorCritic.from_arch(self.arch).eval().requires_grad_(False)

    def load(self, weights: Weights) -> None:
        """Put the update's weights in place (a snapshot's network is made once)."""
        _load(self.learner, weights.learner)
        for label, state in weights.networks.items():
            _load(self.networks[label], state)
        snapshots = {}
        for update, state in weights.snapshots:
            net = self.snapshots.get(update)
            if net is None:
                net = self._network()
                _load(net, state)
            snapshots[update] = net
        self.snapshots = snapshots
        self.pool.snapshots = list(snapshots.values())
        self.pool.snapshot_updates = list(snapshots)

    def collect(self, chunk: Chunk) -> ChunkRows:
        """Play ``chunk`` and copy its rows out of the store (the next chunk reuses it)."""
        col = self.collector
        col.clear(chunk.games)
        played = col.play_chunk(self.pool, chunk.seed, chunk.games, chunk.first)
        rows = {k: v.copy() for k, v in col.rows().items()}
        return ChunkRows(chunk.index, rows, played)


def _load(model: ActorCritic, state: dict[str, np.ndarray]) -> None:
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()})


_WORKERS: dict[CollectorSpec, _Worker] = {}
"""The collector this worker process built for a run (one: a new run's replaces it)."""


def collect_chunk(spec: CollectorSpec, weights: Weights, chunk: Chunk) -> ChunkRows:
    """Collect one chunk on this node (an executor task): the process's collector for ``spec``
    (built at its first chunk), ``weights`` put in place, the chunk played from its seed."""
    worker = _WORKERS.get(spec)
    if worker is None:
        _WORKERS.clear()
        worker = _WORKERS[spec] = _Worker(spec)
    worker.load(weights)
    return worker.collect(chunk)


# ------------------------------------------------------------------------------ the checks


def check_chunk_rows(spec: CollectorSpec, chunk: Chunk, result: object) -> None:
    """Check what a collector sent back for ``chunk`` before the learner uses it: its chunk
    number, every column's dtype and shape, finite values, legal actions, game numbers within
    the chunk's, and the game count; :class:`~piquet_training.evaluation.executor.ResultError`
    says what is wrong."""
    if not isinstance(result, ChunkRows):
        raise ResultError(f"a chunk's result is a {type(result).__name__}, not ChunkRows")
    if result.index != chunk.index:
        raise ResultError(f"the result of chunk {result.index!r:.20} came back for {chunk.index}")
    played = result.played
    if not isinstance(played, Played) or not isinstance(played.counts, CollectionCounts):
        raise ResultError("the chunk's counts are missing")
    enc_size, n_actions, state_size = _sizes(spec.collection)
    columns = {
        "masks": ((n_actions,), np.int8),
        "actions": ((), np.int64),
        "logprobs": ((), np.float32),
        "rewards": ((), np.float64),
        "keys": ((), np.int64),
    }
    if spec.collection.record_states:
        columns["states"] = ((state_size,), np.float32)
    else:
        columns["obs"] = ((enc_size,), np.float32)
    rows = result.rows
    if not isinstance(rows, dict) or set(rows) != set(columns):
        raise ResultError(f"the chunk's columns are {sorted(rows)!r:.200}, not {sorted(columns)}")
    n = None
    for key, (shape, dtype) in columns.items():
        arr = rows[key]
        if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.shape[1:] != shape:
            got = f"{getattr(arr, 'dtype', type(arr).__name__)} {getattr(arr, 'shape', '')}"
            raise ResultError(f"column {key} is {got}, not {np.dtype(dtype)} (n, {shape})")
        n = len(arr) if n is None else n
        if len(arr) != n:
            raise ResultError(f"column {key} has {len(arr)} rows, not {n}")
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            raise ResultError(f"column {key} holds values that are not finite")
    masks, actions = rows["masks"], rows["actions"]
    if ((masks != 0) & (masks != 1)).any():
        raise ResultError("a mask holds values other than 0 and 1")
    if ((actions < 0) | (actions >= n_actions)).any():
        raise ResultError("an action is out of range")
    if n and not masks[np.arange(n), actions].all():
        raise ResultError("an action is illegal under its mask")
    if (rows["logprobs"] > 0).any():
        raise ResultError("a log-probability is above 0")
    keys = rows["keys"]
    if ((keys < 2 * chunk.first) | (keys >= 2 * (chunk.first + chunk.games))).any():
        raise ResultError("a row belongs to a game outside the chunk")
    agent_games = 0
    for part in played.agent_parts:
        if not isinstance(part, Rollout):
            raise ResultError(f"an agent game's rollout is a {type(part).__name__}")
        _check_rollout(part, enc_size, n_actions)
        agent_games += part.games
    if played.batched_games + agent_games != chunk.games:
        raise ResultError(
            f"the chunk played {played.batched_games} + {agent_games} games, not {chunk.games}"
        )
    counts = played.counts
    for name in ("env_steps", "deals"):
        value = getattr(counts, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ResultError(f"the chunk's {name} is {value!r:.40}")
    if counts.env_steps < n:
        raise ResultError(f"the chunk counts {counts.env_steps} env steps for {n} decisions")


def _check_rollout(part: Rollout, enc_size: int, n_actions: int) -> None:
    """An agent game's rollout: its columns' shapes agree and its numbers are finite."""
    n = len(part.actions)
    for key, width in (("obs", enc_size), ("masks", n_actions)):
        arr = getattr(part, key)
        if not isinstance(arr, np.ndarray) or arr.shape != (n, width):
            raise ResultError(f"an agent game's {key} are not ({n}, {width})")
    for key in ("logprobs", "rewards", "dones"):
        arr = getattr(part, key)
        if not isinstance(arr, np.ndarray) or arr.shape != (n,):
            raise ResultError(f"an agent game's {key} are not ({n},)")
    if not np.isfinite(part.rewards).all() or not np.isfinite(part.obs).all():
        raise ResultError("an agent game's rows hold values that are not finite")


def _sizes(collection: Collection) -> tuple[int, int, int]:
    from piquet_env.observation import encoder_for

    enc = encoder_for(collection.rules)
    return enc.size, enc.n_actions, enc.state_size


# --------------------------------------------------------------------------- the driver side


class ChunkedCollection:
    """An update's games, collected chunk by chunk here or fanned out (``fanout``), gathered in
    chunk order into ``collector``'s row store: the same rollout wherever the chunks ran.

    ``spec`` describes the collector (:meth:`CollectorSpec.of`); ``seed`` is the run's.
    Close it (or use ``with``) to release the executor.
    """

    def __init__(
        self,
        collector: VectorCollector,
        spec: CollectorSpec,
        *,
        seed: int,
        chunk_games: int,
        fanout: Fanout | None = None,
    ) -> None:
        self.collector, self.spec, self.seed = collector, spec, seed
        self.chunk_games = chunk_games
        self.fanout = fanout or Fanout()
        self.here = self.fanout.workers == 1 and self.fanout.ray is None
        self._executor: Executor | None = None
        self.gather_seconds = 0.0
        """The driver's time spent gathering fanned-out chunks' rows into its store (the
        transfer's cost here; 0 when the chunks are played here, straight into it)."""

    def collect(self, pool: OpponentPool, update: int, games: int) -> Rollout:
        """Update ``update``'s ``games`` games (counted from 0) against ``pool``."""
        chunks = plan_chunks(self.seed, update, games, self.chunk_games)
        col = self.collector
        if self.here:
            col.clear(games)
            played = [col.play_chunk(pool, c.seed, c.games, c.first) for c in chunks]
            return col.assemble(played, pool.learner)
        results = self._fan_out(pool, chunks)
        t1 = time.perf_counter()
        col.clear(games)
        for result in results:
            col.append_rows(result.rows)
        self.gather_seconds += time.perf_counter() - t1
        return col.assemble([r.played for r in results], pool.learner)

    def _fan_out(self, pool: OpponentPool, chunks: list[Chunk]) -> list[ChunkRows]:
        if self._executor is None:
            self._executor = self.fanout.open()
        spec = self.spec

        def check(i: int, result: ChunkRows) -> None:
            check_chunk_rows(spec, chunks[i], result)

        agent_specs = spec.agent_specs()
        prepare = AgentFiles.of(agent_specs, spec.collection.rules) if agent_specs else None
        got = dict(
            self._executor.run(
                collect_chunk,
                [(c,) for c in chunks],
                shared=(spec, Weights.of(pool)),
                check=check,
                prepare=prepare,
            )
        )
        return [got[i] for i in range(len(chunks))]

    def close(self) -> None:
        """Release the executor (its worker processes, a Ray instance it started)."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    def __enter__(self) -> ChunkedCollection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
