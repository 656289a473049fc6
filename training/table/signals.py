"""Ending a terminal game cleanly on Ctrl-C, ``kill`` (SIGTERM) or a closed terminal (SIGHUP).

While a :class:`SignalGuard` is active, each of these signals raises :class:`Stopped` (a
``KeyboardInterrupt``) in the main thread, so the game loop unwinds the same way for all three and
the record is saved. Inside :meth:`SignalGuard.critical` (a move being applied to the game) the
signal is held and raised when the block ends, so the game is never left half-changed.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that end a game: Ctrl-C, ``kill``, the terminal closing (where the OS has it)."""


class Stopped(KeyboardInterrupt):
    """The program was asked to stop by signal ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """The shell's convention for a program ended by a signal: 128 + its number."""
        return 128 + self.signum

    @property
    def reason(self) -> str:
        """What happened, in words."""
        if self.signum == signal.SIGINT:
            return "Interrupted."
        if self.signum == signal.SIGTERM:
            return "Terminated (SIGTERM)."
        return "The terminal hung up (SIGHUP)."


class SignalGuard:
    """Turns :data:`SIGNALS` into :class:`Stopped` while active (a context manager), holding them
    during :meth:`critical` blocks; the previous handlers come back on exit."""

    def __init__(self) -> None:
        self.pending: int | None = None
        self._depth = 0
        self._saved: dict[int, object] = {}

    def __enter__(self) -> SignalGuard:
        for sig in SIGNALS:
            self._saved[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._saved.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._depth:
            self.pending = self.pending or signum
            return
        raise Stopped(signum)

    @contextmanager
    def critical(self) -> Iterator[None]:
        """A block that a signal cannot cut short; a signal that came during it is raised (as
        :class:`Stopped`) once it ends."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if not self._depth and self.pending is not None:
            signum, self.pending = self.pending, None
            raise Stopped(signum)

    def hold(self) -> None:
        """Hold every further signal until the guard exits (while the record is being saved)."""
        self._depth += 1
