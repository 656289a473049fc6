"""Behaviour-cloning warm start: imitate the heuristic agent before PPO takes over.

The heuristic is one of the opponent pool's baselines; copying its decisions gives the network a
sensible starting policy (and its value head a sensible starting critic) in a minute instead of
many minutes of PPO from scratch. :func:`collect_demonstrations` records both seats of
heuristic-vs-heuristic games with :class:`~piquet_training.ppo.collector.Collector`;
:func:`behaviour_clone` fits the policy head by cross-entropy on the chosen actions (under the same
masks) and the value head by mean squared error on the discounted returns.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from piquet_agents.network import ActorCritic
from piquet_env.agent import Agent
from piquet_training.ppo.collector import Collector, Matchup, Rollout, Seat
from piquet_training.settings.train import TrainConfig


def discounted_returns(rewards: np.ndarray, dones: np.ndarray, gamma: float) -> np.ndarray:
    """Reward-to-go of each decision within its trajectory (``dones`` marks trajectory ends).

    >>> discounted_returns(np.array([1., 0., 2., 5.]), np.array([0, 0, 1, 1], bool), 0.5).tolist()
    [1.5, 1.0, 2.0, 5.0]
    """
    out = np.zeros(len(rewards), dtype=np.float32)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        if dones[t]:
            running = 0.0
        running = float(rewards[t]) + gamma * running
        out[t] = running
    return out


def collect_demonstrations(
    collector: Collector,
    n_games: int,
    teacher: Callable[[], Agent],
    progress: Callable[[int], None] | None = None,
) -> Rollout:
    """Record every decision of ``n_games`` games where ``teacher()`` agents play both seats;
    ``progress(n)``, when given, is told the games played so far as they end."""

    def matchup(rng: np.random.Generator) -> Matchup:
        return Seat(agent=teacher(), record=True), Seat(agent=teacher(), record=True), "teacher"

    return collector.collect(n_games, matchup, on_game=progress)


def bc_batches(n: int, cfg: TrainConfig) -> int:
    """How many minibatches :func:`behaviour_clone` fits to ``n`` decisions in all.

    >>> from piquet_training.settings.train import TrainConfig
    >>> bc_batches(1000, TrainConfig(bc_epochs=2, bc_batch_size=300))
    8
    """
    return cfg.bc_epochs * -(-n // cfg.bc_batch_size)


def behaviour_clone(
    model: ActorCritic,
    demos: Rollout,
    cfg: TrainConfig,
    rng: np.random.Generator,
    max_grad_norm: float = 0.5,
    progress: Callable[[int], None] | None = None,
) -> dict[str, float]:
    """Fit ``model`` to the demonstrations with the warm start's settings of ``cfg``
    (``bc_epochs``, ``bc_learning_rate``, ``bc_batch_size``; the returns discounted by ``gamma``,
    the value loss weighted by ``vf_coef``); return the last epoch's mean losses and accuracy.
    ``progress(n)``, when given, is told the minibatches fitted so far, of
    :func:`bc_batches` in all (it changes nothing fitted)."""
    epochs, learning_rate, batch_size = cfg.bc_epochs, cfg.bc_learning_rate, cfg.bc_batch_size
    gamma, vf_coef = cfg.gamma, cfg.vf_coef
    obs = torch.from_numpy(demos.obs)
    masks = torch.from_numpy(demos.masks)
    actions = torch.from_numpy(demos.actions)
    returns = torch.from_numpy(discounted_returns(demos.rewards, demos.dones, gamma))
    states = None if demos.states is None else torch.from_numpy(demos.states)
    # Forced decisions (one legal action) teach nothing; keep them for the critic only.
    choice = torch.from_numpy((demos.masks.sum(1) > 1).astype(np.float32))
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate, eps=1e-5)
    model.train()
    stats: dict[str, float] = {}
    n = len(demos)
    done = 0
    for _ in range(epochs):
        sums = np.zeros(4)
        perm = torch.from_numpy(rng.permutation(n))
        for start in range(0, n, batch_size):
            idx = perm[start : start + batch_size]
            logits, value = model(obs[idx], masks[idx], None if states is None else states[idx])
            logp = torch.log_softmax(logits, -1).gather(1, actions[idx, None]).squeeze(1)
            w = choice[idx]
            policy_loss = -(logp * w).sum() / w.sum().clamp(min=1.0)
            value_loss = ((value - returns[idx]) ** 2).mean()
            loss = policy_loss + vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            hit = ((logits.argmax(-1) == actions[idx]).float() * w).sum()
            sums += [
                policy_loss.item() * len(idx),
                value_loss.item() * len(idx),
                hit.item(),
                w.sum().item(),
            ]
            done += 1
            if progress is not None:
                progress(done)
        stats = {
            "bc/policy_loss": sums[0] / n,
            "bc/value_loss": sums[1] / n,
            "bc/accuracy": sums[2] / max(sums[3], 1.0),
        }
    model.eval()
    return stats
