"""The search guided by a trained policy: its likelier actions weighed on common deals of the cards
it cannot see, each continued by the policy itself.

At each decision :class:`GuidedSearchAgent` takes the actions its policy gives at least
:data:`FLAT_PRIOR` (``floor``; at least its two most probable; ``floor=0``: every legal action)
and applies each in the same
*determinizations*: the cards hidden from the searching player dealt afresh for each, consistently
with what he knows (:func:`piquet_env.game.determinize`), ``iterations`` positions in all. A
position reached is valued as a **leaf**: the deal points scored since the decision plus the
critic's estimate of the points to come (an asymmetric critic reads the determinized game's full
state, seen from the player to act; the value is negated when that player is the opponent: the
rewards are zero-sum), mixed, as AlphaGo mixed its value network with rollouts, with the outcome of
one playout of the deal from there: ``(1 - mix) * critic + mix * playout``. The playout is the
policy's own, both seats playing its most probable action from their own observations; the
playouts of a batch of leaves advance in lockstep, one forward pass per step. ``mix=0`` trusts the
critic alone (no playouts, the fastest), ``mix=1`` the playouts alone. A leaf where the deal is
over is worth its final difference.

The policy's own choice is played unless another action beats it, over those determinizations, by
more than ``margin`` standard errors of their paired difference (:func:`overrule`): the luck of
the hidden cards cancels between actions tried on the same ones, and a difference within the noise
leaves the policy's choice. This is a rollout improvement of the policy (Tesauro and Galperin's):
each action is weighed by the policy's own play from there on, both seats acting from their own
observations of the determinized deal, so no player's choice is made knowing cards he cannot see.
The exchange is searched card by card like every other decision; a decision with one legal action
is not searched.

**Against a fixed opponent** (``opponent``, the spec option ``against=SPEC``) the search is an
exploiter's: the other seat of every playout is played by that agent, as it plays (a policy's
network in the same batched passes, greedy or sampled as its agent is; any other agent from its
own observation of the determinized deal, one game at a time), so each action is weighed by what
it wins against that opponent, and the policy is a learned best response to it (``piquet exploit
--search N``: a search in the manner of Timbers et al.'s ISMCTS-BR, 2022, whose leaves are the
exploiter's own playouts). The playouts alone value a leaf then (``mix`` 1 by default): the
exploiter's critic was trained on its own decisions, not the opponent's. By default the hidden
cards are dealt uniformly among those consistent with what the searcher knows; with
``belief="reach"`` (the spec option ``belief=reach``) the worlds are drawn in proportion to the
opponent's reach, how likely he was to play as he did in each (:mod:`piquet_agents.belief`), as a
best response weighs them.

Spec: ``mcts:N:policy=PATH`` with the ``batch``, ``mix``, ``margin``, ``belief``, ``floor`` and
``against`` options (see :mod:`piquet_agents.registry`). The docs' Results (the guided search)
has the measurements behind this form, and behind the removal of the others tried (a tree search
with the policy's priors, heuristic playouts, exchanges planned as whole discards): none gained on
its policy.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import torch

from piquet_agents.belief import BELIEFS, reach_weights, resample
from piquet_agents.checkpoint import load_policy, read_checkpoint
from piquet_agents.network import ActorCritic
from piquet_env.agent import Agent, Turn
from piquet_env.game import Game, determinize
from piquet_env.observation import encoder_for
from piquet_env.rules import Rules

__all__ = ["FLAT_PRIOR", "REACH_POOL", "UNIT", "GuidedSearchAgent", "overrule"]

FLAT_PRIOR = 0.01
"""The search weighs the actions of at least this prior probability (at least two)."""
UNIT = 30.0
"""Deal points per unit of a leaf's value. Values are only compared with each other, so the unit
changes no choice but by rounding: it is the one the search was measured in."""
REACH_POOL = 64
"""The fewest uniform determinizations a decision draws, under ``belief="reach"``, to resample
its worlds from by the opponent's reach (at least four times the worlds it needs)."""


