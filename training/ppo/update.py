"""PPO's math, as CleanRL's ``ppo.py`` has it: generalized advantage estimates and the
clipped-objective update over shuffled minibatches.

The loop that calls them (collect, advantages, update, log, evaluate, checkpoint) is
:mod:`piquet_training.ppo.trainer`; what a run saves to resume is :mod:`piquet_training.ppo.resume`.
:func:`ppo_update` reads only :class:`PPOStep`: the update's settings (fields of
:class:`~piquet_training.settings.train.TrainConfig` of the same names) with this update's scheduled
coefficients.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from piquet_agents.network import ActorCritic
from piquet_training.ppo.collector import Rollout
from piquet_training.ppo.compute import autocast
from piquet_training.ppo.magnet import Magnet, kl_to_magnet


@dataclass(frozen=True)
class PPOStep:
    """What one PPO update reads: the clipped objective's settings and this update's entropy
    bonus and magnet pull (their schedules' values, :func:`piquet_training.ppo.magnet.scheduled`).

    >>> from piquet_training.settings.train import TrainConfig
    >>> PPOStep.of(TrainConfig(), ent_coef=0.01).num_minibatches
    16
    """

    clip_coef: float = 0.2
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    update_epochs: int = 1
    num_minibatches: int = 16
    norm_adv: bool = True
    clip_vloss: bool = False
    target_kl: float = 0.0
    ent_coef: float = 0.001
    magnet_coef: float = 0.0

    @classmethod
    def of(cls, settings: Any, **coefficients: float) -> PPOStep:
        """The step of a run's settings (a :class:`~piquet_training.settings.train.TrainConfig`):
        each field read by name, ``coefficients`` (``ent_coef``, ``magnet_coef``) as given."""
        values = {
            f.name: getattr(settings, f.name)
            for f in dataclasses.fields(cls)
            if hasattr(settings, f.name)
        }
        return cls(**{**values, **coefficients})


def gae(
    rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, gamma: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """Generalized advantage estimates and returns over contiguous, complete trajectories
    (``dones[t]`` marks each trajectory's last step; nothing is bootstrapped past it).

    >>> adv, ret = gae(np.array([0., 1.]), np.array([.5, .5]), np.array([0, 1], bool), 1., 1.)
    >>> adv.tolist(), ret.tolist()
    ([0.5, 0.5], [1.0, 1.0])
    """
    advantages = np.zeros(len(rewards), dtype=np.float32)
    last = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        if dones[t]:
            next_value, last = 0.0, 0.0
        else:
            next_value = float(values[t + 1])
        delta = float(rewards[t]) + gamma * next_value - float(values[t])
        last = delta + gamma * lam * last
        advantages[t] = last
    return advantages, advantages + values


def ppo_update(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    batch: Rollout,
    advantages: np.ndarray,
    returns: np.ndarray,
    step: PPOStep,
    rng: np.random.Generator,
    precision: str = "fp32",
    *,
    magnet: Magnet | None = None,
) -> dict[str, float]:
    """Clipped-PPO epochs over shuffled minibatches of one rollout; returns mean statistics.
    ``precision`` (``"fp32"`` or ``"bf16"``, :mod:`piquet_training.ppo.compute`) is that of the
    forward passes and losses. ``step.ent_coef`` weighs the entropy bonus and
    ``step.magnet_coef`` the pull ``KL(pi || magnet)`` toward ``magnet`` (magnetic mirror
    descent, :mod:`piquet_training.ppo.magnet`). (A whole run config in place of ``step`` still
    works, deprecated: its fields are read as :meth:`PPOStep.of` reads them.)"""
    if not isinstance(step, PPOStep):
        warnings.warn(
            "ppo_update takes a PPOStep (PPOStep.of(cfg, ent_coef=..., magnet_coef=...)), "
            "not a whole run config",
            DeprecationWarning,
            stacklevel=2,
        )
        step = PPOStep.of(step)
    ent_coef, magnet_coef = step.ent_coef, step.magnet_coef
    pull = magnet is not None and magnet_coef > 0
    dev = next(model.parameters()).device

    def tensor(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).to(dev)

    obs, masks = tensor(batch.obs), tensor(batch.masks)
    actions, old_logp = tensor(batch.actions), tensor(batch.logprobs)
    adv_all, ret_all = tensor(advantages), tensor(returns)
    old_values = tensor(batch.values)
    states = None if batch.states is None else tensor(batch.states)
    wide = None if batch.order is None else tensor(batch.order)  # where obs and states lie
    n = len(batch)
    mb_size = max(1, n // step.num_minibatches)
    model.train()
    sums: dict[str, float] = {}
    count = 0
    for _epoch in range(step.update_epochs):
        perm = torch.from_numpy(rng.permutation(n)).to(dev)
        kls = []
        for start in range(0, n, mb_size):
            idx = perm[start : start + mb_size]
            at = idx if wide is None else wide[idx]
            with autocast(dev, precision):
                logp, entropy, value, logp_all = model.evaluate_distribution(
                    obs[at], masks[idx], actions[idx], None if states is None else states[at]
                )
            logp, entropy, value = logp.float(), entropy.float(), value.float()
            log_ratio = logp - old_logp[idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()  # the k3 estimator
                clipfrac = ((ratio - 1.0).abs() > step.clip_coef).float().mean()
            adv = adv_all[idx]
            if step.norm_adv and len(idx) > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(
                -adv * ratio, -adv * ratio.clamp(1 - step.clip_coef, 1 + step.clip_coef)
            ).mean()
            if step.clip_vloss:
                clipped = old_values[idx] + (value - old_values[idx]).clamp(
                    -step.clip_coef, step.clip_coef
                )
                v_loss = (
                    0.5
                    * torch.max((value - ret_all[idx]) ** 2, (clipped - ret_all[idx]) ** 2).mean()
                )
            else:
                v_loss = 0.5 * ((value - ret_all[idx]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ent_coef * entropy_loss + step.vf_coef * v_loss
            if pull:
                kl = kl_to_magnet(
                    logp_all.float(), magnet.log_probs(obs[at], masks[idx]), masks[idx]
                ).mean()
                loss = loss + magnet_coef * kl
                sums["magnet_kl"] = sums.get("magnet_kl", 0.0) + kl.item()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), step.max_grad_norm)
            optimizer.step()
            for key, val in (
                ("policy_loss", pg_loss),
                ("value_loss", v_loss),
                ("entropy", entropy_loss),
                ("approx_kl", approx_kl),
                ("clipfrac", clipfrac),
            ):
                sums[key] = sums.get(key, 0.0) + val.item()
            count += 1
            kls.append(approx_kl.item())
        if step.target_kl and np.mean(kls) > step.target_kl:
            break
    model.eval()
    stats = {k: v / max(count, 1) for k, v in sums.items()}
    var_y = float(np.var(returns))
    stats["explained_variance"] = (
        float("nan") if var_y == 0 else 1 - float(np.var(returns - batch.values)) / var_y
    )
    return stats
