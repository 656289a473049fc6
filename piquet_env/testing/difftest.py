"""Differential test: the batch against :class:`~piquet_env.game.Game`, step by step.

:func:`compare` plays random legal actions in a :class:`~piquet_env.vector.BatchGame` and, for
every game of the batch, the same deal and the same actions in a ``Game`` built by
:func:`~piquet_env.vector.deal.make_game`, and compares at every step of every game: the player
to act, the legal mask, the observation (``encoder_for(rules).encode``), both players' rewards
(each reward mode, paid at deal ends or densely after every move, as
:func:`~piquet_env.rewards.reward_due` pays it) and both players' running deal points; at every
deal end both score breakdowns; at every episode end the settled result and both final
observations; and, every ``state_every`` steps, the full state (``encoder_for(rules).state``).

Command (the slow run of the closing note; ``--preset all`` runs all the presets)::

    python -m piquet_env.testing.difftest --games 100000 --preset all [--batch 1024] [--jobs 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from piquet_env.game import DealScore, Game
from piquet_env.game.scoring import breakdown
from piquet_env.observation import encoder_for
from piquet_env.rewards import REWARDS, reward_due
from piquet_env.rules import Rules, all_presets, make_rules
from piquet_env.vector.batch_policy import sample_legal
from piquet_env.vector.deal import make_game
from piquet_env.vector.engine import NO_ACTION, BatchGame


@dataclass
class Report:
    """Outcome of :func:`compare`: games finished and checked, steps compared, differences."""

    rules: str
    games: int = 0
    steps: int = 0
    deals: int = 0
    differences: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class _Reference:
    """One game played through ``Game`` and paid by :func:`~piquet_env.rewards.reward_due`: at
    each deal end, as the env pays, or after every move when ``dense``, as a trainer pays."""

    game: Game
    reward: str
    scale: float
    settle_weight: float = 1.0
    dense: bool = False
    credited: list[int] = field(default_factory=lambda: [0, 0])

    def apply(self, action: int) -> tuple[np.ndarray, bool]:
        """Play ``action``; return both players' rewards and whether a deal ended."""
        g = self.game
        n_deals = len(g.deal_scores)
        g.apply(action)
        ended = len(g.deal_scores) > n_deals
        if not (ended or self.dense):
            return np.zeros(2, np.float32), False
        due = []
        for p in (0, 1):
            points, self.credited[p] = reward_due(
                self.reward,
                g,
                p,
                deal_ended=ended,
                credited=self.credited[p],
                settle_weight=self.settle_weight,
            )
            due.append(points * self.scale)
        return np.array(due, dtype=np.float32), ended


def _first_diff(a: np.ndarray, b: np.ndarray, rules: Rules, state: bool = False) -> str:
    enc = encoder_for(rules)
    i = int(np.flatnonzero(a != b)[0])
    fields = enc.state_fields if state else enc.fields
    name = next((f"{n}[{i - lo}]" for n, lo, hi, _ in fields if lo <= i < hi), str(i))
    return f"entry {i} ({name}): batch {a[i]!r}, game {b[i]!r}"


def compare(
    rules: str | Rules = "standard",
    games: int = 1000,
    batch: int = 256,
    *,
    mode: str = "partie",
    reward: str = "result",
    reward_scale: float = 1.0,
    settle_weight: float = 1.0,
    dense: bool = False,
    seed: int = 0,
    state_every: int = 7,
    max_differences: int = 10,
    deal: tuple | None = None,
    first_elder: int = 0,
) -> Report:
    """Play ``games`` complete episodes in a batch of ``batch`` slots and compare every step of
    every game with ``Game`` (see the module docstring). With ``deal`` (elder hand, younger hand,
    talon), every episode starts from those cards (loaded with :meth:`BatchGame.load`, elder
    ``first_elder``), the play differing. Returns a :class:`Report`."""
    start = time.perf_counter()
    run = _Comparison(
        make_rules(rules),
        games,
        max(1, min(batch, games)),
        mode=mode,
        reward=reward,
        reward_scale=reward_scale,
        settle_weight=settle_weight,
        dense=dense,
        seed=seed,
        deal=deal,
        first_elder=first_elder,
    )
    rng = np.random.default_rng(seed)
    while any(x is not None for x in run.refs) and len(run.rep.differences) < max_differences:
        run.check_turns(state_every)
        run.play_step(rng)
    run.rep.seconds = time.perf_counter() - start
    return run.rep


