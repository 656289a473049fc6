"""Information-set search guided by a trained policy: priors from its actor, values from its critic.

Every form of :class:`GuidedSearchAgent` deals the cards hidden from the searching player afresh
for each sample, consistently with what he knows (:func:`piquet_env.game.determinize`), and
values a position reached in such a *determinization* as a **leaf**: the deal points scored since
the decision plus the critic's estimate of the points to come (an asymmetric critic reads the
determinized game's full state, seen from the player to act; the value is negated when that
player is the opponent: the rewards are zero-sum), mixed, as AlphaGo mixed its value network with
rollouts, with the outcome of one playout of the deal from the leaf:
``(1 - mix) * critic + mix * playout``. The playout is played by the policy itself in both seats,
each seat's most probable action from its own observation (``playout="policy"``, the default: the
value of the policy's own continuation, which its critic estimates; the playouts of a batch of
leaves advance in lockstep, one forward pass per step), or by the heuristic rollout policy
(``playout="heuristic"``, :mod:`piquet_agents.playouts`). ``mix=0`` trusts the critic alone (no
playouts, the fastest), ``mix=1`` the playouts alone. A leaf where the deal is over is worth its
final difference. Values are in deal points divided by ``scale``, the critic's output divided by
the checkpoint's ``reward_scale``.

Two forms of search:

- ``search="flat"`` (the default) weighs the root's actions side by side: the actions the policy
  gives at least :data:`FLAT_PRIOR` (at least its two most probable) are each applied in the same
  determinizations, ``iterations`` leaves in all. The policy's own choice is played unless another
  action beats it, over those determinizations, by more than ``margin`` standard errors of their
  paired difference (:func:`overrule`): the luck of the hidden cards cancels between actions tried
  on the same ones, and a difference within the noise leaves the policy's choice. With policy
  playouts this is a rollout improvement of the policy (Tesauro and Galperin's): each action is
  weighed by the policy's own play from there on, both seats acting from their own observations
  of the determinized deal, so no player's choice is made knowing cards he cannot see.
- ``search="tree"`` runs the single-observer ISMCTS of :mod:`piquet_agents.mcts` (one tree keyed
  by the actions since the decision) as AlphaZero does: when a node is first reached the
  network's action probabilities for the player to act there (his observation in that
  determinization) are stored, children are chosen by PUCT, ``Q + c * P(a) * sqrt(N) / (1 +
  n(a))``, the prior renormalised over the actions legal in the current determinization, and a
  new node is a leaf, valued as above. ``depth`` cuts the tree that many actions deep (a node that
  deep is valued afresh each time it is reached). Below the root the single-observer tree makes
  the opponent's choices from statistics pooled over all his possible hands. Network calls are
  batched: each wave runs ``batch`` iterations' selections (a virtual loss of one lost visit on
  every node of a pending path spreads them over the tree), then evaluates all their leaves in
  one pass.

The exchange is searched card by card like every other decision by default
(``exchange="search"``). ``exchange="plan"`` plans it as the plain search does
(:meth:`piquet_agents.mcts.MCTSAgent.act`: whole discard plans weighed on heuristic playouts with
common random numbers, ``exchange_budget`` times ``iterations`` playouts); ``exchange="value"``
weighs the same candidate plans and the policy's own (its most probable discards) by the leaf
value, on common determinizations with successive halving.

A decision with one legal action is not searched. Spec: ``mcts:N:policy=PATH`` (see
:mod:`piquet_agents.registry`), with the ``c``, ``scale``, ``batch``, ``exchange``, ``mix``,
``playout``, ``depth``, ``search`` and ``margin`` options; the README has the measurements behind
the defaults.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import torch

from piquet_agents.checkpoint import load_policy, read_checkpoint
from piquet_agents.mcts import MCTSAgent, halve, play_plan
from piquet_agents.network import ActorCritic
from piquet_agents.playouts import rollout
from piquet_env.agent import Turn
from piquet_env.cards import cards_of
from piquet_env.game import Game, Phase, determinize
from piquet_env.observation import encoder_for
from piquet_env.rules import Rules

__all__ = ["EXCHANGES", "PLAYOUTS", "SEARCHES", "GuidedSearchAgent", "overrule"]

EXCHANGES = ("plan", "value", "search")
"""How the guided search decides the exchange (see the module docstring)."""
SEARCHES = ("tree", "flat")
"""The search's two forms (see the module docstring)."""
FLAT_PRIOR = 0.01
"""The flat search weighs the actions of at least this prior probability (at least two)."""
PLAYOUTS = ("heuristic", "policy")
"""Who plays the playouts mixed into a leaf's value (see the module docstring)."""


