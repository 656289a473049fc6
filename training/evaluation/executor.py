"""One way to fan numbered, independent tasks out; two places to run them: processes on this
machine, or a Ray cluster.

A :class:`Fanout` says where (``workers`` tasks at a time; ``ray`` None for this machine,
``"local"`` for a Ray instance started here, ``"auto"`` or ``"ray://HOST:PORT"`` to join a running
cluster); :meth:`Fanout.open` gives an :class:`Executor` whose :meth:`~Executor.run` calls
``fn(*shared, *tasks[i])`` for every ``i`` and yields ``(i, result)`` as the tasks finish. Results
are keyed by task index: the first result of an index is the one counted, a later one (a task run
twice) is dropped and counted in :attr:`Executor.duplicates`, so a retried task is never counted
twice. The caller sorts.

- **Here** (``workers=1``, no Ray): the tasks in this process, in order.
- **Processes** (``workers>1``, no Ray): a process pool (fork where safe, spawn once torch is
  imported; one torch thread per worker). A worker killed mid-run (out of memory, ``kill -9``)
  breaks the pool: the pool is rebuilt and the unfinished tasks run again, at most
  :data:`POOL_RESTARTS` times, then :class:`ExecutorError`.
- **Ray**: at most ``workers`` tasks in flight, each taking one CPU and one torch thread. A
  worker process killed or a node that leaves is a system failure, which Ray retries
  (:data:`RAY_RETRIES` times per task); a task that still fails that way is submitted again, at
  most :data:`RAY_RESUBMITS` times. An exception raised by ``fn`` itself is not retried: it is
  raised here, as it would be locally. A Ray instance already initialized in this process is used
  as it is (the caller's to shut down); one this executor started or joined is shut down on close.

Every result is checked before it is yielded when the caller passes ``check(index, result)``:
results from another machine are input like any other
(:func:`~piquet_training.evaluation.duplicate.checks.check_chunk` is the check for a duplicate
match's chunks). What the check guards against is a wrong or damaged result; Ray moves objects
between nodes as pickles, so the machines of a cluster must trust one another.

Agents' files on other nodes: a spec naming a checkpoint (``runs/x/policy.safetensors``,
``baseline``, ``mcts:200:policy=...``) is loaded from the node's own disk. :class:`AgentFiles`,
passed as ``prepare``, records the files' SHA-256 here and checks, in every worker process before
its first task, that the node resolves the spec to files with the same bytes; otherwise
:class:`AgentFileError` names the file and the node. Files are not copied: put them on every node
(or on a shared filesystem) at the same path.

``python -m piquet_training.studies.fanout_speed`` measures a ``baseline``--``heuristic`` match's
time here, on the process pool and on a local Ray instance, with 1 and 2 workers.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.context import BaseContext
from typing import Any, TypeVar

from piquet_env.files import file_sha256
from piquet_training.evaluation.ray_cluster import (
    RAY_INSTALL,
    ClusterError,
    RayNotInstalledError,
    import_ray,
    join_ray,
)

__all__ = [
    "HERE",
    "POOL_RESTARTS",
    "RAY_INSTALL",
    "RAY_RESUBMITS",
    "RAY_RETRIES",
    "AgentFileError",
    "AgentFiles",
    "ClusterError",
    "Executor",
    "ExecutorError",
    "Fanout",
    "RayNotInstalledError",
    "ResultError",
    "import_ray",
]

R = TypeVar("R")

POOL_RESTARTS = 3
"""How many times a local pool broken by a killed worker is rebuilt in one :meth:`Executor.run`."""
RAY_RETRIES = 3
"""Ray's own retries of a task after a system failure (``max_retries``: a killed worker, a node
that left)."""
RAY_RESUBMITS = 2
"""How many times a task that Ray gave up on for a system failure is submitted again."""


class ExecutorError(RuntimeError):
    """The tasks could not be run to the end: the message says which and why."""


class ResultError(ValueError):
    """A task's result failed its check (the message names the task)."""


class AgentFileError(ValueError):
    """A node's copy of an agent's file is missing or differs from the driver's (the message names
    the file and the node)."""


# ----------------------------------------------------------------------------------- where


