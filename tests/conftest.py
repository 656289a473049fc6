"""The suite's process-wide settings, how its tests are shared between pytest-xdist's workers,
and one line at its end when the browser tests did not run.

MKL's AVX2 code path on every x86 machine:

MKL picks its kernels by processor, and on AVX-512 it rounds a product's last bits differently
from AVX2. The golden tests that replay recorded choices (``tests/test_guided_search.py``: a
search whose close calls go the other way at a different last bit) were recorded on AVX2, so
``MKL_CBWR=AVX2`` (MKL's conditional numerical reproducibility) makes every machine compute what
they recorded. It must be set before torch loads MKL, hence here; a value set outside is kept.

One thread of torch per process:

The suite runs as ``pytest -n 2`` on two cores: two worker processes, each with torch's default
of a thread per core, made four OpenMP threads contend for two cores, and a small network's
operations (an RLCard agent's, on 32 rows) took 10 to 30 ms each; the NFSP example of
docs/integrations/rlcard.md ran 349 s, 78 s with one thread (the same report), on a busy
two-core machine. ``OMP_NUM_THREADS=1`` (before torch loads, as above; a value set outside is
kept) gives each process one thread, as the suite's subprocesses already had theirs. A test of
the threads settings sets its own (``tests/test_compute.py``).

The workers (``pytest -n 2 --dist loadgroup``, as ``.ci/run`` runs the suite):

A test that uses a fixture its module shares between its tests (``scope="module"``: a Ray
cluster, an RLlib run, a trained policy) is put in its module's ``xdist_group`` by
:func:`pytest_collection_modifyitems`, so that one worker builds the fixture once, rather than
each worker building its own when the module's tests are split between them (as plain ``-n 2``,
pytest-xdist's ``load``, splits them: the suite passes that way too, slower). pytest-xdist sends
the largest groups first; every other test is a group of its own, sent in the order collected,
where the groups that hold a test marked ``slow`` come first. A run refuses to start where
pytest-xdist would lose the groups (:func:`pytest_configure`: pytest 9.2 with pytest-xdist
3.8 does).

The browser tests (``tests/test_web_browser.py``) need Chromium and skip without it; so that
the skip is not missed among the others, :func:`pytest_terminal_summary` ends the run with one
line saying so and how to enable them.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pytest

os.environ.setdefault("MKL_CBWR", "AVX2")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# SB3 makes a folder of its own in the temporary folder at every learn() that logs nowhere: one
# shared folder (it stays empty), not one per call
os.environ.setdefault("SB3_LOGDIR", os.path.join(tempfile.gettempdir(), "piquet-tests-sb3"))

NO_CHROMIUM = "no Chromium"
"""The start of the browser tests' skip reason when Chromium is missing."""
BROWSER_SKIPPED = (
    "browser tests skipped (tests/test_web_browser.py): no Chromium found; "
    "enable them with: apt-get install chromium"
)
"""The line that ends a run whose browser tests were skipped for want of Chromium."""


def _skip_reason(report: Any) -> str:
    """The reason of a skipped test or module (its ``longrepr``: ``(path, line, reason)``)."""
    longrepr = getattr(report, "longrepr", None)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr or "")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """End the run with :data:`BROWSER_SKIPPED` if a test was skipped for want of Chromium."""
    skipped = terminalreporter.stats.get("skipped", [])
    if any(NO_CHROMIUM in _skip_reason(r) for r in skipped):
        terminalreporter.write_line(BROWSER_SKIPPED, yellow=True, bold=True)


SHARED_SCOPES = ("module", "package", "session")
"""The scopes of a fixture built once for several tests."""


def _shared_fixture_module(item: pytest.Item) -> str | None:
    """The test module of ``item`` if it uses a fixture of :data:`SHARED_SCOPES` defined in a
    test module (pytest's own, such as ``tmp_path_factory``, and conftest's are not)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    module = item.nodeid.split("::")[0]
    for name in item.fixturenames:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.scope in SHARED_SCOPES and fixturedef.baseid == module:
                return module
    return None


def _group(item: pytest.Item) -> str:
    """The ``xdist_group`` of ``item``, or its own node id if it has none."""
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return item.nodeid
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", item.nodeid))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the marks
def pytest_collection_modifyitems(config: Any, items: list[pytest.Item]) -> None:
    """Put each test that uses a module-scoped fixture of its module in that module's
    ``xdist_group``, unless it names a group of its own; and the groups that hold a test marked
    ``slow`` first, so that no long test starts on one worker while the other has nothing left
    to run. A group's tests stay together, in the order collected: a module's fixture is built
    once (pytest tears it down when a test of another module comes between)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            module = _shared_fixture_module(item)
            if module is not None:
                item.add_marker(pytest.mark.xdist_group(module))
    slow = {_group(item) for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: _group(item) not in slow)  # stable


def pytest_configure(config: pytest.Config) -> None:
    """Refuse ``--dist loadgroup`` with pytest 9.2 or later and pytest-xdist 3.8 or earlier:
    pytest-xdist writes each test's group where pytest 9.2 no longer reads it, so the groups are
    lost (each module's shared fixture built on both workers, or twice on one) and the suite
    passes minutes slower."""
    if getattr(config.option, "dist", None) != "loadgroup" or hasattr(config, "workerinput"):
        return
    from importlib.metadata import version

    from packaging.version import Version

    pytest_version, xdist_version = Version(pytest.__version__), Version(version("pytest-xdist"))
    if pytest_version >= Version("9.2") and xdist_version <= Version("3.8.0"):
        raise pytest.UsageError(
            f"--dist loadgroup loses its groups with pytest {pytest_version} and pytest-xdist "
            f"{xdist_version}: pip install 'pytest<9.2' (the test extra pins it)"
        )
