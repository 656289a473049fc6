"""Driving the ``piquet`` program through a pseudo-terminal (pexpect), shared by the pty tests of
``piquet play`` and ``piquet replay``. Not a test file: imported by them."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[1]
PROMPT = r"(discard|declare|play)> "
"""The prompts of the person's three decisions."""
NEXT_DEAL = "[Enter] next deal> "
"""The pause at each deal's end."""


def spawn_piquet(
    *args: str, timeout: float = 30, cwd: str | Path = ROOT
) -> tuple[pexpect.spawn, io.StringIO]:
    """Start ``python -m piquet_cli ARGS`` on an 80x40 pseudo-terminal; return it and its
    transcript."""
    env = dict(os.environ, NO_COLOR="1", PYTHONIOENCODING="utf-8", COLUMNS="80")
    env["PYTHONPATH"] = str(ROOT)  # `tests` importable whatever the cwd
    child = pexpect.spawn(
        sys.executable,
        ["-m", "piquet_cli", *args],
        cwd=str(cwd),
        env=env,
        encoding="utf-8",
        timeout=timeout,
        dimensions=(40, 80),
    )
    log = io.StringIO()
    child.logfile_read = log
    child.delaybeforesend = 0.002  # the default 50 ms per line makes a scripted partie slow
    return child, log


def play_scripted(child: pexpect.spawn) -> int:
    """Answer ``1`` at every prompt (and Enter at each deal's end) until the program exits; return
    how many decisions were answered."""
    answers = 0
    while True:
        k = child.expect([PROMPT, pexpect.EOF, r"\[Enter\] next deal> "])
        if k == 1:
            break
        child.sendline("1" if k == 0 else "")
        answers += k == 0
    child.close()
    return answers


def run_piquet(*args: str, stdin: str | bytes = "", **kwargs) -> subprocess.CompletedProcess:
    """Run ``python -m piquet_cli ARGS`` to its end without a terminal (text mode unless
    ``stdin`` is bytes)."""
    text = isinstance(stdin, str)
    return subprocess.run(
        [sys.executable, "-m", "piquet_cli", *args],
        cwd=kwargs.pop("cwd", ROOT),
        capture_output=True,
        text=text,
        input=stdin,
        timeout=kwargs.pop("timeout", 120),
        env=kwargs.pop("env", dict(os.environ, PYTHONIOENCODING="utf-8")),
        **kwargs,
    )


def transcript_lines(log: str) -> list[str]:
    """The lines of a pty transcript (``\\r\\n`` line ends, status-line erasures removed)."""
    text = log.replace("\r\x1b[2K", "\n")
    return [line.split("\r")[-1] for line in text.replace("\r\n", "\n").split("\n")]
