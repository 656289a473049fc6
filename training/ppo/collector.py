"""Batched self-play: many games advance together, one forward pass serves all of them.

:class:`Collector` drives ``num_envs`` :class:`~piquet_env.game.Game` objects directly (no
PettingZoo wrapper, for speed) and plays a fixed number of *complete* games per call, so every
rollout starts from fresh games whose seeds come from the collector's numpy RNG: a run stopped
between updates resumes exactly (see :mod:`piquet_agents.checkpoint`).

Each seat of a game is controlled by a :class:`Seat`: the learner's network (its decisions are
recorded with observation, mask, action, log-probability and value), a frozen snapshot network, or
any :class:`~piquet_env.agent.Agent` (heuristic, random). All seats played by the same network are
batched into one forward pass per step. The learner playing both seats of a game is self-play with
parameter sharing: the two seats are two separate trajectories.

Rewards (per recorded seat) are those of :func:`piquet_env.rewards.reward_due` in the collector's
``reward`` mode, times ``reward_scale``. Under ``"deal_points"`` with ``dense_reward`` (the
default) the deal points are paid as they accrue: after every action, the change in (own points
this deal - opponent's) since the seat was last credited goes to the seat's latest decision (the
lead that scored, the card that won the trick, the declaration that won the category), and the
deal's end settles the remainder (capot, the cards); otherwise each deal's difference is paid when
the deal ends. Either way a deal's rewards sum to its point difference, and at a partie's end
``settle_weight`` times the settlement's remainder (the 100 for the partie, the rubicon) is added:
with ``settle_weight = 1`` a partie's rewards sum to exactly ``result * reward_scale``.

Each game's seats come from a matchup function, or from an object with a ``matchup`` method: the
opponent pool (:class:`~piquet_training.ppo.pool.OpponentPool`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from piquet_agents.network import ActorCritic
from piquet_env.agent import Agent, Turn
from piquet_env.game import Game
from piquet_env.game.state import MODES
from piquet_env.observation import ObservationEncoder, encoder_for
from piquet_env.rewards import check_reward, reward_due
from piquet_env.rules import Rules


@dataclass
class Seat:
    """Who plays one seat: a network (``model``, batched) or an ``agent``; ``record`` keeps the
    seat's decisions in the rollout; ``greedy`` plays a network's most probable action."""

    model: ActorCritic | None = None
    agent: Agent | None = None
    record: bool = False
    greedy: bool = False

    def __post_init__(self) -> None:
        if (self.model is None) == (self.agent is None):
            raise ValueError("a Seat needs exactly one of model and agent")


Matchup = tuple[Seat, Seat, str]


@runtime_checkable
class MatchupSource(Protocol):
    """What chooses each game's seats (:class:`~piquet_training.ppo.pool.OpponentPool`)."""

    def matchup(self, rng: np.random.Generator) -> Matchup:
        """Two seats and the game's label."""
        ...


"""The two seats of a game and a label for its statistics (e.g. ``"heuristic"``)."""


