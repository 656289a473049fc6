"""Both seats learning on the batched engine: N games as arrays for RLlib's multi-agent runners.

:class:`BothSeatsVectorEnv` is an RLlib ``VectorMultiAgentEnv`` of ``num_envs`` games on the
batched engine (:class:`piquet_env.vector.BatchGame`), both seats agents (``"player_0"``,
``"player_1"``), stepped as arrays: one ``BatchGame.step`` a vector step, one move in every
game. It gives RLlib what its sync vector of :class:`~ray.rllib.env.wrappers.pettingzoo_env.
PettingZooEnv` sub-envs gives (:mod:`piquet_training.rllib.env`, the league's env), game for
game:

- **Turn-based**: after each move only the agent to act observes, its reward everything paid
  to its seat since it last acted; the step that ends a game gives both agents their final
  observation (an empty mask), their last rewards (so each seat's rewards sum to its result,
  scaled: the game is zero-sum between them) and ``terminateds`` true, ``infos`` their
  ``"result"``.
- **Autoreset** is ``next_step``, as RLlib's ``SyncVectorMultiAgentEnv``: the step after a game
  ended ignores that game's action and deals it afresh (its reset observation; RLlib's env
  runner then calls ``add_env_reset``).
- **Observations** are the PettingZoo env's dict ``{"observation": float32, "action_mask":
  int8}`` (with ``critic_state=True`` also ``"state"``, the full-information state from the
  seat to act), what :class:`~piquet_training.rllib.module.MaskedActorCriticModule` reads.
- **Moves**: :attr:`BothSeatsVectorEnv.moves` counts every move applied (RLlib's own env-step
  count is the same here: one move a game a step); :func:`~piquet_training.rllib.vector_env.
  moves_callback`'s callback logs them.
- **Seeds**: ``reset(seed=s)`` deals the games of a ``BatchGame`` reset with ``s``; the same
  seed and actions play the same games.

RLlib 2.60's ``MultiAgentEnvRunner`` builds only its sync vector of sub-envs (``make_vec`` of
``ray.rllib.env.vector.registration``); :func:`env_runner_class`'s subclass builds this env
instead, from the env creator registered by :func:`register` (``env_config`` and
``num_envs_per_env_runner`` games), and keeps the rest of RLlib's runner: its episodes, its
connectors, its module. Configure RLlib with ``env_runners(env_runner_cls=env_runner_class())``
and a ``multi_agent`` mapping of both agents (``piquet_training.rllib.algo.both_config``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import gymnasium
import numpy as np
from ray.rllib.connectors.module_to_env.listify_data_for_vector_env import (
    ListifyDataForVectorEnv,
)
from ray.rllib.connectors.module_to_env.unbatch_to_individual_items import (
    UnBatchToIndividualItems,
)
from ray.rllib.env.env_context import EnvContext
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
from ray.rllib.utils.metrics import (
    NUM_AGENT_STEPS_SAMPLED,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES,
    NUM_EPISODES_LIFETIME,
    NUM_MODULE_STEPS_SAMPLED,
    NUM_MODULE_STEPS_SAMPLED_LIFETIME,
)
from ray.rllib.utils.spaces.space_utils import unbatch as unbatch_fn

from piquet_env.vector import NO_ACTION, BatchGame

__all__ = [
    "AGENTS",
    "BOTH_ENV_NAME",
    "BothSeatsVectorEnv",
    "env_runner_class",
    "main_module",
    "make_both_env",
    "register",
]

BOTH_ENV_NAME = "piquet_both_vector"
"""Name under which :func:`register` registers :func:`make_both_env` with RLlib (and Tune)."""
AGENTS = ("player_0", "player_1")
"""The agents, seat 0 and seat 1."""
OPTIONS = ("rules", "variants", "mode", "episode", "reward", "reward_scale")
"""The env options :class:`BothSeatsVectorEnv` passes on (the PettingZoo env's)."""


class _Spaces(MultiAgentEnv):
    """Each agent's spaces, the one sub-env RLlib's runner reads them from (``envs[i]``)."""

    def __init__(self, observation: gymnasium.Space, action: gymnasium.Space) -> None:
        super().__init__()
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.observation_spaces = {a: observation for a in AGENTS}
        self.action_spaces = {a: action for a in AGENTS}


class BothSeatsVectorEnv(VectorMultiAgentEnv):
    """``num_envs`` games, both seats agents, stepped as arrays (see the module docstring); the
    other keyword options the PettingZoo env's (:data:`OPTIONS`)."""

    def __init__(
        self,
        num_envs: int = 256,
        *,
        seed: int | None = None,
        critic_state: bool = False,
        **options: Any,
    ) -> None:
        super().__init__()
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown piquet env option(s) {unknown}; expected some of {OPTIONS}")
        options = {k: v for k, v in options.items() if v is not None}
        self.num_envs = int(num_envs)
        self.batch = BatchGame(n=self.num_envs, autoreset=False, seed=seed, **options)
        """The games (no autoreset: a game that ended is dealt afresh the step after)."""
        self.rules = self.batch.rules
        self.critic_state = bool(critic_state)
        """Whether the observations hold ``"state"`` (see the module docstring)."""
        self.moves = 0
        """Moves applied since the env was made (both seats')."""
        self._taken = 0
        enc = self.batch.encoder
        spaces: dict[str, gymnasium.Space] = {
            "observation": gymnasium.spaces.Box(0.0, enc.high, (enc.size,), np.float32),
            "action_mask": gymnasium.spaces.Box(0, 1, (enc.n_actions,), np.int8),
        }
        if self.critic_state:
            spaces["state"] = gymnasium.spaces.Box(-np.inf, np.inf, (enc.state_size,), np.float32)
        observation = gymnasium.spaces.Dict(spaces)
        action = gymnasium.spaces.Discrete(enc.n_actions)
        self.single_observation_spaces = {a: observation for a in AGENTS}
        self.single_action_spaces = {a: action for a in AGENTS}
        self.single_observation_space = gymnasium.spaces.Dict(self.single_observation_spaces)
        self.single_action_space = gymnasium.spaces.Dict(self.single_action_spaces)
        self.envs = [_Spaces(observation, action)] * self.num_envs
        self.metadata = {"autoreset_mode": "next_step"}
        self._paid = np.zeros((self.num_envs, 2), dtype=np.float32)  # since each seat acted
        self._over = np.zeros(self.num_envs, dtype=bool)  # ended last step: dealt afresh next
        self._seat = np.zeros(self.num_envs, dtype=np.int64)
        self._all = np.arange(self.num_envs)

    @property
    def possible_agents(self) -> list[str]:
        """Both agents."""
        return list(AGENTS)

    def get_observation_space(self, agent_id: str) -> gymnasium.Space:
        """An agent's observation space (the same for both)."""
        return self.single_observation_spaces[agent_id]

    def get_action_space(self, agent_id: str) -> gymnasium.Space:
        """An agent's action space (the same for both)."""
        return self.single_action_spaces[agent_id]

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None
    ) -> tuple[list[dict], list[dict]]:
        """Deal every game afresh (``seed``: one int, as RLlib's env runner passes it, or one
        per game); each game's first observation, for the agent to act."""
        super().reset(seed=seed if isinstance(seed, int) else None)
        out = self.batch.reset(seed)
        self._paid[:] = 0.0
        self._over[:] = False
        self._seat[:] = out.seat
        obs = self._rows(out.obs, out.mask)
        return [{AGENTS[s]: o} for s, o in zip(self._seat.tolist(), obs)], [
            {} for _ in range(self.num_envs)
        ]

    def step(
        self, actions: Sequence[Mapping[str, Any]]
    ) -> tuple[list[dict], list[dict], list[dict], list[dict], list[dict]]:
        """One move in every game, the action of its agent to act (a game that ended last step
        ignores its action and is dealt afresh); RLlib's per-game dicts of observations,
        rewards, terminateds, truncateds and infos."""
        n = self.num_envs
        seats = self._seat.tolist()
        waiting = self._over.copy()
        a = np.full(n, NO_ACTION, dtype=np.int64)
        for i, (acts, seat) in enumerate(zip(actions, seats)):
            if not waiting[i]:
                a[i] = acts[AGENTS[seat]]
        playing = int(n - waiting.sum())
        ended = np.zeros(n, dtype=bool)
        final: dict[int, tuple[dict, dict]] = {}
        last = None
        if playing:
            moved = last = self.batch.step(a)
            self.moves += playing
            self._paid += moved.rewards
            ended = moved.ended.copy()
            if ended.any():
                final = self._finals(moved)
        if waiting.any():
            games = np.flatnonzero(waiting)
            self._paid[games] = 0.0
            last = self.batch.reset_games(games)  # every game's observation, as a step's
        assert last is not None
        self._over = ended
        self._seat[:] = np.where(ended, 0, last.seat)
        obs = self._rows(last.obs, last.mask)
        paid = self._paid.tolist()
        observations, rewards, terms, truncs, infos = [], [], [], [], []
        for i, seat in enumerate(self._seat.tolist()):
            if i in final:
                observations.append(final[i][0])
                rewards.append(dict(zip(AGENTS, paid[i])))
                terms.append({AGENTS[0]: True, AGENTS[1]: True, "__all__": True})
                truncs.append({AGENTS[0]: False, AGENTS[1]: False, "__all__": False})
                infos.append(final[i][1])
                continue
            agent = AGENTS[seat]
            observations.append({agent: obs[i]})
            if waiting[i]:  # dealt afresh: a reset's observation
                rewards.append({})
                terms.append({"__all__": False})
                truncs.append({"__all__": False})
                infos.append({})
                continue
            rewards.append({agent: paid[i][seat]})
            terms.append({agent: False, "__all__": False})
            truncs.append({agent: False, "__all__": False})
            infos.append({})
        self._paid[self._all, self._seat] = 0.0
        self._paid[ended] = 0.0
        return observations, rewards, terms, truncs, infos

    def take_moves(self) -> int:
        """The moves applied since the last call (since the env was made, the first time)."""
        moves, self._taken = self.moves - self._taken, self.moves
        return moves

    def _rows(self, obs: np.ndarray, mask: np.ndarray) -> list[dict[str, np.ndarray]]:
        """Each game's observation dict for the seat to act (rows of new arrays: the batch's
        buffers are overwritten by the next step)."""
        o, m = obs.copy(), mask.astype(np.int8)
        if self.critic_state:
            s = self.batch.full_state(seat=np.where(self.batch.current_player == 1, 1, 0))
            return [
                {"observation": oi, "action_mask": mi, "state": si} for oi, mi, si in zip(o, m, s)
            ]
        return [{"observation": oi, "action_mask": mi} for oi, mi in zip(o, m)]

    def _finals(self, out: Any) -> dict[int, tuple[dict, dict]]:
        """The final observations (empty masks) and results of both seats, per ended game."""
        empty = np.zeros(self.batch.n_actions, dtype=np.int8)
        finals = {}
        for k, i in enumerate(out.ended_games.tolist()):
            obs, info = {}, {}
            for seat, agent in enumerate(AGENTS):
                row = {"observation": out.final_obs[k, seat], "action_mask": empty}
                if self.critic_state:
                    row["state"] = np.zeros(self.batch.encoder.state_size, dtype=np.float32)
                obs[agent] = row
                info[agent] = {"result": int(out.results[k, seat])}
            finals[i] = (obs, info)
        return finals

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""


