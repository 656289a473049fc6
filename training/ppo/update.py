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
    Its values come from the run's settings alone (:meth:`of`): it declares no default of its
    own.

    >>> from piquet_training.settings.train import TrainConfig
    >>> PPOStep.of(TrainConfig(), ent_coef=0.01).num_minibatches
    16
    """

    clip_coef: float
    vf_coef: float
    max_grad_norm: float
    update_epochs: int
    num_minibatches: int
    norm_adv: bool
    clip_vloss: bool
    target_kl: float
    ent_coef: float
    magnet_coef: float

    @classmethod
    def of(cls, settings: Any, **coefficients: float) -> PPOStep:
        """The step of a run's settings (a :class:`~piquet_training.settings.train.TrainConfig`):
        each field read by name, ``coefficients`` (``ent_coef``, ``magnet_coef``: this update's
        values of their schedules) as given. A name that is no field of the step, or a field
        that the settings lack, is a ``TypeError`` naming it, never skipped."""
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(coefficients) - set(names))
        if unknown:
            raise TypeError(f"PPOStep has no field {', '.join(unknown)} (its fields: {names})")
        missing = [n for n in names if n not in coefficients and not hasattr(settings, n)]
        if missing:
            raise TypeError(
                f"PPOStep.of: the settings {type(settings).__name__} have no {', '.join(missing)}"
            )
        return cls(**{n: coefficients[n] if n in coefficients else getattr(settings, n)
                      for n in names})  # fmt: skip


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


@dataclass(frozen=True)
class _OnDevice:
    """One rollout's columns as tensors on the model's device (``wide``: where each row's
    observation and state lie, when the rollout keeps them in recording order)."""

    obs: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    old_logp: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    old_values: torch.Tensor
    states: torch.Tensor | None
    wide: torch.Tensor | None

    @classmethod
    def of(
        cls, batch: Rollout, advantages: np.ndarray, returns: np.ndarray, dev: torch.device
    ) -> _OnDevice:
        def tensor(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(a).to(dev)

        return cls(
            tensor(batch.obs),
            tensor(batch.masks),
            tensor(batch.actions),
            tensor(batch.logprobs),
            tensor(advantages),
            tensor(returns),
            tensor(batch.values),
            None if batch.states is None else tensor(batch.states),
            None if batch.order is None else tensor(batch.order),
        )


def clipped_policy_loss(
    ratio: torch.Tensor, adv: torch.Tensor, clip_coef: float, norm_adv: bool
) -> torch.Tensor:
    """PPO's clipped surrogate objective, as a loss (advantages normalised per minibatch when
    ``norm_adv``)."""
    if norm_adv and len(adv) > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    return torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()


def value_loss(
    value: torch.Tensor,
    old_value: torch.Tensor,
    returns: torch.Tensor,
    clip_coef: float,
    clip_vloss: bool,
) -> torch.Tensor:
    """Half the squared error of the critic, the larger of the clipped and unclipped one when
    ``clip_vloss`` (as CleanRL's)."""
    if not clip_vloss:
        return 0.5 * ((value - returns) ** 2).mean()
    clipped = old_value + (value - old_value).clamp(-clip_coef, clip_coef)
    return 0.5 * torch.max((value - returns) ** 2, (clipped - returns) ** 2).mean()


def explained_variance(returns: np.ndarray, values: np.ndarray) -> float:
    """How much of the returns' variance the values explain (NaN when the returns are
    constant)."""
    var_y = float(np.var(returns))
    return float("nan") if var_y == 0 else 1 - float(np.var(returns - values)) / var_y


def _as_step(step: PPOStep | Any) -> PPOStep:
    """``step``, or (deprecated) the step of a whole run config."""
    if isinstance(step, PPOStep):
        return step
    warnings.warn(
        "ppo_update takes a PPOStep (PPOStep.of(cfg, ent_coef=..., magnet_coef=...)), "
        "not a whole run config",
        DeprecationWarning,
        stacklevel=3,
    )
    return PPOStep.of(step)


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
    step = _as_step(step)
    pull = magnet if magnet is not None and step.magnet_coef > 0 else None
    dev = next(model.parameters()).device
    data = _OnDevice.of(batch, advantages, returns, dev)
    n = len(batch)
    mb_size = max(1, n // step.num_minibatches)
    model.train()
    sums: dict[str, float] = {}
    count = 0
    for _epoch in range(step.update_epochs):
        perm = torch.from_numpy(rng.permutation(n)).to(dev)
        kls = []
        for start in range(0, n, mb_size):
            losses = _minibatch_step(
                model, optimizer, data, perm[start : start + mb_size], step, precision, pull
            )
            for key, val in losses.items():
                sums[key] = sums.get(key, 0.0) + val
            count += 1
            kls.append(losses["approx_kl"])
        if step.target_kl and np.mean(kls) > step.target_kl:
            break
    model.eval()
    stats = {k: v / max(count, 1) for k, v in sums.items()}
    stats["explained_variance"] = explained_variance(returns, batch.values)
    return stats


def _minibatch_step(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    data: _OnDevice,
    idx: torch.Tensor,
    step: PPOStep,
    precision: str,
    magnet: Magnet | None,
) -> dict[str, float]:
    """One gradient step on the minibatch ``idx``; its losses and diagnostics."""
    at = idx if data.wide is None else data.wide[idx]
    masks = data.masks[idx]
    states = None if data.states is None else data.states[at]
    with autocast(next(model.parameters()).device, precision):
        logp, entropy, value, logp_all = model.evaluate_distribution(
            data.obs[at], masks, data.actions[idx], states
        )
    logp, entropy, value = logp.float(), entropy.float(), value.float()
    log_ratio = logp - data.old_logp[idx]
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()  # the k3 estimator
        clipfrac = ((ratio - 1.0).abs() > step.clip_coef).float().mean()
    pg_loss = clipped_policy_loss(ratio, data.advantages[idx], step.clip_coef, step.norm_adv)
    v_loss = value_loss(
        value, data.old_values[idx], data.returns[idx], step.clip_coef, step.clip_vloss
    )
    entropy_loss = entropy.mean()
    loss = pg_loss - step.ent_coef * entropy_loss + step.vf_coef * v_loss
    out: dict[str, float] = {}
    if magnet is not None:
        kl = kl_to_magnet(logp_all.float(), magnet.log_probs(data.obs[at], masks), masks).mean()
        loss = loss + step.magnet_coef * kl
        out["magnet_kl"] = kl.item()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), step.max_grad_norm)
    optimizer.step()
    out.update(
        policy_loss=pg_loss.item(),
        value_loss=v_loss.item(),
        entropy=entropy_loss.item(),
        approx_kl=approx_kl.item(),
        clipfrac=clipfrac.item(),
    )
    return out
