"""The agent that plays with a trained network: :class:`PolicyAgent`.

It wraps an :class:`~piquet_agents.network.ActorCritic` for play anywhere an
:class:`~piquet_env.agent.Agent` is expected (evaluation, ladder, human play);
``PolicyAgent.load(path)`` reads a checkpoint written by ``piquet train`` (see
:mod:`piquet_agents.checkpoint`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

try:
    import torch
except ModuleNotFoundError as err:  # the train extra is not installed
    raise ImportError('piquet_agents\' networks need torch: pip install -e ".[train]"') from err
from piquet_agents.checkpoint import load_policy
from piquet_agents.network import MASKED_LOGIT, ActorCritic
from piquet_env.observation import encoder_for

if TYPE_CHECKING:
    from piquet_env.agent import Turn
    from piquet_env.rules import Rules

__all__ = ["MASKED_LOGIT", "ActorCritic", "PolicyAgent"]


class PolicyAgent:
    """An :class:`~piquet_env.agent.Agent` that plays with an :class:`ActorCritic`.

    ``greedy=True`` (the default) plays the most probable legal action; ``greedy=False`` samples
    from the policy, reproducibly given ``seed`` (see :meth:`reset`). The network must have been
    trained for ``rules``: its observation size and action count are checked here (``ValueError``),
    and a game under other rules is refused when the policy is asked to act.
    """

    def __init__(
        self,
        model: ActorCritic,
        rules: Rules,
        *,
        greedy: bool = True,
        seed: int | None = None,
        name: str = "policy",
    ) -> None:
        enc = encoder_for(rules)
        if (model.obs_size, model.n_actions) != (enc.size, enc.n_actions):
            raise ValueError(
                f"policy {name!r}: the network reads {model.obs_size} observation entries and "
                f"has {model.n_actions} actions, but rules {rules.name!r} encode {enc.size} and "
                f"have {enc.n_actions}"
            )
        self.model = model.eval()
        self.rules = rules
        self.greedy = greedy
        self.name = name
        self._gen = torch.Generator()
        self.reset(seed)

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        rules: Rules | None = None,
        greedy: bool = True,
        seed: int | None = None,
        name: str | None = None,
    ) -> PolicyAgent:
        """Load the policy of a checkpoint (a ``.safetensors`` file or a run directory).

        ``rules``, if given, must be the rules the policy was trained for. Raises
        :class:`piquet_agents.checkpoint.CheckpointError` for a missing, corrupt or mismatched file.
        """
        model, ckpt_rules = load_policy(path, rules=rules)
        label = name or f"policy:{Path(path).name}"
        return cls(model, ckpt_rules, greedy=greedy, seed=seed, name=label)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling RNG (no effect on greedy play)."""
        self._gen.manual_seed(
            int(seed) if seed is not None else int(np.random.SeedSequence().generate_state(1)[0])
        )

    def batch_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy as it plays, for many observations at once: ``(k, n_actions)`` float64
        probabilities (one-hot on the most probable legal action when greedy, else the masked
        softmax it samples from), for observations ``(k, size)`` and masks ``(k, n_actions)``."""
        device = next(self.model.parameters()).device
        with torch.no_grad():
            logits = self.model.logits(
                torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)).to(device),
                torch.from_numpy(np.asarray(mask, dtype=np.int8)).to(device),
            ).cpu()
            if self.greedy:
                out = torch.zeros_like(logits, dtype=torch.float64)
                out[torch.arange(logits.shape[0]), logits.argmax(-1)] = 1.0
                return out.numpy()
            return torch.softmax(logits.double(), dim=-1).numpy()

    def action_probabilities(self, turn: Turn) -> dict[int, float]:
        """The policy's probability of each legal action of ``turn``, as it plays (see
        :meth:`batch_probabilities`)."""
        probs = self.batch_probabilities(turn.observation[None], turn.action_mask[None])[0]
        return {a: float(probs[a]) for a in turn.legal_actions}

    def act(self, turn: Turn) -> int:
        """The policy's action for ``turn`` (always one of ``turn.legal_actions``)."""
        if turn.game.rules != self.rules:
            raise ValueError(
                f"policy {self.name!r} was trained for rules {self.rules.name!r}, "
                f"not {turn.game.rules.name!r}"
            )
        obs = torch.from_numpy(np.asarray(turn.observation, dtype=np.float32))[None]
        mask = torch.from_numpy(np.asarray(turn.action_mask, dtype=np.int8))[None]
        action, _, _ = self.model.act(
            obs, mask, greedy=self.greedy, generator=self._gen, with_value=False
        )
        return int(action[0])