def _check_address(ray: object) -> None:
    if ray is None or ray in ("local", "auto"):
        return
    if isinstance(ray, str) and ray.startswith("ray://"):
        host, _, port = ray[len("ray://") :].rpartition(":")
        if host and port.isdigit() and 0 < int(port) < 65536:
            return
    raise ValueError(f"ray must be 'local', 'auto' or 'ray://HOST:PORT', got {ray!r}")


@dataclass(frozen=True)
class Fanout:
    """Where tasks run: ``workers`` at a time (>= 1), on this machine (``ray=None``) or on Ray
    (``"local"``: a Ray instance started here; ``"auto"`` or ``"ray://HOST:PORT"``: a running
    cluster). Checked on construction.

    >>> Fanout(2).where
    '2 worker processes'
    >>> Fanout(ray="ray://head:10001").where
    'Ray at ray://head:10001, 1 task at a time'
    """

    workers: int = 1
    ray: str | None = None

    def __post_init__(self) -> None:
        w = self.workers
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise ValueError(f"workers must be an int of at least 1, got {w!r}")
        _check_address(self.ray)

    @property
    def where(self) -> str:
        """Where the tasks run, in words."""
        if self.ray is not None:
            tasks = "1 task" if self.workers == 1 else f"{self.workers} tasks"
            return f"Ray at {self.ray}, {tasks} at a time"
        return "this process" if self.workers == 1 else f"{self.workers} worker processes"

    @property
    def on_this_machine(self) -> bool:
        """Whether every task runs on this machine: no Ray, or a Ray instance started here."""
        return self.ray in (None, "local")

    def open(self) -> Executor:
        """An executor for this fanout (a context manager: close it, or use ``with``). Ray is
        imported (:class:`RayNotInstalledError`) and started or joined here (:class:`ClusterError`
        when the cluster cannot be reached)."""
        if self.ray is not None:
            return _RayExecutor(self.workers, self.ray)
        if self.workers == 1:
            return _HereExecutor()
        return _PoolExecutor(self.workers)


# -------------------------------------------------------------------------------- executors


HERE = Fanout()
"""Every task in this process, in order: the default."""


class Executor:
    """Runs numbered tasks (:meth:`run`); made by :meth:`Fanout.open`."""

    workers: int = 1
    duplicates: int = 0
    """Results dropped because their task had already given one."""
    resubmitted: int = 0
    """Tasks run again by this executor after a failure it saw (a broken pool, a task Ray gave
    up on); Ray's own retries are not counted here."""

    def run(
        self,
        fn: Callable[..., R],
        tasks: Sequence[tuple[Any, ...]],
        *,
        shared: tuple[Any, ...] = (),
        check: Callable[[int, R], None] | None = None,
        prepare: Callable[[], None] | None = None,
    ) -> Iterator[tuple[int, R]]:
        """Call ``fn(*shared, *tasks[i])`` for every task and yield ``(i, result)`` as each
        finishes, every index once (the caller sorts).

        ``fn`` must be importable by name where it runs (a module's function); ``shared`` goes
        to the workers once per run on Ray. ``check(i, result)`` raises for a result not to be
        counted (:class:`ResultError`, named after the task here); ``prepare()`` (hashable, e.g.
        :class:`AgentFiles`) runs on Ray in every worker process before its first task (once per
        process and value), locally once in this process (the workers share its files). An
        exception from ``fn`` is raised as it is, with a note naming the task.
        """
        done: set[int] = set()
        for i, result in self._results(fn, list(tasks), tuple(shared), prepare):
            if i in done:
                self.duplicates += 1
                continue
            if check is not None:
                try:
                    check(i, result)
                except ResultError as exc:
                    raise ResultError(f"task {i}: {exc}") from None
            done.add(i)
            yield i, result
        missing = len(tasks) - len(done)
        if missing:
            raise ExecutorError(f"{missing} of {len(tasks)} tasks gave no result")

    def _results(
        self,
        fn: Callable[..., Any],
        tasks: list[tuple[Any, ...]],
        shared: tuple[Any, ...],
        prepare: Callable[[], None] | None,
    ) -> Iterator[tuple[int, Any]]:
        """``(index, result)`` as the tasks finish; an index may come twice (:meth:`run`
        keeps the first)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the executor holds (a Ray instance it started)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _named(exc: BaseException, i: int) -> BaseException:
    """``exc`` with a note naming task ``i`` (Python 3.11+)."""
    if hasattr(exc, "add_note"):
        exc.add_note(f"(in task {i})")
    return exc


class _HereExecutor(Executor):
    """Every task in this process, in order."""

    def _results(self, fn, tasks, shared, prepare):  # type: ignore[no-untyped-def]
        if prepare is not None:
            _prepare_once(prepare)
        for i, task in enumerate(tasks):
            try:
                result = fn(*shared, *task)
            except Exception as exc:
                _named(exc, i)
                raise
            yield i, result


def _mp_context() -> BaseContext:
    """Fork where it is safe (fast, no re-import); spawn once torch has started its threads."""
    if sys.platform.startswith("linux") and "torch" not in sys.modules:
        return get_context("fork")
    return get_context("spawn")


def _init_worker() -> None:
    """One thread for torch in a worker: a batch-1 policy gains nothing from more, and workers
    oversubscribing the cores make it many times slower."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


