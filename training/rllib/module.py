"""The action-masking RLModule: the project's :class:`~piquet_agents.network.ActorCritic` in RLlib.

:class:`MaskedActorCriticModule` is a torch RLModule of RLlib's current API stack that holds one
:class:`~piquet_agents.policy.ActorCritic` (MLP trunk shared by a policy head and a value head) as
``self.model``. It adapts the environment's observation dict to the network: the batch's
``obs`` column is ``{"observation": float32 [B, obs_size], "action_mask": int8 [B, n_actions]}``
(see :mod:`piquet_env.observation`), and the network's forward replaces the logits of illegal
actions by :data:`~piquet_agents.policy.MASKED_LOGIT`, so RLlib's categorical distribution never
samples one and PPO's ratios, entropies and KL terms stay finite. The value head serves PPO's critic
(:class:`~ray.rllib.core.rl_module.apis.ValueFunctionAPI`), reusing the trunk's embeddings of the
training pass.

Because the module *is* the project's network, exporting it to a ``PolicyAgent`` checkpoint is a
copy of its ``state_dict`` (:func:`piquet_training.rllib.export.export_policy`), with no conversion.

``model_config`` keys: ``hidden`` (trunk widths, default ``[256, 256]``), ``activation``
(``"tanh"`` or ``"relu"``, default ``"tanh"``) and ``critic`` (``"obs"``, the default: the value
head on the actor's trunk; ``"state"``: an asymmetric critic, its own MLP over the observation
dict's ``"state"``, the full-information state that
:class:`~piquet_training.rllib.vector_env.TargetVectorEnv` gives with ``critic_state``), as in
``piquet train``'s config.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule

from piquet_agents.network import MASKED_LOGIT, ActorCritic

OBS_KEY = "observation"
"""Key of the observation vector in the environment's observation dict."""
MASK_KEY = "action_mask"
"""Key of the action mask in the environment's observation dict."""
STATE_KEY = "state"
"""Key of the full-information state in the observation dict (an asymmetric critic's input)."""
DEFAULT_HIDDEN = (256, 256)
DEFAULT_ACTIVATION = "tanh"


def _split_obs(batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """The observation vectors and action masks of a batch whose ``obs`` column is the env's
    dict."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or OBS_KEY not in obs or MASK_KEY not in obs:
        got = sorted(obs) if isinstance(obs, dict) else type(obs).__name__
        raise ValueError(
            f"MaskedActorCriticModule needs observations that are dicts with keys "
            f"{OBS_KEY!r} and {MASK_KEY!r}, got {got}"
        )
    return obs[OBS_KEY].float(), obs[MASK_KEY]


class MaskedActorCriticModule(TorchRLModule, ValueFunctionAPI):
    """PPO RLModule over the observation dict of the piquet env, masking illegal actions.

    ``self.model`` is an :class:`~piquet_agents.policy.ActorCritic` sized from the observation and
    action spaces and from ``model_config`` (``hidden``, ``activation``).
    """

    def setup(self) -> None:
        """Build the network from the spaces and ``model_config``."""
        space = self.observation_space
        if (
            not isinstance(space, gym.spaces.Dict)
            or OBS_KEY not in space.spaces
            or MASK_KEY not in space.spaces
        ):
            raise ValueError(
                f"MaskedActorCriticModule needs a Dict observation space with keys "
                f"{OBS_KEY!r} and {MASK_KEY!r}, got {space}"
            )
        if not isinstance(self.action_space, gym.spaces.Discrete):
            raise ValueError(
                f"MaskedActorCriticModule needs a Discrete action space, got {self.action_space}"
            )
        cfg = self.model_config or {}
        critic = str(cfg.get("critic", "obs"))
        if critic not in ("obs", "state"):
            raise ValueError(
                f"MaskedActorCriticModule: critic must be 'obs' or 'state', got {critic!r}"
            )
        if critic == "state" and STATE_KEY not in space.spaces:
            raise ValueError(
                f"MaskedActorCriticModule: critic='state' reads the observation dict's "
                f"{STATE_KEY!r}, which this env does not give (TargetVectorEnv's critic_state)"
            )
        self.model = ActorCritic(
            obs_size=int(space[OBS_KEY].shape[0]),
            n_actions=int(self.action_space.n),
            hidden=tuple(cfg.get("hidden", DEFAULT_HIDDEN)),
            activation=str(cfg.get("activation", DEFAULT_ACTIVATION)),
            state_size=int(space[STATE_KEY].shape[0]) if critic == "state" else 0,
        )

    def _masked_logits(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs, mask = _split_obs(batch)
        z = self.model.trunk(obs)
        logits = self.model.policy_head(z).masked_fill(mask == 0, MASKED_LOGIT)
        return logits, z

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked action logits (inference and exploration)."""
        logits, _ = self._masked_logits(batch)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked action logits, plus the trunk's embeddings for :meth:`compute_values`."""
        logits, z = self._masked_logits(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: z}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """State values ``[B]`` from the value head (from ``embeddings`` when given); an
        asymmetric critic reads the batch's full-information states instead."""
        if self.model.critic_trunk is not None:
            return self.model.values(batch[Columns.OBS][STATE_KEY].float())
        if embeddings is None:
            obs, _ = _split_obs(batch)
            embeddings = self.model.trunk(obs)
        return self.model.value_head(embeddings).squeeze(-1)
