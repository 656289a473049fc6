"""Self-play on the batched engine: every game of an update advances in one array step.

:class:`VectorCollector` plays the same rollouts as :class:`~piquet_training.collector.Collector`
(complete games, each trajectory one seat of one game, the same rewards) but holds the games in a
:class:`piquet_env.vector.BatchGame` and chooses every network move of a step in one forward pass
per network: the learner (sampling), the pool's snapshots (all in one pass, their weights stacked:
:class:`~piquet_agents.network.ActorStack`), and the random agent
(:func:`piquet_env.vector.sample_legal`). Games against the heuristic agent, which cannot act in
batch, are handed to a per-game :class:`~piquet_training.collector.Collector` (measured: about
3,000 decisions/s against well over 30,000 here, so the default pool gives them no weight).

Each call deals ``n_games`` new games, one per slot, from a batch seed drawn from the collector's
numpy RNG, and steps every slot until its game is over (a slot whose game ended gets
``NO_ACTION``): nothing carries over between calls, so a resumed run continues exactly.

The asymmetric critic's input is :meth:`ObservationEncoder.state(game, player)
<piquet_env.observation.ObservationEncoder.state>` seen from the acting player. The batch gives
``state(game)`` (player 0's view); :func:`seat_relative` turns it into player 1's view by the
column permutation that trades the two players' blocks (tested equal to the per-game encoder).
Values are computed after collection in one batched pass (the weights do not change during a
collection, so they are those of the acting network). Acting and the value pass run in the
collector's ``precision`` (:mod:`piquet_training.compute`).

Rewards follow :func:`piquet_env.rewards.reward_due` (tested against it): the running deal-point
difference is read from the observation's ``deal_total`` field, the deal's difference from the
step's ``deal_scores``, the settlement from ``results``.
"""

from __future__ import annotations

import numpy as np
import torch

from piquet_agents.network import ActorCritic, ActorStack
from piquet_env.rules import Rules
from piquet_env.vector import NO_ACTION, BatchGame, sample_legal
from piquet_training.collector import (
    CollectionCounts,
    Collector,
    OpponentPool,
    Rollout,
    Seat,
)
from piquet_training.compute import autocast

__all__ = ["VectorCollector", "concat_rollouts"]

_SELF, _SNAPSHOT, _HEURISTIC, _RANDOM = range(4)
_KIND_CODES = {"self": _SELF, "snapshot": _SNAPSHOT, "heuristic": _HEURISTIC, "random": _RANDOM}