def main_module(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib's agent-to-module mapping of self-play with both seats learning: every agent is
    the module ``main``."""
    from piquet_training.rllib.league import MAIN

    return MAIN


def make_both_env(env_config: Mapping[str, Any] | None = None) -> BothSeatsVectorEnv:
    """:class:`BothSeatsVectorEnv` of an RLlib env config (its ``num_envs`` and env options;
    :func:`env_runner_class`'s runner adds ``num_envs``), :func:`register`'s factory."""
    return BothSeatsVectorEnv(**dict(env_config or {}))


def register(name: str = BOTH_ENV_NAME) -> str:
    """Register :func:`make_both_env` with RLlib (and Tune) under ``name``; return the name.
    Configure RLlib with ``env_runners(env_runner_cls=env_runner_class())`` so that each env
    runner builds one :class:`BothSeatsVectorEnv` of ``num_envs_per_env_runner`` games."""
    from ray.tune.registry import register_env

    register_env(name, make_both_env)
    return name


class ListifyByIndex(ListifyDataForVectorEnv):
    """RLlib's ``ListifyDataForVectorEnv``, the multi-agent case, finding each episode's index
    in a dict (RLlib searches the list of episodes for every game: quadratic in the games)."""

    def __call__(
        self,
        *,
        batch: dict[str, Any],
        episodes: list[Any],
        shared_data: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        """Each column as one dict of agents' items per episode, in the episodes' order."""
        if not episodes or not isinstance(episodes[0], MultiAgentEpisode):
            return super().__call__(
                batch=batch, episodes=episodes, shared_data=shared_data, **kwargs
            )
        index = {eps.id_: i for i, eps in enumerate(episodes)}
        old = (shared_data or {}).get("old_episode_ids", {})
        for column, data in batch.copy().items():
            items: list[dict] = [{} for _ in episodes]
            for (eps_id, agent_id, _), value in data.items():
                assert len(value) == 1
                items[index.get(old.get(eps_id, eps_id), 0)][agent_id] = value[0]
            batch[column] = items
        return batch


class UnBatchByIndex(UnBatchToIndividualItems):
    """RLlib's ``UnBatchToIndividualItems``, the multi-agent case, finding each episode in a
    dict (RLlib searches the list of episodes for every game: quadratic in the games)."""

    def __call__(
        self,
        *,
        batch: dict[str, Any],
        episodes: list[Any],
        shared_data: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        """Each module's columns as one item per (episode, agent, module) key."""
        memorized = (shared_data or {}).get("memorized_map_structure")
        if not isinstance(memorized, dict):
            return super().__call__(
                batch=batch, episodes=episodes, shared_data=shared_data, **kwargs
            )
        renamed = (shared_data or {}).get("vector_env_episodes_map", {})
        by_id = {eps.id_: eps for eps in episodes}
        for module_id, module_data in batch.copy().items():
            if module_id not in memorized:
                raise KeyError(f"ModuleID={module_id} not found in `memorized_map_structure`!")
            keys = []
            for eps_id, agent_id in memorized[module_id]:
                episode = by_id.get(renamed.get(eps_id, eps_id))
                if episode is None:
                    raise ValueError(f"No episode found that matches the ID={eps_id}.")
                keys.append((eps_id, agent_id, module_id))
            for column, column_data in module_data.items():
                module_data[column] = {
                    key: [item] for key, item in zip(keys, unbatch_fn(column_data))
                }
        return batch


class BothSeatsEnvRunner(MultiAgentEnvRunner):
    """RLlib's multi-agent env runner building one :class:`BothSeatsVectorEnv` (the registered
    factory of ``config.env``, ``num_envs_per_env_runner`` games) instead of its sync vector of
    sub-envs; the rest is RLlib's, but for what costs it per game and step and need not:

    - the sampled steps' metrics (RLlib logs five values a game a step) are counted in plain
      counters and logged once a :meth:`sample`, the same sums;
    - two module-to-env connector pieces, ``UnBatchToIndividualItems`` and
      ``ListifyDataForVectorEnv``, search the episodes by id in a dict (:class:`UnBatchByIndex`,
      :class:`ListifyByIndex`) where RLlib's search the list for each game."""

    def __init__(self, config: Any, **kwargs: Any) -> None:
        self._counted: Counter = Counter()
        super().__init__(config=config, **kwargs)
        pieces = self._module_to_env.connectors
        faster = {ListifyDataForVectorEnv: ListifyByIndex, UnBatchToIndividualItems: UnBatchByIndex}
        for i, piece in enumerate(pieces):
            cls = faster.get(type(piece))
            if cls is not None:
                pieces[i] = cls(
                    input_observation_space=piece.input_observation_space,
                    input_action_space=piece.input_action_space,
                )

    def sample(self, **kwargs: Any) -> list[Any]:
        """RLlib's ``sample``, then the steps it counted logged to the metrics."""
        episodes = super().sample(**kwargs)
        self._log_counted()
        return episodes

    def _increase_sampled_metrics(self, num_steps: int, next_obs: Any, episode: Any) -> int:
        """Count what RLlib's runner logs for one game's step (logged by :meth:`sample`)."""
        counted = self._counted
        counted[None] += num_steps
        if episode.is_done:
            counted[()] += 1
        for aid in next_obs:
            counted[str(aid)] += 1
            counted[(episode.module_for(aid),)] += 1
        return num_steps

    def _log_counted(self) -> None:
        counted, self._counted = self._counted, Counter()
        log = self.metrics.log_value
        steps = counted.pop(None, 0)
        log(NUM_ENV_STEPS_SAMPLED, steps, reduce="sum")
        log(NUM_ENV_STEPS_SAMPLED_LIFETIME, steps, reduce="lifetime_sum", with_throughput=True)
        episodes = counted.pop((), 0)
        if episodes:
            log(NUM_EPISODES, episodes, reduce="sum")
            log(NUM_EPISODES_LIFETIME, episodes, reduce="lifetime_sum")
        for key, count in counted.items():
            if isinstance(key, tuple):
                log((NUM_MODULE_STEPS_SAMPLED, key[0]), count, reduce="sum")
                log((NUM_MODULE_STEPS_SAMPLED_LIFETIME, key[0]), count, reduce="lifetime_sum")
            else:
                log((NUM_AGENT_STEPS_SAMPLED, key), count, reduce="sum")
                log((NUM_AGENT_STEPS_SAMPLED_LIFETIME, key), count, reduce="lifetime_sum")

    def make_env(self) -> None:
        """Build the env, as ``MultiAgentEnvRunner.make_env`` does its sync vector."""
        from ray.rllib.callbacks.utils import make_callback
        from ray.tune.registry import ENV_CREATOR, _global_registry

        if self.env is not None:
            self.env.close()
        ctx = self.config.env_config
        if not isinstance(ctx, EnvContext):
            ctx = EnvContext(
                ctx,
                worker_index=self.worker_index,
                num_workers=self.config.num_env_runners,
                remote=self.config.remote_worker_envs,
            )
        name = self.config.env
        creator = (
            _global_registry.get(ENV_CREATOR, name)
            if isinstance(name, str) and _global_registry.contains(ENV_CREATOR, name)
            else None
        )
        if creator is None:
            raise ValueError(
                f"BothSeatsEnvRunner needs config.env registered by register() (got {name!r})"
            )
        options = {**dict(ctx), "num_envs": self.config.num_envs_per_env_runner}
        env = partial(creator, options)()
        if not isinstance(env, VectorMultiAgentEnv):
            raise ValueError(
                f"BothSeatsEnvRunner's env must be a VectorMultiAgentEnv, got {type(env).__name__}"
            )
        self.env = env
        self.num_envs = env.num_envs
        self._needs_initial_reset = True
        make_callback(
            "on_environment_created",
            callbacks_objects=self._callbacks,
            callbacks_functions=self.config.callbacks_on_environment_created,
            kwargs=dict(
                env_runner=self, metrics_logger=self.metrics, env=self.env, env_context=ctx
            ),
        )


def env_runner_class() -> type[BothSeatsEnvRunner]:
    """The env-runner class to give RLlib (``env_runners(env_runner_cls=...)``)."""
    return BothSeatsEnvRunner
