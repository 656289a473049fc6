"""Self-play on the batched engine: every game of an update advances in one array step.

:class:`VectorCollector` plays the same rollouts as
:class:`~piquet_training.ppo.collector.Collector` (complete games, each trajectory one seat of one
game, the same rewards) but holds the games in a :class:`piquet_env.vector.BatchGame` and chooses
every network move of a step in one forward pass per network: the learner (sampling), the pool's
snapshots (all in one pass, their weights stacked: :class:`~piquet_agents.network.ActorStack`), the
pool's opponents that act in batch (a policy's network; the random agent,
:func:`piquet_env.vector.sample_legal`). Games against agents that cannot act in batch (the
heuristic, a search) are played as the base :class:`~piquet_training.ppo.collector.Collector` plays
them, one game object each, at a fraction of the batched games' speed (so the default pool gives
them no weight).

Each call deals ``n_games`` new games, one per slot, from a batch seed drawn from the collector's
numpy RNG, and steps every slot until its game is over (a slot whose game ended gets
``NO_ACTION``): nothing carries over between calls, so a resumed run continues exactly.

The asymmetric critic's input is :meth:`ObservationEncoder.state(game, player)
<piquet_env.observation.ObservationEncoder.state>` seen from the acting player. The batch gives
``state(game)`` (player 0's view); :func:`seat_relative` turns it into player 1's view by the
column permutation that trades the two players' blocks (tested equal to the per-game encoder).
Values are computed after collection in one batched pass (the weights do not change during a
collection, so they are those of the acting network). Acting and the value pass run in the
collector's ``precision`` (:mod:`piquet_training.ppo.compute`).

Rewards are the batch's own: it is built with the collector's reward mode, scale, settlement
weight and density, so it pays what :func:`piquet_env.rewards.reward_due` defines (the
differential test checks it step by step), and the collector only assigns each seat's payment to
that seat's latest recorded decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from piquet_agents.network import ActorCritic, ActorStack
from piquet_env.vector import NO_ACTION, BatchGame, StepResult, sample_legal
from piquet_env.vector.deal import max_deals
from piquet_env.vector.engine import MAX_DECISIONS_PER_DEAL
from piquet_training.ppo.collector import Collection, CollectionCounts, Collector, Rollout, Seat
from piquet_training.ppo.compute import autocast
from piquet_training.ppo.pool import Opponent, OpponentPool

__all__ = ["Played", "VectorCollector", "concat_rollouts"]

_SELF, _SNAPSHOT = range(2)
"""The codes of a slot's kind of game; the pool's opponent ``j`` is ``2 + j``."""


def concat_rollouts(parts: list[Rollout]) -> Rollout:
    """One rollout holding the trajectories of ``parts`` one after the other."""
    parts = [p for p in parts if p is not None]
    if len(parts) == 1:
        return parts[0]
    wide = [p.wide() for p in parts]  # an indexed part's wide columns, gathered
    states = None
    if all(st is not None for _, st in wide):
        states = np.concatenate([st for _, st in wide])  # type: ignore[misc]
    points: dict[str, list[int]] = {}
    for p in parts:
        for k, v in p.points.items():
            points.setdefault(k, []).extend(v)
    return Rollout(
        obs=np.concatenate([ob for ob, _ in wide]),
        masks=np.concatenate([p.masks for p in parts]),
        actions=np.concatenate([p.actions for p in parts]),
        logprobs=np.concatenate([p.logprobs for p in parts]),
        values=np.concatenate([p.values for p in parts]),
        rewards=np.concatenate([p.rewards for p in parts]),
        dones=np.concatenate([p.dones for p in parts]),
        states=states,
        env_steps=sum(p.env_steps for p in parts),
        games=sum(p.games for p in parts),
        deals=sum(p.deals for p in parts),
        points=points,
    )


VALUE_CHUNK = 16384
"""Rows a pass of the critic over an update's decisions."""


