"""The files of a training run: ``train.csv``, ``eval.csv``, ``events.csv``, ``exact.csv``.

Both trainers write them (the built-in :mod:`piquet_training.ppo.trainer`, and RLlib's
exploiter its ``eval.csv``), so the module sits outside either: the same columns whichever
trained the run.

:class:`RunLogger` writes them in a run directory: ``train.csv`` (one row per PPO update:
losses, entropy, KL, explained variance, training return, env steps/s...), ``eval.csv`` (one row
per evaluation and opponent: its ``kind`` ``start``, ``periodic`` or ``final``, mean points per
deal with its 95% interval), ``events.csv`` (the warm start and each resume), TensorBoard event
files under ``tb/`` (optional). On ``--resume`` the CSV files keep their rows up to the
checkpoint's update and are appended to: rows of updates redone after it are dropped first.
:func:`read_run_log` reads one back, checked (:data:`LOG_COLUMNS`). The terminal is
:mod:`piquet_training.ppo.console`'s, the learning curve drawn from these files
:mod:`piquet_training.ppo.curve`'s.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piquet_env.untrusted import read_csv_rows, short_json

TRAIN_CSV = "train.csv"
EVAL_CSV = "eval.csv"
EVENTS_CSV = "events.csv"
EXACT_CSV = "exact.csv"
EXACT_COLUMNS = (
    "update",
    "env_steps",
    "minutes",
    "form",
    "nash_conv",
    "br_elder",
    "br_younger",
    "value_elder",
    "seconds",
)
"""The columns of ``exact.csv``: the policy's exact figures (:mod:`piquet_env.exact`) by update,
one row per form (``sample``: as it trains; ``greedy``: its most probable action)."""
EVAL_COLUMNS = (
    "update",
    "env_steps",
    "minutes",
    "kind",
    "opponent",
    "n_pairs",
    "mean_diff",
    "ci_low",
    "ci_high",
    "win_rate",
    "significant",
)
EVENT_COLUMNS = ("update", "env_steps", "event")
EVAL_KINDS = ("start", "periodic", "final")
"""``eval.csv``'s kinds: before the first update, every ``eval_every`` updates, at the end."""
LOG_MAX_BYTES = 64 << 20
"""The most bytes :func:`read_run_log` reads of one CSV file of a run (a run of 10,000 updates
writes about 3 MiB of ``train.csv``)."""
LOG_MAX_LINE = 1 << 20
"""The most bytes one line of a run's CSV file may take (a row of ``train.csv`` takes a few
hundred): a longer line is refused before more of it is read."""
_COUNTS = ("update", "env_steps", "n_pairs")
_NUMBERS = ("minutes", "mean_diff", "ci_low", "ci_high", "win_rate", "nash_conv", "seconds")
LOG_COLUMNS: dict[str, tuple[str, ...]] = {
    TRAIN_CSV: ("update", "env_steps"),
    EVAL_CSV: EVAL_COLUMNS[:-2],
    EVENTS_CSV: EVENT_COLUMNS,
    EXACT_CSV: ("update", "env_steps", "form"),
}
"""The columns each CSV file of a run must have: those read back (a resume's truncation, the
learning curve, the exploiter's edge curve); :func:`read_run_log` checks them."""