@dataclass
class Rollout:
    """Recorded decisions, each trajectory (one seat of one game) contiguous, in game order.

    ``dones[i]`` marks the last decision of its trajectory; ``states`` holds the asymmetric
    critic's full-information input when recorded. ``logprobs`` and ``values`` are those
    of the acting network (0 for decisions recorded from an :class:`~piquet_env.agent.Agent`).
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
    """Critic states (:meth:`~piquet_env.observation.ObservationEncoder.state` seen from the
    acting player), when the collector records them."""
    env_steps: int = 0
    games: int = 0
    deals: int = 0
    points: dict[str, list[int]] = field(default_factory=dict)
    order: np.ndarray | None = None
    """When set, ``obs`` and ``states`` (the wide columns) are in the order the decisions were
    recorded, and the rollout's row ``i`` is their row ``order[i]``: the collector indexes them
    rather than copying them into trajectory order. Every other column is in trajectory order.
    Read them with :meth:`wide`."""

    def __len__(self) -> int:
        return len(self.actions)

    def wide(self, rows: np.ndarray | slice | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """``(obs, states)`` of ``rows`` of the rollout (all rows with ``None``), in trajectory
        order, through :attr:`order` where it is set (a copy then)."""
        if rows is None:
            rows = slice(None)
        if self.order is not None:
            rows = self.order[rows]
        states = None if self.states is None else self.states[rows]
        return self.obs[rows], states


class _Buffer:
    """Decisions in the order they were recorded (blocks of rows), their rewards, and the
    trajectories (lists of row indices) that :meth:`rollout` lays out contiguously."""

    def __init__(self, enc: ObservationEncoder, record_states: bool) -> None:
        self.enc = enc
        self.record_states = record_states
        self.blocks: dict[str, list[np.ndarray]] = {
            k: [] for k in ("obs", "masks", "actions", "logprobs", "values", "states")
        }
        self.rewards: list[float] = []
        self.trajectories: list[list[int]] = []

    def add(
        self,
        obs: np.ndarray,
        masks: np.ndarray,
        actions: np.ndarray,
        logprobs: np.ndarray,
        values: np.ndarray,
        states: np.ndarray | None,
    ) -> int:
        """Append a block of ``len(actions)`` decisions (zero reward); return its first row."""
        for key, rows in (
            ("obs", obs),
            ("masks", masks),
            ("actions", actions),
            ("logprobs", logprobs),
            ("values", values),
        ):
            self.blocks[key].append(rows)
        if self.record_states:
            if states is None:
                raise ValueError("this buffer records critic states: pass them")
            self.blocks["states"].append(states)
        base = len(self.rewards)
        self.rewards.extend([0.0] * len(actions))
        return base

    def rollout(self) -> Rollout:
        """The decisions reordered trajectory by trajectory, with ``dones`` marking their ends."""
        enc = self.enc
        order = np.fromiter((i for t in self.trajectories for i in t), dtype=np.int64)
        dones = np.zeros(len(order), dtype=bool)
        ends = np.cumsum([len(t) for t in self.trajectories]) - 1
        dones[ends[ends >= 0]] = True

        def cat(key: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
            blocks = self.blocks[key]
            if not blocks:
                return np.zeros((0, *shape), dtype=dtype)
            return np.concatenate(blocks).astype(dtype, copy=False)[order]

        return Rollout(
            obs=cat("obs", (enc.size,), np.float32),
            masks=cat("masks", (enc.n_actions,), np.int8),
            actions=cat("actions", (), np.int64),
            logprobs=cat("logprobs", (), np.float32),
            values=cat("values", (), np.float32),
            rewards=np.asarray(self.rewards, dtype=np.float32)[order],
            dones=dones,
            states=cat("states", (enc.state_size,), np.float32) if self.record_states else None,
        )


@dataclass
class CollectionCounts:
    """What a collection counts besides the decisions: see :class:`Rollout`."""

    env_steps: int = 0
    games: int = 0
    deals: int = 0
    points: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class _Slot:
    """One game under way: its seats, and the reward bookkeeping of its recorded seats."""

    game: Game
    seats: tuple[Seat, Seat]
    label: str
    traj: tuple[list[int], list[int]] = field(default_factory=lambda: ([], []))
    """Rows of each seat's recorded decisions (empty for a seat not recorded)."""
    n_deals: int = 0
    credited: list[int] = field(default_factory=lambda: [0, 0])
    """Deal-point difference (own - opponent's) already paid to each seat this deal."""
    pending: list[float] = field(default_factory=lambda: [0.0, 0.0])
    """Reward earned by a seat before its first recorded decision (paid to that decision)."""

    def recorded(self, p: int, row: int, rewards: list[float]) -> None:
        """Seat ``p``'s decision was recorded at ``row``: it gets the reward pending."""
        self.traj[p].append(row)
        rewards[row] += self.pending[p]
        self.pending[p] = 0.0


