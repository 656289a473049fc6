"""Self-play on RLlib: the trained ``main`` module against frozen snapshots of itself.

The league holds ``main`` (the only module trained) and frozen snapshots ``main_v0``,
``main_v1``, ... (``main_v0`` is ``main``'s initial weights). Each episode's seats are chosen by
:func:`agent_to_module`, a pure function of the episode id: with probability
``self_play_weight`` ``main`` plays both seats (both trajectories train it); otherwise ``main``
takes one seat, at random, and the other goes to the newest snapshot (probability
``latest_weight``) or to one of the ``pool_size`` newest, uniformly.

:class:`SelfPlayCallback` counts, on the env runners, ``main``'s wins against each snapshot (a
draw counts half) and, after each training iteration on the driver, freezes a new snapshot of
``main`` once it has won at least ``win_rate_threshold`` of at least ``min_games`` games against
the newest one: the league grows as ``main`` improves. The counters live in RLlib's metrics
(``env_runners/selfplay/<snapshot>/{games,wins}``), summed over all env runners and nodes.
"""

from __future__ import annotations

import functools
import random
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

MAIN = "main"
"""Module id of the trained policy."""
SNAPSHOT_PREFIX = "main_v"
"""Snapshots are named ``main_v0``, ``main_v1``, ..."""
METRICS_KEY = "selfplay"


def snapshot_id(version: int) -> str:
    """The module id of snapshot ``version``."""
    return f"{SNAPSHOT_PREFIX}{version}"


def snapshot_ids(module_ids: Sequence[str]) -> list[str]:
    """The snapshot ids among ``module_ids``, oldest first."""
    snaps = [
        m
        for m in module_ids
        if m.startswith(SNAPSHOT_PREFIX) and m[len(SNAPSHOT_PREFIX) :].isdigit()
    ]
    return sorted(snaps, key=lambda m: int(m[len(SNAPSHOT_PREFIX) :]))


def agent_to_module(
    agent_id: str,
    episode: Any,
    *,
    snapshots: Sequence[str],
    self_play_weight: float,
    latest_weight: float,
    pool_size: int,
    **kwargs: Any,
) -> str:
    """The module that plays ``agent_id`` in ``episode`` (RLlib's agent-to-module mapping).

    Every draw comes from a generator seeded by a CRC of the episode id, so both seats of an
    episode see the same draw on any process.
    """
    rng = random.Random(zlib.crc32(str(episode.id_).encode()))
    if not snapshots or rng.random() < self_play_weight:
        return MAIN
    main_seat = rng.choice(("player_0", "player_1"))
    if agent_id == main_seat:
        return MAIN
    pool = list(snapshots)[-max(1, pool_size) :]
    return pool[-1] if rng.random() < latest_weight else rng.choice(pool)


def mapping_fn(
    snapshots: Sequence[str], *, self_play_weight: float, latest_weight: float, pool_size: int
) -> Callable[..., str]:
    """:func:`agent_to_module` bound to a league (a picklable ``functools.partial``)."""
    return functools.partial(
        agent_to_module,
        snapshots=tuple(snapshots),
        self_play_weight=float(self_play_weight),
        latest_weight=float(latest_weight),
        pool_size=int(pool_size),
    )


def module_key(algorithm: Any, module_id: str) -> str:
    """RLlib's id of the module ``module_id``: :data:`MAIN` is the one module of a single-agent
    run (RLlib's ``DEFAULT_MODULE_ID``, the exploiter on the vector env) when it has none of
    that name; any other id is itself."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    policies = getattr(getattr(algorithm, "config", None), "policies", None) or {}
    if module_id == MAIN and MAIN not in policies and DEFAULT_MODULE_ID in policies:
        return DEFAULT_MODULE_ID
    return module_id


def _runner_module(runner: Any, module_id: str) -> Any:
    """An env runner's module ``module_id`` (a single-agent runner holds its one module)."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
    from ray.rllib.core.rl_module.rl_module import RLModule

    module = runner.module
    if isinstance(module, RLModule) and not isinstance(module, MultiRLModule):
        return module
    return module[module_id]


def set_weights(algorithm: Any, module_id: str, weights: dict[str, Any]) -> None:
    """Set module ``module_id``'s weights (its RLModule state dict) on the learners and on every
    env runner, then check one env runner holds them.

    ``Algorithm.set_state`` is not enough once training has begun: its weight sync skips env
    runners whose weights sequence number is current, and that number only grows with learner
    updates, so a module copied between updates would keep its random initial weights there.
    """
    module_id = module_key(algorithm, module_id)
    algorithm.learner_group.set_state({"learner": {"rl_module": {module_id: weights}}})

    def _set(runner: Any) -> None:
        _runner_module(runner, module_id).set_state(weights)

    def _get(runner: Any) -> dict[str, Any]:
        return _runner_module(runner, module_id).get_state()

    algorithm.env_runner_group.foreach_env_runner(_set, local_env_runner=True)
    held = algorithm.env_runner_group.foreach_env_runner(_get, local_env_runner=True)
    for state in held[:1]:
        if state.keys() != weights.keys() or any(
            not np.array_equal(np.asarray(state[k]), np.asarray(weights[k])) for k in weights
        ):
            raise RuntimeError(f"env runners did not take the weights of module {module_id!r}")


