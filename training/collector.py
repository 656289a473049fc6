"""Batched self-play: many games advance together, one forward pass serves all of them.

:class:`Collector` drives ``num_envs`` :class:`~piquet_env.game.Game` objects directly (no
PettingZoo wrapper, for speed) and plays a fixed number of *complete* games per call, so every
rollout starts from fresh games whose seeds come from the collector's numpy RNG: a run stopped
between updates resumes exactly (see :mod:`piquet_agents.checkpoint`).

Each seat of a game is controlled by a :class:`Seat`: the learner's network (its decisions are
recorded with observation, mask, action, log-probability and value), a frozen snapshot network, or
any :class:`~piquet_agents.base.Agent` (heuristic, random). All seats played by the same network are
batched into one forward pass per step. The learner playing both seats of a game is self-play with
parameter sharing: the two seats are two separate trajectories.

Rewards (per recorded seat) are the seat's deal-point difference, scaled by ``reward_scale``. With
``dense_reward`` (the default) it is paid as it accrues: after every action, the change in (own
points this deal - opponent's) since the seat was last credited goes to the seat's latest decision
(the lead that scored, the card that won the trick, the declaration that won the category), and
the deal's end settles the remainder (capot, the cards). Otherwise the whole difference is paid
when the deal ends. Either way a deal's rewards sum to its point difference. In partie mode, at the
end, ``settle_weight * reward_scale * (result - sum of deal differences)`` adds the settlement's
bonus (the 100 for the partie, the rubicon); with ``settle_weight = 1`` the rewards of a partie
sum to exactly ``result * reward_scale``.

:class:`OpponentPool` chooses each game's opponent: the learner itself, a past snapshot, the
heuristic or the random agent, with configured weights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from piquet_agents.base import Agent, Turn
from piquet_agents.network import ActorCritic

from piquet_env.game import Game
from piquet_env.observation import encoder_for
from piquet_env.rules import Rules


@dataclass
class Seat:
    """Who plays one seat: a network (``model``, batched) or an ``agent``; ``record`` keeps the
    seat's decisions in the rollout; ``greedy`` plays a network's most probable action."""

    model: ActorCritic | None = None
    agent: Agent | None = None
    record: bool = False
    greedy: bool = False


Matchup = tuple[Seat, Seat, str]
"""The two seats of a game and a label for its statistics (e.g. ``"heuristic"``)."""


@dataclass
class Rollout:
    """Recorded decisions, each trajectory (one seat of one game) contiguous, in game order.

    ``dones[i]`` marks the last decision of its trajectory; ``states`` holds the asymmetric
    critic's full-information input when recorded. ``logprobs`` and ``values`` are those
    of the acting network (0 for decisions recorded from an :class:`~piquet_agents.base.Agent`).
    ``env_steps`` counts every decision applied, by any seat; ``points`` maps each matchup label
    to the recorded seats' per-deal point differences.
    """

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    logprobs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    states: np.ndarray | None = None
    """Critic states (see :func:`critic_state`), when the collector records them."""
    env_steps: int = 0
    games: int = 0
    deals: int = 0
    points: dict[str, list[int]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.actions)


@dataclass
class _Slot:
    game: Game
    seats: tuple[Seat, Seat]
    label: str
    traj: tuple[list[int] | None, list[int] | None]
    n_deals: int = 0
    credited: list[int] = field(default_factory=lambda: [0, 0])
    """Deal-point difference (own - opponent's) already paid to each seat this deal."""
    pending: list[float] = field(default_factory=lambda: [0.0, 0.0])
    """Reward earned by a seat before its first recorded decision (paid to that decision)."""


def critic_state_size(rules: Rules) -> int:
    """Length of :func:`critic_state` vectors under ``rules``."""
    enc = encoder_for(rules)
    return 2 * enc.size + 2 * rules.n_cards


def critic_state(game: Game, player: int, out: np.ndarray) -> None:
    """Write the full-information state seen from ``player`` into ``out`` (for the asymmetric
    critic only, never the actor): his observation, his opponent's observation (hence the
    opponent's hand and discards), the talon's cards and their order (1 = top, scaled)."""
    enc = encoder_for(game.rules)
    size, n = enc.size, game.rules.n_cards
    enc.encode_into(game, player, out[:size])
    enc.encode_into(game, 1 - player, out[size : 2 * size])
    tail = out[2 * size :]
    tail[:] = 0.0
    k = len(game.talon)
    for i, c in enumerate(game.talon):
        tail[c] = 1.0
        tail[n + c] = (k - i) / k


class Collector:
    """Plays batches of complete games under ``rules`` and ``mode`` and records rollouts.

    ``rng`` (a numpy ``Generator``) draws every game seed and is the only source of randomness
    besides torch's global RNG (used to sample network actions) and the agents (seeded from
    ``rng`` by the matchup function).
    """

    def __init__(
        self,
        rules: Rules,
        mode: str,
        num_envs: int,
        rng: np.random.Generator,
        *,
        reward_scale: float = 0.02,
        settle_weight: float = 1.0,
        dense_reward: bool = True,
        record_states: bool = False,
    ) -> None:
        if mode not in ("partie", "deal"):
            raise ValueError(f"mode must be 'partie' or 'deal', got {mode!r}")
        self.rules, self.mode, self.num_envs, self.rng = rules, mode, num_envs, rng
        self.reward_scale, self.settle_weight = reward_scale, settle_weight
        self.dense_reward = dense_reward
        self.record_states = record_states
        self.state_size = critic_state_size(rules)
        self.encoder = encoder_for(rules)

    def collect(self, n_games: int, matchup: Callable[[np.random.Generator], Matchup]) -> Rollout:
        """Play ``n_games`` complete games, ``num_envs`` at a time; each game's seats come from
        ``matchup(rng)``. Returns the recorded decisions as a :class:`Rollout`."""
        enc = self.encoder
        obs_chunks: list[np.ndarray] = []
        mask_chunks: list[np.ndarray] = []
        act_chunks: list[np.ndarray] = []
        logp_chunks: list[np.ndarray] = []
        value_chunks: list[np.ndarray] = []
        state_chunks: list[np.ndarray] = []
        rewards: list[float] = []
        trajectories: list[list[int]] = []
        points: dict[str, list[int]] = {}
        out = Rollout(*(np.empty(0),) * 7)
        started = 0

        def new_slot() -> _Slot:
            nonlocal started
            started += 1
            seat0, seat1, label = matchup(self.rng)
            game = Game(
                self.rules, seed=int(self.rng.integers(2**63)), mode=self.mode, record=False
            )
            for s in (seat0, seat1):
                if s.agent is not None:
                    s.agent.reset(int(self.rng.integers(2**63)))
            traj = tuple([] if s.record else None for s in (seat0, seat1))
            for t in traj:
                if t is not None:
                    trajectories.append(t)
            return _Slot(game, (seat0, seat1), label, traj)  # type: ignore[arg-type]

        slots = [new_slot() for _ in range(min(self.num_envs, n_games))]
        while slots:
            # Group the slots by who acts: one forward pass per network, agents one by one.
            by_model: dict[int, list[_Slot]] = {}
            models: dict[int, Seat] = {}
            for slot in slots:
                seat = slot.seats[slot.game.current_player]
                if seat.model is None:
                    g = slot.game
                    p = g.current_player
                    if seat.record:
                        action = int(seat.agent.act(Turn(g, p)))  # type: ignore[union-attr]
                        o = enc.encode(g, p)[None]
                        m = enc.action_mask(g, p)[None]
                        if self.record_states:
                            st = np.empty((1, self.state_size), np.float32)
                            critic_state(g, p, st[0])
                            state_chunks.append(st)
                        self._record(
                            slot,
                            p,
                            o,
                            m,
                            action,
                            0.0,
                            0.0,
                            obs_chunks,
                            mask_chunks,
                            act_chunks,
                            logp_chunks,
                            value_chunks,
                            rewards,
                        )
                    else:
                        action = int(seat.agent.act(Turn(g, p)))  # type: ignore[union-attr]
                    self._apply(slot, action, rewards, points, out)
                else:
                    key = id(seat.model), seat.greedy, seat.record
                    by_model.setdefault(key, []).append(slot)  # type: ignore[arg-type]
                    models[key] = seat  # type: ignore[index]
            for key, group in by_model.items():
                seat = models[key]  # type: ignore[index]
                obs = np.empty((len(group), enc.size), dtype=np.float32)
                masks = np.zeros((len(group), enc.n_actions), dtype=np.int8)
                states = None
                if seat.record and self.record_states:
                    states = np.empty((len(group), self.state_size), dtype=np.float32)
                for i, slot in enumerate(group):
                    g = slot.game
                    if states is not None:
                        critic_state(g, g.current_player, states[i])
                        obs[i] = states[i, : enc.size]
                    else:
                        enc.encode_into(g, g.current_player, obs[i])
                    masks[i, g.legal_actions()] = 1
                actions, logp, values = seat.model.act(  # type: ignore[union-attr]
                    torch.from_numpy(obs),
                    torch.from_numpy(masks),
                    None if states is None else torch.from_numpy(states),
                    greedy=seat.greedy,
                    with_value=seat.record,
                )
                actions_np = actions.numpy()
                if seat.record:
                    if states is not None:
                        state_chunks.append(states)
                    obs_chunks.append(obs)
                    mask_chunks.append(masks)
                    act_chunks.append(actions_np)
                    logp_chunks.append(logp.numpy())
                    value_chunks.append(values.numpy())
                    base = len(rewards)
                    rewards.extend([0.0] * len(group))
                for i, slot in enumerate(group):
                    if seat.record:
                        p = slot.game.current_player
                        slot.traj[p].append(base + i)  # type: ignore[union-attr]
                        rewards[base + i] += slot.pending[p]
                        slot.pending[p] = 0.0
                    self._apply(slot, int(actions_np[i]), rewards, points, out)
            # Replace finished games while the quota lasts.
            kept = []
            for slot in slots:
                if slot.game.is_over:
                    out.games += 1
                    if started < n_games:
                        kept.append(new_slot())
                else:
                    kept.append(slot)
            slots = kept

        order = np.fromiter((i for t in trajectories for i in t), dtype=np.int64)
        dones = np.zeros(len(order), dtype=bool)
        ends = np.cumsum([len(t) for t in trajectories]) - 1
        dones[ends[ends >= 0]] = True

        def cat(chunks: list[np.ndarray], shape: tuple[int, ...], dtype: type) -> np.ndarray:
            if not chunks:
                return np.zeros((0, *shape), dtype=dtype)
            return np.concatenate(chunks).astype(dtype, copy=False)[order]

        out.obs = cat(obs_chunks, (enc.size,), np.float32)
        out.masks = cat(mask_chunks, (enc.n_actions,), np.int8)
        out.actions = cat(act_chunks, (), np.int64)
        out.logprobs = cat(logp_chunks, (), np.float32)
        out.values = cat(value_chunks, (), np.float32)
        out.rewards = (
            np.asarray(rewards, dtype=np.float32)[order] if rewards else np.zeros(0, np.float32)
        )
        out.dones = dones
        out.points = points
        if self.record_states:
            out.states = cat(state_chunks, (self.state_size,), np.float32)
        return out

    @staticmethod
    def _record(
        slot: _Slot,
        p: int,
        o: np.ndarray,
        m: np.ndarray,
        action: int,
        logp: float,
        value: float,
        obs_chunks: list,
        mask_chunks: list,
        act_chunks: list,
        logp_chunks: list,
        value_chunks: list,
        rewards: list[float],
    ) -> None:
        obs_chunks.append(o)
        mask_chunks.append(m)
        act_chunks.append(np.array([action]))
        logp_chunks.append(np.array([logp], np.float32))
        value_chunks.append(np.array([value], np.float32))
        slot.traj[p].append(len(rewards))  # type: ignore[union-attr]
        rewards.append(slot.pending[p])
        slot.pending[p] = 0.0

    def _apply(
        self,
        slot: _Slot,
        action: int,
        rewards: list[float],
        points: dict[str, list[int]],
        out: Rollout,
    ) -> None:
        """Play one action; credit the points it scored (and, at the end, the settlement) to the
        recorded seats' latest decisions."""
        g = slot.game
        g.apply(action)
        out.env_steps += 1
        deal_over = len(g.deal_scores) > slot.n_deals
        if not deal_over and not self.dense_reward:
            return
        if deal_over:
            slot.n_deals += 1
            out.deals += 1
            d0, d1 = g.deal_scores[-1]
            diff = d0.total - d1.total
        else:
            diff = sum(g.scores[0]) - sum(g.scores[1])
        for p in (0, 1):
            traj = slot.traj[p]
            if traj is None:
                continue
            mine = diff if p == 0 else -diff
            reward = (mine - slot.credited[p]) * self.reward_scale
            slot.credited[p] = 0 if deal_over else mine
            if deal_over:
                points.setdefault(slot.label, []).append(mine)
                if g.is_over and self.mode == "partie":
                    margin = g.totals[p] - g.totals[1 - p]
                    reward += self.settle_weight * self.reward_scale * (g.result[p] - margin)
            if not reward:
                continue
            if traj:
                rewards[traj[-1]] += reward
            else:
                slot.pending[p] += reward


class OpponentPool:
    """Chooses each game's opponent for the learner: itself (both seats, parameter sharing), a
    past snapshot, the heuristic or the random agent, with the given weights.

    Snapshots are frozen copies of the learner added with :meth:`add_snapshot`; the oldest is
    dropped past ``size``. With an empty pool, snapshot games are self-play games.
    """

    KINDS = ("self", "snapshot", "heuristic", "random")

    def __init__(
        self,
        learner: ActorCritic,
        weights: dict[str, float],
        size: int = 6,
        agent_factories: dict[str, Callable[[], Agent]] | None = None,
    ) -> None:
        unknown = set(weights) - set(self.KINDS)
        if unknown:
            raise ValueError(f"unknown opponent kinds {sorted(unknown)}; expected {self.KINDS}")
        total = sum(weights.values())
        if total <= 0:
            raise ValueError("opponent weights must have a positive sum")
        self.learner, self.size = learner, size
        self.kinds = [k for k in self.KINDS if weights.get(k, 0) > 0]
        self.probs = np.array([weights[k] / total for k in self.kinds])
        self.snapshots: list[ActorCritic] = []
        self.snapshot_updates: list[int] = []
        if agent_factories is None:
            from piquet_agents.heuristic import HeuristicAgent
            from piquet_agents.random_agent import RandomAgent

            agent_factories = {"heuristic": HeuristicAgent, "random": RandomAgent}
        self.factories = agent_factories

    def add_snapshot(self, update: int) -> None:
        """Freeze a copy of the learner's current weights into the pool."""
        snap = ActorCritic.from_arch(self.learner.arch())
        snap.load_state_dict(self.learner.state_dict())
        snap.eval().requires_grad_(False)
        self.snapshots.append(snap)
        self.snapshot_updates.append(update)
        if len(self.snapshots) > self.size:
            self.snapshots.pop(0)
            self.snapshot_updates.pop(0)

    def matchup(self, rng: np.random.Generator) -> Matchup:
        """Draw the seats of one game (the learner's seat at random when it plays one seat)."""
        kind = self.kinds[int(rng.choice(len(self.kinds), p=self.probs))]
        learner = Seat(model=self.learner, record=True)
        if kind == "self" or (kind == "snapshot" and not self.snapshots):
            return learner, Seat(model=self.learner, record=True), "self"
        if kind == "snapshot":
            j = int(rng.integers(len(self.snapshots)))
            other = Seat(model=self.snapshots[j])
        else:
            other = Seat(agent=self.factories[kind]())
        seats = (learner, other) if rng.random() < 0.5 else (other, learner)
        return seats[0], seats[1], kind