@dataclass(frozen=True)
class Collection:
    """What self-play collects, one value for both collectors: games under ``rules`` in
    ``mode``, ``num_envs`` at a time, rewarded by ``reward`` (scaled by ``reward_scale``, a
    partie's settlement weighted ``settle_weight``, paid as it accrues when ``dense_reward``; see
    the module docstring), and with ``record_states`` each decision's full-information state for
    the critic. Checked on construction."""

    rules: Rules
    mode: str = "deal"
    num_envs: int = 1
    reward: str = "deal_points"
    reward_scale: float = 0.02
    settle_weight: float = 1.0
    dense_reward: bool = True
    record_states: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        check_reward(self.reward, scale=self.reward_scale, settle_weight=self.settle_weight)
        if isinstance(self.num_envs, bool) or not isinstance(self.num_envs, int):
            raise ValueError(f"num_envs must be an int, got {self.num_envs!r}")
        if self.num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {self.num_envs!r}")

    @classmethod
    def of(cls, cfg: Any, rules: Rules, mode: str) -> Collection:
        """The collection of a training config (a :class:`~piquet_training.settings.train.
        TrainConfig`) for games in ``mode``."""
        return cls(
            rules,
            mode,
            cfg.num_envs,
            reward=cfg.reward,
            reward_scale=cfg.reward_scale,
            settle_weight=cfg.settle_weight,
            dense_reward=cfg.dense_reward,
            record_states=cfg.critic == "state",
        )