class _Comparison:
    """One run of :func:`compare`: the batch, and per slot the ``Game`` it is compared with
    (``None`` once the slot is retired: its game differed, or every game has started)."""

    def __init__(
        self,
        r: Rules,
        games: int,
        batch: int,
        *,
        mode: str,
        reward: str,
        reward_scale: float,
        settle_weight: float,
        dense: bool,
        seed: int,
        deal: tuple | None,
        first_elder: int,
    ) -> None:
        self.r, self.enc, self.rep = r, encoder_for(r), Report(r.name)
        self.games, self.mode, self.reward = games, mode, reward
        self.reward_scale, self.settle_weight, self.dense = reward_scale, settle_weight, dense
        self.deal, self.first_elder = deal, first_elder
        self.bg = BatchGame(
            r,
            n=batch,
            mode=mode,
            reward=reward,
            reward_scale=reward_scale,
            settle_weight=settle_weight,
            dense=dense,
            seed=seed,
            record=False,
        )
        self.out = self.bg.reset(seed=seed)
        if deal is not None:
            self.out = self.bg.load(range(batch), [deal] * batch, first_elder)
        self.refs: list[_Reference | None] = [self.fresh(i) for i in range(batch)]
        self.started = batch
        self.ref_obs = np.zeros((batch, self.enc.size), dtype=np.float32)
        self.step = 0

    def fresh(self, i: int) -> _Reference:
        """A new reference game for slot ``i``: the deal the batch's slot will play."""
        given = () if self.deal is None else (self.deal,)
        elder = None if self.deal is None else self.first_elder
        return _Reference(
            make_game(
                self.r, self.bg.game_seed(i), self.mode, given=given, elder=elder, record=False
            ),
            self.reward,
            self.reward_scale,
            self.settle_weight,
            self.dense,
        )

    def differ(self, i: int, what: str) -> None:
        """Record a difference in slot ``i`` at this step."""
        self.rep.differences.append(
            f"{self.r.name} game seed {self.bg.game_seed(i)} (slot {i}), step {self.step}: {what}"
        )

    def retire(self, i: int, what: str) -> None:
        """Record a difference in slot ``i`` and stop comparing it."""
        self.differ(i, what)
        self.refs[i] = None

    def live(self) -> list[int]:
        """The slots still compared."""
        return [i for i, x in enumerate(self.refs) if x is not None]

    def check_turns(self, state_every: int) -> None:
        """Before a step: the player to act, the legal actions and the observation of every live
        slot, and every ``state_every`` steps the full state."""
        out, enc = self.out, self.enc
        live = self.live()
        for i in live:
            g = self.refs[i].game
            if out.seat[i] != g.current_player:
                self.retire(i, f"player to act: batch {out.seat[i]}, game {g.current_player}")
                continue
            legal = np.flatnonzero(out.mask[i]).tolist()
            if legal != g.legal_actions():
                self.retire(i, f"legal actions: batch {legal}, game {g.legal_actions()}")
                continue
            enc.encode_into(g, g.current_player, self.ref_obs[i])
        live = [i for i in live if self.refs[i] is not None]
        bad = np.flatnonzero((out.obs[live] != self.ref_obs[live]).any(axis=1))
        for j in bad.tolist():
            i = live[j]
            self.retire(i, "observation " + _first_diff(out.obs[i], self.ref_obs[i], self.r))
        if state_every and self.step % state_every == 0:
            full = self.bg.full_state()
            for i in [i for i in live if self.refs[i] is not None]:
                ref = enc.state(self.refs[i].game)
                if not np.array_equal(full[i], ref):
                    self.retire(i, "state " + _first_diff(full[i], ref, self.r, state=True))

    def play_step(self, rng: np.random.Generator) -> None:
        """One random legal action in every live slot, played in the batch and in its ``Game``,
        and what follows compared."""
        actions = sample_legal(self.out.mask, rng)
        retired = np.array([x is None for x in self.refs])
        actions[retired] = NO_ACTION
        res = self.out = self.bg.step(actions)
        self.step += 1
        deal_rows = {int(i): k for k, i in enumerate(res.deal_games.tolist())}
        ended_rows = {int(i): k for k, i in enumerate(res.ended_games.tolist())}
        for i in np.flatnonzero(~retired).tolist():
            if self._check_move(i, int(actions[i]), res, deal_rows.get(i)):
                self._check_episode_end(i, res, ended_rows.get(i))

    def _check_move(self, i: int, action: int, res: Any, deal_row: int | None) -> bool:
        """Slot ``i``'s move in its ``Game``: the rewards, the running points and, at a deal's
        end, its score; whether the slot is still compared."""
        ref = self.refs[i]
        rewards, deal_over = ref.apply(action)
        self.rep.steps += 1
        if not np.array_equal(rewards, res.rewards[i]):
            self.retire(i, f"rewards: batch {res.rewards[i].tolist()}, game {rewards.tolist()}")
            return False
        points = [sum(ref.game.scores[p]) for p in (0, 1)]
        if not ref.game.is_over and res.points[i].tolist() != points:
            self.retire(i, f"deal points: batch {res.points[i].tolist()}, game {points}")
            return False
        if deal_over != (deal_row is not None):
            self.retire(i, f"deal end: batch {deal_row is not None}, game {deal_over}")
            return False
        if deal_over:
            g = ref.game
            self.rep.deals += 1
            got = tuple(_breakdown(res.deal_scores[deal_row, p]) for p in (0, 1))
            if got != g.deal_scores[-1] or res.deal_numbers[deal_row] != len(g.deal_scores) - 1:
                self.retire(i, f"deal score: batch {got}, game {g.deal_scores[-1]}")
                return False
        return True

    def _check_episode_end(self, i: int, res: Any, ended_row: int | None) -> None:
        """Slot ``i``'s episode end, if either side says it ended: the result and both final
        observations; then the slot's next game (or its retirement, every game started)."""
        g = self.refs[i].game
        if g.is_over != (ended_row is not None):
            self.retire(i, f"episode end: batch {ended_row is not None}, game {g.is_over}")
            return
        if not g.is_over:
            return
        if tuple(res.results[ended_row].tolist()) != g.result:
            self.differ(i, f"result: batch {res.results[ended_row].tolist()}, game {g.result}")
        for p in (0, 1):
            ref_final = self.enc.encode(g, p)
            if not np.array_equal(res.final_obs[ended_row, p], ref_final):
                self.differ(
                    i,
                    f"final observation of player {p} "
                    + _first_diff(res.final_obs[ended_row, p], ref_final, self.r),
                )
        self.rep.games += 1
        if self.started < self.games:
            if self.deal is not None:
                self.out = self.bg.load([i], [self.deal], self.first_elder)
            self.refs[i] = self.fresh(i)
            self.started += 1
        else:
            self.refs[i] = None


