"""The masked actor-critic network: :class:`ActorCritic`.

It is an MLP trunk (widths and activation configurable) with a policy head over
the action ids and a value head. Illegal actions get exactly zero probability: their logits are
replaced by a large negative number before the softmax, so ``exp`` underflows to 0 and entropies
stay finite. The mask used to act is stored with each training step, so the PPO update recomputes
the very same distribution.

"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

try:
    import torch
except ModuleNotFoundError as err:  # the train extra is not installed
    raise ImportError('piquet_agents\' networks need torch: pip install -e ".[train]"') from err
from torch import nn

MASKED_LOGIT = -1e9
"""Logit given to illegal actions: its probability underflows to exactly 0."""

_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
ACTIVATIONS = tuple(_ACTIVATIONS)
"""Names of the nonlinearities an :class:`ActorCritic` may use."""


def param_shapes(
    obs_size: int, n_actions: int, hidden: Sequence[int], state_size: int = 0
) -> dict[str, tuple[int, ...]]:
    """The name and shape of every tensor in the ``state_dict`` of an :class:`ActorCritic` of this
    architecture, computed without building it (checkpoints are checked against it first)."""
    shapes: dict[str, tuple[int, ...]] = {}

    def mlp(name: str, n_in: int) -> None:
        for i, h in enumerate(hidden):
            shapes[f"{name}.{2 * i}.weight"] = (h, n_in)
            shapes[f"{name}.{2 * i}.bias"] = (h,)
            n_in = h

    mlp("trunk", obs_size)
    shapes["policy_head.weight"] = (n_actions, hidden[-1])
    shapes["policy_head.bias"] = (n_actions,)
    if state_size:
        mlp("critic_trunk", state_size)
    shapes["value_head.weight"] = (1, hidden[-1])
    shapes["value_head.bias"] = (1,)
    return shapes


def _layer(n_in: int, n_out: int, gain: float) -> nn.Linear:
    layer = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


def _mlp(n_in: int, hidden: tuple[int, ...], activation: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [_layer(n_in, h, math.sqrt(2)), _ACTIVATIONS[activation]()]
        n_in = h
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Masked actor-critic: ``obs -> trunk -> logits over actions``, and a value.

    ``hidden`` gives the MLP's layer widths and ``activation`` its nonlinearity (``"tanh"`` or
    ``"relu"``). With ``state_size = 0`` the value head shares the actor's trunk and reads the
    observation. With ``state_size > 0`` the critic is a separate MLP over the full-information
    state seen from the acting player (``ObservationEncoder.state(game, player)`` of
    :mod:`piquet_env.observation`: both observations, both hands and discards, the talon and its
    order, ``state_size`` entries; the one the trainer records): an *asymmetric* actor-critic,
    used only in training, where the hidden cards explain away most of the luck of the deal in
    the advantages; the actor still sees only the player's observation.
    Weights are orthogonally initialised as in CleanRL (policy head gain 0.01, value head 1), so a
    fresh network plays close to uniformly over legal actions.
    """

    def __init__(
        self,
        obs_size: int,
        n_actions: int,
        hidden: Sequence[int] = (256, 256),
        activation: str = "tanh",
        state_size: int = 0,
    ) -> None:
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}"
            )
        if not hidden or any(int(h) <= 0 for h in hidden):
            raise ValueError(f"hidden must be a non-empty list of positive widths, got {hidden!r}")
        self.obs_size, self.n_actions = int(obs_size), int(n_actions)
        self.hidden, self.activation = tuple(int(h) for h in hidden), activation
        self.state_size = int(state_size)
        self.trunk = _mlp(self.obs_size, self.hidden, activation)
        self.policy_head = _layer(self.hidden[-1], self.n_actions, 0.01)
        self.critic_trunk = (
            _mlp(self.state_size, self.hidden, activation) if self.state_size else None
        )
        self.value_head = _layer(self.hidden[-1], 1, 1.0)

    def arch(self) -> dict[str, Any]:
        """The constructor arguments, JSON-serializable (stored in checkpoints)."""
        return {
            "obs_size": self.obs_size,
            "n_actions": self.n_actions,
            "hidden": list(self.hidden),
            "activation": self.activation,
            "state_size": self.state_size,
        }

    @classmethod
    def from_arch(cls, arch: dict[str, Any]) -> ActorCritic:
        """Rebuild a network from :meth:`arch` output, to load weights into. Its initial weights
        are drawn from a forked RNG, so torch's global random stream is left untouched."""
        with torch.random.fork_rng(devices=[]):
            return cls(
                arch["obs_size"],
                arch["n_actions"],
                arch["hidden"],
                arch["activation"],
                arch.get("state_size", 0),
            )

    def frozen_copy(self, device: torch.device | str | None = None) -> ActorCritic:
        """A frozen copy of this network (its weights now, evaluation mode, no gradients), on
        ``device`` (default: this network's): a snapshot, a magnet, a fixed opponent, the
        policy an evaluation plays."""
        copy = ActorCritic.from_arch(self.arch())
        copy.load_state_dict(self.state_dict())
        where = device if device is not None else next(self.parameters()).device
        return copy.to(where).eval().requires_grad_(False)

    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor, state: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits ``[B, n_actions]`` and values ``[B]`` (an asymmetric critic needs
        ``state``)."""
        z = self.trunk(obs)
        logits = self.policy_head(z).masked_fill(mask == 0, MASKED_LOGIT)
        return logits, self._value(z, state)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The actor's masked logits ``[B, n_actions]`` alone: the critic is not run."""
        return self.policy_head(self.trunk(obs)).masked_fill(mask == 0, MASKED_LOGIT)

    def values(self, read: torch.Tensor) -> torch.Tensor:
        """The critic's values ``[B]`` alone, from what it reads: the full states for an asymmetric
        critic (``state_size`` entries each; the actor is not run), else the observations."""
        trunk = self.trunk if self.critic_trunk is None else self.critic_trunk
        return self.value_head(trunk(read)).squeeze(-1)

    def _value(self, z: torch.Tensor, state: torch.Tensor | None) -> torch.Tensor:
        if self.critic_trunk is not None:
            if state is None:
                raise ValueError("this critic reads the full state: pass state=")
            z = self.critic_trunk(state)
        return self.value_head(z).squeeze(-1)

    def evaluate_actions(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        actions: torch.Tensor,
        state: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Log-probabilities of ``actions``, entropies and values, under the stored masks."""
        logp, entropy, value, _ = self.evaluate_distribution(obs, mask, actions, state)
        return logp, entropy, value

    def evaluate_distribution(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        actions: torch.Tensor,
        state: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """As :meth:`evaluate_actions`, with the whole masked log-distribution ``[B,
        n_actions]`` last (for a KL to another policy)."""
        logits, value = self(obs, mask, state)
        logp_all = torch.log_softmax(logits, dim=-1)
        logp = logp_all.gather(1, actions.long().unsqueeze(1)).squeeze(1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        return logp, entropy, value, logp_all

    @torch.no_grad()
    def act(
        self,
        obs: torch.Tensor,
        mask: torch.Tensor,
        state: torch.Tensor | None = None,
        *,
        greedy: bool = False,
        generator: torch.Generator | None = None,
        with_value: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Choose actions for a batch: ``(actions, log-probabilities, values)``.

        ``greedy`` takes the most probable legal action; otherwise one is sampled (from
        ``generator`` if given, else torch's global RNG). ``with_value=False`` skips the critic
        (values ``None``), as play does.
        """
        z = self.trunk(obs)
        logits = self.policy_head(z).masked_fill(mask == 0, MASKED_LOGIT)
        logp_all = torch.log_softmax(logits, dim=-1)
        if greedy:
            actions = logp_all.argmax(-1)
        else:
            actions = torch.multinomial(logp_all.exp(), 1, generator=generator).squeeze(1)
        value = self._value(z, state) if with_value else None
        return actions, logp_all.gather(1, actions.unsqueeze(1)).squeeze(1), value


class ActorStack:
    """The actors of several networks of one architecture, acting in one batched pass.

    Frozen copies of a learner (an opponent pool's snapshots) each play a few games of a batch;
    one forward pass per network per step costs more than the arithmetic. Here the weights of
    every layer are stacked (``[networks, out, in]``), each network's rows are padded to the
    largest group, and every layer is one batched product for all networks.

    >>> nets = [ActorCritic(4, 3, (8,)) for _ in range(2)]
    >>> obs, mask = torch.randn(5, 4), torch.ones(5, 3, dtype=torch.int8)
    >>> which = torch.tensor([1, 0, 1, 1, 0])
    >>> stacked = ActorStack(nets).logits(which, obs, mask)
    >>> alone = torch.cat([nets[int(w)](obs[i : i + 1], mask[i : i + 1])[0] for i, w in
    ...     enumerate(which)])
    >>> torch.allclose(stacked, alone, atol=1e-6)
    True
    """

    def __init__(self, models: Sequence[ActorCritic], dtype: torch.dtype = torch.float32) -> None:
        """Stack ``models``' actors; ``dtype`` is the arithmetic's (``torch.bfloat16`` computes
        as ``torch.autocast`` would)."""
        if not models:
            raise ValueError("ActorStack needs at least one network")
        archs = {repr(m.arch()) for m in models}
        if len(archs) > 1:
            raise ValueError(f"ActorStack needs networks of one architecture, got {sorted(archs)}")
        self.n_actions, self.dtype = models[0].n_actions, dtype
        self.layers: list[tuple[torch.Tensor, torch.Tensor] | nn.Module] = []
        for group in zip(*(m.trunk for m in models)):
            linear = isinstance(group[0], nn.Linear)
            self.layers.append(_stacked(group, dtype) if linear else group[0])
        self.layers.append(_stacked([m.policy_head for m in models], dtype))

    @torch.no_grad()
    def logits(self, which: torch.Tensor, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked logits ``[B, n_actions]`` (in the stack's ``dtype``): row ``i`` from network
        ``which[i]``."""
        n_nets = self.layers[-1][0].shape[0]  # type: ignore[index]
        order = torch.argsort(which, stable=True)
        counts = torch.bincount(which, minlength=n_nets)
        starts = torch.cumsum(counts, 0) - counts
        slot = torch.empty_like(which)
        slot[order] = torch.arange(len(which), device=which.device) - starts[which[order]]
        x = obs.new_zeros((n_nets, int(counts.max()), obs.shape[1]), dtype=self.dtype)
        x[which, slot] = obs.to(self.dtype)
        for layer in self.layers:
            if isinstance(layer, tuple):
                weight, bias = layer
                x = torch.baddbmm(bias.unsqueeze(1), x, weight.transpose(1, 2))
            else:
                x = layer(x)
        return x[which, slot].masked_fill(mask == 0, MASKED_LOGIT)

    def act(
        self, which: torch.Tensor, obs: torch.Tensor, mask: torch.Tensor, greedy: bool = False
    ) -> torch.Tensor:
        """Actions sampled (torch's global RNG) from each row's network, or with ``greedy`` the
        most probable legal action (as a greedy :class:`~piquet_agents.policy.PolicyAgent`
        plays)."""
        logits = self.logits(which, obs, mask).float()
        if greedy:
            return logits.argmax(dim=-1)
        return torch.multinomial(torch.softmax(logits, dim=-1), 1).squeeze(1)


def _stacked(layers: Sequence[nn.Module], dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The weights ``[n, out, in]`` and biases ``[n, out]`` of ``n`` linear layers."""
    return (
        torch.stack([layer.weight.detach() for layer in layers]).to(dtype),  # type: ignore[union-attr]
        torch.stack([layer.bias.detach() for layer in layers]).to(dtype),  # type: ignore[union-attr]
    )
