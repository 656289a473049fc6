"""Every seed a run derives from its own, named once.

A run takes one ``seed``; everything random in it (the deals of its evaluations, the games each
collection chunk plays, RLlib's reseeding on resume) comes from a named stream here, so no two
uses share a stream by accident and no module writes a bare offset. The streams are pure
functions of their arguments: a run, resumed or fanned out over a cluster, derives the same
seeds wherever it runs.

>>> periodic_eval(40)
10040
>>> chunk_seed(0, update=3, chunk=1) == chunk_seed(0, update=3, chunk=1)
True
>>> chunk_seed(0, update=3, chunk=1) != chunk_seed(0, update=3, chunk=2)
True
"""

from __future__ import annotations

import numpy as np

START_EVAL = 10_000
"""The deals of a training run's evaluation of its starting policy."""

RESEED = 1_000_003
"""The stride between streams that must never meet: an RLlib run resumed after ``k`` iterations
seeds RLlib with ``seed + RESEED * k``; an exploiter's final evaluation deals from
``seed + RESEED``."""

_COLLECTION = 0x636F6C6C  # "coll": the spawn key's first word, this stream's own
"""The tag of the collection chunks' stream (:func:`chunk_seed`)."""
_EXPERT = 0x65787074  # "expt"
"""The tag of expert iteration's deals (:func:`expert_deals`)."""
_EXPERT_HELD_OUT = 0x6578686F  # "exho"
"""The tag of the deals each round's network is valued on (:func:`expert_deals`, held out)."""


def periodic_eval(update: int) -> int:
    """The deals of a training run's periodic evaluation after ``update`` updates."""
    return START_EVAL + update


def final_eval(seed: int) -> int:
    """The deals of a training run's final evaluation."""
    return seed + 1


def exploit_final_eval(seed: int) -> int:
    """The deals of an exploiter's final evaluation (never the training run's streams)."""
    return seed + RESEED


def expert_deals(seed: int, round_: int, *, held_out: bool = False) -> int:
    """The deals that round ``round_`` of an exploiter's expert iteration samples, in a run
    seeded ``seed``: a stream of their own (a spawn key of its own, as :func:`chunk_seed`), apart
    from every evaluation's; ``held_out``: the other deals the round's fitted network is valued
    on, never those it was fitted to.

    >>> expert_deals(0, 1) != expert_deals(0, 2) and expert_deals(0, 1) != expert_deals(1, 1)
    True
    >>> expert_deals(0, 1) != expert_deals(0, 1, held_out=True)
    True
    """
    return _spawned(_EXPERT_HELD_OUT if held_out else _EXPERT, seed, round_)


def resumed(seed: int, iterations: int) -> int:
    """The seed an RLlib run resumed after ``iterations`` iterations hands RLlib."""
    return seed + RESEED * iterations


def chunk_seed(seed: int, *, update: int, chunk: int) -> int:
    """The seed of collection chunk ``chunk`` of update ``update`` (counted from 0) of a run
    seeded ``seed``: a 63-bit integer from NumPy's :class:`~numpy.random.SeedSequence`, whose
    spawn keys keep every (update, chunk) stream apart. Whichever process, node or retry
    collects the chunk, it plays the same games."""
    if seed < 0 or update < 0 or chunk < 0:
        raise ValueError(
            f"chunk_seed: seed, update and chunk must be >= 0 ({seed}, {update}, {chunk})"
        )
    return _spawned(_COLLECTION, seed, update, chunk)


def _spawned(tag: int, seed: int, *key: int) -> int:
    """A 63-bit seed from NumPy's :class:`~numpy.random.SeedSequence` of ``seed`` whose spawn key
    is ``tag`` (a stream's own) then ``key``."""
    if seed < 0 or min(key) < 0:
        raise ValueError(f"a seed and its stream's keys must be >= 0, got {seed}, {key}")
    sequence = np.random.SeedSequence(seed, spawn_key=(tag, *key))
    return int(sequence.generate_state(1, np.uint64)[0] >> np.uint64(1))
