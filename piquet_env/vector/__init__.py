"""Many games of Piquet as arrays, stepped in batch; identical to ``game`` + ``observation``.

- :class:`BatchGame` (:mod:`.engine`): N games, ``reset``/``step``, observations, masks, rewards,
  full states, autoreset, given deals, any game out as a :class:`~piquet_env.game.Game`.
- :class:`PiquetVectorEnv` (:mod:`.vector_env`): a Gymnasium ``VectorEnv`` for one learner seat
  against a batch policy (``gymnasium.make_vec("Piquet-v0", num_envs=N)`` builds it; any
  :class:`AutoresetMode`; :class:`OpponentError` when the opponent fails); :class:`SelfPlayEnv`
  (:mod:`.selfplay`): both seats, for a trainer.
- :mod:`.checks`: one rule for counts, seeds and slots across the three.
- :mod:`.deal`: the seeds and deals (any game of the batch rebuilt by :func:`make_game`);
  :mod:`.state`, :mod:`.steps`, :mod:`.scoring`, :mod:`.tables`, :mod:`.encoder`: the state
  arrays, the rules as batch transitions, scoring, combination tables, the batched encoder.

The batched engine imports only the engine it runs on (``game``, ``observation``, ``rewards``,
``rules``); its speed benchmark and the differential test against ``Game`` live in
:mod:`piquet_env.testing`.
"""

from piquet_env.vector.batch_policy import BatchPolicy, RandomPolicy, sample_legal
from piquet_env.vector.deal import first_elder, game_seed, make_game
from piquet_env.vector.engine import (
    NO_ACTION,
    BatchActionError,
    BatchGame,
    StepResult,
    deal_score,
)
from piquet_env.vector.selfplay import SelfPlayEnv, SelfPlayStep
from piquet_env.vector.vector_env import AutoresetMode, OpponentError, PiquetVectorEnv

__all__ = [
    "NO_ACTION",
    "AutoresetMode",
    "BatchActionError",
    "BatchGame",
    "BatchPolicy",
    "OpponentError",
    "PiquetVectorEnv",
    "RandomPolicy",
    "SelfPlayEnv",
    "SelfPlayStep",
    "StepResult",
    "deal_score",
    "first_elder",
    "game_seed",
    "make_game",
    "sample_legal",
]
