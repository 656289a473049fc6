"""Env steps per second of RLlib self-play with both seats learning, one env runner on one core:
RLlib's sync ``VectorMultiAgentEnv`` of PettingZoo envs (one game object each, RLlib's own
multi-agent vectorization) against :class:`~piquet_training.rllib.both_seats.BothSeatsVectorEnv`
(the batched engine, every game a row), each beside the built-in collector
(:class:`~piquet_training.ppo.vector_collector.VectorCollector`, the learner in both seats, the
default run's self games) in the same process; optionally the learner against itself inside the
env (``--inside``, :class:`~piquet_training.rllib.vector_env.TargetVectorEnv`, one seat
learning); and where an iteration's time goes (``cProfile``).

Everything runs in this process with one torch thread: RLlib samples on its local env runner
(``num_env_runners=0``) and learns on its local learner. An env step is a move applied, both
seats', as both trainers count them (RLlib's own count in the multi-agent runs, one move a game
a step; the moves the env reports with ``--inside``).

``python -m piquet_training.studies.rllib_both_speed --envs 256``
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence
from typing import Any

import torch

from piquet_training.studies.rllib_exploit_speed import builtin, profile, rllib_rates

PATHS = ("sync", "both", "inside")
"""The RLlib paths measured: the sync vector of PettingZoo envs, the batched engine with both
seats learning, the batched engine with the opponent inside."""

PROFILE_PARTS = {
    "env step (the vector env's step)": [
        ("both_seats.py", "step"),
        ("sync_vector_multi_agent_env.py", "step"),
        ("vector_env.py", "step"),
    ],
    "env runner: RLModule forward": [("rl_module.py", "forward_exploration")],
    "connectors (the env runner's and the learner's)": [("connector_pipeline_v2.py", "__call__")],
    "env runner: episodes": [
        ("multi_agent_episode.py", "add_env_step"),
        ("multi_agent_episode.py", "add_env_reset"),
        ("multi_agent_episode.py", "to_numpy"),
        ("multi_agent_episode.py", "cut"),
        ("single_agent_episode.py", "add_env_step"),
        ("single_agent_episode.py", "add_env_reset"),
        ("single_agent_episode.py", "to_numpy"),
        ("single_agent_episode.py", "cut"),
    ],
    "env runner: per-game callbacks and metrics": [
        ("multi_agent_env_runner.py", "_make_on_episode_callback"),
        ("multi_agent_env_runner.py", "_increase_sampled_metrics"),
    ],
    "sampling in all (EnvRunner.sample)": [
        ("multi_agent_env_runner.py", "sample"),
        ("single_agent_env_runner.py", "sample"),
    ],
    "learner (LearnerGroup.update)": [("learner_group.py", "update")],
    "iteration (Algorithm.train)": [("trainable.py", "train")],
}
"""Each part of an iteration and the functions whose cumulative time it is (file, name)."""


def path_config(path: str, rules: str, envs: int, batch: int) -> Any:
    """RLlib's ``PPOConfig`` of one of :data:`PATHS`, sampling and learning in this process:
    ``"both"`` is :func:`~piquet_training.rllib.algo.both_config`, ``"sync"`` the same (one
    module ``main`` for both seats) on RLlib's own multi-agent env runner over the registered
    PettingZoo env, ``"inside"`` :func:`~piquet_training.rllib.algo.algo_config`'s default."""
    from piquet_training.rllib.algo import RLlibConfig, algo_config, both_config, env_config_of
    from piquet_training.rllib.env import register

    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    cfg = RLlibConfig(
        rules=rules,
        num_env_runners=0,
        num_envs_per_env_runner=envs,
        train_batch_size=batch,
        minibatch_size=max(1, batch // 4),
        mode="deal",  # as the built-in collector beside it, and the figures measured
        reward_scale=0.01,
        critic="obs",  # the PettingZoo env has no full state to give
        self_play="inside" if path == "inside" else "both",
    )
    if path == "inside":
        return algo_config(cfg)
    config = both_config(cfg)
    if path == "sync":  # (environment() would merge env_config: the batched env's keys stay)
        config.environment(register())
        config.env_config = env_config_of(cfg)
        config.env_runners(env_runner_cls=None)
    return config


def sampled(result: dict[str, Any], path: str) -> int:
    """The env steps sampled since the algorithm was built, from a training result: RLlib's
    lifetime count (one move a game a step on its multi-agent runner), the moves the env
    reports with ``--inside`` (where RLlib counts the learner's decisions only)."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    from piquet_training.rllib.vector_env import moves_sampled

    if path == "inside":
        return moves_sampled(result)
    return int(result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0))


def main(argv: Sequence[str] | None = None) -> int:
    """Print each path's rates beside the built-in collector's, and the profiles."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rules", default="standard")
    p.add_argument("--envs", type=int, default=256, help="games per env runner")
    p.add_argument("--batch", type=int, default=4000, help="train_batch_size (env steps)")
    p.add_argument("--iterations", type=int, default=2)
    p.add_argument("--seconds", type=float, default=5.0, help="built-in collector's timing")
    p.add_argument("--paths", default="sync,both", help=f"comma-separated, of {PATHS}")
    p.add_argument("--no-profile", action="store_true")
    args = p.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    torch.set_num_threads(1)
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        for path in args.paths.split(","):
            algorithm = path_config(path, args.rules, args.envs, args.batch).build_algo()
            try:
                got = rllib_rates(
                    algorithm,
                    args.iterations,
                    functools.partial(sampled, path=path),
                    episode_steps=True,
                )
                parts = {} if args.no_profile else profile(algorithm, PROFILE_PARTS)
            finally:
                algorithm.stop()
            here = builtin("self", args.rules, args.envs, args.seconds)
            print(
                f"RLlib self-play, {path}, {args.envs} games, batch {args.batch}: "
                f"{got['train']:,.0f} env steps/s training ({got['train'] / here:.3f} of the "
                f"built-in), {got['sample']:,.0f} sampling ({got['sample'] / here:.3f}); "
                f"built-in collector beside it: {here:,.0f} env steps/s",
                flush=True,
            )
            for part, seconds in parts.items():
                print(f"  {part:<48} {seconds:7.2f} s", flush=True)
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