def _call(fn: Callable[..., Any], shared: tuple[Any, ...], task: tuple[Any, ...]) -> Any:
    return fn(*shared, *task)


class _PoolExecutor(Executor):
    """The tasks in a process pool, kept from one :meth:`~Executor.run` to the next (a
    training run's collectors run every update's chunks in the same processes, which keep what
    they built), rebuilt when a killed worker breaks it."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def _open_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=_mp_context(), initializer=_init_worker
            )
        return self._pool

    def _results(self, fn, tasks, shared, prepare):  # type: ignore[no-untyped-def]
        if prepare is not None:  # the workers share this machine's files
            _prepare_once(prepare)
        pending = set(range(len(tasks)))
        breaks = 0
        while pending:
            pool = self._open_pool()
            futures: dict[Future, int] = {}
            finished_cleanly = False
            try:
                for i in sorted(pending):
                    futures[pool.submit(_call, fn, shared, tasks[i])] = i
                waiting = set(futures)
                broken = False
                while waiting and not broken:
                    finished, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                    for fut in sorted(finished, key=futures.__getitem__):
                        i = futures[fut]
                        exc = fut.exception()
                        if isinstance(exc, BrokenProcessPool):
                            broken = True
                            continue
                        if exc is not None:
                            raise _named(exc, i)
                        pending.discard(i)
                        yield i, fut.result()
                if broken:
                    # keep what finished before the break; run the rest in a new pool
                    for fut, i in futures.items():
                        if i in pending and fut.done() and fut.exception() is None:
                            pending.discard(i)
                            yield i, fut.result()
                    breaks += 1
                    if breaks > POOL_RESTARTS:
                        raise ExecutorError(
                            f"the worker pool broke {breaks} times (a worker process was killed: "
                            f"out of memory?); {len(pending)} of {len(tasks)} tasks unfinished"
                        )
                    self.resubmitted += len(pending)
                    self._shut()
                else:
                    finished_cleanly = True
            finally:
                if not finished_cleanly:  # an error, a break, or the caller stopped reading
                    self._shut()

    def _shut(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        """Shut the worker processes down."""
        self._shut()


# -------------------------------------------------------------------------------------- Ray

_PREPARED: set[Hashable] = set()


def _prepare_once(prepare: Callable[[], None]) -> None:
    """Run ``prepare`` unless this process already ran an equal one."""
    if prepare not in _PREPARED:
        prepare()
        _PREPARED.add(prepare)


def _ray_task(
    fn: Callable[..., Any],
    shared: tuple[Any, ...],
    task: tuple[Any, ...],
    prepare: Callable[[], None] | None,
) -> Any:
    """One task in a Ray worker: one torch thread, ``prepare`` once, then ``fn``."""
    _init_worker()
    if prepare is not None:
        _prepare_once(prepare)
    return fn(*shared, *task)


def _start_ray(workers: int, address: str) -> bool:
    """Start (``"local"``) or join Ray unless this process already has; whether we did
    (:func:`~piquet_training.evaluation.ray_cluster.join_ray`: the deadline, the messages)."""
    if import_ray().is_initialized():
        return False
    join_ray(workers, address)
    return True


class _RayExecutor(Executor):
    """The tasks on Ray, at most ``workers`` in flight."""

    def __init__(self, workers: int, address: str) -> None:
        self.workers = workers
        self.address = address
        self._ray = import_ray()
        self._owns = _start_ray(workers, address)
        self._remote = self._ray.remote(_ray_task).options(
            num_cpus=1, max_retries=RAY_RETRIES, retry_exceptions=False
        )

    def _results(self, fn, tasks, shared, prepare):  # type: ignore[no-untyped-def]
        ray = self._ray
        shared_ref = ray.put(shared)
        in_flight: dict[Any, int] = {}
        resubmits: dict[int, int] = {}
        queue = list(range(len(tasks)))
        queue.reverse()  # popped from the end: task 0 first
        while queue or in_flight:
            while queue and len(in_flight) < self.workers:
                i = queue.pop()
                in_flight[self._remote.remote(fn, shared_ref, tasks[i], prepare)] = i
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in ready:
                i = in_flight.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # fn raised: not retried
                    cause = getattr(exc, "cause", None)
                    raise _named(cause if isinstance(cause, Exception) else exc, i) from None
                except ray.exceptions.RayError as exc:  # a system failure Ray gave up on
                    resubmits[i] = resubmits.get(i, 0) + 1
                    if resubmits[i] > RAY_RESUBMITS:
                        raise ExecutorError(
                            f"task {i} failed {resubmits[i]} times on Ray, each time after "
                            f"{RAY_RETRIES} retries: {type(exc).__name__}: {exc}"
                        ) from None
                    self.resubmitted += 1
                    queue.append(i)
                    continue
                yield i, result

    def close(self) -> None:
        """Shut Ray down if this executor started or joined it."""
        if self._owns:
            self._ray.shutdown()
            self._owns = False


# ----------------------------------------------------------------------------- agent files


def _node_name() -> str:
    """This machine as a message names it: the Ray node (address and id) in a Ray worker."""
    host = socket.gethostname()
    if "ray" in sys.modules:
        ray = sys.modules["ray"]
        try:
            if ray.is_initialized():
                node = ray.get_runtime_context().get_node_id()
                return f"{host} ({ray.util.get_node_ip_address()}, Ray node {node[:12]})"
        except Exception:  # a name for a message, never a failure of its own
            pass
    return host


@dataclass(frozen=True)
class AgentFiles:
    """The files agent specs load under some rules, with their SHA-256 as this machine has them;
    called on a node, it checks that the node resolves each spec to files with the same bytes
    (:class:`AgentFileError` naming the file and the node otherwise). Make one with :meth:`of`."""

    rules: Any
    """The :class:`~piquet_env.rules.Rules` the specs are resolved under."""
    files: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    """Each spec with its files: ``(spec, ((path, sha256), ...))``."""

    @classmethod
    def of(cls, agents: Iterable[object], rules: Any) -> AgentFiles:
        """The files of ``agents`` (specs; agents given as objects, and ``None``, have none)
        under ``rules``, as this machine resolves them."""
        from piquet_agents.registry import spec_files

        out = []
        for spec in dict.fromkeys(a for a in agents if isinstance(a, str)):
            paths = spec_files(spec, rules)
            out.append((spec, tuple((p, file_sha256(p)) for p in paths)))
        return cls(rules, tuple(out))

    def __call__(self) -> None:
        """Check this node's files (:class:`AgentFileError`)."""
        from piquet_agents.registry import spec_files

        for spec, expected in self.files:
            if not expected:
                continue
            here = spec_files(spec, self.rules)
            if len(here) < len(expected):
                path = expected[len(here)][0]
                raise AgentFileError(
                    f"agent {spec!r}: {path} is not on node {_node_name()}; every node needs the "
                    "agent's files at the same path (copy them there, or use a shared filesystem)"
                )
            for path, (want_path, want) in zip(here, expected):
                got = file_sha256(path)
                if got != want:
                    raise AgentFileError(
                        f"agent {spec!r}: {path} on node {_node_name()} has SHA-256 {got[:16]}..., "
                        f"not the {want[:16]}... of {want_path} where the run started"
                    )
