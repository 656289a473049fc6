"""League exploiters: opponents trained to beat the learner join its pool (AlphaStar's league).

Self-play and past snapshots teach a policy to beat itself; nothing in them looks for what beats
it. AlphaStar's *main exploiters* (Vinyals et al., Nature 2019) do: agents trained against the
current main agent alone, whose frozen copies the main agent then meets among its opponents. Here
one exploiter does that job for a ``piquet train`` run with ``league_every > 0``:

- every ``league_every`` updates (a **round**), the exploiter trains for ``league_updates`` PPO
  updates against a frozen copy of the learner as it is then, acting greedily (as the policy is
  evaluated and shipped): the exploiter of ``piquet exploit``, on the same batched collector;
- it starts from the learner's weights at the first round and keeps its own from round to round
  (the learner moves a little between rounds; what beat it last time is the best start), with its
  own Adam at the constant ``league_learning_rate``;
- after each round a frozen copy of it joins the pool (:meth:`OpponentPool.add_exploiter`,
  the last ``league_size`` kept), played greedily in ``exploiter_weight`` of the learner's games.

The exploiter's games are extra env steps: the run's ``env_steps`` stay the learner's, the league's
are counted apart (``league_env_steps``), and the rounds' time is in the run's time. Everything
is in the training checkpoint (the exploiter, its optimizer, the pool's exploiters), so a resumed
run continues exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from piquet_agents.network import ActorCritic
from piquet_training.collector import Collector, OpponentPool, frozen_copy
from piquet_training.config import TrainConfig
from piquet_training.ppo import gae, ppo_update
from piquet_training.vector_collector import VectorCollector

__all__ = ["League", "LeagueRound"]


@dataclass(frozen=True)
class LeagueRound:
    """What one round did: the learner's update it trained against, its env steps, and the
    exploiter's mean points per deal over the learner in the round's first and last update's
    games (its sampled play: the greedy edge is ``piquet exploit``'s to measure)."""

    update: int
    env_steps: int
    first_points: float
    last_points: float


class League:
    """The run's exploiter, its optimizer, and the rounds that train it (see the module)."""

    def __init__(self, cfg: TrainConfig, learner: ActorCritic) -> None:
        self.cfg = cfg
        self.learner = learner
        self.exploiter = frozen_copy(learner).requires_grad_(True)
        self.optimizer = torch.optim.Adam(
            self.exploiter.parameters(), lr=cfg.league_learning_rate, eps=1e-5
        )
        self.started = False
        """Whether a round has run (the exploiter then holds its own weights)."""

    def due(self, update: int) -> bool:
        """Whether a round follows ``update``."""
        return bool(self.cfg.league_every) and update % self.cfg.league_every == 0

    def play_round(
        self,
        update: int,
        pool: OpponentPool,
        collector: Collector | VectorCollector,
        rng: np.random.Generator,
        precision: str = "fp32",
    ) -> LeagueRound:
        """Train the exploiter against the learner of ``update`` (frozen, greedy) for
        ``league_updates`` updates, then add a frozen copy of it to ``pool``."""
        cfg = self.cfg
        if not self.started:
            self.exploiter.load_state_dict(self.learner.state_dict())
            self.started = True
        target = frozen_copy(self.learner)
        versus = OpponentPool(self.exploiter, {"target": 1.0}, target=target)
        steps, points = 0, []
        for _ in range(cfg.league_updates):
            if isinstance(collector, VectorCollector):
                batch = collector.collect(cfg.games_per_update, versus)
            else:
                batch = collector.collect(cfg.games_per_update, versus.matchup)
            advantages, returns = gae(
                batch.rewards, batch.values, batch.dones, cfg.gamma, cfg.gae_lambda
            )
            ppo_update(
                self.exploiter, self.optimizer, batch, advantages, returns, cfg, rng, precision
            )
            steps += batch.env_steps
            points.append(float(np.mean(batch.points.get("target", [0.0]))))
        self.exploiter.eval()
        pool.add_exploiter(self.exploiter, update)
        return LeagueRound(update, steps, points[0], points[-1])
