"""The magnet of regularised self-play: a policy PPO is pulled toward, and the schedules of its
coefficient and of the entropy bonus.

Magnetic mirror descent (Sokota et al., ICLR 2023, "A unified approach to reinforcement learning,
quantal response equilibria, and two-player zero-sum games") adds to a policy-gradient step a
reverse-KL pull toward a *magnet* policy, ``magnet_coef * KL(pi || magnet)``, beside the entropy
bonus; with it, self-play converges to a regularised equilibrium where plain self-play cycles.
Rudolph et al. (ICLR 2026) compared PPO and MMD in self-play by exact exploitability; EMAgnet
(2026) takes as the magnet an exponential moving average of the learner's own parameters. Three
magnets (:class:`Magnet`):

- ``uniform``: the uniform policy over the legal actions (the KL is then the entropy bonus, up to
  a constant per state);
- ``ema``: a copy of the learner whose parameters follow it, ``ema <- d * ema + (1 - d) * theta``
  after every update (``magnet_ema = d``);
- a policy file: a frozen network (any architecture over the same observations and actions).

The KL is computed on the rollout's decisions, over the full masked distributions (not only the
actions taken): ``sum_a pi(a|s) (log pi(a|s) - log magnet(a|s))`` over the legal actions.

:func:`scheduled` anneals a coefficient over a run: ``constant``, ``linear`` (from the start value
to the end value over the run's updates) or ``power`` (``start * (1 + update) ** -power``, the
papers' annealed temperature).
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from piquet_agents.network import MASKED_LOGIT, ActorCritic

SCHEDULES = ("constant", "linear", "power")
"""How a coefficient changes over a run (:func:`scheduled`)."""
KINDS = ("uniform", "ema")
"""The magnets named by a word; anything else is a policy file."""


def scheduled(
    kind: str, start: float, end: float, power: float, update: int, updates: int
) -> float:
    """A coefficient at ``update`` (0-based) of a run of ``updates``: ``start`` throughout
    (``constant``), linearly from ``start`` to ``end`` (``linear``), or ``start * (1 + update) **
    -power`` (``power``).

    >>> scheduled("linear", 1.0, 0.0, 0.5, 5, 10), round(scheduled("power", 1.0, 0, 0.5, 3, 10), 3)
    (0.5, 0.5)
    """
    if kind == "constant":
        return start
    if kind == "linear":
        frac = min(update / max(updates, 1), 1.0)
        return start + (end - start) * frac
    if kind == "power":
        return start * math.pow(1.0 + update, -power)
    raise ValueError(f"schedule must be one of {SCHEDULES}, got {kind!r}")


class Magnet:
    """The policy the learner is pulled toward (see the module docstring). ``kind`` is
    ``"uniform"``, ``"ema"`` (with ``decay`` and the learner ``model`` to follow) or the path of a
    policy file."""

    def __init__(self, kind: str, model: ActorCritic, *, decay: float = 0.99) -> None:
        self.kind = kind
        self.decay = decay
        self.network: ActorCritic | None = None
        if kind == "ema":
            self.network = model.frozen_copy()
        elif kind != "uniform":
            from piquet_agents.checkpoint import load_policy

            net, _ = load_policy(Path(kind))
            self.network = net.to(next(model.parameters()).device)
        if self.network is not None:
            self.network.eval().requires_grad_(False)

    def log_probs(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The magnet's log-probabilities ``[B, n_actions]`` over the legal actions (the masked
        ones at the masked logit)."""
        if self.network is None:
            legal = mask != 0
            n = legal.sum(-1, keepdim=True).clamp(min=1).float()
            return torch.where(legal, -torch.log(n), torch.full_like(n, MASKED_LOGIT))
        with torch.no_grad():
            return torch.log_softmax(self.network.logits(obs, mask).float(), dim=-1)

    def follow(self, model: ActorCritic) -> None:
        """After an update: the EMA magnet moves toward the learner (the others stay)."""
        if self.kind != "ema" or self.network is None:
            return
        with torch.no_grad():
            for ema, theta in zip(self.network.parameters(), model.parameters()):
                ema.mul_(self.decay).add_(theta.detach(), alpha=1.0 - self.decay)

    def state_tensors(self) -> dict[str, torch.Tensor]:
        """What a checkpoint keeps of the magnet: the EMA's weights (nothing for the others,
        which are rebuilt from the settings)."""
        if self.kind != "ema" or self.network is None:
            return {}
        return {f"magnet.{k}": v for k, v in self.network.state_dict().items()}

    def load_tensors(self, tensors: dict[str, torch.Tensor]) -> None:
        """Restore :meth:`state_tensors`."""
        if self.kind == "ema" and self.network is not None:
            self.network.load_state_dict(tensors)


def kl_to_magnet(
    logp_all: torch.Tensor, magnet_logp: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """``KL(pi || magnet)`` per row, over the legal actions, from both log-probabilities."""
    legal = mask != 0
    p = logp_all.exp()
    return torch.where(legal, p * (logp_all - magnet_logp), torch.zeros_like(p)).sum(-1)
