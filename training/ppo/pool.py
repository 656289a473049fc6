"""The training opponents: the learner itself, its past snapshots, and agents resolved from specs.

:class:`OpponentPool` chooses each game's opponent: the learner itself, a past snapshot, or an
:class:`Opponent` resolved from an agent spec (:func:`resolve_opponent`, through
:func:`piquet_agents.make_agent`), with configured weights; the collectors ask it for each game's
seats (:meth:`OpponentPool.matchup`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from piquet_agents.network import ActorCritic
from piquet_env.agent import Agent
from piquet_env.rules import Rules
from piquet_training.ppo.collector import Matchup, Seat


@dataclass(frozen=True)
class Opponent:
    """A training opponent resolved from an agent spec (:func:`resolve_opponent`).

    It acts in batch where it can: a frozen ``network`` (a policy agent's, greedy or sampled as
    the agent plays) or the ``random`` agent (sampled over the legal moves); any other agent is
    played one game object per game, a new one from ``make()`` for each game (reseeded by the
    collector at the game's start).
    """

    spec: str
    make: Callable[[], Agent] | None = None
    """A new agent for a game (every opponent that is no network has one)."""
    network: ActorCritic | None = None
    greedy: bool = True
    random: bool = False

    def __post_init__(self) -> None:
        if self.network is None and self.make is None:
            raise ValueError(f"opponent {self.spec!r} needs a network or an agent factory")

    @property
    def batched(self) -> bool:
        """Whether the batched collector plays it in passes over many games."""
        return self.network is not None or self.random


def resolve_opponent(
    spec: str, rules: Rules, *, device: torch.device | str = "cpu", seed: int = 0
) -> Opponent:
    """The :class:`Opponent` of an agent spec (``random``, ``heuristic``, ``mcts:N``,
    ``baseline``, a checkpoint path...), built by :func:`piquet_agents.make_agent`: a policy agent
    becomes its frozen network on ``device``, the random agent acts in batch, any other agent is
    made afresh for each game."""
    from piquet_agents.policy import PolicyAgent
    from piquet_agents.registry import make_agent
    from piquet_env.agent import RandomAgent

    agent = make_agent(spec, rules, seed=seed)
    if isinstance(agent, PolicyAgent):
        return Opponent(spec, network=agent.model.frozen_copy(device), greedy=agent.greedy)
    if isinstance(agent, RandomAgent):
        return Opponent(spec, RandomAgent, random=True)
    return Opponent(spec, lambda: make_agent(spec, rules, seed=seed))


def _default_opponents() -> dict[str, Opponent]:
    """The heuristic and the random agent, under their names."""
    from piquet_agents.heuristic import HeuristicAgent
    from piquet_env.agent import RandomAgent

    return {
        "heuristic": Opponent("heuristic", HeuristicAgent),
        "random": Opponent("random", RandomAgent, random=True),
    }


class OpponentPool:
    """Chooses each game's opponent for the learner, with the given weights: ``"self"`` (the
    learner in both seats, parameter sharing), ``"snapshot"`` (a past snapshot) or the label of
    one of ``opponents`` (:class:`Opponent`; by default ``"heuristic"`` and ``"random"``).

    Snapshots are frozen copies of the learner added with :meth:`add_snapshot`; the oldest is
    dropped past ``size``. With an empty pool, snapshot games are self-play games. Kinds are drawn
    in the order self, snapshot, then ``opponents``' order.

    ``agent_factories`` (label to agent class or factory) and ``target`` (a network with whether
    it plays greedily, or an agent factory, labelled ``"target"``) are the older ways of naming
    opponents: still read, deprecated (a ``DeprecationWarning``) for ``opponents``.
    """

    LEARNER_KINDS = ("self", "snapshot")
    """The kinds played by the learner's own networks."""

    def __init__(
        self,
        learner: ActorCritic,
        weights: dict[str, float],
        size: int = 6,
        agent_factories: dict[str, Callable[[], Agent]] | None = None,
        target: tuple[ActorCritic, bool] | Callable[[], Agent] | None = None,
        *,
        opponents: dict[str, Opponent] | None = None,
    ) -> None:
        if agent_factories is not None or target is not None:
            warnings.warn(
                "OpponentPool(agent_factories=, target=) is deprecated: pass opponents= "
                "(label to Opponent; resolve_opponent(spec, rules) makes one from an agent spec)",
                DeprecationWarning,
                stacklevel=2,
            )
        if opponents is None:
            opponents = _default_opponents()
            if agent_factories is not None:
                opponents = {
                    k: Opponent(k, f, random=k == "random") for k, f in agent_factories.items()
                }
            if isinstance(target, tuple):
                net, greedy = target
                opponents["target"] = Opponent("target", network=net, greedy=bool(greedy))
            elif target is not None:
                opponents["target"] = Opponent("target", target)
        self.opponents: dict[str, Opponent] = dict(opponents)
        """The agent opponents by label (weighted or not)."""
        known = (*self.LEARNER_KINDS, *self.opponents)
        unknown = set(weights) - set(known)
        if unknown:
            raise ValueError(f"unknown opponent kinds {sorted(unknown)}; expected {known}")
        total = sum(weights.values())
        if total <= 0:
            raise ValueError("opponent weights must have a positive sum")
        self.learner, self.size = learner, size
        self.kinds = [k for k in known if weights.get(k, 0) > 0]
        """The kinds drawn (positive weight), in draw order."""
        self.probs = np.array([weights[k] / total for k in self.kinds])
        self.snapshots: list[ActorCritic] = []
        self.snapshot_updates: list[int] = []

    def add_snapshot(self, update: int) -> None:
        """Freeze a copy of the learner's current weights into the pool."""
        self.snapshots.append(self.learner.frozen_copy())
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
        elif (opponent := self.opponents[kind]).network is not None:
            other = Seat(model=opponent.network, greedy=opponent.greedy)
        else:
            other = Seat(agent=opponent.make())  # type: ignore[misc]
        seats = (learner, other) if rng.random() < 0.5 else (other, learner)
        return seats[0], seats[1], kind