class _RowStore:
    """Columns of rows kept from one collection to the next and grown as needed.

    Writing into memory a process has already touched is many times faster than into fresh
    pages, which cost microseconds each: the stores are reused from one collection to the next.
    They are also what holds most of a run's memory (an update's rows, each with its observation
    and critic state: about 6 KB a row), so a store grows by ``slack`` past what it needs, and a
    store with no row written drops its arrays before it makes bigger ones.
    """

    def __init__(self, columns: dict[str, tuple[tuple[int, ...], type]]) -> None:
        self.columns = columns
        self.arrays = {k: np.zeros((0, *shape), dtype) for k, (shape, dtype) in columns.items()}
        self.n = 0

    def reserve(self, extra: int, slack: float = 0.5) -> None:
        """Make room for ``extra`` more rows (keeping those written), growing to ``slack`` more
        than needed."""
        need = self.n + extra
        for key, arr in self.arrays.items():
            if len(arr) < need:
                shape = (int(need * (1 + slack)), *arr.shape[1:])
                if self.n == 0:  # nothing to keep: the old and the new never coexist
                    self.arrays[key] = arr = arr[:0].copy()
                grown = np.zeros(shape, arr.dtype)
                grown[: self.n] = arr[: self.n]
                self.arrays[key] = grown

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]


class _Slots:
    """The games of one batch under way: who plays them, which seats the learner records, and
    the rows and rewards of those seats."""

    def __init__(
        self,
        n: int,
        kinds: np.ndarray,
        learner_seat: np.ndarray,
        snap: np.ndarray,
        first: int,
        labels: list[str],
    ) -> None:
        self.kinds, self.snap, self.first = kinds, snap, first
        self.labels = labels
        """Each kind code's label (self, snapshot, then the pool's opponents)."""
        self.ar = np.arange(n)
        self.recorded = np.zeros((n, 2), dtype=bool)
        """Which seats are the learner's (both in self-play)."""
        self.recorded[kinds == _SELF] = True
        one = np.flatnonzero(kinds != _SELF)
        self.recorded[one, learner_seat[one]] = True
        self.last_row = np.full((n, 2), -1, dtype=np.int64)
        """Each recorded seat's latest row in the store (-1 before its first decision)."""
        self.pending = np.zeros((n, 2), dtype=np.float64)
        """Rewards a seat earned before its first decision."""
        self.live = np.ones(n, dtype=bool)
        """Games not over yet (a finished slot is dealt afresh by the batch: not ours)."""


class _View:
    """What the players to act see at one step: their seats, observations and masks."""

    def __init__(
        self,
        seat: np.ndarray,
        obs: np.ndarray,
        mask: np.ndarray,
        full: np.ndarray | None,
        size: int,
    ) -> None:
        self.seat, self._obs, self.mask, self.full, self._size = seat, obs, mask, full, size

    def obs(self, idx: np.ndarray) -> np.ndarray:
        """Observations of the players to act in games ``idx`` (read from the full state, whose
        first blocks are both players' observations, when the batch skips observing)."""
        if self.full is None:
            return self._obs[idx]
        size = self._size
        own = (self.seat[idx] == 1)[:, None]
        return np.where(own, self.full[idx, size : 2 * size], self.full[idx, :size])


@dataclass
class Played:
    """What :meth:`VectorCollector.play` gives besides the rows it appends to the row store:
    the number of games played in batch, their counts, and the rollouts of the games against
    agents that cannot act in batch (played one game object each)."""

    batched_games: int
    counts: CollectionCounts
    agent_parts: list[Rollout] = field(default_factory=list)


