"""One duplicate pair, and a match as one value.

A :class:`DuplicateMatch` is what a match computes: agent A against agent B under some rules,
pairs numbered from ``start``, dealt from ``seed``, in ``deal`` or ``partie`` mode. Where it is
played (in this process, a process pool, a Ray cluster) is no part of it: pair ``k``'s cards and
agent seeds come from its own stream (:func:`pair_rng`), so the same match gives the same games
pair for pair wherever each pair is played (:func:`play_pair`).
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass, fields

from piquet_agents.loop import play_game
from piquet_env.agent import Agent
from piquet_env.files import write_text
from piquet_env.game import Game, to_json
from piquet_env.game.state import MODES
from piquet_env.rules import Rules
from piquet_training.evaluation.variance import TalonCorrection

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


@dataclass(frozen=True)
class DuplicateMatch:
    """A duplicate-deal match: ``agent_a`` against ``agent_b`` (agents, or specs for
    :func:`~piquet_agents.registry.make_agent`) under ``rules``, ``pairs`` pairs numbered from
    ``start``, dealt from ``seed``, in ``mode``; with ``variance_reduction`` (a policy checkpoint
    spec, e.g. ``"baseline"``) each game gets the talon corrections of that policy's critic
    (:mod:`~piquet_training.evaluation.variance`). Checked on construction.

    >>> from piquet_env.rules import STANDARD
    >>> DuplicateMatch("random", "heuristic", STANDARD, 100, start=50).numbers
    range(50, 150)
    """

    agent_a: AgentLike
    agent_b: AgentLike
    rules: Rules
    pairs: int
    mode: str = "deal"
    seed: int = 0
    start: int = 0
    variance_reduction: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.pairs, bool) or not isinstance(self.pairs, int) or self.pairs < 1:
            raise ValueError(
                f"the number of duplicate pairs must be a positive int, got {self.pairs!r}"
            )
        if isinstance(self.start, bool) or not isinstance(self.start, int) or self.start < 0:
            raise ValueError(f"the first pair's number must be an int >= 0, got {self.start!r}")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")

    @property
    def numbers(self) -> range:
        """The numbers of the match's pairs."""
        return range(self.start, self.start + self.pairs)

    @property
    def names(self) -> tuple[str, str]:
        """The names A and B go by in reports."""
        return agent_name(self.agent_a), agent_name(self.agent_b)


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


def agent_name(agent: AgentLike) -> str:
    """The name an agent (or spec) goes by in reports."""
    return agent if isinstance(agent, str) else getattr(agent, "name", type(agent).__name__)
