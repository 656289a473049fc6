"""Memory figures that say what a process holds of its own: a worker's are its own, not the
trainer's it was forked from."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from piquet_env.rules import STANDARD
from piquet_training.evaluation.duplicate import evaluate
from piquet_training.memory import largest, process_memory

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


_ALLOCATION = """
import json
import numpy as np
from piquet_training.memory import process_memory, release_free_memory

def figures(m):
    return [m.uss_mib, m.pss_mib, m.rss_mib, m.peak_rss_mib]

before = process_memory()
block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
held = process_memory()
del block
release_free_memory()
after = process_memory()
gone = process_memory("no-such") is None
print(json.dumps([figures(before), figures(held), figures(after), gone]))
"""


@linux_only
def test_the_figures_are_ordered_and_follow_an_allocation():
    """Measured in a fresh interpreter: in a test worker, what ran before leaves free heap pages
    that a new block may reuse, and the unique set then grows by less than the block."""
    import json
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", _ALLOCATION], capture_output=True, text=True, check=True
    )
    before, held, after, missing = json.loads(out.stdout)
    assert 0 < before[0] <= before[1] <= before[2] <= before[3] + 1
    assert held[0] - before[0] > 60 and held[3] >= held[2]
    assert after[0] < held[0] - 60  # handed back
    assert missing


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