class VectorCollector(Collector):
    """Plays batches of complete games on the batched engine and records rollouts.

    A :class:`~piquet_training.ppo.collector.Collector` (the same arguments, checked and held by it)
    whose :meth:`collect` plays an opponent pool's games on the batched engine; the games against
    agents that cannot act in batch it plays as its base class does, one game object each.
    ``device`` is where the networks run (their inputs are moved there and the actions back).
    """

    def __init__(
        self,
        collection: Collection,
        rng: np.random.Generator,
        *,
        device: str | torch.device = "cpu",
        precision: str = "fp32",
        index_rows: bool = True,
    ) -> None:
        super().__init__(collection, rng)
        self.device = torch.device(device)
        self.precision = precision
        enc = self.encoder
        self.size, self.n_actions, self.state_size = enc.size, enc.n_actions, enc.state_size
        self._perm = enc.seat_permutation
        self._batches: dict[int, BatchGame] = {}
        self._stack: ActorStack | None = None  # the pool's snapshots, stacked
        self._stack_of: list[ActorCritic] = []  # ... as they were when stacked
        self._networks: dict[ActorCritic, ActorStack] = {}  # the opponents' networks, stacked
        columns: dict[str, tuple[tuple[int, ...], type]] = {
            "masks": ((self.n_actions,), np.int8),
            "actions": ((), np.int64),
            "logprobs": ((), np.float32),
            "rewards": ((), np.float64),
            "keys": ((), np.int64),
        }
        # A critic state seen from the acting seat begins with that seat's observation
        # (ObservationEncoder.state_layout): with states recorded, the observations are read
        # from them, the same numbers, and not stored twice (a third of the stores' bytes).
        if collection.record_states:
            columns["states"] = ((self.state_size,), np.float32)
        else:
            columns["obs"] = ((self.size,), np.float32)
        self._raw = _RowStore(columns)  # in the order decisions were made
        self._rows_per_game = MAX_DECISIONS_PER_DEAL * max_deals(collection.rules, collection.mode)
        """Most rows one game can record (every decision of both seats, in self-play)."""
        self.index_rows = index_rows
        """Whether a rollout's wide columns (observations, critic states) stay in the recording
        order and are read through :attr:`Rollout.order` (else they are copied into trajectory
        order, a second copy of an update's largest arrays: the same rows, more memory)."""
        wide = ("obs", "states") if index_rows else ()
        self._out = _RowStore({k: v for k, v in columns.items() if k not in wide})

    def _batch(self, n: int) -> BatchGame:
        """A batch of ``n`` slots (kept between calls; every call deals it afresh)."""
        if n not in self._batches:
            self._batches[n] = BatchGame(
                self.rules,
                n=n,
                mode=self.mode,
                reward=self.reward,
                reward_scale=self.reward_scale,
                settle_weight=self.settle_weight,
                dense=self.dense_reward,
                record=False,
                seed=0,
                observe=not self.record_states,
            )
        return self._batches[n]

    def collect(self, n_games: int, pool: OpponentPool) -> Rollout:  # type: ignore[override]
        """Play ``n_games`` complete games with opponents drawn from ``pool`` (its kinds and
        weights); return the learner's decisions as a :class:`Rollout`, whose wide columns are
        views of this collector's buffers: the next call overwrites them."""
        self.clear(n_games)
        played = self.play(n_games, pool)
        return self.assemble([played], pool.learner)

    def clear(self, n_games: int) -> None:
        """Empty the row store and make room, once, for the most rows ``n_games`` games can
        record: the pages of rows never written cost nothing, and the store never grows by a
        copy while the games run (a copy is the old and the new store at once: the first
        collection's peak)."""
        self._raw.n = 0
        self._raw.reserve(n_games * self._rows_per_game, slack=0.0)

    def play(self, n_games: int, pool: OpponentPool, first: int = 0) -> Played:
        """Play ``n_games`` complete games with opponents drawn from ``pool``, appending the
        learner's batched decisions to the row store (their games numbered from ``first``);
        return the rest of what they gave (:class:`Played`). Every random draw comes from
        :attr:`rng` and torch's global RNG."""
        rng = self.rng
        labels = [*pool.LEARNER_KINDS, *pool.opponents]
        codes = np.array([labels.index(k) for k in pool.kinds])
        kinds = codes[rng.choice(len(codes), size=n_games, p=pool.probs)]
        kinds = np.where((kinds == _SNAPSHOT) & (not pool.snapshots), _SELF, kinds)
        learner_seat = (rng.random(n_games) < 0.5).astype(np.int8)
        snap = rng.integers(max(1, len(pool.snapshots)), size=n_games)
        agent_parts = []
        per_game = np.zeros(n_games, dtype=bool)  # agents that cannot act in batch
        for code, (label, opponent) in enumerate(pool.opponents.items(), start=2):
            if opponent.batched:
                continue
            mine = kinds == code
            per_game |= mine
            if mine.any():
                agent_parts.append(self._agent_games(int(mine.sum()), pool, label))
        keep = ~per_game
        kinds, learner_seat, snap = kinds[keep], learner_seat[keep], snap[keep]
        counts = CollectionCounts()
        for lo in range(0, len(kinds), self.num_envs):
            hi = lo + self.num_envs
            self._play(
                pool, kinds[lo:hi], learner_seat[lo:hi], snap[lo:hi], first + lo, counts, labels
            )
        return Played(len(kinds), counts, agent_parts)

    def play_chunk(self, pool: OpponentPool, seed: int, n_games: int, first: int) -> Played:
        """:meth:`play` ``n_games`` games (numbered from ``first``) drawing every random number
        from ``seed`` alone (a NumPy generator of its own, and torch's global RNG forked and
        seeded with it) with one torch thread (a network's log-probabilities differ in their
        last bits from one thread count to another), the caller's RNG and threads as they were
        afterwards. The same seed and weights give the same games and rows in any process (a
        collection chunk, :mod:`piquet_training.ppo.chunks`)."""
        kept, threads = self.rng, torch.get_num_threads()
        self.rng = np.random.default_rng(seed)
        try:
            torch.set_num_threads(1)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                return self.play(n_games, pool, first)
        finally:
            self.rng = kept
            torch.set_num_threads(threads)

    def rows(self) -> dict[str, np.ndarray]:
        """The row store's rows, in the order they were recorded (views: the next collection
        overwrites them)."""
        return {key: self._raw[key][: self._raw.n] for key in self._raw.columns}

    def append_rows(self, rows: dict[str, np.ndarray]) -> None:
        """Append rows recorded by another collector of the same collection (:meth:`rows`) to
        the row store, as if this collector had recorded them."""
        n = len(rows["keys"])
        store = self._raw
        store.reserve(n)
        for key in store.columns:
            store[key][store.n : store.n + n] = rows[key]
        store.n += n

    def assemble(self, played: list[Played], learner: ActorCritic) -> Rollout:
        """The rollout of the games :meth:`play` played, in the order given (their agent games
        first, then the row store's batched games), with the learner's values."""
        counts = CollectionCounts()
        for p in played:
            counts.env_steps += p.counts.env_steps
            counts.deals += p.counts.deals
            for label, points in p.counts.points.items():
                counts.points.setdefault(label, []).extend(points)
        batched = self._rollout(sum(p.batched_games for p in played), counts, learner)
        parts = [r for p in played for r in p.agent_parts]
        for part in parts:  # the games against agents that cannot act in batch
            part.values = self.values(learner, part)
        return concat_rollouts([*parts, batched])

    def _agent_games(self, n: int, pool: OpponentPool, kind: str) -> Rollout:
        """``n`` games against the pool's opponent labelled ``kind``, an agent that cannot act in
        batch, played one game object each."""
        factory = pool.opponents[kind].make
        assert factory is not None  # an opponent that is no network has one

        def matchup(rng: np.random.Generator) -> tuple[Seat, Seat, str]:
            learner, other = Seat(model=pool.learner, record=True), Seat(agent=factory())
            seats = (learner, other) if rng.random() < 0.5 else (other, learner)
            return seats[0], seats[1], kind

        return super().collect(n, matchup, num_envs=n)

    def values(self, model: ActorCritic, rollout: Rollout, chunk: int = VALUE_CHUNK) -> np.ndarray:
        """The critic's values of a rollout's decisions in trajectory order, ``chunk`` rows a
        pass (in the collector's ``precision``)."""
        obs, states = rollout.wide()
        return self._critic(model, obs, states, chunk)

    @torch.no_grad()
    def _critic(
        self,
        model: ActorCritic,
        obs: np.ndarray,
        states: np.ndarray | None,
        chunk: int = VALUE_CHUNK,
    ) -> np.ndarray:
        """The critic's value of each row, in the order given (its critic state where the
        network has a critic of its own, else its observation), ``chunk`` rows a pass."""
        wide = states if model.critic_trunk is not None else obs
        assert wide is not None, "a network with a critic of its own needs the critic states"
        trunk = model.critic_trunk if model.critic_trunk is not None else model.trunk
        out = np.empty(len(wide), dtype=np.float32)
        dev = self.device
        for a in range(0, len(wide), chunk):
            x = torch.from_numpy(wide[a : a + chunk]).to(dev)
            with autocast(dev, self.precision):
                v = model.value_head(trunk(x)).squeeze(-1)
            out[a : a + chunk] = v.float().cpu().numpy()
        return out

    def _sample(self, model: ActorCritic, obs: np.ndarray, mask: np.ndarray) -> tuple:
        """Sampled actions and their log-probabilities (in the collector's ``precision``: the
        recorded log-probabilities are those of the policy that acted)."""
        dev = self.device
        with autocast(dev, self.precision):
            a, logp, _ = model.act(
                torch.from_numpy(obs).to(dev), torch.from_numpy(mask).to(dev), with_value=False
            )
        return a.cpu().numpy(), logp.float().cpu().numpy()

    def _snapshots_act(
        self, pool: OpponentPool, which: np.ndarray, obs: np.ndarray, mask: np.ndarray
    ) -> np.ndarray:
        """Actions sampled for rows played by the pool's snapshots (row ``i`` by snapshot
        ``which[i]``), all snapshots in one batched pass (:class:`ActorStack`), rebuilt when the
        pool changes."""
        if self._stack_of != pool.snapshots:
            dtype = torch.bfloat16 if self.precision == "bf16" else torch.float32
            self._stack = ActorStack(pool.snapshots, dtype)
            self._stack_of = list(pool.snapshots)
        dev = self.device
        actions = self._stack.act(
            torch.from_numpy(which).to(dev),
            torch.from_numpy(obs).to(dev),
            torch.from_numpy(mask).to(dev),
        )
        return actions.cpu().numpy()

    def _play(
        self,
        pool: OpponentPool,
        kinds: np.ndarray,
        learner_seat: np.ndarray,
        snap: np.ndarray,
        first: int,
        counts: CollectionCounts,
        labels: list[str],
    ) -> None:
        """Play one game per slot until all are over; append the learner's decisions to the
        row store (trajectory keys numbered from game ``first``) and add to ``counts``.

        Each step: :meth:`_act` chooses every game's action, :meth:`_record` stores the
        learner's decisions, the batch applies them and pays the step's rewards (its own reward
        mode: the collector derives none), and :meth:`_credit` assigns what it paid."""
        n = len(kinds)
        batch = self._batch(n)
        out = batch.reset(int(self.rng.integers(2**63)))
        slots = _Slots(n, kinds, learner_seat, snap, first, labels)
        full = np.empty((n, self.state_size), dtype=np.float32) if self.record_states else None
        while slots.live.any():
            if full is not None:
                batch.full_state(full)
            view = _View(out.seat.astype(np.int64), out.obs, batch.action_mask(), full, self.size)
            learner = slots.live & slots.recorded[slots.ar, view.seat.clip(0)]
            actions, logp, obs = self._act(pool, slots, view, learner)
            self._record(slots, view, learner, actions, logp, obs)
            counts.env_steps += int(slots.live.sum())
            out = batch.step(actions)
            self._credit(slots, out.rewards)
            self._count(slots, out, counts)
            slots.live[out.ended_games] = False

    def _act(
        self, pool: OpponentPool, slots: _Slots, view: _View, learner: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every live game's action (``NO_ACTION`` elsewhere), each kind of player in one pass;
        the learner's log-probabilities and observations (for the rows of ``learner``)."""
        actions = np.full(len(learner), NO_ACTION, dtype=np.int64)
        g = np.flatnonzero(learner)
        logp = np.zeros(0, dtype=np.float32)
        obs = view.obs(g)
        if g.size:
            actions[g], logp = self._sample(pool.learner, obs, view.mask[g])
        other = slots.live & ~learner
        opponents = list(enumerate(pool.opponents.values(), start=2))
        for code, opponent in opponents:
            rand = np.flatnonzero(other & (slots.kinds == code)) if opponent.random else []
            if len(rand):
                actions[rand] = sample_legal(view.mask[rand], self.rng)
        h = np.flatnonzero(other & (slots.kinds == _SNAPSHOT))
        if h.size:
            actions[h] = self._snapshots_act(pool, slots.snap[h], view.obs(h), view.mask[h])
        for code, opponent in opponents:
            t = np.flatnonzero(other & (slots.kinds == code)) if opponent.network else []
            if len(t):
                actions[t] = self._network_act(opponent, view.obs(t), view.mask[t])
        return actions, logp, obs

    def _network_act(self, opponent: Opponent, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """An opponent network's actions, in float32 as its policy agent plays them (greedy, or
        sampled: torch's generator, as the snapshots are; one stack of one network, built once
        per network)."""
        net = opponent.network
        if net not in self._networks:
            self._networks[net] = ActorStack([net], torch.float32)
        dev = self.device
        which = torch.zeros(len(obs), dtype=torch.int64, device=dev)
        obs_t, mask_t = torch.from_numpy(obs).to(dev), torch.from_numpy(mask).to(dev)
        stack = self._networks[net]
        return stack.act(which, obs_t, mask_t, greedy=opponent.greedy).cpu().numpy()

    def _record(
        self,
        slots: _Slots,
        view: _View,
        learner: np.ndarray,
        actions: np.ndarray,
        logp: np.ndarray,
        obs: np.ndarray,
    ) -> None:
        """Append the learner's decisions of this step (``obs`` their observations) to the row
        store; each new row takes the reward its seat earned before its first decision."""
        g = np.flatnonzero(learner)
        if not g.size:
            return
        store, seat = self._raw, view.seat[g]
        store.reserve(g.size)
        rows = slice(store.n, store.n + g.size)
        if not self.record_states:  # else the states' first columns (see __init__)
            store["obs"][rows] = obs
        store["masks"][rows] = view.mask[g]
        store["actions"][rows] = actions[g]
        store["logprobs"][rows] = logp
        if view.full is not None:
            states = store["states"][rows]
            states[:] = view.full[g]
            flip = np.flatnonzero(seat == 1)
            states[flip] = view.full[g[flip]][:, self._perm]
        store["keys"][rows] = (slots.first + g) * 2 + seat
        store["rewards"][rows] = slots.pending[g, seat]
        slots.pending[g, seat] = 0.0
        slots.last_row[g, seat] = np.arange(rows.start, rows.stop)
        store.n = rows.stop

    def _credit(self, slots: _Slots, rewards: np.ndarray) -> None:
        """Assign the rewards the batch paid this step to the learner's seats: to each seat's
        latest decision, or pending until its first."""
        has = (rewards != 0) & slots.recorded & slots.live[:, None]
        gi, pi = np.nonzero(has & (slots.last_row >= 0))
        self._raw["rewards"][slots.last_row[gi, pi]] += rewards[gi, pi]
        gi, pi = np.nonzero(has & (slots.last_row < 0))
        slots.pending[gi, pi] += rewards[gi, pi]

    @staticmethod
    def _count(slots: _Slots, out: StepResult, counts: CollectionCounts) -> None:
        """Deals played, and each recorded seat's point difference per deal, by opponent kind."""
        dg = out.deal_games
        keep = slots.live[dg]
        dg = dg[keep]
        if not dg.size:
            return
        counts.deals += dg.size
        totals = out.deal_scores[keep].astype(np.int64).sum(axis=2)
        diff = np.stack([totals[:, 0] - totals[:, 1], totals[:, 1] - totals[:, 0]], axis=1)
        kinds = slots.kinds[dg]
        for k in np.unique(kinds).tolist():
            for p in (0, 1):
                mine = (kinds == k) & slots.recorded[dg, p]
                if mine.any():
                    counts.points.setdefault(slots.labels[k], []).extend(diff[mine, p].tolist())

    def _rollout(self, n_games: int, counts: CollectionCounts, learner: ActorCritic) -> Rollout:
        """The stored rows, trajectory by trajectory in time order, gathered into the output
        store (so the rollout's columns are views that the next collection overwrites), with
        the learner's values. The values are computed where the rows lie, in the order they
        were recorded, and read through the order: the wide rows (about 4 KB each) are never
        gathered for them, and a run's values are the same whether its wide columns are indexed
        or copied (a row's value may differ in its last bits with its place in a pass)."""
        raw, dst = self._raw, self._out
        n = raw.n
        order = np.argsort(raw["keys"][:n], kind="stable")
        recorded_obs = raw["states"][:n, : self.size] if self.record_states else raw["obs"][:n]
        recorded_states = raw["states"][:n] if self.record_states else None
        values = self._critic(learner, recorded_obs, recorded_states)[order]
        dst.n = 0
        dst.reserve(n, slack=0.1)
        for key in dst.columns:
            np.take(raw[key][:n], order, axis=0, out=dst[key][:n], mode="clip")  # unbuffered
        dones = np.ones(n, dtype=bool)
        keys = dst["keys"][:n]
        dones[:-1] = keys[1:] != keys[:-1]
        wide = raw if self.index_rows else dst  # the wide columns: indexed, or copied in order
        return Rollout(
            obs=wide["states"][:n, : self.size] if self.record_states else wide["obs"][:n],
            masks=dst["masks"][:n],
            actions=dst["actions"][:n],
            logprobs=dst["logprobs"][:n],
            values=values,
            rewards=dst["rewards"][:n].astype(np.float32),
            dones=dones,
            states=wide["states"][:n] if self.record_states else None,
            env_steps=counts.env_steps,
            games=n_games,
            deals=counts.deals,
            points=counts.points,
            order=order if self.index_rows else None,
        )
