"""A run's folder: a new run never silently replaces the one a folder holds.

Every command that writes a run asks it before anything is written (``piquet train``, ``exploit``,
``solve``). It imports nothing heavy (no torch): ``piquet solve`` checks its folder without it.
"""

from __future__ import annotations

from pathlib import Path


class RunFolderError(ValueError):
    """A run folder that cannot take the run asked for; the message says why and what to do."""


def check_fresh_run_dir(
    out_dir: str | Path,
    *,
    overwrite: bool,
    files: tuple[str, ...],
    elsewhere: str = "train elsewhere with --set out_dir=DIR",
) -> None:
    """Refuse to start a run in a folder that holds one already (any of ``files``, relative to
    it: a run's checkpoint or its result), unless ``overwrite``: a second run must not silently
    replace the first. ``elsewhere`` says how to put the run in another folder.

    >>> check_fresh_run_dir("/nonexistent/run", overwrite=False, files=("policy.safetensors",))
    """
    held = [name for name in files if (Path(out_dir) / name).exists()]
    if held and not overwrite:
        raise RunFolderError(
            f"{out_dir} holds a run already ({', '.join(held)}): continue it with --resume "
            f"{out_dir}, replace it with --overwrite, or {elsewhere}"
        )