def _breakdown(fields: np.ndarray) -> DealScore:
    return breakdown([int(x) for x in fields])


def _run(args: tuple) -> Report:
    name, games, batch, mode, reward, scale, weight, dense, seed = args
    return compare(
        name,
        games,
        batch,
        mode=mode,
        reward=reward,
        reward_scale=scale,
        settle_weight=weight,
        dense=dense,
        seed=seed,
    )


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m piquet_env.testing.difftest --games N --preset all``."""
    ap = argparse.ArgumentParser(
        prog="python -m piquet_env.testing.difftest", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--games", type=int, default=10_000, help="episodes per preset and mode")
    ap.add_argument("--preset", default="all", help="a preset such as classic+normand, or all")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--mode", "--episode", default="partie", choices=("partie", "deal"))
    ap.add_argument("--reward", default="deal_points", choices=REWARDS)
    ap.add_argument("--reward-scale", type=float, default=1.0)
    ap.add_argument("--settle-weight", type=float, default=1.0)
    ap.add_argument("--dense", action="store_true", help="pay deal points after every step")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="processes (split the games)")
    args = ap.parse_args(argv)
    presets = [p.name for p in all_presets()] if args.preset == "all" else [args.preset]
    failed = False
    for name in presets:
        jobs = max(1, args.jobs)
        share = [args.games // jobs + (j < args.games % jobs) for j in range(jobs)]
        tasks = [
            (
                name,
                share[j],
                min(args.batch, max(1, share[j])),
                args.mode,
                args.reward,
                args.reward_scale,
                args.settle_weight,
                args.dense,
                args.seed + 1_000_003 * j,
            )
            for j in range(jobs)
        ]
        if jobs == 1:
            reports = [_run(tasks[0])]
        else:
            with ProcessPoolExecutor(jobs) as pool:
                reports = list(pool.map(_run, tasks))
        games = sum(x.games for x in reports)
        steps = sum(x.steps for x in reports)
        deals = sum(x.deals for x in reports)
        diffs = [d for x in reports for d in x.differences]
        secs = max(x.seconds for x in reports)
        print(
            f"{name:<30} {args.mode:<6} {games:>8,} games {deals:>9,} deals "
            f"{steps:>11,} steps  {len(diffs)} differences  ({secs:.0f} s)",
            flush=True,
        )
        for d in diffs:
            print("   ", d)
        failed |= bool(diffs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
