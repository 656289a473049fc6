"""Information-set Monte Carlo tree search (single-observer ISMCTS) for every phase of a deal.

Each iteration deals the cards hidden from the searching player afresh, consistently with what he
knows (:func:`piquet_env.game.knowledge.determinize`), then walks one shared tree keyed by the
actions taken since the decision: at each node only the actions legal in this determinization
compete, by UCT with *availability* counts (how often an action was legal when its node was
visited), the player to act maximizing his own value. One new node is added, the deal is played out
by the rollout policy (:mod:`piquet_agents.playouts`), and the deal's point difference, divided by
``scale``, is backed up. The most visited action is played.

The exchange is searched over whole discard plans, since discarding card by card in any order
would spread the budget over permutations of the same set: the candidates are, for each number of
cards the player may take, the least valuable cards by
:func:`piquet_agents.hand_value.greedy_discards`, and the sets that swap one of them for one of the
next few candidates. All the plans still in the running are rolled out on the same determinization
with the same rollout randomness (common random numbers: the luck of the draw cancels between
plans), and the worse half is dropped after rounds 3, 6, 12 and 24 (successive halving); the
exchange gets ``exchange_budget`` times the iterations of one decision, each rollout counting as
one. The best plan is then played out over the following exchange decisions without searching again.

The value is the deal's score difference, also in partie mode (the partie's totals are not
weighed). ``iterations`` bounds the iterations per decision, ``time_limit`` (seconds) the time;
with both, whichever comes first. Decisions with a single legal action are not searched, and a
search stops early once its most visited action can no longer be overtaken in the iterations left
(which changes nothing but the time spent).

>>> from piquet_env.game import Game
>>> from piquet_env.agent import Turn
>>> g = Game(seed=3, mode="deal")
>>> a = MCTSAgent(iterations=20, seed=0)
>>> a.act(Turn(g, g.current_player)) in g.legal_actions()
True
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from piquet_agents.hand_value import greedy_discards
from piquet_agents.playouts import POLICIES, rollout
from piquet_env.agent import Turn
from piquet_env.cards import cards_of
from piquet_env.game import Game, Phase, determinize

ROLLOUT_POLICIES = tuple(POLICIES)
HALVING_ROUNDS = (3, 6, 12, 24)
"""Rounds of the exchange search after which the worse half of the plans is dropped."""


def _positive(x: object) -> bool:
    """Whether ``x`` is a finite number above 0 (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


class _Node:
    """A tree node: statistics of the action that led here, and its children by action."""

    __slots__ = ("avail", "children", "n", "w")

    def __init__(self) -> None:
        self.n = 0
        self.w = 0.0
        self.avail = 0
        self.children: dict[int, _Node] = {}


def _leader_safe(counts: list[int], remaining: int) -> bool:
    """Whether the most visited choice stays the most visited whatever the remaining iterations
    do (the search may stop early: the decision cannot change)."""
    if len(counts) < 2:
        return bool(counts)
    first, second = sorted(counts, reverse=True)[:2]
    return first - second > remaining


def _decided(root: _Node, n_legal: int, remaining: int) -> bool:
    """:func:`_leader_safe` for the root's actions, once every one of them has been tried."""
    if len(root.children) < n_legal:
        return False
    return _leader_safe([ch.n for ch in root.children.values()], remaining)


class MCTSAgent:
    """ISMCTS agent (see the module docstring).

    ``iterations``: iterations per decision (0 or ``None`` for no bound, then ``time_limit`` must be
    set); ``time_limit``: seconds per decision; ``c``: UCT exploration constant; ``scale``: deal
    points per unit of value; ``rollout``: the rollout policy (see :mod:`piquet_agents.playouts`);
    ``exchange_alternatives``: how many next-best cards the exchange plans may swap in;
    ``exchange_budget``: the exchange, one decision for the whole discard, gets this many times
    ``iterations`` rollouts; ``seed``: randomness of the determinizations and rollouts.
    """

    def __init__(
        self,
        iterations: int | None = 200,
        time_limit: float | None = None,
        seed: int | None = None,
        c: float = 0.7,
        scale: float = 30.0,
        rollout: str = "heuristic",
        name: str | None = None,
        exchange_alternatives: int = 2,
        exchange_budget: float = 4.0,
    ) -> None:
        if iterations is not None and (
            not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 0
        ):
            raise ValueError(f"iterations must be a non-negative int, got {iterations!r}")
        if not iterations and time_limit is None:
            raise ValueError("MCTSAgent needs a budget: iterations > 0 or a time_limit")
        if time_limit is not None and not _positive(time_limit):
            raise ValueError(f"time_limit must be a finite positive number, got {time_limit!r}")
        if rollout not in ROLLOUT_POLICIES:
            raise ValueError(
                f"unknown rollout policy {rollout!r}; expected one of {ROLLOUT_POLICIES}"
            )
        if not (_positive(c) or c == 0) or not _positive(scale):
            raise ValueError(f"c must be >= 0 and scale > 0 (finite), got c={c}, scale={scale}")
        if not isinstance(exchange_alternatives, int) or exchange_alternatives < 0:
            raise ValueError(
                f"exchange_alternatives must be a non-negative int, got {exchange_alternatives!r}"
            )
        if not _positive(exchange_budget):
            raise ValueError(
                f"exchange_budget must be a finite positive number, got {exchange_budget!r}"
            )
        self.iterations = iterations or None
        self.time_limit = time_limit
        self.c = c
        self.scale = scale
        self.rollout = rollout
        self.exchange_alternatives = exchange_alternatives
        self.exchange_budget = exchange_budget
        self.name = name or (f"mcts:{iterations}" if iterations else f"mcts:time={time_limit}")
        self.seed = seed
        self._rng = random.Random(seed)
        self._plan: tuple[tuple[int, int, int], list[int]] | None = None

    def reset(self, seed: int | None = None) -> None:
        """Reseed (``None`` keeps the current stream) and forget any exchange plan."""
        if seed is not None:
            self.seed = seed
            self._rng = random.Random(seed)
        self._plan = None

    # ------------------------------------------------------------------ budget

    def _budget(self) -> tuple[int, float]:
        limit = self.iterations if self.iterations else 1 << 60
        deadline = (time.perf_counter() + self.time_limit) if self.time_limit else math.inf
        return limit, deadline

    def _value(
        self, g: Game, player: int, deal_index: int, rng: random.Random | None = None
    ) -> float:
        """The deal's point difference for ``player`` after a rollout, in units of ``scale``."""
        rollout(g, rng or self._rng, deal_index, self.rollout)
        ds = g.deal_scores[deal_index]
        return (ds[player].total - ds[1 - player].total) / self.scale

    # ------------------------------------------------------------------ acting

    def act(self, turn: Turn) -> int:
        """Search from the turn's information set and return the chosen action."""
        game, p = turn.game, turn.player
        legal = turn.legal_actions
        if not legal:
            raise ValueError("MCTSAgent asked to act with no legal action (the game is over)")
        if len(legal) == 1:
            return legal[0]
        if game.phase == Phase.EXCHANGE:
            return self._exchange(game, p, legal)
        return self._search(game, p, legal)

    def _search(self, game: Game, player: int, legal: list[int]) -> int:
        root = _Node()
        deal_index = len(game.deal_scores)
        limit, deadline = self._budget()
        rng = self._rng
        c = self.c
        it = 0
        while it < limit and (
            it & 7
            or (time.perf_counter() < deadline and not _decided(root, len(legal), limit - it))
        ):
            it += 1
            g = determinize(game, player, rng)
            node = root
            path = [root]
            movers = []
            while True:
                if len(g.deal_scores) > deal_index or g.current_player < 0:
                    break
                actions = g.legal_actions()
                mover = g.current_player
                children = node.children
                untried = [a for a in actions if a not in children]
                for a in actions:
                    ch = children.get(a)
                    if ch is not None:
                        ch.avail += 1
                if untried:
                    a = untried[int(rng.random() * len(untried))]
                    child = children[a] = _Node()
                    child.avail = 1
                    g.apply(a)
                    path.append(child)
                    movers.append(mover)
                    break
                sign = 1.0 if mover == player else -1.0
                best_a, best_u = actions[0], -math.inf
                for a in actions:
                    ch = children[a]
                    u = sign * ch.w / ch.n + c * math.sqrt(math.log(ch.avail) / ch.n)
                    if u > best_u:
                        best_a, best_u = a, u
                node = children[best_a]
                g.apply(best_a)
                path.append(node)
                movers.append(mover)
            value = self._value(g, player, deal_index)
            root.n += 1
            for node in path[1:]:
                node.n += 1
                node.w += value
        kids = root.children
        return max(legal, key=lambda a: (kids[a].n, kids[a].w) if a in kids else (-1, 0.0))

    # ------------------------------------------------------------------ exchange

    def exchange_candidates(self, game: Game, player: int) -> list[list[int]]:
        """The discard plans the search weighs (see the module docstring).

        Cards the player has already discarded in this exchange (a seat taken over part-way) begin
        every plan; the rest of each plan comes from the cards still in his hand.
        """
        done = cards_of(game.discards[player])
        hand = game.hands[player]
        lo, hi = game.exchange_limits(player)
        lo, hi = max(lo - len(done), 0), hi - len(done)
        order = greedy_discards(hand, min(hi + self.exchange_alternatives, hand.bit_count()))
        plans: list[list[int]] = []
        seen: set[frozenset[int]] = set()

        def add(plan: list[int]) -> None:
            key = frozenset(plan)
            if key not in seen:
                seen.add(key)
                plans.append([*done, *plan])

        for k in range(lo, hi + 1):
            add(order[:k])
            if k == 0:
                continue
            for alt in order[k : k + self.exchange_alternatives]:
                for i in range(k):
                    add([*order[:i], *order[i + 1 : k], alt])
        return plans

    def _exchange(self, game: Game, player: int, legal: list[int]) -> int:
        """The next card of the exchange plan (:meth:`_choose_plan` picks a new plan whenever the
        exchange is not the planned one), or the end of the discard once the plan is played
        out."""
        full = game.hands[player] | game.discards[player]
        key = (player, full, game.deal_number)
        done = game.discards[player]
        if (
            self._plan is None
            or self._plan[0] != key
            or not all(done >> c & 1 or game.hands[player] >> c & 1 for c in self._plan[1])
            or (done & ~sum(1 << c for c in self._plan[1]))
        ):
            self._plan = (key, self._choose_plan(game, player))
        for c in self._plan[1]:
            if game.hands[player] >> c & 1:
                return c
        n = game.rules.n_cards
        return n if n in legal else legal[0]

    def _choose_plan(self, game: Game, player: int) -> list[int]:
        """Weigh the candidate plans on common determinizations (successive halving)."""
        plans = self.exchange_candidates(game, player)
        deal_index = len(game.deal_scores)
        limit, deadline = self._budget()
        if self.iterations:
            limit = int(limit * self.exchange_budget)
        rng = self._rng

        def weigh(alive: list[int]) -> list[float]:
            world = determinize(game, player, rng)
            roll_seed = rng.getrandbits(32)
            return [
                self._value(
                    _play_plan(world, player, plans[i]),
                    player,
                    deal_index,
                    random.Random(roll_seed),
                )
                for i in alive
            ]

        return plans[_halve(len(plans), limit, weigh, deadline)]

    def __repr__(self) -> str:
        return (
            f"MCTSAgent(iterations={self.iterations!r}, time_limit={self.time_limit!r}, "
            f"c={self.c}, scale={self.scale}, seed={self.seed!r})"
        )


def _play_plan(world: Game, player: int, plan: list[int]) -> Game:
    """A copy of ``world`` in which ``player`` has discarded the cards of ``plan`` still in his
    hand and ended his discard."""
    g = world.clone()
    for card in plan:
        if g.current_player == player and g.hands[player] >> card & 1:
            g.apply(card)
    if g.current_player == player and g.phase == Phase.EXCHANGE:
        g.apply(g.rules.n_cards)
    return g


def _halve(
    n_plans: int,
    limit: int,
    weigh: Callable[[list[int]], list[float]],
    deadline: float = math.inf,
) -> int:
    """The best of ``n_plans`` plans by successive halving: each round ``weigh(alive)`` scores the
    plans still in the running on one common determinization (one unit of ``limit`` per plan),
    and the worse half is dropped after the rounds of :data:`HALVING_ROUNDS`, until one plan is
    left, ``limit`` is spent (at least one round per plan is allowed) or ``deadline`` passes."""
    totals = [0.0] * n_plans
    alive = list(range(n_plans))
    spent, rounds = 0, 0
    while len(alive) > 1 and spent + len(alive) <= max(limit, n_plans):
        if rounds and time.perf_counter() >= deadline:
            break
        rounds += 1
        for i, v in zip(alive, weigh(alive)):
            totals[i] += v
        spent += len(alive)
        if rounds in HALVING_ROUNDS and len(alive) > 2:
            alive.sort(key=lambda j: -totals[j])
            alive = alive[: max(2, len(alive) // 2)]
    return max(alive, key=lambda j: totals[j])
