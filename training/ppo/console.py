"""The terminal of a ``piquet train`` run.

:class:`Console` prints what a run is doing: a header (output directory, key settings, device),
the warm start's steps with their progress, every evaluation with its interval, a progress bar
over the run's updates with the estimated time to their end and the latest evaluation against the
heuristic (or, with ``progress=false``, a line every tenth of the run), and why it stopped early if
it did.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


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
        self._step: tuple[str, int, str, float] = ("", 0, "", 0.0)
        self._step_line = 0.0
        self.line_seconds = 30.0
        """With ``progress=false``, the least time between two lines of a step's progress."""

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
                    f"(torch {torch.__version__}); {cfg.collector} collector{_where(cfg)}",
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
            self._bar = tqdm(  # the ETA from the average rate: evaluations do not swing it
                total=total, initial=done, desc="ppo", unit=short, dynamic_ncols=True, smoothing=0
            )

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

    def open_step(self, what: str, total: int, unit: str) -> None:
        """Show the progress of a step before the updates (the warm start's games, then its
        fitting): ``total`` ``unit`` (``"games"``), a bar, or with ``progress=false`` a line at
        most every :attr:`line_seconds` with the time left. :meth:`step` moves it,
        :meth:`close_progress` ends it."""
        now = time.perf_counter()
        self._step = (what, total, unit, now)
        self._step_line = now
        if self.echo and self.cfg.progress and total > 0:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=what, unit=unit, dynamic_ncols=True, smoothing=0)

    def step(self, done: int) -> None:
        """``done`` of the step's total are done (:meth:`open_step`)."""
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
            return
        what, total, unit, t0 = self._step
        now = time.perf_counter()
        if now - self._step_line < self.line_seconds or done >= total:
            return
        self._step_line = now
        eta = (now - t0) / max(1, done) * (total - done)
        self.say(f"{what}: {done:,}/{total:,} {unit}, {now - t0:.0f} s, about {eta:.0f} s left")

    def close_progress(self) -> None:
        """Close the progress bar (if any)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _where(cfg: Any) -> str:
    """Where the vector collector's chunks are played, for the header ("" for the game
    collector)."""
    if cfg.collector != "vector":
        return ""
    if cfg.ray:
        place = f"on Ray at {cfg.ray}, {cfg.workers} at a time"
    elif cfg.workers > 1:
        place = f"on {cfg.workers} worker processes"
    else:
        place = "in this process"
    return f", chunks of {cfg.chunk_games} games {place}"