def concat_rollouts(parts: list[Rollout]) -> Rollout:
    """One rollout holding the trajectories of ``parts`` one after the other."""
    parts = [p for p in parts if p is not None]
    if len(parts) == 1:
        return parts[0]
    states = None
    if all(p.states is not None for p in parts):
        states = np.concatenate([p.states for p in parts])  # type: ignore[misc]
    points: dict[str, list[int]] = {}
    for p in parts:
        for k, v in p.points.items():
            points.setdefault(k, []).extend(v)
    return Rollout(
        obs=np.concatenate([p.obs for p in parts]),
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


class _RowStore:
    """Columns of rows kept from one collection to the next and grown as needed.

    Writing into memory a process has already touched is many times faster than into fresh
    pages, which cost microseconds each on these machines: gathering one update's 54,000 critic
    states (225 MB) into a new array took 0.53 s, into a reused one 0.05 s.
    """

    def __init__(self, columns: dict[str, tuple[tuple[int, ...], type]]) -> None:
        self.columns = columns
        self.arrays = {k: np.zeros((0, *shape), dtype) for k, (shape, dtype) in columns.items()}
        self.n = 0

    def reserve(self, extra: int) -> None:
        """Make room for ``extra`` more rows (keeping those written)."""
        need = self.n + extra
        for key, arr in self.arrays.items():
            if len(arr) < need:
                grown = np.zeros((max(need, len(arr) * 3 // 2), *arr.shape[1:]), arr.dtype)
                grown[: self.n] = arr[: self.n]
                self.arrays[key] = grown

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]


class VectorCollector:
    """Plays batches of complete games on the batched engine and records rollouts.

    Arguments as for :class:`~piquet_training.collector.Collector`; ``device`` is where the
    networks run (their inputs are moved there and the actions back).
    """

    def __init__(
        self,
        rules: Rules,
        mode: str,
        num_envs: int,
        rng: np.random.Generator,
        *,
        reward: str = "deal_points",
        reward_scale: float = 0.02,
        settle_weight: float = 1.0,
        dense_reward: bool = True,
        record_states: bool = False,
        device: str | torch.device = "cpu",
        precision: str = "fp32",
    ) -> None:
        # The per-game collector plays the agents that cannot act in batch; it also checks the
        # arguments the two share, and holds them.
        self._games = Collector(
            rules,
            mode,
            num_envs,
            rng,
            reward=reward,
            reward_scale=reward_scale,
            settle_weight=settle_weight,
            dense_reward=dense_reward,
            record_states=record_states,
        )
        self.rules, self.mode, self.num_envs, self.rng = rules, mode, num_envs, rng
        self.reward, self.reward_scale, self.settle_weight = reward, reward_scale, settle_weight
        self.dense_reward, self.record_states = dense_reward, record_states
        self.device = torch.device(device)
        self.precision = precision
        self.encoder = enc = self._games.encoder
        self.size, self.n_actions, self.state_size = enc.size, enc.n_actions, enc.state_size
        self._perm = enc.seat_permutation
        f = {name: a for name, a, _, _ in enc.fields}
        self._total = f["deal_total"]
        self._batches: dict[int, BatchGame] = {}
        self._stack: ActorStack | None = None  # the pool's snapshots, stacked
        self._stack_of: list[ActorCritic] = []  # ... as they were when stacked
        columns: dict[str, tuple[tuple[int, ...], type]] = {
            "obs": ((self.size,), np.float32),
            "masks": ((self.n_actions,), np.int8),
            "actions": ((), np.int64),
            "logprobs": ((), np.float32),
            "rewards": ((), np.float64),
            "keys": ((), np.int64),
        }
        if record_states:
            columns["states"] = ((self.state_size,), np.float32)
        self._raw = _RowStore(columns)  # in the order decisions were made
        self._out = _RowStore(columns)  # trajectory by trajectory

    def _batch(self, n: int) -> BatchGame:
        """A batch of ``n`` slots (kept between calls; every call deals it afresh)."""
        if n not in self._batches:
            self._batches[n] = BatchGame(
                self.rules,
                n,
                episode=self.mode,
                reward="result",
                record=False,
                seed=0,
                observe=not self.record_states,
            )
        return self._batches[n]

    def collect(self, n_games: int, pool: OpponentPool) -> Rollout:
        """Play ``n_games`` complete games with opponents drawn from ``pool`` (its kinds and
        weights); return the learner's decisions as a :class:`Rollout`, whose wide columns are
        views of this collector's buffers: the next call overwrites them."""
        rng = self.rng
        codes = np.array([_KIND_CODES[k] for k in pool.kinds])
        kinds = codes[rng.choice(len(codes), size=n_games, p=pool.probs)]
        kinds = np.where((kinds == _SNAPSHOT) & (not pool.snapshots), _SELF, kinds)
        learner_seat = (rng.random(n_games) < 0.5).astype(np.int8)
        snap = rng.integers(max(1, len(pool.snapshots)), size=n_games)
        parts = []
        n_heuristic = int((kinds == _HEURISTIC).sum())
        if n_heuristic:
            parts.append(self._heuristic_games(n_heuristic, pool))
        keep = kinds != _HEURISTIC
        kinds, learner_seat, snap = kinds[keep], learner_seat[keep], snap[keep]
        self._raw.n = 0
        counts = CollectionCounts()
        for lo in range(0, len(kinds), self.num_envs):
            hi = lo + self.num_envs
            self._play(pool, kinds[lo:hi], learner_seat[lo:hi], snap[lo:hi], lo, counts)
        parts.append(self._rollout(len(kinds), counts))
        out = concat_rollouts(parts)
        out.values = self.values(pool.learner, out.obs, out.masks, out.states)
        return out

    def _heuristic_games(self, n: int, pool: OpponentPool) -> Rollout:
        """``n`` games against the heuristic, played one object per game."""
        factory = pool.factories["heuristic"]

        def matchup(rng: np.random.Generator) -> tuple[Seat, Seat, str]:
            learner, other = Seat(model=pool.learner, record=True), Seat(agent=factory())
            seats = (learner, other) if rng.random() < 0.5 else (other, learner)
            return seats[0], seats[1], "heuristic"

        saved = self._games.num_envs
        self._games.num_envs = n
        try:
            return self._games.collect(n, matchup)
        finally:
            self._games.num_envs = saved

    @torch.no_grad()
    def values(
        self,
        model: ActorCritic,
        obs: np.ndarray,
        masks: np.ndarray,
        states: np.ndarray | None,
        chunk: int = 16384,
    ) -> np.ndarray:
        """The critic's values of recorded decisions, in batched passes (in the collector's
        ``precision``)."""
        out = np.empty(len(obs), dtype=np.float32)
        dev = self.device
        for a in range(0, len(obs), chunk):
            o = torch.from_numpy(obs[a : a + chunk]).to(dev)
            s = None if states is None else torch.from_numpy(states[a : a + chunk]).to(dev)
            with autocast(dev, self.precision):
                if model.critic_trunk is not None:
                    v = model.value_head(model.critic_trunk(s)).squeeze(-1)
                else:
                    v = model.value_head(model.trunk(o)).squeeze(-1)
            out[a : a + chunk] = v.float().cpu().numpy()
        return out

    def _act(self, model: ActorCritic, obs: np.ndarray, mask: np.ndarray) -> tuple:
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
    ) -> None:
        """Play one game per slot until all are over; append the learner's decisions to the
        row store (trajectory keys numbered from game ``first``) and add to ``counts``."""
        n = len(kinds)
        rng = self.rng
        batch = self._batch(n)
        out = batch.reset(int(rng.integers(2**63)))
        size, perm, scale = self.size, self._perm, self.reward_scale
        store = self._raw
        recorded = np.zeros((n, 2), dtype=bool)  # which seats are the learner's
        recorded[kinds == _SELF] = True
        one = np.flatnonzero(kinds != _SELF)
        recorded[one, learner_seat[one]] = True
        last_row = np.full((n, 2), -1, dtype=np.int64)
        pending = np.zeros((n, 2), dtype=np.float64)
        credited = np.zeros((n, 2), dtype=np.int64)
        paid = np.zeros((n, 2), dtype=np.int64)
        live = np.ones(n, dtype=bool)
        ar = np.arange(n)
        points = counts.points
        labels = {_SELF: "self", _SNAPSHOT: "snapshot", _RANDOM: "random"}
        dense = self.dense_reward and self.reward == "deal_points"
        full = np.empty((n, self.state_size), dtype=np.float32) if self.record_states else None
        if full is not None:
            batch.full_state(full)

        def observe(idx: np.ndarray) -> np.ndarray:
            """Observations of the players to act in games ``idx``."""
            if full is None:
                return out.obs[idx]
            own = (seat[idx] == 1)[:, None]
            return np.where(own, full[idx, size : 2 * size], full[idx, :size])

        while live.any():
            seat = out.seat.astype(np.int64)
            mask = batch.action_mask()
            actions = np.full(n, NO_ACTION, dtype=np.int64)
            seat_c = seat.clip(0)
            learner_turn = live & recorded[ar, seat_c]
            g = np.flatnonzero(learner_turn)
            if g.size:
                obs_g = observe(g)
                a, logp = self._act(pool.learner, obs_g, mask[g])
                actions[g] = a
                store.reserve(g.size)
                rows = slice(store.n, store.n + g.size)
                store["obs"][rows] = obs_g
                store["masks"][rows] = mask[g]
                store["actions"][rows] = a
                store["logprobs"][rows] = logp
                if full is not None:
                    states = store["states"][rows]
                    states[:] = full[g]
                    flip = np.flatnonzero(seat[g] == 1)
                    states[flip] = full[g[flip]][:, perm]
                store["keys"][rows] = (first + g) * 2 + seat[g]
                store["rewards"][rows] = pending[g, seat[g]]
                pending[g, seat[g]] = 0.0
                last_row[g, seat[g]] = np.arange(rows.start, rows.stop)
                store.n = rows.stop
            other = live & ~learner_turn
            rand = np.flatnonzero(other & (kinds == _RANDOM))
            if rand.size:
                actions[rand] = sample_legal(mask[rand], rng)
            h = np.flatnonzero(other & (kinds == _SNAPSHOT))
            if h.size:
                actions[h] = self._snapshots_act(pool, snap[h], observe(h), mask[h])
            counts.env_steps += int(live.sum())
            out = batch.step(actions)
            # --- rewards of this step (player 0's difference, then each seat's share)
            if full is not None:
                batch.full_state(full)
            diff0 = np.zeros(n, dtype=np.int64)
            if dense:
                if full is not None:  # player 0's observation comes first in the state
                    me, opp = full[:, self._total], full[:, self._total + 1]
                    sign = np.ones(n, dtype=np.int64)
                else:
                    me, opp = out.obs[:, self._total], out.obs[:, self._total + 1]
                    sign = np.where(out.seat == 1, -1, 1)
                diff0 = sign * (np.rint(me * 100) - np.rint(opp * 100)).astype(np.int64)
            deal_end = np.zeros(n, dtype=bool)
            if out.deal_games.size:
                dg = out.deal_games
                totals = out.deal_scores.astype(np.int64).sum(axis=2)
                diff0[dg] = totals[:, 0] - totals[:, 1]
                deal_end[dg] = True
            diff = np.stack([diff0, -diff0], axis=1)
            due = np.zeros((n, 2), dtype=np.float64)
            if self.reward == "deal_points":
                pay = live & (deal_end | dense)
                due[pay] = diff[pay] - credited[pay]
                credited[pay] = diff[pay]
                credited[deal_end] = 0
                paid[deal_end] += diff[deal_end]
            ended = np.zeros(n, dtype=bool)
            ended[out.ended_games] = True
            ended &= live
            if out.ended_games.size:
                eg, res = out.ended_games, out.results.astype(np.int64)
                sel = live[eg]
                eg, res = eg[sel], res[sel]
                if self.reward == "deal_points":
                    due[eg] += self.settle_weight * (res - paid[eg])
                elif self.reward == "result":
                    due[eg] += res
                else:
                    due[eg] += np.sign(res)
            if out.deal_games.size:
                dg = out.deal_games[live[out.deal_games]]
                counts.deals += dg.size
                for k in np.unique(kinds[dg]).tolist():
                    d = dg[kinds[dg] == k]
                    for p in (0, 1):
                        mine = d[recorded[d, p]]
                        if mine.size:
                            points.setdefault(labels[k], []).extend(diff[mine, p].tolist())
            due *= scale
            has = (due != 0) & recorded & live[:, None]
            gi, pi = np.nonzero(has & (last_row >= 0))
            store["rewards"][last_row[gi, pi]] += due[gi, pi]
            gi, pi = np.nonzero(has & (last_row < 0))
            pending[gi, pi] += due[gi, pi]
            live &= ~ended

    def _rollout(self, n_games: int, counts: CollectionCounts) -> Rollout:
        """The stored rows, trajectory by trajectory in time order, gathered into the output
        store (so the rollout's columns are views that the next collection overwrites)."""
        raw, dst = self._raw, self._out
        n = raw.n
        order = np.argsort(raw["keys"][:n], kind="stable")
        dst.n = 0
        dst.reserve(n)
        for key in dst.columns:
            np.take(raw[key][:n], order, axis=0, out=dst[key][:n], mode="clip")  # unbuffered
        dones = np.ones(n, dtype=bool)
        keys = dst["keys"][:n]
        dones[:-1] = keys[1:] != keys[:-1]
        return Rollout(
            obs=dst["obs"][:n],
            masks=dst["masks"][:n],
            actions=dst["actions"][:n],
            logprobs=dst["logprobs"][:n],
            values=np.zeros(n, dtype=np.float32),
            rewards=dst["rewards"][:n].astype(np.float32),
            dones=dones,
            states=dst["states"][:n] if self.record_states else None,
            env_steps=counts.env_steps,
            games=n_games,
            deals=counts.deals,
            points=counts.points,
        )
