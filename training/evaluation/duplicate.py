"""Duplicate-deal matches between two agents, with 95% confidence intervals and a verdict.

Every *pair* plays the same cards twice with the seats swapped: in the first game agent A sits in
seat 0, in the second agent B does, and seat 0 is elder in the first deal both times, so each agent
holds exactly the cards the other held. Luck of the deal cancels within a pair, and pairs are
independent, so the statistics are computed over pair values (the mean of the pair's two games).

Two modes:

- ``deal``: each game is one deal; A's result is his deal score minus B's.
- ``partie``: each game is a whole partie (6 deals, 12 under ``saison``, with the same cards for
  each deal of both games); A's result is the settled partie score, and the points per deal are the
  difference of the partie totals divided by the number of deals.

:func:`evaluate` reports the mean points per deal, the win rate (a tie counts half) and, in partie
mode, the settled score, each with a 95% interval (Student-t for the points and the score, Wilson
for the win rate); the verdict is *significant* when the interval of :attr:`MatchReport.mean_diff`
excludes 0, and under :data:`~piquet_training.evaluation.stats.MIN_PAIRS` pairs the summary says
the match is too small to judge. Agents may be given as objects or as specs for
:func:`piquet_agents.registry.make_agent`; with ``workers > 1`` pairs are played in separate
processes, each rebuilding the agents (from the spec, or from a pickled copy).

>>> from piquet_env.rules import STANDARD
>>> rep = evaluate("random", "random", STANDARD, n=20, seed=1)
>>> rep.n_games, rep.significant
(40, False)
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, fields
from multiprocessing import get_context
from multiprocessing.context import BaseContext
from typing import Any

import numpy as np

from piquet_agents.loop import play_game
from piquet_env.agent import Agent
from piquet_env.files import write_text
from piquet_env.game import Game, to_json
from piquet_env.game.state import MODES
from piquet_env.rules import Rules
from piquet_training.evaluation.stats import (
    MIN_PAIRS,
    Estimate,
    mean_ci,
    proportion_ci,
    too_small,
    verdict_word,
)
from piquet_training.evaluation.variance import TalonCorrection, correction_for
from piquet_training.memory import ProcessMemory, process_memory

AgentLike = Agent | str


@dataclass(frozen=True)
class GameResult:
    """One game of a match, from agent A's side.

    ``pair`` and ``game`` (0 or 1) locate it; ``a_seat`` is A's player index (A is elder in the
    first deal when it is 0); ``result`` is A's final result (deal difference, or settled partie
    score); ``points`` is A's total deal points minus B's over the game's ``deals``; ``a_win`` is
    1, 0.5 (tie) or 0. ``correction`` is the sum of the game's variance-reduction terms in A's
    points (:mod:`~piquet_training.evaluation.variance`; 0 when the match plays without).
    """

    pair: int
    game: int
    a_seat: int
    result: int
    points: int
    deals: int
    correction: float = 0.0

    @property
    def a_win(self) -> float:
        """1 if A won, 0.5 for a tie, 0 if A lost."""
        return 1.0 if self.result > 0 else 0.5 if self.result == 0 else 0.0

    def to_dict(self) -> dict[str, int | float]:
        """JSON-serializable form."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> GameResult:
        """The game of a :meth:`to_dict` (``KeyError``/``ValueError``/``TypeError`` if it is not
        one)."""
        plain = {f.name: int(d[f.name]) for f in fields(cls) if f.name != "correction"}
        return cls(**plain, correction=float(d.get("correction", 0.0)))


