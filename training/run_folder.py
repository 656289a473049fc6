"""A run's folder: a new run never silently replaces the one a folder holds, a resumed run finds
one, and every file a run writes can be written, all checked before any work.

:class:`RunFolder` is the value every run that writes a folder asks (the built-in trainer's
``piquet train``, RLlib's, the exploiter, ``piquet solve``). It imports nothing heavy (no
torch): ``piquet solve`` checks its folder without it. Its errors are :class:`RunFolderError`,
which name the folder, what is in it and the settings that fix it (``resume``, ``overwrite``);
the command line writes those as its flags.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from piquet_env.errors import Message, Setting


class RunFolderError(ValueError):
    """A run folder that cannot take the run asked for; the message says why and what to do.
    ``path`` is the folder (or the file) in question; ``held``, for a new run in a folder that
    holds one, the run's files there (a command names its own flags from them)."""

    def __init__(
        self, message: str | Message, *, path: str | Path = "", held: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.path = str(path)
        self.held = held


@dataclass(frozen=True)
class RunFolder:
    """The folder of one run (``path``) and the files whose presence means it holds a run
    (``holds``, relative to it: a run's checkpoint, its result).

    >>> RunFolder(Path("/nonexistent/run"), holds=("policy.safetensors",)).check_fresh()
    """

    path: Path
    holds: tuple[str, ...] = ()

    def held(self) -> list[str]:
        """The files of :attr:`holds` that are there."""
        return [name for name in self.holds if os.path.lexists(self.path / name)]

    def check_fresh(self, *, overwrite: bool = False) -> None:
        """Refuse to start a run in a folder that holds one already, unless ``overwrite``: a
        second run must not silently replace the first. The folder itself, where it exists, must
        be a folder."""
        self._check_is_folder()
        held = self.held()
        if held and not overwrite:
            raise RunFolderError(
                Message(
                    f"{self.path} holds a run already ({', '.join(held)}): continue it (",
                    Setting("resume"),
                    "), replace it (",
                    Setting("overwrite"),
                    "), or start it in another folder",
                    path=self.path,
                ),
                path=self.path,
                held=tuple(held),
            )

    def check_resumable(self) -> None:
        """Refuse to resume a folder that holds no run (none of :attr:`holds`)."""
        self._check_is_folder()
        if not self.path.is_dir() or not self.held():
            raise RunFolderError(
                Message(
                    "cannot resume (",
                    Setting("resume"),
                    f"): {self.path} holds no run to continue (no {' or '.join(self.holds)})",
                    path=self.path,
                ),
                path=self.path,
            )

    def check_logs(self) -> None:
        """Check the run's CSV logs as a resume reads them back
        (:func:`~piquet_training.run_log.read_run_log`)."""
        from piquet_training.run_log import LOG_COLUMNS, read_run_log

        for name in LOG_COLUMNS:
            path = self.path / name
            if os.path.lexists(path):
                try:
                    read_run_log(path)
                except ValueError as exc:
                    raise RunFolderError(f"cannot resume: {exc}", path=path) from None

    def check_writable(self, names: Iterable[str]) -> None:
        """Check that the run can write each file of ``names`` (relative to the folder): the
        folder is one (or can be made in a writable folder), and no name is there as anything
        but a regular file (a folder, a FIFO, a device: a run would fail or hang on it after
        its work)."""
        self._check_is_folder()
        for name in names:
            path = self.path / name
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise RunFolderError(
                    f"{path}: cannot be written ({exc.strerror})", path=path
                ) from None
            if stat.S_ISLNK(mode):
                try:
                    mode = os.stat(path).st_mode
                except OSError:
                    continue  # a dangling link: replaced by the atomic write
            if not stat.S_ISREG(mode):
                raise RunFolderError(
                    f"{path}: is {_kind(mode)}, where the run writes a file: remove it or write "
                    "the run elsewhere",
                    path=path,
                )
        base = self.path
        while not os.path.lexists(base) and base != base.parent:
            base = base.parent
        if not base.is_dir():
            raise RunFolderError(f"{self.path}: {base} is not a folder", path=self.path)
        if not os.access(base, os.W_OK | os.X_OK):
            raise RunFolderError(f"{self.path}: the folder {base} is not writable", path=base)

    def create(self) -> Path:
        """Make the folder (and its missing parents); return its path."""
        self._check_is_folder()
        self.path.mkdir(parents=True, exist_ok=True)
        return self.path

    def _check_is_folder(self) -> None:
        if os.path.lexists(self.path) and not self.path.is_dir():
            raise RunFolderError(
                f"{self.path}: exists and is not a folder, where a run's files go", path=self.path
            )


def _kind(mode: int) -> str:
    """What a file of ``mode`` is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "no regular file"
