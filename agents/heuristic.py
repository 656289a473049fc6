"""A solid, human-style Piquet player built from rules of thumb (no search).

Exchange
    The hand is valued by :func:`piquet_agents.hand_value.hand_value`: the expected points of its
    point, sequences and sets plus the tricks its honours and long suits should take. For each
    number of cards it may exchange, the agent drops the cards that cost the least value
    (:func:`~piquet_agents.hand_value.greedy_discards`) and estimates the value after the draw by
    sampling the unseen cards; it takes the number with the best estimate. Elder, who draws five,
    thereby uses the full exchange whenever drawing pays (he breaks ties towards more cards);
    younger, whose guards and honours weigh more against three random cards, keeps what reinforces
    his hand and often takes fewer.

Declarations
    Younger always declares when allowed: he may declare only what ties or beats elder's
    combination, and a tie still cancels elder's points. Elder sinks a category only when hiding
    pays: when sampled hands of younger, consistent with everything elder knows, beat his
    combination nearly always (declaring would then score nothing and only show his cards).

Play
    See :mod:`piquet_agents.heuristic_play`: run masters from the long suit (which goes for capot
    when every card is a master), establish the long suit, win tricks cheaply (the last trick, a
    trick against capot and against pique above all), follow low, and discard keeping masters and
    guards.

>>> from piquet_env.game import Game
>>> from piquet_agents.loop import play_game
>>> g = play_game(Game(seed=5, mode="deal"), [HeuristicAgent(seed=0), HeuristicAgent(seed=1)])
>>> g.is_over
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache

from piquet_agents.hand_value import greedy_discards, hand_value
from piquet_agents.heuristic_play import choose_card
from piquet_env import combinations as combos
from piquet_env.agent import Turn
from piquet_env.cards import cards_of
from piquet_env.game import Game, Phase, determinize_hand

EXCHANGE_SAMPLES = 24
"""Talon draws sampled to value each possible number of cards to exchange."""
DECLARE_SAMPLES = 24
"""Hands of the opponent sampled to judge whether elder's combination can win."""
SINK_THRESHOLD = 0.95
"""Elder sinks when the sampled opponent beats his combination at least this often."""


def exchange_plan(game: Game, player: int, rng: random.Random) -> list[int]:
    """The cards ``player`` means to discard in this exchange (in order), from his full hand.

    Cards already discarded in this exchange (a seat taken over part-way) come first in the plan.
    """
    _, hi = game.exchange_limits(player)
    return _plan(game, player, _talon_draws(_unseen(game, player), hi, rng))


def _talon_draws(pool: list[int], k: int, rng: random.Random) -> list[list[int]]:
    """:data:`EXCHANGE_SAMPLES` draws of ``k`` cards from ``pool`` (shuffled in place)."""
    draws = []
    for _ in range(EXCHANGE_SAMPLES):
        rng.shuffle(pool)
        draws.append(pool[:k])
    return draws


@lru_cache(maxsize=1024)
def _seeded_draws(key: str, pool: tuple[int, ...], k: int) -> tuple[tuple[int, ...], ...]:
    """:func:`_talon_draws` with ``random.Random(key)``, cached: an exchange of several steps asks
    for the same draws at each."""
    return tuple(map(tuple, _talon_draws(list(pool), k, random.Random(key))))


def _unseen(game: Game, player: int) -> list[int]:
    """The cards of the pack neither in ``player``'s hand nor among his discards, in pack order."""
    full = game.hands[player] | game.discards[player]
    return [c for c in game.rules.pack if not full >> c & 1]


def _plan(game: Game, player: int, draws: Sequence[Sequence[int]]) -> list[int]:
    """:func:`exchange_plan`, the talon's cards sampled as ``draws``."""
    full = game.hands[player] | game.discards[player]
    lo, hi = game.exchange_limits(player)
    done = cards_of(game.discards[player])
    order = [*done, *greedy_discards(game.hands[player], hi - len(done))]
    best_k, best_v = max(lo, len(done)), -1e9
    for k in range(best_k, hi + 1):
        kept = full
        for c in order[:k]:
            kept ^= 1 << c
        total = 0.0
        for d in draws:
            h = kept
            for c in d[:k]:
                h |= 1 << c
            total += hand_value(h)
        v = total / EXCHANGE_SAMPLES
        if v >= best_v - (0.05 if player == game.elder else -0.05):
            best_k, best_v = k, max(v, best_v)
    return order[:best_k]


def should_declare(game: Game, player: int, rng: random.Random) -> bool:
    """Whether to declare the current category (see the module docstring)."""
    if player != game.elder:
        return True
    cat = game.category
    mine = combos.best(cat, game.hands[player])
    if mine is None:
        return False
    beaten = 0
    for _ in range(DECLARE_SAMPLES):
        theirs = combos.best(cat, determinize_hand(game, player, rng))
        beaten += theirs is not None and theirs.key > mine.key
    return beaten < SINK_THRESHOLD * DECLARE_SAMPLES


class HeuristicAgent:
    """Rules-of-thumb player for every phase (exchange, declarations, play); see the module doc.

    ``seed`` drives the sampling used to weigh the exchange and the declarations; the same seed and
    the same game give the same action. Each seed is so one pure policy, and an agent reseeded at
    every game (as matches and trainers do) plays a mixture of them; ``fixed=True`` keeps its seed
    whatever :meth:`reset` is given, one pure policy throughout (the spec ``heuristic:seed=N``),
    which is what an exact figure is computed for.
    """

    def __init__(
        self, seed: int | None = None, name: str = "heuristic", *, fixed: bool = False
    ) -> None:
        self.name = name
        self.seed = 0 if seed is None else int(seed)
        self.fixed = fixed

    def reset(self, seed: int | None = None) -> None:
        """Reseed (``None``, or a fixed agent, keeps the current seed)."""
        if seed is not None and not self.fixed:
            self.seed = int(seed)

    def _rng(self, game: Game, player: int) -> random.Random:
        return random.Random(self._key(game, player))

    def _key(self, game: Game, player: int) -> str:
        # Stateless: derived from the seed and what the player holds, so the plan of a multi-step
        # exchange stays the same from one step to the next.
        full = game.hands[player] | game.discards[player]
        return f"{self.seed}/{full}/{game.phase}/{game.decl_step}"

    def action_probabilities(self, turn: Turn) -> dict[int, float]:
        """The heuristic as a policy: its one action at 1 (its choices are a function of its
        seed and what its player knows, so it is a pure policy; for exact figures)."""
        return {self.act(turn): 1.0}

    def act(self, turn: Turn) -> int:
        """The heuristic's action for this turn."""
        game, p = turn.game, turn.player
        legal = turn.legal_actions
        if not legal:
            raise ValueError("HeuristicAgent asked to act with no legal action (the game is over)")
        n = game.rules.n_cards
        if game.phase == Phase.PLAY:
            return choose_card(game, p, legal)
        if game.phase == Phase.EXCHANGE:
            _, hi = game.exchange_limits(p)
            draws = _seeded_draws(self._key(game, p), tuple(_unseen(game, p)), hi)
            plan = _plan(game, p, draws)
            for c in plan:
                if game.hands[p] >> c & 1:
                    return c
            return n if n in legal else legal[0]
        declare, sink = n + 1, n + 2
        if declare not in legal:
            return legal[0]
        return declare if should_declare(game, p, self._rng(game, p)) else sink

    def __repr__(self) -> str:
        return f"HeuristicAgent(seed={self.seed!r})"