@dataclass
class MatchReport:
    """The outcome of a duplicate-deal match of agent A against agent B.

    ``mean_diff``, ``ci_low`` and ``ci_high`` are A's mean result per deal (``deal`` mode) or per
    partie (``partie`` mode, the settled score) and its 95% interval; ``significant`` says whether
    that interval excludes 0; ``too_small`` whether there are too few pairs to judge by.
    ``points`` (per deal), ``wins`` (win rate, Wilson interval) and ``partie_score`` are the full
    :class:`~piquet_training.evaluation.stats.Estimate` objects.
    """

    agent_a: str
    agent_b: str
    rules: str
    mode: str
    seed: int
    n_pairs: int
    points: Estimate
    wins: Estimate
    partie_score: Estimate | None
    games: list[GameResult] = field(default_factory=list, repr=False)
    variance_reduction: str = ""
    """The value function whose talon corrections ``points`` subtracts (empty: none)."""
    plain_points: Estimate | None = None
    """Points per deal without the corrections, where ``points`` has them."""
    worker_memory: list[ProcessMemory] = field(default_factory=list, repr=False)
    """Each worker process's own memory where the match was played by several (see
    :func:`play_games`)."""

    @property
    def headline(self) -> Estimate:
        """The estimate the verdict is about: points per deal, or the partie score."""
        return self.partie_score if self.partie_score is not None else self.points

    @property
    def mean_diff(self) -> float:
        """A's mean point difference per deal (per partie, settled, in partie mode)."""
        return self.headline.mean

    @property
    def ci_low(self) -> float:
        """Lower end of the 95% interval of :attr:`mean_diff`."""
        return self.headline.low

    @property
    def ci_high(self) -> float:
        """Upper end of the 95% interval of :attr:`mean_diff`."""
        return self.headline.high

    @property
    def p_value(self) -> float:
        """Two-sided p-value of :attr:`mean_diff` differing from 0 (normal approximation)."""
        return self.headline.p_value(0.0)

    @property
    def significant(self) -> bool:
        """Whether A and B differ significantly (the 95% interval of ``mean_diff`` excludes 0)."""
        return self.headline.excludes(0.0)

    @property
    def too_small(self) -> bool:
        """Whether the match has too few pairs (under ``MIN_PAIRS``) for its verdict to count."""
        return too_small(self.n_pairs)

    @property
    def beats(self) -> str:
        """Does A beat B? ``"yes"``, ``"no (worse)"``, ``"not demonstrated"``, or ``"too few
        pairs to judge"`` under ``MIN_PAIRS`` pairs (as :meth:`summary`'s verdict)."""
        return verdict_word(self.ci_low, self.ci_high, self.n_pairs)

    @property
    def win_rate(self) -> float:
        """A's share of games won (ties count half)."""
        return self.wins.mean

    @property
    def n_games(self) -> int:
        """Games played (two per pair)."""
        return len(self.games)

    @property
    def n_deals(self) -> int:
        """Deals played over all games."""
        return sum(g.deals for g in self.games)

    def to_dict(self, games: bool = False) -> dict:
        """JSON-serializable form; ``games=True`` adds every game's result."""
        d = {
            "agent_a": self.agent_a,
            "agent_b": self.agent_b,
            "rules": self.rules,
            "mode": self.mode,
            "seed": self.seed,
            "n_pairs": self.n_pairs,
            "n_games": self.n_games,
            "n_deals": self.n_deals,
            "mean_diff": self.mean_diff,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "significant": self.significant,
            "too_small": self.too_small,
            "beats": self.beats,
            "win_rate": self.win_rate,
            "points_per_deal": self.points.to_dict(),
            "win_rate_ci": self.wins.to_dict(),
            "partie_score": None if self.partie_score is None else self.partie_score.to_dict(),
        }
        if self.variance_reduction:
            d["variance_reduction"] = self.variance_reduction
            d["plain_points_per_deal"] = self.plain_points.to_dict() if self.plain_points else None
        if games:
            d["games"] = [g.to_dict() for g in self.games]
        return d

    def summary(self) -> str:
        """A few readable lines: the estimates with their intervals and the verdict."""
        a, b = self.agent_a, self.agent_b
        lines = [
            f"{a} vs {b}: {self.rules}, {self.mode} mode, {self.n_pairs} duplicate pairs "
            f"({self.n_games} games, {self.n_deals} deals)"
        ]
        p = self.points
        lines.append(
            f"  points per deal ({a} − {b}): {p.mean:+.2f}  95% CI [{p.low:+.2f}, {p.high:+.2f}]"
        )
        if self.plain_points is not None:
            q = self.plain_points
            lines[-1] += f" (talon luck removed by {self.variance_reduction}'s critic)"
            lines.append(
                f"    without the correction: {q.mean:+.2f}  95% CI [{q.low:+.2f}, {q.high:+.2f}]"
                f" (interval {(q.high - q.low) / max(p.high - p.low, 1e-12):.2f}x as wide)"
            )
        w = self.wins
        lines.append(
            f"  win rate of {a}: {100 * w.mean:.1f}%  "
            f"95% CI [{100 * w.low:.1f}%, {100 * w.high:.1f}%] (Wilson)"
        )
        if self.partie_score is not None:
            s = self.partie_score
            lines.append(
                f"  settled partie score of {a}: {s.mean:+.1f}  "
                f"95% CI [{s.low:+.1f}, {s.high:+.1f}]"
            )
        p_text = f"p = {self.p_value:.2g}" if self.p_value >= 1e-16 else "p < 1e-16"
        if self.too_small:
            verdict = (
                f"too few pairs to judge ({self.n_pairs} < {MIN_PAIRS}; play more with --deals)"
            )
        elif self.significant:
            better, worse = (a, b) if self.mean_diff > 0 else (b, a)
            verdict = f"{better} is significantly better than {worse} ({p_text})"
        else:
            verdict = f"no difference demonstrated ({p_text})"
        lines.append(f"  verdict: {verdict}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------- playing pairs


def pair_rng(seed: int, pair: int) -> random.Random:
    """The random stream of one duplicate pair (its cards and agent seeds)."""
    return random.Random(f"piquet-eval/{seed}/{pair}")


def pair_deals(rules: Rules, mode: str, rng: random.Random) -> list[tuple[list[int], ...]]:
    """The cards of every deal a pair's games may need (tie-break deals included)."""
    n = 1 if mode == "deal" else rules.deals + (2 if rules.tie_break_deals else 0)
    out = []
    h = rules.hand_size
    for _ in range(n):
        pack = list(rules.pack)
        rng.shuffle(pack)
        out.append((pack[:h], pack[h : 2 * h], pack[2 * h :]))
    return out


def play_pair(
    agent_a: Agent,
    agent_b: Agent,
    rules: Rules,
    mode: str,
    seed: int,
    pair: int,
    save_dir: str | None = None,
    fallback_dir: str | None = None,
    correction: TalonCorrection | None = None,
) -> tuple[GameResult, GameResult]:
    """Play duplicate pair number ``pair``: the same cards twice, A in seat 0 then in seat 1.

    With ``save_dir`` each game's JSON log is written there (see :func:`save_game_log`; a log that
    cannot be written there goes to ``fallback_dir``). With ``correction`` each game also gets
    its variance-reduction terms (:mod:`~piquet_training.evaluation.variance`), drawn from a
    stream of the pair's own that nothing else uses: the games are the same with or without."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    rng = pair_rng(seed, pair)
    deals = pair_deals(rules, mode, rng)
    game_seed = rng.getrandbits(64)
    out = []
    for k in (0, 1):
        seats = (agent_a, agent_b) if k == 0 else (agent_b, agent_a)
        seats[0].reset(rng.getrandbits(63))
        seats[1].reset(rng.getrandbits(63))
        game = Game(
            rules,
            seed=game_seed,
            mode=mode,
            deals=deals,
            first_elder=0,
            record=save_dir is not None,
        )
        a = k
        terms = 0.0
        if correction is None:
            play_game(game, seats)
        else:
            terms = correction.play(game, seats, a, f"talon {seed} {pair}")
        points = sum(ds[a].total - ds[1 - a].total for ds in game.deal_scores)
        out.append(GameResult(pair, k, a, game.result[a], points, len(game.deal_scores), terms))
        if save_dir is not None:
            names = [getattr(s, "name", str(s)) for s in seats]
            save_game_log(
                to_json(game, agents=names, pair=pair, seed=seed),
                f"pair{pair:06d}-game{k}.json",
                save_dir,
                fallback_dir,
            )
    return out[0], out[1]


_WARNED_DIRS: set[str] = set()


def save_game_log(text: str, name: str, save_dir: str, fallback_dir: str | None = None) -> str:
    """Write one game log ``text`` as ``save_dir/name`` and return its path.

    If that fails (the disk filled, the folder went away) and ``fallback_dir`` is given, the log
    goes to ``fallback_dir/name`` instead and a warning on stderr (once per process and folder)
    says where: the match goes on and no log is lost. Without a fallback the error propagates.
    """
    path = os.path.join(save_dir, name)
    try:
        write_text(path, text)  # whole or not at all: no half-written log is left behind
        return path
    except OSError as err:
        if fallback_dir is None:
            raise
        os.makedirs(fallback_dir, exist_ok=True)
        alt = os.path.join(fallback_dir, name)
        write_text(alt, text)
        if save_dir not in _WARNED_DIRS:
            _WARNED_DIRS.add(save_dir)
            print(
                f"warning: could not write game logs to {save_dir} ({err.strerror or err}); "
                f"writing them to {fallback_dir} instead",
                file=sys.stderr,
            )
        return alt


_WORKER_AGENTS: dict[tuple[str, str], Agent] = {}


def _resolve(agent: AgentLike, rules: Rules, key: str | None = None) -> Agent:
    if not isinstance(agent, str):
        return agent
    from piquet_agents.registry import make_agent

    cache_key = (key or agent, rules.name)  # a spec may name another agent under other rules
    if cache_key not in _WORKER_AGENTS:
        _WORKER_AGENTS[cache_key] = make_agent(agent, rules)
    return _WORKER_AGENTS[cache_key]


def _play_chunk(
    agent_a: AgentLike,
    agent_b: AgentLike,
    rules: Rules,
    mode: str,
    seed: int,
    pairs: Sequence[int],
    save_dir: str | None,
    fallback_dir: str | None = None,
    value: str | None = None,
) -> list[GameResult]:
    a = _resolve(agent_a, rules, "A:" + agent_a if isinstance(agent_a, str) else None)
    b = _resolve(agent_b, rules, "B:" + agent_b if isinstance(agent_b, str) else None)
    corr = correction_for(value, rules)
    out: list[GameResult] = []
    for i in pairs:
        out.extend(play_pair(a, b, rules, mode, seed, i, save_dir, fallback_dir, corr))
    return out


def _play_chunk_measured(*args: Any) -> tuple[list[GameResult], ProcessMemory | None]:
    """:func:`_play_chunk` in a worker process, with the worker's memory after it."""
    games = _play_chunk(*args)
    return games, process_memory()


def _mp_context() -> BaseContext:
    """Fork where it is safe (fast, no re-import); spawn once torch has started its threads."""
    if sys.platform.startswith("linux") and "torch" not in sys.modules:
        return get_context("fork")
    return get_context("spawn")


def _init_worker() -> None:
    """Worker processes each use one thread for torch: a batch-1 policy gains nothing from more,
    and workers oversubscribing the cores make it many times slower."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


def _chunks(n: int, size: int) -> Iterator[range]:
    for start in range(0, n, size):
        yield range(start, min(n, start + size))


def play_games(
    agent_a: AgentLike,
    agent_b: AgentLike,
    rules: Rules,
    n: int,
    mode: str = "deal",
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    save_dir: str | None = None,
    desc: str | None = None,
    start: int = 0,
    memory: list[ProcessMemory] | None = None,
    variance_reduction: str | None = None,
) -> list[GameResult]:
    """Play ``n`` duplicate pairs, numbers ``start`` to ``start + n - 1``, and return their
    games, sorted by pair then game (pairs are numbered: a match extended from ``start`` equals
    one played from 0 in one go).

    With ``workers > 1`` and a ``memory`` list, each worker process's own memory
    (:func:`~piquet_training.memory.process_memory`, the reading with the largest unique set
    of its batches) is appended to it. With ``variance_reduction`` (a policy checkpoint spec,
    e.g. ``"baseline"``) each game gets the talon corrections of that policy's critic
    (:mod:`~piquet_training.evaluation.variance`).

    With ``save_dir`` every game's log is written there; a log that cannot be is written to a
    fresh temporary folder instead (a warning says where), so no game and no log is lost.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of duplicate pairs must be a positive int, got {n!r}")
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"the first pair's number must be an int >= 0, got {start!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    corr = correction_for(variance_reduction, rules)  # here first: a bad value fails before play
    fallback_dir = None
    if save_dir is not None:
        os.makedirs(save_dir, exist_ok=True)
        fallback_dir = tempfile.mkdtemp(prefix="piquet-games-")  # removed below if unused
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n, desc=desc or "duplicate pairs", unit="pair", smoothing=0.05)
    results: list[GameResult] = []
    try:
        if workers == 1:
            a, b = _resolve(agent_a, rules), _resolve(agent_b, rules)
            if a is b:
                from piquet_agents.registry import make_agent

                b = make_agent(agent_b, rules) if isinstance(agent_b, str) else b
            for i in range(start, start + n):
                results.extend(play_pair(a, b, rules, mode, seed, i, save_dir, fallback_dir, corr))
                if bar is not None:
                    bar.update(1)
        else:
            size = max(1, min(10, n // (workers * 4)))
            with ProcessPoolExecutor(
                max_workers=workers, mp_context=_mp_context(), initializer=_init_worker
            ) as ex:
                futures = {
                    ex.submit(
                        _play_chunk_measured,
                        agent_a,
                        agent_b,
                        rules,
                        mode,
                        seed,
                        [start + i for i in c],
                        save_dir,
                        fallback_dir,
                        variance_reduction,
                    ): len(c)
                    for c in _chunks(n, size)
                }
                readings: dict[int, ProcessMemory] = {}
                for fut in as_completed(futures):
                    games, used = fut.result()
                    results.extend(games)
                    if used is not None and used.uss_mib >= readings.get(used.pid, used).uss_mib:
                        readings[used.pid] = used
                    if bar is not None:
                        bar.update(futures[fut])
                if memory is not None:
                    memory.extend(readings[pid] for pid in sorted(readings))
    finally:
        if bar is not None:
            bar.close()
        if fallback_dir is not None:
            with contextlib.suppress(OSError):  # removed only when empty: nothing fell back
                os.rmdir(fallback_dir)
    results.sort(key=lambda g: (g.pair, g.game))
    return results


def agent_name(agent: AgentLike) -> str:
    """The name an agent (or spec) goes by in reports."""
    return agent if isinstance(agent, str) else getattr(agent, "name", type(agent).__name__)


def report(
    games: Sequence[GameResult],
    agent_a: str,
    agent_b: str,
    rules: Rules,
    mode: str,
    seed: int,
    variance_reduction: str = "",
) -> MatchReport:
    """The :class:`MatchReport` of a list of paired games (both games of every pair present).
    With ``variance_reduction`` (the name of the value function the games were corrected with)
    ``points`` subtracts each game's correction and ``plain_points`` keeps the raw estimate."""
    pairs = [v for _, v in sorted(games_by_pair(games).items())]
    if not pairs or any(len(v) != 2 for v in pairs):
        raise ValueError("a report needs both games of every duplicate pair")
    points = mean_ci([pair_points(v) for v in pairs])
    plain = None
    if variance_reduction:
        plain = points
        points = mean_ci(corrected_pairs(pairs))
    wins = proportion_ci([sum(g.a_win for g in v) / 2 for v in pairs], per_value=2)
    score = mean_ci([sum(g.result for g in v) / 2 for v in pairs]) if mode == "partie" else None
    if math.isnan(points.mean):
        raise ValueError("no games to report")
    return MatchReport(
        agent_a,
        agent_b,
        rules.name,
        mode,
        seed,
        len(pairs),
        points,
        wins,
        score,
        list(games),
        variance_reduction,
        plain,
    )


def games_by_pair(games: Iterable[GameResult]) -> dict[int, list[GameResult]]:
    """The games of a match grouped by duplicate pair (in the order they come)."""
    by_pair: dict[int, list[GameResult]] = {}
    for g in games:
        by_pair.setdefault(g.pair, []).append(g)
    return by_pair


def pair_points(pair: Sequence[GameResult]) -> float:
    """A's points per deal over B in one duplicate pair: the mean of its two games'."""
    return sum(g.points / g.deals for g in pair) / 2


MIN_FIT_PAIRS = 20
"""Fewest pairs in a half of a match for :func:`corrected_pairs` to fit the correction's weight on
it (with fewer, the weight is 1)."""
NO_SIGNAL = 1e-4
"""Corrections whose spread is under this fraction of the points' (plus a point) carry no signal
a weight could use, only float rounding: :func:`corrected_pairs` gives them the weight 1 rather
than a least-squares weight fitted to the noise (under ``mini`` the talon is one card and every
term is 0 up to rounding, about 1e-7 points; a weight fitted to that, 10^5 and more, moved each
match by up to a twentieth of a point)."""


def corrected_pairs(pairs: Sequence[Sequence[GameResult]]) -> list[float]:
    """Each pair's points per deal minus its weighted correction (both per deal, the two games'
    mean), the weight cross-fitted: the least-squares weight of the corrections fitted on the
    odd-numbered pairs is used on the even-numbered ones and the reverse, so no pair's weight
    depends on the pair itself and each corrected value keeps its plain value's mean (the halves
    are independent and each correction has mean zero). A half of under :data:`MIN_FIT_PAIRS`
    pairs, or whose corrections are rounding noise (:data:`NO_SIGNAL`), gives the weight 1."""
    x = np.array([pair_points(v) for v in pairs], dtype=np.float64)
    c = np.array([sum(g.correction / g.deals for g in v) / 2 for v in pairs], dtype=np.float64)
    odd = np.array([v[0].pair % 2 == 1 for v in pairs])

    def weight(half: np.ndarray) -> float:
        xs, cs = x[half], c[half]
        var = float(np.var(cs))
        if len(cs) < MIN_FIT_PAIRS or var <= (NO_SIGNAL * (1.0 + float(np.std(xs)))) ** 2:
            return 1.0
        return float(np.mean((xs - xs.mean()) * (cs - cs.mean())) / var)

    w = np.where(odd, weight(~odd), weight(odd))
    return list(x - w * c)


def evaluate(
    agent_a: AgentLike,
    agent_b: AgentLike,
    rules: Rules,
    n: int,
    mode: str = "deal",
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    save_dir: str | None = None,
    variance_reduction: str | None = None,
) -> MatchReport:
    """Play ``n`` duplicate pairs of A against B and report the difference with 95% intervals.

    ``agent_a``/``agent_b`` are agents or specs (``"random"``, ``"heuristic"``, ``"mcts:200"``, a
    checkpoint path). ``mode`` is ``"deal"`` or ``"partie"``; ``seed`` fixes the cards and the
    agents' seeds (same seed, same match); ``workers`` processes share the pairs (agents given as
    objects must then be picklable); ``progress`` shows a progress bar; ``save_dir`` writes each
    game's event log there as JSON; ``variance_reduction`` (a policy checkpoint spec such as
    ``"baseline"``) removes the talon's luck with that policy's critic
    (:mod:`~piquet_training.evaluation.variance`: the same games, an unbiased estimate with a
    smaller interval, the plain one kept as ``plain_points``).
    """
    name_a, name_b = agent_name(agent_a), agent_name(agent_b)
    memory: list[ProcessMemory] = []
    games = play_games(
        agent_a,
        agent_b,
        rules,
        n,
        mode,
        seed,
        workers,
        progress,
        save_dir,
        desc=f"{name_a} vs {name_b}",
        memory=memory,
        variance_reduction=variance_reduction,
    )
    out = report(games, name_a, name_b, rules, mode, seed, variance_reduction or "")
    out.worker_memory = memory
    return out