class RunLogger:
    """Writes scalars to CSV (and TensorBoard when ``tensorboard``) under ``out_dir``."""

    def __init__(self, out_dir: str | Path, *, tensorboard: bool = True) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(self.out_dir / "tb"))
        self._train_columns: list[str] | None = None

    def truncate(self, update: int, *, keep_start: bool = True) -> int:
        """Drop the CSV rows of updates after ``update`` (all rows, for a fresh run with
        ``keep_start=False``); return how many were dropped. Called before a resumed run redoes
        those updates, so that no update is logged twice."""
        dropped = 0
        for name in (TRAIN_CSV, EVAL_CSV, EVENTS_CSV, EXACT_CSV):
            path = self.out_dir / name
            if not path.exists():
                continue
            if not keep_start:
                path.unlink()
                continue
            with path.open(newline="") as f:
                rows = list(csv.reader(f))
            if not rows:
                continue
            header, body = rows[0], rows[1:]
            col = header.index("update") if "update" in header else None
            kept = [r for r in body if col is None or _int(r[col]) <= update]
            dropped += len(body) - len(kept)
            if len(kept) != len(body):
                with path.open("w", newline="") as f:
                    csv.writer(f).writerows([header, *kept])
        self._train_columns = None
        return dropped

    def log_update(self, row: dict[str, Any]) -> None:
        """Append one update's row to ``train.csv`` (and TensorBoard at ``env_steps``)."""
        path = self.out_dir / TRAIN_CSV
        if self._train_columns is None:
            if path.exists() and path.stat().st_size:
                with path.open() as f:
                    self._train_columns = next(csv.reader(f))
            else:
                self._train_columns = list(row)
                with path.open("w", newline="") as f:
                    csv.writer(f).writerow(self._train_columns)
        with path.open("a", newline="") as f:
            csv.writer(f).writerow([_fmt(row.get(c, "")) for c in self._train_columns])
        if self._writer is not None:
            step = int(row.get("env_steps", row.get("update", 0)))
            for key, value in row.items():
                if isinstance(value, (int, float)) and key not in ("update", "env_steps"):
                    self._writer.add_scalar(key if "/" in key else f"train/{key}", value, step)

    def log_eval(self, row: dict[str, Any]) -> None:
        """Append one evaluation (one opponent) to ``eval.csv`` (and TensorBoard)."""
        _append(self.out_dir / EVAL_CSV, EVAL_COLUMNS, row)
        if self._writer is not None:
            step, opp = int(row["env_steps"]), row["opponent"]
            tag = "final_eval" if row.get("kind") == "final" else "eval"
            for key in ("mean_diff", "ci_low", "ci_high", "win_rate"):
                self._writer.add_scalar(f"{tag}_{opp}/{key}", float(row[key]), step)

    def log_evaluation(
        self, kind: str, rows: list[dict[str, Any]], *, update: int, env_steps: int, minutes: float
    ) -> None:
        """Append one evaluation's rows (one an opponent, as
        :func:`~piquet_training.evaluation.greedy.evaluate_policy` gives them) of ``kind``
        (:data:`EVAL_KINDS`) after ``update`` updates and ``env_steps`` env steps."""
        for row in rows:
            at = {"update": update, "env_steps": env_steps, "minutes": minutes, "kind": kind}
            self.log_eval({**at, **row})

    def log_exact(self, row: dict[str, Any]) -> None:
        """Append one exact measurement (one policy form) to ``exact.csv`` (and TensorBoard)."""
        _append(self.out_dir / EXACT_CSV, EXACT_COLUMNS, row)
        if self._writer is not None:
            step = int(row["env_steps"])
            for key in ("nash_conv", "value_elder"):
                self._writer.add_scalar(f"exact_{row['form']}/{key}", float(row[key]), step)

    def log_event(self, update: int, env_steps: int, event: str) -> None:
        """Append a run event (``warm_start``, ``resume``) to ``events.csv``."""
        _append(
            self.out_dir / EVENTS_CSV,
            EVENT_COLUMNS,
            {"update": update, "env_steps": env_steps, "event": event},
        )

    def close(self) -> None:
        """Flush and close TensorBoard."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def _append(path: Path, columns: Sequence[str], row: dict[str, Any]) -> None:
    """Append ``row`` to a CSV file, under the file's own header if it has one (an older run's
    file may lack a newer column) or ``columns`` for a new file."""
    header = list(columns)
    new = not path.exists() or not path.stat().st_size
    if not new:
        with path.open(newline="") as f:
            header = next(csv.reader(f), header)
    with path.open("a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(header)
        w.writerow([_fmt(row.get(c, "")) for c in header])


def _int(text: str) -> int:
    try:
        return int(float(text))
    except ValueError:
        return 0


def _fmt(value: Any) -> Any:
    return f"{value:.6g}" if isinstance(value, float) else value


def read_run_log(path: str | Path) -> list[list[str]]:
    """The rows of one CSV file of a run (its header first), checked as a resume reads them
    back: a regular file of at most :data:`LOG_MAX_BYTES`, UTF-8 text, well-formed CSV, the
    columns of :data:`LOG_COLUMNS` present, every row as long as the header, counts
    (``update``, ``env_steps``, ``n_pairs``) whole numbers >= 0 and the other figures finite
    numbers (or empty). Raises ``ValueError`` naming the file (and the line) otherwise; an empty
    file has no rows."""
    path = Path(path)
    rows = list(read_csv_rows(path, "a run's log", LOG_MAX_BYTES, LOG_MAX_LINE))
    if not rows:
        return rows
    header = rows[0]
    missing = [c for c in LOG_COLUMNS.get(path.name, ()) if c not in header]
    if missing:
        raise ValueError(
            f"{path}: no {', '.join(missing)} column (its header: {short_json(header)})"
        )
    checks = [(j, name) for j, name in enumerate(header) if name in (*_COUNTS, *_NUMBERS)]
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ValueError(f"{path}: line {line} has {len(row)} fields, the header {len(header)}")
        for j, name in checks:
            if row[j] == "" and name not in LOG_COLUMNS.get(path.name, ()):
                continue
            if not _number_ok(row[j], whole=name in _COUNTS):
                raise ValueError(
                    f"{path}: line {line}: {name} is {short_json(row[j])}, not "
                    + ("a whole number >= 0" if name in _COUNTS else "a finite number")
                )
    return rows


def _number_ok(text: str, *, whole: bool) -> bool:
    """Whether ``text`` is a finite number (with ``whole``, a whole one >= 0 written in digits,
    as the run writes it: ``1.234e3`` or ``5.0`` is no count)."""
    if whole:
        return text.isascii() and text.isdigit() and len(text) <= 18
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value)


def read_csv(path: str | Path) -> list[dict[str, str]]:
    """Rows of a run's CSV file as dicts (empty if the file is missing), read by
    :func:`~piquet_env.untrusted.read_csv_rows`: a regular file of at most
    :data:`LOG_MAX_BYTES`, line by line; ``ValueError`` naming the file otherwise."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return []
    rows = read_csv_rows(path, "a run's log", LOG_MAX_BYTES, LOG_MAX_LINE)
    header = next(rows, None)
    if header is None:
        return []
    return [dict(zip(header, row)) for row in rows]