class Collector:
    """Plays batches of complete games as ``collection`` says and records rollouts.

    ``rng`` (a numpy ``Generator``) draws every game seed and is the only source of randomness
    besides torch's global RNG (used to sample network actions) and the agents (seeded from
    ``rng`` by the matchup function).
    """

    def __init__(self, collection: Collection, rng: np.random.Generator) -> None:
        c = self.collection = collection
        self.rules, self.mode, self.num_envs, self.rng = c.rules, c.mode, c.num_envs, rng
        self.reward, self.reward_scale = c.reward, c.reward_scale
        self.settle_weight, self.dense_reward = c.settle_weight, c.dense_reward
        self._dense = c.dense_reward and c.reward == "deal_points"
        self.record_states = c.record_states
        self.encoder = encoder_for(c.rules)
        self.state_size = self.encoder.state_size
        _, a, b, _ = self.encoder.state_fields[0]
        self._own_obs = slice(a, b)  # the acting player's observation inside his state

    def collect(
        self,
        n_games: int,
        matchup: Callable[[np.random.Generator], Matchup] | MatchupSource,
        num_envs: int | None = None,
        on_game: Callable[[int], None] | None = None,
    ) -> Rollout:
        """Play ``n_games`` complete games, ``num_envs`` at a time (default: the collector's);
        each game's seats come from ``matchup(rng)`` (or its ``matchup`` method: an
        :class:`~piquet_training.ppo.pool.OpponentPool`). Returns the recorded decisions as a
        :class:`Rollout`. ``on_game(n)``, when given, is called as games end with the number
        ended so far (to show progress; it changes nothing played)."""
        if isinstance(matchup, MatchupSource):
            matchup = matchup.matchup
        num_envs = self.num_envs if num_envs is None else num_envs
        buf = _Buffer(self.encoder, self.record_states)
        stats = CollectionCounts()
        started = 0

        def new_slot() -> _Slot:
            nonlocal started
            started += 1
            seat0, seat1, label = matchup(self.rng)
            game = Game(
                self.rules, seed=int(self.rng.integers(2**63)), mode=self.mode, record=False
            )
            slot = _Slot(game, (seat0, seat1), label)
            for p, s in enumerate(slot.seats):
                if s.agent is not None:
                    s.agent.reset(int(self.rng.integers(2**63)))
                if s.record:
                    buf.trajectories.append(slot.traj[p])
            return slot

        slots = [new_slot() for _ in range(min(num_envs, n_games))]
        while slots:
            # Group the slots by who acts: one forward pass per network, agents one by one.
            by_model: dict[tuple[int, bool, bool], list[_Slot]] = {}
            for slot in slots:
                seat = slot.seats[slot.game.current_player]
                if seat.agent is not None:
                    self._agent_step(slot, seat.agent, seat.record, buf, stats)
                else:
                    key = id(seat.model), seat.greedy, seat.record
                    by_model.setdefault(key, []).append(slot)
            for group in by_model.values():
                self._network_step(group, buf, stats)
            # Replace finished games while the quota lasts.
            kept = []
            for slot in slots:
                if slot.game.is_over:
                    stats.games += 1
                    if on_game is not None:
                        on_game(stats.games)
                    if started < n_games:
                        kept.append(new_slot())
                else:
                    kept.append(slot)
            slots = kept

        out = buf.rollout()
        out.env_steps, out.games, out.deals = stats.env_steps, stats.games, stats.deals
        out.points = stats.points
        return out

    def _observe(self, group: list[_Slot], record_states: bool) -> tuple:
        """Observations, masks and (when ``record_states``) critic states of the acting players."""
        enc = self.encoder
        obs = np.empty((len(group), enc.size), dtype=np.float32)
        masks = np.empty((len(group), enc.n_actions), dtype=np.int8)
        states = np.empty((len(group), self.state_size), np.float32) if record_states else None
        for i, slot in enumerate(group):
            g = slot.game
            p = g.current_player
            if states is not None:
                enc.state_into(g, p, states[i])
                obs[i] = states[i, self._own_obs]
            else:
                enc.encode_into(g, p, obs[i])
            enc.action_mask_into(g, p, masks[i])
        return obs, masks, states

    def _agent_step(
        self, slot: _Slot, agent: Agent, record: bool, buf: _Buffer, stats: CollectionCounts
    ) -> None:
        """One move of an :class:`~piquet_env.agent.Agent` (recorded when ``record``)."""
        g = slot.game
        p = g.current_player
        action = int(agent.act(Turn(g, p)))
        if record:
            obs, masks, states = self._observe([slot], self.record_states)
            zero = np.zeros(1, np.float32)
            row = buf.add(obs, masks, np.array([action]), zero, zero, states)
            slot.recorded(p, row, buf.rewards)
        self._apply(slot, action, buf.rewards, stats)

    def _network_step(self, group: list[_Slot], buf: _Buffer, stats: CollectionCounts) -> None:
        """One move in each game of ``group``, all played by the same network seat."""
        seat = group[0].seats[group[0].game.current_player]
        assert seat.model is not None
        record_states = seat.record and self.record_states
        obs, masks, states = self._observe(group, record_states)
        dev = next(seat.model.parameters()).device
        actions, logp, values = seat.model.act(
            torch.from_numpy(obs).to(dev),
            torch.from_numpy(masks).to(dev),
            None if states is None else torch.from_numpy(states).to(dev),
            greedy=seat.greedy,
            with_value=seat.record,
        )
        actions_np = actions.cpu().numpy()
        if seat.record:
            assert values is not None
            base = buf.add(obs, masks, actions_np, logp.cpu().numpy(), values.cpu().numpy(), states)
        for i, slot in enumerate(group):
            if seat.record:
                slot.recorded(slot.game.current_player, base + i, buf.rewards)
            self._apply(slot, int(actions_np[i]), buf.rewards, stats)

    def _apply(
        self, slot: _Slot, action: int, rewards: list[float], stats: CollectionCounts
    ) -> None:
        """Play one action; pay the recorded seats what :func:`~piquet_env.rewards.reward_due`
        says they earned (on their latest decision, or pending before their first)."""
        g = slot.game
        g.apply(action)
        stats.env_steps += 1
        deal_over = len(g.deal_scores) > slot.n_deals
        if deal_over:
            slot.n_deals += 1
            stats.deals += 1
            d0, d1 = g.deal_scores[-1]
            diff = d0.total - d1.total
        elif not self._dense:
            return
        for p in (0, 1):
            if not slot.seats[p].record:
                continue
            if deal_over:
                stats.points.setdefault(slot.label, []).append(diff if p == 0 else -diff)
            points, slot.credited[p] = reward_due(
                self.reward,
                g,
                p,
                deal_ended=deal_over,
                credited=slot.credited[p],
                settle_weight=self.settle_weight,
            )
            if not points:
                continue
            reward = points * self.reward_scale
            traj = slot.traj[p]
            if traj:
                rewards[traj[-1]] += reward
            else:
                slot.pending[p] += reward
