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
    raise ImportError(
        'piquet_agents\' networks need torch: pip install "piquet-env[train]"'
    ) from err
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
