"""Memory figures that say what a process holds of its own: a worker's are its own, not the
trainer's it was forked from."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from piquet_env.rules import STANDARD
from piquet_training.evaluation.duplicate import evaluate
from piquet_training.memory import largest, process_memory, release_free_memory

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@linux_only
def test_the_figures_are_ordered_and_follow_an_allocation():
    before = process_memory()
    assert before is not None
    assert 0 < before.uss_mib <= before.pss_mib <= before.rss_mib <= before.peak_rss_mib + 1
    block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
    held = process_memory()
    assert held.uss_mib - before.uss_mib > 60 and held.peak_rss_mib >= held.rss_mib
    del block
    release_free_memory()
    assert process_memory().uss_mib < held.uss_mib - 60  # handed back
    assert process_memory("no-such-process") is None


@linux_only
def test_each_worker_reports_its_own_memory_not_the_parents():
    ballast = np.ones(300 * 2**20 // 8)  # 300 MiB in this process, before the workers start
    mine = process_memory()
    rep = evaluate("heuristic", "random", STANDARD, n=8, mode="deal", seed=0, workers=2)
    pids = {m.pid for m in rep.worker_memory}
    assert len(rep.worker_memory) == len(pids) >= 1 and mine.pid not in pids
    worker = largest(rep.worker_memory)
    assert 0 < worker.uss_mib < mine.uss_mib - 250, (worker, mine)  # not the parent's 300 MiB
    assert worker.peak_rss_mib < mine.rss_mib
    assert evaluate("heuristic", "random", STANDARD, n=2, seed=0).worker_memory == []  # in here
    del ballast