class _Node:
    """Statistics of the action that led here (``w`` from the searcher's side), the player to act
    here, the priors over actions (``None`` until evaluated) and the children by action."""

    __slots__ = ("children", "mover", "n", "prior", "w")

    def __init__(self) -> None:
        self.n = 0
        self.w = 0.0
        self.mover = -1
        self.prior: np.ndarray | None = None
        self.children: dict[int, _Node] = {}


class GuidedSearchAgent:
    """Search with a policy network's priors and critic values (see the module docstring).

    ``model`` and ``rules``: the network and the rules it was trained for; ``iterations`` per
    decision; ``c``: the PUCT constant; ``scale``: deal points per unit of value;
    ``reward_scale``: reward per deal point in training (the critic's unit); ``batch``: leaves
    evaluated per forward pass; ``exchange``: ``"plan"``, ``"value"`` or ``"search"``; ``mix``:
    the playouts' weight in a leaf's value, in [0, 1]; ``playout``: ``"heuristic"`` or
    ``"policy"``, who plays them; ``depth``: the tree's greatest depth in actions (``None``: no
    limit; see the module docstring); ``search``: ``"tree"`` or ``"flat"``; ``margin``: how
    many standard errors the flat search needs to overrule the policy; ``seed``: randomness of the
    determinizations and playouts.
    """

    def __init__(
        self,
        model: ActorCritic,
        rules: Rules,
        iterations: int = 200,
        *,
        c: float = 1.5,
        scale: float = 30.0,
        reward_scale: float = 0.02,
        batch: int = 16,
        exchange: str = "search",
        mix: float = 0.5,
        playout: str = "policy",
        depth: int | None = None,
        search: str = "flat",
        margin: float = 1.0,
        seed: int | None = None,
        name: str | None = None,
    ) -> None:
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a positive int, got {iterations!r}")
        for label, x in (("c", c), ("scale", scale), ("reward_scale", reward_scale)):
            if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
                raise ValueError(f"{label} must be a finite number > 0, got {x!r}")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be a positive int, got {batch!r}")
        if not (isinstance(mix, (int, float)) and not isinstance(mix, bool) and 0 <= mix <= 1):
            raise ValueError(f"mix must be a number in [0, 1], got {mix!r}")
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 1
        ):
            raise ValueError(f"depth must be a positive int or None, got {depth!r}")
        if search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, got {search!r}")
        if not (isinstance(margin, (int, float)) and not isinstance(margin, bool)) or not (
            math.isfinite(margin) and margin >= 0
        ):
            raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
        if playout not in PLAYOUTS:
            raise ValueError(f"playout must be one of {PLAYOUTS}, got {playout!r}")
        if exchange not in EXCHANGES:
            raise ValueError(f"exchange must be one of {EXCHANGES}, got {exchange!r}")
        enc = encoder_for(rules)
        if (model.obs_size, model.n_actions) != (enc.size, enc.n_actions):
            raise ValueError(
                f"the network reads {model.obs_size} entries with {model.n_actions} actions; "
                f"rules {rules.name!r} encode {enc.size} with {enc.n_actions}"
            )
        self.model = model.eval()
        self.rules, self.enc = rules, enc
        self.iterations, self.c, self.scale = iterations, float(c), float(scale)
        self.reward_scale, self.batch = float(reward_scale), batch
        self.name = name or f"mcts:{iterations}:policy"
        self.exchange, self.mix, self.playout = exchange, float(mix), playout
        self.depth, self.search, self.margin = depth, search, float(margin)
        self.seed = seed
        self._rng = random.Random(seed)
        self._planner = MCTSAgent(iterations, seed=self._planner_seed(seed))

    @staticmethod
    def _planner_seed(seed: int | None) -> int | None:
        """The exchange planner's seed: its own stream, derived from ``seed``."""
        return None if seed is None else random.Random(seed).getrandbits(63)

    @classmethod
    def load(cls, path: str | Path, iterations: int = 200, **kwargs: object) -> GuidedSearchAgent:
        """The search guided by the policy of a checkpoint file or run directory (its
        ``reward_scale`` read from the checkpoint's config)."""
        rules = kwargs.pop("rules", None)
        model, ckpt_rules = load_policy(path, rules=rules)  # type: ignore[arg-type]
        config = read_checkpoint(path, rules=ckpt_rules).meta.get("config") or {}
        scale = config.get("reward_scale", 0.02) if isinstance(config, dict) else 0.02
        kwargs.setdefault("reward_scale", float(scale))
        return cls(model, ckpt_rules, iterations, **kwargs)  # type: ignore[arg-type]

    def reset(self, seed: int | None = None) -> None:
        """Reseed the determinizations (``None`` keeps the current stream) and forget any
        exchange plan."""
        if seed is not None:
            self.seed = seed
            self._rng = random.Random(seed)
        self._planner.reset(self._planner_seed(seed))

    # ------------------------------------------------------------------ network

    @torch.no_grad()
    def _evaluate(self, games: list[Game]) -> tuple[np.ndarray, np.ndarray]:
        """Priors ``(k, n_actions)`` and values ``(k,)`` for the player to act in each game (his
        observation; the full state seen from him for an asymmetric critic)."""
        enc, m = self.enc, self.model
        k = len(games)
        obs = np.empty((k, enc.size), np.float32)
        mask = np.empty((k, enc.n_actions), np.int8)
        states = np.empty((k, enc.state_size), np.float32) if m.critic_trunk is not None else None
        for i, g in enumerate(games):
            p = g.current_player
            enc.encode_into(g, p, obs[i])
            enc.action_mask_into(g, p, mask[i])
            if states is not None:
                enc.state_into(g, p, states[i])
        logits, value = m(
            torch.from_numpy(obs),
            torch.from_numpy(mask),
            None if states is None else torch.from_numpy(states),
        )
        return torch.softmax(logits, -1).numpy(), value.numpy()

    def _leaf_values(
        self,
        games: list[Game],
        player: int,
        base: int,
        rngs: list[random.Random] | None = None,
    ) -> tuple[np.ndarray, list[float]]:
        """The priors of the player to act in each game (none of them over), and each game's value
        for ``player`` in units of ``scale``: the deal points he has gained since the decision
        (``base``: his difference then) plus the critic's estimate of those to come, mixed with
        one playout's outcome (by ``playout``; ``rngs``: each heuristic playout's randomness, by
        default the agent's)."""
        priors, values = self._evaluate(games)
        out = []
        for g, v in zip(games, values.tolist()):
            deal_index = len(g.deal_scores)
            mover_value = v / self.reward_scale / self.scale
            own = mover_value if g.current_player == player else -mover_value
            value = (self._diff(g, player, deal_index) - base) / self.scale + own
            out.append(value)
        if self.mix:
            played = [g.clone() for g in games]
            if self.playout == "policy":
                self._policy_playouts(played)
            else:
                for i, g in enumerate(played):
                    rollout(g, rngs[i] if rngs else self._rng, len(g.deal_scores), "heuristic")
            for i, (g, p) in enumerate(zip(games, played)):
                outcome = (self._diff(p, player, len(g.deal_scores)) - base) / self.scale
                out[i] = (1 - self.mix) * out[i] + self.mix * outcome
        return priors, out

    @torch.no_grad()
    def _policy_playouts(self, games: list[Game]) -> None:
        """Play each game (a determinized copy) to the end of its deal, both seats by the policy's
        most probable action from their own observations: one forward pass per step for all the
        games still playing; forced actions are applied without it."""
        enc, m = self.enc, self.model
        ends = [len(g.deal_scores) for g in games]
        live = list(range(len(games)))
        obs = np.empty((len(games), enc.size), np.float32)
        mask = np.empty((len(games), enc.n_actions), np.int8)
        while live:
            asking, still = [], []
            for i in live:
                g = games[i]
                if _deal_over(g, ends[i]):
                    continue
                still.append(i)
                legal = g.legal_actions()
                if len(legal) == 1:
                    g.apply(legal[0])
                    continue
                k = len(asking)
                enc.encode_into(g, g.current_player, obs[k])
                enc.action_mask_into(g, g.current_player, mask[k])
                asking.append(i)
            if asking:
                k = len(asking)
                actions, _, _ = m.act(
                    torch.from_numpy(obs[:k]),
                    torch.from_numpy(mask[:k]),
                    greedy=True,
                    with_value=False,
                )
                for i, a in zip(asking, actions.tolist()):
                    games[i].apply(a)
            live = still

    # ------------------------------------------------------------------ exchange

    def _policy_plan(self, game: Game, player: int) -> list[int]:
        """The discards the policy makes, most probable action first, until it ends its discard
        (its observation during its own exchange holds no hidden card, so any determinization
        gives the same plan)."""
        g = determinize(game, player, self._rng)
        plan = cards_of(game.discards[player])
        n = self.rules.n_cards
        while g.current_player == player and g.phase == Phase.EXCHANGE:
            prior = self._evaluate([g])[0][0]
            a = max(g.legal_actions(), key=lambda x: prior[x])
            if a >= n:
                break
            g.apply(a)
            plan.append(a)
        return plan

    def _choose_plan(self, game: Game, player: int) -> list[int]:
        """The exchange for ``exchange="value"``: the plain search's candidate plans and the
        policy's own, weighed by their leaf values (see the module docstring) on common
        determinizations, by successive halving with ``exchange_budget`` times ``iterations``
        evaluations."""
        plans = self._planner.exchange_candidates(game, player)
        own = self._policy_plan(game, player)
        if frozenset(own) not in {frozenset(p) for p in plans}:
            plans.append(own)
        base = self._diff(game, player, len(game.deal_scores))
        rng = self._rng

        def weigh(alive: list[int]) -> list[float]:
            world = determinize(game, player, rng)
            seed = rng.getrandbits(32)
            games = [play_plan(world, player, plans[i]) for i in alive]
            return self._leaf_values(games, player, base, [random.Random(seed) for _ in alive])[1]

        limit = int(self.iterations * self._planner.exchange_budget)
        return plans[halve(len(plans), limit, weigh)]

    # ------------------------------------------------------------------ search

    def act(self, turn: Turn) -> int:
        """Search from the turn's information set and return the chosen action (the flat
        search's, or the tree's most visited)."""
        game, player = turn.game, turn.player
        if game.rules != self.rules:
            raise ValueError(
                f"{self.name}: trained for rules {self.rules.name!r}, not {game.rules.name!r}"
            )
        legal = turn.legal_actions
        if not legal:
            raise ValueError(f"{self.name} asked to act with no legal action (the game is over)")
        if len(legal) == 1:
            return legal[0]
        if self.exchange == "plan" and game.phase == Phase.EXCHANGE:
            return self._planner.act(turn)
        if self.exchange == "value" and game.phase == Phase.EXCHANGE:
            return self._planner.exchange_step(game, player, legal, self._choose_plan)
        if self.search == "flat":
            return self._flat(game, player, legal)
        kids = self._search(game, player).children
        return max(legal, key=lambda a: (kids[a].n, kids[a].w) if a in kids else (-1, 0.0))

    def _flat(self, game: Game, player: int, legal: list[int]) -> int:
        """``search="flat"``: every candidate action weighed on the same determinizations, the
        policy's own choice kept unless another beats it by ``margin`` standard errors of the
        paired difference (see the module docstring)."""
        rng = self._rng
        deal_index = len(game.deal_scores)
        base = self._diff(game, player, deal_index)
        prior = self._evaluate([determinize(game, player, rng)])[0][0]
        order = sorted(legal, key=lambda a: -prior[a])
        cands = order[: max(2, sum(prior[a] >= FLAT_PRIOR for a in order))]
        worlds = max(2, self.iterations // len(cands))
        per_wave = max(1, self.batch // len(cands))
        values = np.empty((worlds, len(cands)))
        done = 0
        while done < worlds:
            wave = min(per_wave, worlds - done)
            games, rngs = [], []
            for _ in range(wave):
                world = determinize(game, player, rng)
                seed = rng.getrandbits(32)
                for a in cands:
                    g = world.clone()
                    g.apply(a)
                    games.append(g)
                    rngs.append(random.Random(seed))
            vals = self._values(games, player, deal_index, base, rngs)
            values[done : done + wave] = np.asarray(vals).reshape(wave, len(cands))
            done += wave
        return cands[overrule(values, self.margin)]

    def _values(
        self,
        games: list[Game],
        player: int,
        deal_index: int,
        base: int,
        rngs: list[random.Random],
    ) -> list[float]:
        """Each game's value for ``player`` (see :meth:`_leaf_values`); a game whose deal
        ``deal_index`` is over is worth its final difference."""
        out = [0.0] * len(games)
        live = []
        for i, g in enumerate(games):
            if _deal_over(g, deal_index):
                out[i] = (self._diff(g, player, deal_index) - base) / self.scale
            else:
                live.append(i)
        if live:
            vals = self._leaf_values(
                [games[i] for i in live], player, base, [rngs[i] for i in live]
            )
            for i, v in zip(live, vals[1]):
                out[i] = v
        return out

    def visits(self, turn: Turn) -> dict[int, int]:
        """Grow the tree search from the turn's information set (whatever ``search`` is); the
        root visits of each action tried."""
        return {a: ch.n for a, ch in self._search(turn.game, turn.player).children.items()}

    def _diff(self, g: Game, player: int, deal_index: int) -> int:
        """The deal's point difference for ``player`` (final once the deal is over)."""
        if len(g.deal_scores) > deal_index:
            ds = g.deal_scores[deal_index]
            return ds[player].total - ds[1 - player].total
        return sum(g.scores[player]) - sum(g.scores[1 - player])

    def _search(self, game: Game, player: int) -> _Node:
        rng, c = self._rng, self.c
        depth = self.depth or math.inf
        deal_index = len(game.deal_scores)
        base = self._diff(game, player, deal_index)
        root = _Node()
        root.mover = player
        # the searcher's observation is the same in every determinization (no hidden card is read)
        root.prior = self._evaluate([determinize(game, player, rng)])[0][0]
        done = 0
        while done < self.iterations:
            wave = min(self.batch, self.iterations - done)
            pending: list[tuple[list[_Node], Game, float]] = []
            for _ in range(wave):
                g = determinize(game, player, rng)
                node, path = root, [root]
                while True:
                    if _deal_over(g, deal_index):
                        value = (self._diff(g, player, deal_index) - base) / self.scale
                        pending.append((path, g, value))
                        break
                    if node.prior is None or len(path) > depth:
                        node.mover = g.current_player
                        pending.append((path, g, math.nan))
                        break
                    actions = g.legal_actions()
                    sign = 1.0 if node.mover == player else -1.0
                    prior = node.prior[actions]
                    total = float(prior.sum())
                    prior = (
                        prior / total if total > 1e-8 else np.full(len(actions), 1 / len(actions))
                    )
                    sqrt_n = math.sqrt(node.n + 1)
                    best_a, best_u = actions[0], -math.inf
                    for a, p in zip(actions, prior.tolist()):
                        ch = node.children.get(a)
                        q = sign * ch.w / ch.n if ch is not None and ch.n else 0.0
                        n_a = ch.n if ch is not None else 0
                        u = q + c * p * sqrt_n / (1 + n_a)
                        if u > best_u:
                            best_a, best_u = a, u
                    child = node.children.get(best_a)
                    if child is None:
                        child = node.children[best_a] = _Node()
                    g.apply(best_a)
                    node = child
                    path.append(node)
                for nd, loss in zip(path, _losses(path, player)):  # virtual loss
                    nd.n += 1
                    nd.w -= loss
            leaves = [(i, g) for i, (_, g, v) in enumerate(pending) if math.isnan(v)]
            if leaves:
                priors, values = self._leaf_values([g for _, g in leaves], player, base)
                for (i, g), pr, value in zip(leaves, priors, values):
                    path, _, _ = pending[i]
                    path[-1].prior = pr
                    pending[i] = (path, g, value)
            for path, _, value in pending:
                for nd, loss in zip(path, _losses(path, player)):  # undo it, back up the value
                    nd.w += loss + value
            done += wave
        return root

    def __repr__(self) -> str:
        return (
            f"GuidedSearchAgent(iterations={self.iterations}, c={self.c}, scale={self.scale}, "
            f"batch={self.batch}, exchange={self.exchange!r}, mix={self.mix}, "
            f"playout={self.playout!r}, depth={self.depth!r}, search={self.search!r}, "
            f"margin={self.margin}, seed={self.seed!r})"
        )


def _losses(path: list[_Node], player: int) -> list[float]:
    """The virtual loss of each node of a pending path, from the searcher's side: a lost visit
    for whoever chose the action leading there (+1 when the opponent chose it)."""
    return [0.0] + [1.0 if parent.mover == player else -1.0 for parent in path[:-1]]


def overrule(values: np.ndarray, margin: float) -> int:
    """The flat search's choice among candidate actions, column 0 the policy's, from their values
    in the same determinizations (rows): the column of the best mean if its gain over column 0,
    world by world, has a mean above ``margin`` standard errors (a gain that never varies is
    certain); else 0.

    >>> overrule(np.array([[0.0, 1.0], [0.0, 3.0]]), 1.0)  # +2 +- 1: overruled
    1
    >>> overrule(np.array([[0.0, 1.0], [0.0, -0.5]]), 1.0)  # +0.25 +- 0.75: kept
    0
    """
    best = int(values.mean(0).argmax())
    if best == 0:
        return 0
    gain = values[:, best] - values[:, 0]
    se = float(gain.std(ddof=1)) / math.sqrt(len(gain)) if len(gain) > 1 else math.inf
    return best if gain.mean() > margin * se else 0


def _deal_over(g: Game, deal_index: int) -> bool:
    """Whether deal ``deal_index`` of ``g`` is over (the game with it, or the next deal begun)."""
    return len(g.deal_scores) > deal_index or g.current_player < 0
