"""Run logs of ``piquet train``: the terminal, CSV files, TensorBoard, the learning curve, summary.

:class:`Console` prints what a run is doing: a header (output directory, key settings, device),
the warm start's steps, every evaluation with its interval, a progress bar over the run's updates
with the estimated time to their end and the latest evaluation against the heuristic (or, with
``progress=false``, a line every tenth of the run), and why it stopped early if it did.
:class:`RunLogger` writes the files of a run directory: ``train.csv`` (one row per PPO update:
losses, entropy, KL, explained variance, training return, env steps/s...),
``eval.csv`` (one row per evaluation and opponent: its ``kind`` ``start``, ``periodic`` or
``final``, mean points per deal with its 95% interval), ``events.csv`` (the warm start and each
resume), TensorBoard event files under ``tb/`` (optional); :func:`plot_learning_curve` draws
``learning_curve.png`` from them. On ``--resume`` the CSV files keep their rows up to the
checkpoint's update and are appended to: rows of updates redone after it are dropped first.
"""

from __future__ import annotations

import csv
import io
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piquet_env.untrusted import read_regular_file, short_json
from piquet_training.evaluation.stats import verdict_word

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


class Console:
    """The terminal output of a training run (silent with ``echo=False``)."""

    def __init__(self, cfg: Any, *, echo: bool = True) -> None:
        self.cfg = cfg
        self.echo = echo
        self._bar: Any = None
        self._every = max(1, cfg.updates // 10)
        self._last_line = 0.0
        self._t0 = time.perf_counter()
        self._done0, self._total, self._unit = 0, cfg.updates, "update"
        self._latest_eval: dict[str, float] = {}
        self._postfix: dict[str, str] = {}

    def say(self, text: str) -> None:
        """Print ``text`` on its own line(s), above the progress bar if one is shown."""
        if not self.echo:
            return
        if self._bar is not None:
            self._bar.write(text)
        else:
            print(text, flush=True)

    def header(self, out_dir: Path, *, resumed: bool, precision: str = "fp32") -> None:
        """The run's output directory, key settings, device and resolved ``precision``."""
        import torch

        cfg = self.cfg
        cap = f"{cfg.time_budget_minutes:g} min" if cfg.time_budget_minutes else "none"
        weights = (
            ("self", cfg.self_play_weight),
            ("snapshot", cfg.snapshot_weight),
            *cfg.agent_opponents(),
        )
        opponents = (
            f"{cfg.opponent} alone"
            if cfg.opponent
            else ", ".join(f"{name} {w:g}" for name, w in weights if w > 0)
        )
        evals = (
            f"every {cfg.eval_every} updates ({cfg.eval_deals} pairs)"
            if cfg.eval_every
            else "at the end only"
        )
        self.say(
            "\n".join(
                [
                    f"piquet train{' (resuming)' if resumed else ''}: output in {out_dir}",
                    f"  rules {cfg.rules}, {cfg.mode} mode, seed {cfg.seed}; network "
                    f"{'x'.join(map(str, cfg.hidden))} {cfg.activation}, critic {cfg.critic}; "
                    f"device {cfg.device} ({precision}), {cfg.torch_threads} torch thread(s) "
                    f"(torch {torch.__version__}); {cfg.collector} collector",
                    f"  {cfg.updates} updates of {cfg.games_per_update} {cfg.mode}s; opponents: "
                    f"{opponents}; reward {cfg.reward} x {cfg.reward_scale:g}",
                    f"  evaluation vs {cfg.eval_opponents}: {evals}, final {cfg.final_eval_deals} "
                    f"pairs ({cfg.eval_mode}s); time cap {cap}",
                ]
            )
        )

    def evaluation(self, kind: str, update: int, rows: Sequence[dict[str, Any]], s: float) -> None:
        """One line per evaluation: each opponent's points per deal with its 95% interval (the
        progress display shows the latest one against the heuristic)."""
        if not rows:
            return
        for r in rows:
            self._latest_eval[r["opponent"]] = r["mean_diff"]
        self._show_postfix()  # the bar shows this evaluation now, not after the next update
        what = {"start": "starting policy", "periodic": f"update {update}", "final": "final"}
        parts = [
            f"vs {r['opponent']} {r['mean_diff']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]"
            for r in rows
        ]
        self.say(
            f"eval ({what.get(kind, kind)}, {rows[0]['n_pairs']} pairs, {s:.0f} s): "
            + ", ".join(parts)
            + " points/deal, 95% CI"
        )

    @property
    def _watched(self) -> str:
        """The opponent the progress shows the latest evaluation against: the heuristic, or the
        fixed ``opponent`` of an exploiter's run."""
        return self.cfg.opponent or "heuristic"

    def _vs_heuristic(self) -> str:
        """The latest evaluation's points per deal against :attr:`_watched`, or ``-``."""
        vs = self._latest_eval.get(self._watched)
        return "-" if vs is None else f"{vs:+.2f}"

    def open_progress(self, done: int, total: int, unit: str = "update") -> None:
        """Start the progress display at ``done`` of the run's ``total`` updates (or env steps,
        with ``unit="step"``, for a run counted in them)."""
        self._t0 = time.perf_counter()
        self._done0, self._total, self._unit = done, total, unit
        if self.echo and self.cfg.progress and done < total:
            from tqdm import tqdm

            short = "upd" if unit == "update" else "step"
            self._bar = tqdm(total=total, initial=done, desc="ppo", unit=short, dynamic_ncols=True)

    def progress(self, row: dict[str, Any]) -> None:
        """After an update: move the bar (its total the run's updates, its ETA the estimated
        time to their end), or print a line now and then with the time left."""
        at = row["update"] if self._unit == "update" else row["env_steps"]
        if self._bar is not None:
            self._bar.update(min(at, self._total) - self._bar.n)
            self._postfix = {
                "steps_s": f"{row['steps_per_s']:.0f}",
                "kl": f"{row['approx_kl']:.3f}",
            }
            self._show_postfix()
            return
        update, total = row["update"], self._total
        now = time.perf_counter()
        if update % self._every and at < total and now - self._last_line < 60:
            return
        self._last_line = now
        eta = (now - self._t0) / max(1, at - self._done0) * max(0, total - at)
        where = f"update {update}/{total}" if self._unit == "update" else f"update {update}"
        self.say(
            f"{where}: {row['env_steps']:,} env steps, "
            f"{row['steps_per_s']:,.0f} steps/s, kl {row['approx_kl']:.3f}, last evaluation vs "
            f"{self._watched} {self._vs_heuristic()}; {row['minutes']:.1f} min, about "
            f"{eta / 60:.1f} min left"
        )

    def _show_postfix(self) -> None:
        """Set the bar's figures: the latest update's speed and KL, and the latest evaluation
        against :attr:`_watched`."""
        if self._bar is None:
            return
        label = "eval_vs_heur" if self._watched == "heuristic" else "eval_vs_target"
        self._bar.set_postfix({**self._postfix, label: self._vs_heuristic()})

    def close_progress(self) -> None:
        """Close the progress bar (if any)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


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
    try:
        text = read_regular_file(path, LOG_MAX_BYTES, "a run's log").decode()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ValueError(f"{path}: not a CSV file ({exc})") from None
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
    """Whether ``text`` is a finite number (a whole one >= 0 with ``whole``)."""
    try:
        value = float(text)
    except ValueError:
        return False
    if not math.isfinite(value):
        return False
    return not whole or (value >= 0 and value == int(value))


def read_csv(path: str | Path) -> list[dict[str, str]]:
    """Rows of a CSV file as dicts (empty if the file is missing)."""
    path = Path(path)
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


_METRIC_PANELS = (
    ("policy_loss", "policy loss"),
    ("value_loss", "value loss"),
    ("entropy", "entropy (nats)"),
    ("approx_kl", "approximate KL"),
    ("explained_variance", "explained variance"),
    ("train_return", "training return (per trajectory)"),
)


def _floats(rows: Sequence[dict[str, str]], key: str) -> list[float]:
    out = []
    for r in rows:
        try:
            out.append(float(r.get(key) or "nan"))
        except ValueError:
            out.append(math.nan)
    return out


def plot_learning_curve(out_dir: str | Path, path: str | Path | None = None) -> Path | None:
    """Draw ``learning_curve.png`` (:func:`learning_curve_figure`) and return its path (None
    without any logs)."""
    out_dir = Path(out_dir)
    fig = learning_curve_figure(out_dir)
    if fig is None:
        return None
    import matplotlib.pyplot as plt

    path = Path(path) if path else out_dir / "learning_curve.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def learning_curve_figure(out_dir: str | Path) -> Any:
    """The learning curve of a run directory as a matplotlib figure (None without any logs).

    The top panel shows the duplicate-deal evaluations against env steps: one line per opponent
    through the starting and periodic evaluations (points per deal, 95% bands), the final
    evaluation as a separate, labelled marker with its interval (never joined to the line), and
    dotted vertical marks at the warm start and at each resume. Below, one labelled panel per
    training statistic: policy loss, value loss, entropy, approximate KL, explained variance and
    the training return.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    evals = read_csv(out_dir / EVAL_CSV)
    train = read_csv(out_dir / TRAIN_CSV)
    events = read_csv(out_dir / EVENTS_CSV)
    if not evals and not train:
        return None
    fig = plt.figure(figsize=(10, 11))
    grid = fig.add_gridspec(4, 2, height_ratios=[1.6, 1, 1, 1])
    ax = fig.add_subplot(grid[0, :])
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, opp in enumerate(sorted({r["opponent"] for r in evals})):
        colour = colours[i % len(colours)]
        rows = [r for r in evals if r["opponent"] == opp and r.get("kind") != "final"]
        if rows:
            x = _floats(rows, "env_steps")
            ax.plot(x, _floats(rows, "mean_diff"), marker="o", color=colour, label=f"vs {opp}")
            ax.fill_between(
                x, _floats(rows, "ci_low"), _floats(rows, "ci_high"), color=colour, alpha=0.2
            )
        finals = [r for r in evals if r["opponent"] == opp and r.get("kind") == "final"]
        for j, r in enumerate(finals):
            y, lo, hi = (float(r[k]) for k in ("mean_diff", "ci_low", "ci_high"))
            ax.errorbar(
                float(r["env_steps"]),
                y,
                yerr=[[y - lo], [hi - y]],
                fmt="*",
                markersize=14,
                capsize=5,
                color=colour,
                label=f"final vs {opp} ({r['n_pairs']} pairs)" if j == len(finals) - 1 else None,
            )
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_ylabel("points per deal (95% CI)")
    ax.set_title("Duplicate-deal evaluation of the greedy policy")
    panels = [fig.add_subplot(grid[1 + k // 2, k % 2], sharex=ax) for k in range(6)]
    marks = [(float(e["env_steps"]), e["event"]) for e in events]
    for a in [ax, *panels]:
        for x, _event in marks:
            a.axvline(x, color="black", ls=":", lw=1.0)
    for x, event in marks:
        label = {"warm_start": "warm start", "resume": "resumed"}.get(event, event)
        ax.annotate(
            label,
            (x, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -12),
            textcoords="offset points",
            fontsize=8,
        )
    if evals:
        ax.legend(fontsize=8, loc="best")
    x = _floats(train, "env_steps")
    for a, (key, label) in zip(panels, _METRIC_PANELS):
        a.set_title(label, fontsize=10)
        if train and key in train[0]:
            a.plot(x, _floats(train, key), lw=1.2)
        else:
            a.text(0.5, 0.5, "not logged", ha="center", va="center", transform=a.transAxes)
        a.grid(alpha=0.3)
    for a in panels[-2:]:
        a.set_xlabel("env steps (decisions, both seats)")
    fig.tight_layout()
    return fig


def summary_table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of final evaluations (dicts with ``opponent`` and report fields)."""
    lines = [
        "| opponent | pairs | deals | points per deal | 95% CI | win rate | beats it? |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = verdict_word(r["ci_low"], r["ci_high"], r["n_pairs"])
        lines.append(
            f"| {r['opponent']} | {r['n_pairs']} | {r.get('n_deals', '')} | "
            f"{r['mean_diff']:+.2f} | "
            f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] | {100 * r['win_rate']:.1f}% | "
            f"{verdict} |"
        )
    return "\n".join(lines)