def copy_weights(algorithm: Any, src: str, dst: str) -> None:
    """Set module ``dst``'s weights to ``src``'s on the learners and on every env runner."""
    learner = algorithm.learner_group.get_state(components=f"learner/rl_module/{src}")
    set_weights(algorithm, dst, learner["learner"]["rl_module"][src])


class SelfPlayCallback(RLlibCallback):
    """Counts ``main``'s results against snapshots and freezes a new snapshot when it is good
    enough (see the module docstring). Settings come from the constructor (use
    ``functools.partial`` in ``config.callbacks``)."""

    def __init__(
        self,
        *,
        win_rate_threshold: float = 0.55,
        min_games: int = 100,
        self_play_weight: float = 0.5,
        latest_weight: float = 0.5,
        pool_size: int = 8,
        verbose: bool = True,
    ) -> None:
        super().__init__()
        self.win_rate_threshold = float(win_rate_threshold)
        self.min_games = int(min_games)
        self.self_play_weight = float(self_play_weight)
        self.latest_weight = float(latest_weight)
        self.pool_size = int(pool_size)
        self.verbose = verbose

    # -------------------------------------------------------------- env runners

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        """Log ``main``'s result when it played a snapshot in ``episode``."""
        seats = {aid: episode.module_for(aid) for aid in episode.agent_episodes}
        mains = [a for a, m in seats.items() if m == MAIN]
        others = [a for a, m in seats.items() if m != MAIN]
        if len(mains) != 1 or len(others) != 1 or metrics_logger is None:
            return
        ret_main = episode.agent_episodes[mains[0]].get_return()
        ret_other = episode.agent_episodes[others[0]].get_return()
        score = 1.0 if ret_main > ret_other else 0.5 if ret_main == ret_other else 0.0
        opponent = seats[others[0]]
        metrics_logger.log_value((METRICS_KEY, opponent, "games"), 1, reduce="lifetime_sum")
        metrics_logger.log_value((METRICS_KEY, opponent, "wins"), score, reduce="lifetime_sum")

    # -------------------------------------------------------------- driver

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        """Freeze ``main``'s initial weights as ``main_v0`` (unless the league already has a
        snapshot)."""
        if not snapshot_ids(list(algorithm.config.policies)):
            self.add_snapshot(algorithm, [])

    def win_record(self, result: dict, opponent: str) -> tuple[float, float]:
        """``(games, wins)`` of ``main`` against ``opponent`` so far, from a training result."""
        stats = result.get(ENV_RUNNER_RESULTS, {}).get(METRICS_KEY, {}).get(opponent, {})
        return float(stats.get("games", 0)), float(stats.get("wins", 0))

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        """Freeze a new snapshot of ``main`` once it beats the newest one often enough."""
        snaps = snapshot_ids(list(algorithm.config.policies))
        latest = snaps[-1] if snaps else None
        games, wins = self.win_record(result, latest) if latest else (0.0, 0.0)
        rate = wins / games if games else float("nan")
        added = None
        if latest is None or (games >= self.min_games and rate >= self.win_rate_threshold):
            added = self.add_snapshot(algorithm, snaps)
            snaps.append(added)
        result["league"] = {
            "snapshots": len(snaps),
            "latest": snaps[-1],
            "games_vs_latest": games,
            "win_rate_vs_latest": rate,
            "added": added or "",
        }
        if self.verbose and added and latest is not None:
            print(
                f"[selfplay] main won {rate:.0%} of {games:.0f} games against {latest}: "
                f"frozen {added}",
                flush=True,
            )

    def add_snapshot(self, algorithm: Any, snaps: list[str]) -> str:
        """Freeze a copy of ``main`` as the next snapshot; remap seats to the grown league."""
        version = int(snaps[-1][len(SNAPSHOT_PREFIX) :]) + 1 if snaps else 0
        new_id = snapshot_id(version)
        self.add_league_module(algorithm, new_id, [*snaps, new_id])
        copy_weights(algorithm, MAIN, new_id)
        return new_id

    def add_league_module(self, algorithm: Any, module_id: str, league: list[str]) -> None:
        """Add ``module_id`` (shaped like ``main``, never trained) and map seats over ``league``."""
        algorithm.add_module(
            module_id=module_id,
            module_spec=RLModuleSpec.from_module(algorithm.get_module(MAIN)),
            new_agent_to_module_mapping_fn=mapping_fn(
                league,
                self_play_weight=self.self_play_weight,
                latest_weight=self.latest_weight,
                pool_size=self.pool_size,
            ),
            new_should_module_be_updated=[MAIN],
        )
