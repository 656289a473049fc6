"""How torch's idle OpenMP threads wait: briefly, unless the user chose.

With libgomp's default spin (300,000 turns), idle threads spinning on cores busy with other
processes make two-thread training many times slower than one thread; with :data:`SPIN_COUNT`
two threads are as fast as one there, and faster on idle cores (docs/results/training.md). libgomp
reads ``GOMP_SPINCOUNT`` once, when torch loads it, so :func:`spin_briefly` acts on the processes
that load torch after it is called: ``piquet`` calls it first thing (:func:`piquet_cli.main`), and
the trainers at their start, for the worker processes they start. A program that trains from
Python calls it before it imports torch. Importing this package sets nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

SPIN_COUNT = "1000"
"""How long torch's idle OpenMP threads spin before they sleep (``GOMP_SPINCOUNT``)."""


def spin_briefly() -> bool:
    """Set ``GOMP_SPINCOUNT`` to :data:`SPIN_COUNT` unless it or ``OMP_WAIT_POLICY`` is set
    already (the user's choice stands); return whether it was set here."""
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        return False
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    return True


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """torch on one thread for the block, the caller's thread count restored after it: for
    games played in this process, whose networks answer one observation at a time (batch-1
    inference on two threads ran 12 times slower on busy cores than on one)."""
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)
