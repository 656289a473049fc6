"""How much memory a process holds of its own: the figures the trainer and its evaluation workers
report.

A process's resident set (RSS) counts every page it maps, including pages it shares: a forked
child starts with all of its parent's, and the kernel carries the fork's high-water mark into
``RUSAGE_CHILDREN`` even across ``exec``, which is how an evaluation worker once "peaked" at the
trainer's own 2.9 GiB. What a process costs the machine is its *unique* set (USS, the pages only
it maps: freeing them is what ending it gives back) and its *proportional* set (PSS, each shared
page divided among the processes sharing it: the processes' PSS add up to the memory in use).
:func:`process_memory` reads both from Linux's ``/proc/PID/smaps_rollup``, with the peak resident
set of the process's own address space (``VmHWM`` of ``/proc/PID/status``); elsewhere it is
``None``.

:func:`release_free_memory` hands the C heap's free pages back to the system (glibc's
``malloc_trim``): after a stage that allocated and freed a lot (the warm start's recorded games,
an evaluation) they stay resident otherwise, and add to the next stage's peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["ProcessMemory", "largest", "process_memory", "release_free_memory", "resident_mib"]

_KIB_PER_MIB = 1024.0


@dataclass(frozen=True)
class ProcessMemory:
    """One process's memory, in MiB (see the module docstring for what each figure counts)."""

    pid: int
    peak_rss_mib: float
    """The peak resident set of the process's address space (``VmHWM``), shared pages counted."""
    rss_mib: float
    """Its resident set now, shared pages counted."""
    pss_mib: float
    """Its proportional set now: each shared page divided among the processes that map it."""
    uss_mib: float
    """Its unique set now: the pages only it maps (private clean and dirty)."""

    def to_dict(self) -> dict[str, Any]:
        """The figures as a dict (for JSON and CSV rows)."""
        return asdict(self)

    def text(self, *, peak: bool = True) -> str:
        """``USS 612 MiB, PSS 640 MiB (peak resident set 700 MiB)``; without the peak with
        ``peak=False``, for a line that states it already.

        >>> ProcessMemory(1, 700.0, 650.0, 640.0, 612.0).text(peak=False)
        'USS 612 MiB, PSS 640 MiB'
        """
        own = f"USS {self.uss_mib:,.0f} MiB, PSS {self.pss_mib:,.0f} MiB"
        return f"{own} (peak resident set {self.peak_rss_mib:,.0f} MiB)" if peak else own


def _fields(path: Path) -> dict[str, float]:
    """The ``Name:  value kB`` lines of a ``/proc`` file, in KiB."""
    out: dict[str, float] = {}
    for line in path.read_text().splitlines():
        name, sep, rest = line.partition(":")
        parts = rest.split()
        if sep and len(parts) == 2 and parts[1] == "kB":
            out[name] = float(parts[0])
    return out


def process_memory(pid: int | str = "self") -> ProcessMemory | None:
    """The memory of process ``pid`` (default: this one), or ``None`` where ``/proc`` does not
    give it (not Linux, or the process is gone)."""
    root = Path("/proc") / str(pid)
    try:
        status = _fields(root / "status")
        rollup = _fields(root / "smaps_rollup")
        number = int(pid) if str(pid).isdigit() else int((root / "stat").read_text().split()[0])
    except (OSError, ValueError):
        return None
    try:
        private = rollup["Private_Clean"] + rollup["Private_Dirty"]
        # smaps_rollup is read after status: pages touched in between (the reading's own) can put
        # the resident set a few KiB over the peak read first; a peak is never below the present
        return ProcessMemory(
            pid=number,
            peak_rss_mib=max(status["VmHWM"], rollup["Rss"]) / _KIB_PER_MIB,
            rss_mib=rollup["Rss"] / _KIB_PER_MIB,
            pss_mib=rollup["Pss"] / _KIB_PER_MIB,
            uss_mib=private / _KIB_PER_MIB,
        )
    except KeyError:
        return None


def resident_mib() -> tuple[float, float]:
    """This process's resident set now and its peak (``VmRSS``, ``VmHWM``), in MiB: cheap enough
    to read at every update (``train.csv``'s ``rss_mib`` and ``peak_rss_mib``); ``(0, 0)`` where
    ``/proc`` does not give them."""
    try:
        status = _fields(Path("/proc/self/status"))
        return status["VmRSS"] / _KIB_PER_MIB, status["VmHWM"] / _KIB_PER_MIB
    except (OSError, KeyError):
        return 0.0, 0.0


def largest(readings: list[ProcessMemory]) -> ProcessMemory | None:
    """The reading with the largest unique set (``None`` for none)."""
    return max(readings, key=lambda m: m.uss_mib, default=None)


def release_free_memory() -> bool:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim(0)``); ``False``
    where there is no glibc to ask."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim(0)
    return True
