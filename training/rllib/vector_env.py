"""The exploiter's env on the batched engine: N games as arrays, the target inside, for RLlib.

:class:`TargetVectorEnv` is a Gymnasium ``VectorEnv`` for one learner, the exploiter, against a
frozen target in ``num_envs`` games at once, as RLlib's ``SingleAgentEnvRunner`` builds it
(``gym_env_vectorize_mode="vector_entry_point"``: the env creator registered with
:func:`register` returns the whole vector, built once per env runner with RLlib's
``num_envs_per_env_runner`` as ``env_config["num_envs"]``). Outside RLlib,
``gymnasium.make_vec(ENV_ID, num_envs=N, target="heuristic")`` builds it (:data:`ENV_ID`,
registered when this module is imported).

- **The games** are :class:`piquet_env.vector.PiquetVectorEnv`'s: the batched engine, stepped as
  arrays, the exploiter's seat drawn for every game (``seat="random"``), rewards the exploiter's
  seat's payments under the env options (``rules``, ``mode``, ``reward``, ``reward_scale``...)
  since it last acted, as :class:`~piquet_training.rllib.exploit.TargetSeatEnv` pays them.
- **The target acts in batch** where it can: a policy agent's network (greedy or sampled as its
  agent spec plays it in ``piquet eval``) in one forward pass for every game where it is to move,
  the random agent by :func:`piquet_env.vector.sample_legal`. Any other agent (the heuristic, a
  search) cannot act in batch: its games are played one game object each (the AEC env and a new
  agent per env slot, as the built-in collector plays them), behind the same vector interface.
- **Observations** are the PettingZoo env's dict, batched: ``{"observation": float32 (N, size),
  "action_mask": int8 (N, n_actions)}``, what :class:`~piquet_training.rllib.module.
  MaskedActorCriticModule` reads; with ``critic_state=True`` also ``"state"``, float32 (N,
  state_size): each game's full-information state seen from the learner's seat (both hands,
  the talon: ``encoder_for(rules).state``), for an asymmetric critic as the built-in trainer's
  (the actor never reads it).
- **Autoreset** is Gymnasium's ``NEXT_STEP``, what RLlib 2.60's env runner expects (it calls
  ``add_env_reset`` on the step after a game ends): the step that ends a game returns its final
  observation (an empty mask), and the next step ignores that game's action and deals it afresh.
- **Moves**: :attr:`TargetVectorEnv.moves` counts every move applied (the target's too), the
  env steps the built-in trainer counts; the RLlib exploiter reads it after every sample.
  ``infos`` hold ``"result"`` (the exploiter's seat's game result) on the steps that end games,
  and nothing else (RLlib's env runner turns infos into one dict per game, every step).
- **Self-play with the opponent inside**: the target :data:`SELF` is a network of the learner's
  widths that :func:`self_play_callback`'s callback keeps equal to the learner's actor (set when
  the algorithm is built and after every iteration).

Importing this module does not import Ray (:func:`register`, :func:`self_play_callback` and
:func:`refresh_self` do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np
import torch
from gymnasium.vector.utils import batch_space

from piquet_agents.network import ActorCritic, ActorStack
from piquet_agents.policy import PolicyAgent
from piquet_agents.registry import make_agent
from piquet_env.agent import RandomAgent, Turn
from piquet_env.piquet_v0 import raw_env
from piquet_env.vector import AutoresetMode, PiquetVectorEnv, RandomPolicy

__all__ = [
    "ENV_ID",
    "MOVES_METRIC",
    "SELF",
    "VECTOR_ENV_NAME",
    "NetworkPolicy",
    "TargetVectorEnv",
    "learner_actor",
    "make_vector_env",
    "moves_callback",
    "moves_sampled",
    "refresh_self",
    "register",
    "self_play_callback",
    "target_policy",
]

VECTOR_ENV_NAME = "piquet_exploit_vector"
"""Name under which :func:`register` registers :func:`make_vector_env` with RLlib (and Tune)."""
ENV_ID = "PiquetTarget-v0"
"""Gymnasium id of :class:`TargetVectorEnv` (``gymnasium.make_vec(ENV_ID, num_envs=N,
target=SPEC)``)."""
OPTIONS = ("rules", "variants", "mode", "episode", "reward", "reward_scale")
"""The env options :class:`TargetVectorEnv` passes on (the PettingZoo env's)."""
MOVES_METRIC = ("piquet", "moves")
"""Where the moves applied by the envs are summed in RLlib's env-runner metrics (a lifetime sum
over every env runner): ``result["env_runners"]["piquet"]["moves"]``, read by
:func:`moves_sampled`."""
SELF = "self"
"""The target that is the learner itself: a network of the learner's widths (``hidden``,
``activation``), sampled, whose weights the callback of :func:`self_play_callback` sets to the
learner's at the start and after every iteration."""


class NetworkPolicy:
    """A policy agent's network as a batch policy ``(obs, mask) -> actions``: greedy, or sampled
    from torch's global generator, as the agent plays."""

    def __init__(self, network: ActorCritic, greedy: bool) -> None:
        self.network = network
        self.stack = ActorStack([network], torch.float32)
        self.greedy = greedy

    def set_weights(self, weights: Mapping[str, Any]) -> None:
        """Play with ``weights`` (the network's state dict, or the actor's part of it)."""
        tensors = {k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()}
        self.network.load_state_dict(tensors, strict=False)
        self.stack = ActorStack([self.network], torch.float32)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One action per row."""
        which = torch.zeros(len(obs), dtype=torch.int64)
        o, m = torch.from_numpy(obs), torch.from_numpy(mask)
        return self.stack.act(which, o, m, greedy=self.greedy).numpy()


def target_policy(
    spec: str, rules: Any, seed: int | None = 0
) -> NetworkPolicy | RandomPolicy | None:
    """The batch policy of the agent spec ``spec``: a policy agent's network, the random agent's
    uniform legal moves (seeded by ``seed``), or ``None`` for an agent that cannot act in batch."""
    agent = make_agent(spec, rules, seed=0)
    if isinstance(agent, PolicyAgent):
        net = ActorCritic.from_arch(agent.model.arch())
        net.load_state_dict(agent.model.state_dict())
        return NetworkPolicy(net.eval().requires_grad_(False), bool(agent.greedy))
    if isinstance(agent, RandomAgent):
        return RandomPolicy(seed)
    return None


class TargetVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games of the exploiter against ``target`` (an agent spec), the other keyword
    options the PettingZoo env's (:data:`OPTIONS`); see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int = 64,
        *,
        target: str,
        seed: int | None = None,
        hidden: Sequence[int] = (256, 256),
        activation: str = "tanh",
        critic_state: bool = False,
        **options: Any,
    ):
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown piquet env option(s) {unknown}; expected some of {OPTIONS}")
        options = {k: v for k, v in options.items() if v is not None}
        self.target = str(target)
        self.num_envs = int(num_envs)
        self.moves = 0
        """Moves applied since the env was made (the exploiter's and the target's)."""
        self._taken = 0
        self._inner: PiquetVectorEnv | _AgentGames
        probe = raw_env(**options)
        self.rules = probe.rules
        policy: NetworkPolicy | RandomPolicy | None
        if self.target == SELF:
            size = int(probe.observation_space("player_0")["observation"].shape[0])
            n_actions = int(probe.action_space("player_0").n)
            net = ActorCritic(size, n_actions, tuple(hidden), activation).requires_grad_(False)
            policy = NetworkPolicy(net.eval(), greedy=False)
        else:
            policy = target_policy(self.target, self.rules, seed)
        self.policy = policy
        """The target's batch policy (``None``: played one game object each)."""
        if policy is None:
            self._inner = _AgentGames(self.num_envs, self.target, options)
        else:
            self._inner = PiquetVectorEnv(
                self.num_envs,
                seat="random",
                opponent=_Counted(policy, self),
                autoreset_mode=AutoresetMode.NEXT_STEP,
                seed=seed,
                **options,
            )
        self.batched = policy is not None
        """Whether the target acts in batch (else its games are played one game object each)."""
        self.critic_state = bool(critic_state)
        """Whether the observations hold ``"state"`` (see the module docstring)."""
        self.single_observation_space = probe.observation_space("player_0")
        if self.critic_state:
            size = probe.encoder.state_size
            spaces = dict(self.single_observation_space.spaces)
            spaces["state"] = gymnasium.spaces.Box(-np.inf, np.inf, (size,), np.float32)
            self.single_observation_space = gymnasium.spaces.Dict(spaces)
        self.single_action_space = probe.action_space("player_0")
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._waiting = np.zeros(self.num_envs, dtype=bool)  # ended last step: dealt afresh next

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Deal every game afresh (``seed``: one int, as RLlib's env runner passes it)."""
        self._waiting[:] = False
        if isinstance(self._inner, PiquetVectorEnv):
            counted = self._inner.opponent
            if seed is not None and isinstance(counted, _Counted):
                counted.reseed(seed)
            obs, infos = self._inner.reset(seed=seed)
            return self._dict(obs, infos["action_mask"]), {}
        obs, mask = self._inner.reset(seed)
        self.moves += self._inner.last_moves
        return self._dict(obs, mask), {}

    def step(self, actions: np.ndarray) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        """The exploiter's move in every game (ignored in a game that ended last step, which is
        dealt afresh), then the target's until the exploiter is to act again everywhere."""
        if isinstance(self._inner, PiquetVectorEnv):
            self.moves += int(self.num_envs - self._waiting.sum())  # the target's: _Counted
            obs, rewards, ended, truncated, info = self._inner.step(np.asarray(actions))
            mask = info["action_mask"]
            infos = {k: info[k] for k in ("result", "_result") if k in info}
        else:
            obs, mask, rewards, ended, results = self._inner.step(np.asarray(actions))
            self.moves += self._inner.last_moves
            truncated = np.zeros(self.num_envs, dtype=bool)
            infos = {"result": results, "_result": ended.copy()} if ended.any() else {}
        self._waiting = ended.copy()
        return self._dict(obs, mask), rewards, ended, truncated, infos

    def set_target_weights(self, weights: Mapping[str, Any]) -> None:
        """Give a network target these weights (its state dict; :data:`SELF`'s are refreshed
        so by :func:`self_play_callback`'s callback)."""
        if not isinstance(self.policy, NetworkPolicy):
            raise ValueError(f"target {self.target!r} is no network: it has no weights to set")
        self.policy.set_weights(weights)

    def take_moves(self) -> int:
        """The moves applied since the last call (since the env was made, the first time)."""
        moves, self._taken = self.moves - self._taken, self.moves
        return moves

    def _dict(self, obs: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        out = {"observation": obs, "action_mask": mask.astype(np.int8)}
        if self.critic_state:
            out["state"] = self._inner_state()
        return out

    def _inner_state(self) -> np.ndarray:
        """Every game's full-information state from the learner's seat."""
        if isinstance(self._inner, PiquetVectorEnv):
            return self._inner.batch.full_state(seat=self._inner.seats.astype(np.int64))
        return self._inner.full_state()

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""


class _Counted:
    """A batch policy that adds each of its moves to its env's :attr:`TargetVectorEnv.moves`."""

    def __init__(self, policy: Any, env: TargetVectorEnv) -> None:
        self.policy, self.env = policy, env

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.env.moves += len(obs)
        return self.policy(obs, mask)

    def reseed(self, seed: int | Sequence[int | None]) -> None:
        """A random policy starts again from ``seed`` (a network samples from torch's)."""
        if isinstance(self.policy, RandomPolicy):
            self.policy = RandomPolicy(seed)  # type: ignore[arg-type]


class _AgentGames:
    """The games of a target that cannot act in batch: one AEC env and one agent per slot,
    stepped in turn, the same seats, rewards and ``NEXT_STEP`` resets as the batched games."""

    def __init__(self, n: int, target: str, options: Mapping[str, Any]) -> None:
        self.envs = [raw_env(**options) for _ in range(n)]
        rules = self.envs[0].rules
        self.agents = [make_agent(target, rules, seed=0) for _ in range(n)]
        self.seats = np.zeros(n, dtype=np.int64)
        self.done = np.zeros(n, dtype=bool)
        self.rng = np.random.default_rng()
        self.last_moves = 0
        size = self.envs[0].observation_space("player_0")["observation"].shape[0]
        self.obs = np.zeros((n, size), dtype=np.float32)
        self.mask = np.zeros((n, int(self.envs[0].action_space("player_0").n)), dtype=np.int8)

    def reset(self, seed: int | Sequence[int | None] | None) -> tuple[np.ndarray, np.ndarray]:
        if seed is not None:
            self.rng = np.random.default_rng(seed if isinstance(seed, int) else list(seed))
        self.last_moves = 0
        for i in range(len(self.envs)):
            self._deal(i)
        return self.obs.copy(), self.mask.copy()

    def step(self, actions: np.ndarray) -> tuple:
        n = len(self.envs)
        rewards = np.zeros(n, dtype=np.float32)
        ended = np.zeros(n, dtype=bool)
        results = np.zeros(n, dtype=np.int64)
        self.last_moves = 0
        for i, env in enumerate(self.envs):
            if self.done[i]:
                self.done[i] = False
                self._deal(i)
                continue
            rewards[i] = self._apply(i, int(actions[i])) + self._play_target(i)
            game = env.game
            if game.is_over:
                ended[i] = self.done[i] = True
                results[i] = game.result[self.seats[i]]
            self._observe(i)
        return self.obs.copy(), self.mask.copy(), rewards, ended, results

    def _deal(self, i: int) -> None:
        env = self.envs[i]
        while True:
            env.reset(seed=int(self.rng.integers(2**62)))
            self.seats[i] = int(self.rng.integers(2))
            self.agents[i].reset(int(self.rng.integers(2**62)))
            self._play_target(i)
            if not env.game.is_over:
                break
        self._observe(i)

    def _apply(self, i: int, action: int) -> float:
        env = self.envs[i]
        env.step(action)
        self.last_moves += 1
        return float(env.rewards[f"player_{self.seats[i]}"])

    def _play_target(self, i: int) -> float:
        game, seat, agent, paid = self.envs[i].game, self.seats[i], self.agents[i], 0.0
        while not game.is_over and game.current_player != seat:
            paid += self._apply(i, int(agent.act(Turn(game, game.current_player))))
        return paid

    def _observe(self, i: int) -> None:
        got = self.envs[i].observe(f"player_{self.seats[i]}")
        self.obs[i] = got["observation"]
        self.mask[i] = got["action_mask"]

    def full_state(self) -> np.ndarray:
        """Every game's full-information state from the learner's seat."""
        encoder = self.envs[0].encoder
        out = np.zeros((len(self.envs), encoder.state_size), dtype=np.float32)
        for i, env in enumerate(self.envs):
            encoder.state_into(env.game, int(self.seats[i]), out[i])
        return out


def learner_actor(algorithm: Any) -> dict[str, np.ndarray]:
    """The single-agent learner's actor (trunk and policy head) as a state dict of numpy arrays
    (the RLModule holds the network as ``model``)."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    state = algorithm.learner_group.get_state(components=f"learner/rl_module/{DEFAULT_MODULE_ID}")
    module = state["learner"]["rl_module"][DEFAULT_MODULE_ID]
    return {
        k[len("model.") :]: np.asarray(v)
        for k, v in module.items()
        if k.startswith(("model.trunk.", "model.policy_head."))
    }


def refresh_self(algorithm: Any) -> None:
    """Set the target of every env runner's :class:`TargetVectorEnv` to the learner's actor."""
    actor = learner_actor(algorithm)

    def _set(runner: Any) -> None:
        env = getattr(runner, "env", None)
        if env is not None:
            env.unwrapped.set_target_weights(actor)

    algorithm.env_runner_group.foreach_env_runner(_set, local_env_runner=True)


def self_play_callback() -> type:
    """The callback class of self-play with the opponent inside (target :data:`SELF`): it sets
    the target of every env runner to the learner's actor when the algorithm is built and after
    every iteration (it subclasses Ray's ``RLlibCallback``, imported here)."""
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class SelfPlayCallback(RLlibCallback):
        """Self-play with the opponent inside: the target :data:`SELF` plays the learner's own
        weights, set when the algorithm is built and after every training iteration."""

        def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
            """The target starts as the learner."""
            refresh_self(algorithm)

        def on_train_result(self, *, algorithm: Any, **kwargs: Any) -> None:
            """The target becomes the learner after its update."""
            refresh_self(algorithm)

    return SelfPlayCallback


def moves_callback() -> type:
    """The callback class that adds the moves a :class:`TargetVectorEnv` applied during each
    sample (:attr:`TargetVectorEnv.moves`, the opponent's included: the env steps the built-in
    trainer counts) to RLlib's metrics under :data:`MOVES_METRIC` (it subclasses Ray's
    ``RLlibCallback``, imported here)."""
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class VectorMovesCallback(RLlibCallback):
        """Logs the moves of each env runner's vector env after every sample."""

        def on_sample_end(
            self, *, env_runner: Any = None, metrics_logger: Any = None, **kwargs: Any
        ) -> None:
            """Log the moves since the last sample of this env runner."""
            env = getattr(getattr(env_runner, "env", None), "unwrapped", None)
            if metrics_logger is None or env is None or not hasattr(env, "take_moves"):
                return
            moves = env.take_moves()
            if moves:
                metrics_logger.log_value(MOVES_METRIC, moves, reduce="lifetime_sum")

    return VectorMovesCallback


def moves_sampled(result: Mapping[str, Any]) -> int:
    """The moves the envs applied since the algorithm was built, from a training result (the
    lifetime sum that :func:`moves_callback`'s callback logs; 0 if none was logged)."""
    found: Any = result.get("env_runners", {})
    for key in MOVES_METRIC:
        found = found.get(key, {}) if isinstance(found, Mapping) else {}
    return int(found) if isinstance(found, int | float) else 0


def make_vector_env(env_config: Mapping[str, Any] | None = None) -> TargetVectorEnv:
    """:class:`TargetVectorEnv` of an RLlib env config (its ``num_envs``, ``target`` and env
    options; RLlib adds ``num_envs``, :func:`register`'s factory)."""
    options = dict(env_config or {})
    if "target" not in options:
        raise ValueError("TargetVectorEnv needs the target's spec: env_config['target']")
    return TargetVectorEnv(**options)


def register(name: str = VECTOR_ENV_NAME) -> str:
    """Register :func:`make_vector_env` with RLlib (and Tune) under ``name``; return the name.
    Configure RLlib with ``env_runners(gym_env_vectorize_mode="vector_entry_point")`` so that
    the factory's vector is used as it is (one per env runner)."""
    from ray.tune.registry import register_env

    register_env(name, make_vector_env)
    return name


if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point=None, vector_entry_point=TargetVectorEnv)