class GuidedSearchAgent:
    """The policy's likelier actions weighed on common determinizations (see the module docstring).

    ``model`` and ``rules``: the network and the rules it was trained for; ``iterations``: leaves
    per decision; ``reward_scale``: reward per deal point in training (the critic's unit);
    ``batch``: leaves evaluated per forward pass; ``mix``: the playouts' weight in a leaf's value,
    in [0, 1]; ``margin``: how many standard errors another action needs to overrule the policy;
    ``seed``: randomness of the determinizations; ``opponent``: the agent that plays the other
    seat of the playouts; ``belief``: how the determinizations are weighed (:data:`BELIEFS`:
    ``uniform``, or ``reach``, by ``opponent``'s reach); ``floor``: the prior probability an
    action needs to be weighed (at least the two likeliest are; 0: every legal action).
    """

    def __init__(
        self,
        model: ActorCritic,
        rules: Rules,
        iterations: int = 200,
        *,
        reward_scale: float = 0.02,
        batch: int = 16,
        mix: float = 0.5,
        margin: float = 1.0,
        seed: int | None = None,
        name: str | None = None,
        opponent: Agent | None = None,
        belief: str = "uniform",
        floor: float = FLAT_PRIOR,
    ) -> None:
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a positive int, got {iterations!r}")
        finite = isinstance(reward_scale, (int, float)) and math.isfinite(reward_scale)
        if not (finite and reward_scale > 0):
            raise ValueError(f"reward_scale must be a finite number > 0, got {reward_scale!r}")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be a positive int, got {batch!r}")
        if not (isinstance(mix, (int, float)) and not isinstance(mix, bool) and 0 <= mix <= 1):
            raise ValueError(f"mix must be a number in [0, 1], got {mix!r}")
        if not (isinstance(margin, (int, float)) and not isinstance(margin, bool)) or not (
            math.isfinite(margin) and margin >= 0
        ):
            raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
        number = isinstance(floor, (int, float)) and not isinstance(floor, bool)
        if not (number and 0 <= floor <= 1):
            raise ValueError(f"floor must be a number in [0, 1], got {floor!r}")
        if belief not in BELIEFS:
            raise ValueError(f"belief must be one of {', '.join(BELIEFS)}, got {belief!r}")
        if belief == "reach" and opponent is None:
            raise ValueError("belief reach weighs worlds by an opponent's play: give the opponent")
        enc = encoder_for(rules)
        if (model.obs_size, model.n_actions) != (enc.size, enc.n_actions):
            raise ValueError(
                f"the network reads {model.obs_size} entries with {model.n_actions} actions; "
                f"rules {rules.name!r} encode {enc.size} with {enc.n_actions}"
            )
        self.model = model.eval()
        self.rules, self.enc = rules, enc
        self.iterations, self.reward_scale, self.batch = iterations, float(reward_scale), batch
        self.mix, self.margin, self.floor = float(mix), float(margin), float(floor)
        self.name = name or f"mcts:{iterations}:policy"
        self.seed = seed
        self._rng = random.Random(seed)
        self.opponent = opponent
        """The agent that plays the other seat of every playout (``None``: the policy itself)."""
        self.belief = belief
        """How the worlds are weighed: ``uniform``, or ``reach`` (by the opponent's reach:
        :mod:`piquet_agents.belief`)."""
        self._opponent_net: ActorCritic | None = None
        self._opponent_greedy = True
        self._gen = torch.Generator()
        if opponent is not None and hasattr(opponent, "model") and hasattr(opponent, "greedy"):
            self._opponent_net = opponent.model.eval()  # a policy agent: in the batched passes
            self._opponent_greedy = bool(opponent.greedy)
        self._gen.manual_seed(0 if seed is None else seed)

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
        """Reseed the determinizations, and the opponent (``None`` keeps the current streams)."""
        if seed is not None:
            self.seed = seed
            self._rng = random.Random(seed)
            self._gen.manual_seed(seed)
        if self.opponent is not None:
            self.opponent.reset(seed)

    # ------------------------------------------------------------------ search

    def act(self, turn: Turn) -> int:
        """Search from the turn's information set and return the chosen action."""
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
        return self._search(game, player, legal)

    def _search(self, game: Game, player: int, legal: list[int]) -> int:
        """The candidate actions weighed on the same determinizations, the policy's own choice
        kept unless another beats it by ``margin`` standard errors (see the module docstring)."""
        rng = self._rng
        deal_index = len(game.deal_scores)
        base = _diff(game, player, deal_index)
        # the searcher's observation is the same in every determinization (no hidden card is read)
        prior = self._prior(determinize(game, player, rng))
        order = sorted(legal, key=lambda a: -prior[a])
        cands = order[: max(2, sum(prior[a] >= self.floor for a in order))]
        worlds = max(2, self.iterations // len(cands))
        per_wave = max(1, self.batch // len(cands))
        values = np.empty((worlds, len(cands)))
        drawn = self._reach_worlds(game, player, worlds) if self.belief == "reach" else None
        for done in range(0, worlds, per_wave):
            wave = min(per_wave, worlds - done)
            games = []
            for j in range(wave):
                world = determinize(game, player, rng) if drawn is None else drawn[done + j]
                # a draw that once seeded heuristic playouts, kept so that a seeded search makes
                # the very choices it made when it was measured
                rng.getrandbits(32)
                for a in cands:
                    g = world.clone()
                    g.apply(a)
                    games.append(g)
            vals = self._values(games, player, deal_index, base)
            values[done : done + wave] = np.asarray(vals).reshape(wave, len(cands))
        return cands[overrule(values, self.margin)]

    def _reach_worlds(self, game: Game, player: int, k: int) -> list[Game]:
        """``k`` worlds drawn in proportion to the opponent's reach among
        ``max(REACH_POOL, 4 k)`` uniform determinizations (:mod:`piquet_agents.belief`)."""
        rng = self._rng
        pool = [determinize(game, player, rng) for _ in range(max(REACH_POOL, 4 * k))]
        weights = reach_weights(pool, 1 - player, self.opponent)
        return [pool[i] for i in resample(weights, k, rng)]

    def _values(self, games: list[Game], player: int, deal_index: int, base: int) -> list[float]:
        """Each game's value for ``player`` in units of :data:`UNIT` points: the points he has
        gained since the decision (``base``: his difference then), final if deal ``deal_index`` is
        over; else ``1 - mix`` times those plus the critic's estimate of those to come, plus
        ``mix`` times the points gained by the end of one policy playout."""
        out = [(_diff(g, player, deal_index) - base) / UNIT for g in games]
        live = [i for i, g in enumerate(games) if not _deal_over(g, deal_index)]
        if not live:
            return out
        leaves = [games[i] for i in live]
        for i, g, v in zip(live, leaves, self._critic(leaves).tolist()):
            mover_value = v / self.reward_scale / UNIT
            out[i] += mover_value if g.current_player == player else -mover_value
        if self.mix:
            played = [g.clone() for g in leaves]
            self._policy_playouts(played, player)
            for i, g in zip(live, played):
                outcome = (_diff(g, player, deal_index) - base) / UNIT
                out[i] = (1 - self.mix) * out[i] + self.mix * outcome
        return out

    # ------------------------------------------------------------------ network

    @torch.no_grad()
    def _prior(self, game: Game) -> np.ndarray:
        """The policy's probabilities over the actions, for the player to act in ``game`` (the
        actor alone)."""
        enc, p = self.enc, game.current_player
        obs = torch.from_numpy(enc.encode(game, p)[None])
        mask = torch.from_numpy(enc.action_mask(game, p)[None])
        return torch.softmax(self.model.logits(obs, mask), -1).numpy()[0]

    @torch.no_grad()
    def _critic(self, games: list[Game]) -> np.ndarray:
        """The critic's estimate ``(k,)`` of the rewards to come for the player to act in each
        game: from his observation, or from the full state seen from him for an asymmetric critic
        (the critic alone)."""
        enc = self.enc
        asymmetric = self.model.critic_trunk is not None
        fill = enc.state_into if asymmetric else enc.encode_into
        read = np.empty((len(games), enc.state_size if asymmetric else enc.size), np.float32)
        for i, g in enumerate(games):
            fill(g, g.current_player, read[i])
        return self.model.values(torch.from_numpy(read)).numpy()

    @torch.no_grad()
    def _policy_playouts(self, games: list[Game], player: int = 0) -> None:
        """Play each game (a determinized copy) to the end of its deal, every seat by the policy's
        most probable action from its own observation, except ``player``'s opponent's when the
        search has an :attr:`opponent`: one forward pass per network and step for all the games
        still playing; forced actions are applied without it."""
        enc = self.enc
        ends = [len(g.deal_scores) for g in games]
        live = list(range(len(games)))
        obs = np.empty((len(games), enc.size), np.float32)
        mask = np.empty((len(games), enc.n_actions), np.int8)
        while live:
            asking: dict[bool, list[int]] = {False: [], True: []}  # by whether the opponent acts
            still = []
            for i in live:
                g = games[i]
                if _deal_over(g, ends[i]):
                    continue
                still.append(i)
                legal = g.legal_actions()
                if len(legal) == 1:
                    g.apply(legal[0])
                    continue
                theirs = self.opponent is not None and g.current_player != player
                if theirs and self._opponent_net is None:
                    g.apply(int(self.opponent.act(Turn(g, g.current_player))))  # type: ignore[union-attr]
                    continue
                asking[theirs].append(i)
            for theirs, rows in asking.items():
                if not rows:
                    continue
                for k, i in enumerate(rows):
                    g = games[i]
                    enc.encode_into(g, g.current_player, obs[k])
                    enc.action_mask_into(g, g.current_player, mask[k])
                net = self._opponent_net if theirs else self.model
                greedy = self._opponent_greedy if theirs else True
                actions, _, _ = net.act(  # type: ignore[union-attr]
                    torch.from_numpy(obs[: len(rows)]),
                    torch.from_numpy(mask[: len(rows)]),
                    greedy=greedy,
                    with_value=False,
                    generator=None if greedy else self._gen,
                )
                for i, a in zip(rows, actions.tolist()):
                    games[i].apply(a)
            live = still

    def __repr__(self) -> str:
        against = f", opponent={self.opponent.name!r}" if self.opponent is not None else ""
        against += f", belief={self.belief!r}" if self.belief != "uniform" else ""
        return (
            f"GuidedSearchAgent(iterations={self.iterations}, batch={self.batch}, "
            f"mix={self.mix}, margin={self.margin}, seed={self.seed!r}{against})"
        )


def overrule(values: np.ndarray, margin: float) -> int:
    """The search's choice among candidate actions, column 0 the policy's, from their values in
    the same determinizations (rows): the column of the best mean if its gain over column 0, world
    by world, has a mean above ``margin`` standard errors (a gain that never varies is certain);
    else 0.

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


def _diff(g: Game, player: int, deal_index: int) -> int:
    """The deal's point difference for ``player`` (final once the deal is over)."""
    if len(g.deal_scores) > deal_index:
        ds = g.deal_scores[deal_index]
        return ds[player].total - ds[1 - player].total
    return sum(g.scores[player]) - sum(g.scores[1 - player])


def _deal_over(g: Game, deal_index: int) -> bool:
    """Whether deal ``deal_index`` of ``g`` is over (the game with it, or the next deal begun)."""
    return len(g.deal_scores) > deal_index or g.current_player < 0
