""":class:`BatchGame`: N games of Piquet stepped together, identical to
:class:`~piquet_env.game.Game` plus :mod:`piquet_env.observation` and the env's rewards.

>>> import numpy as np
>>> from piquet_env.vector import BatchGame, sample_legal
>>> batch = BatchGame("standard", n=8, seed=0)
>>> out = batch.reset(seed=0)
>>> out.obs.shape, out.mask.shape
((8, 433), (8, 35))
>>> rng = np.random.default_rng(0)
>>> for _ in range(200):
...     out = batch.step(sample_legal(out.mask, rng))
>>> bool(out.mask.any(axis=1).all())
True

Seeds: game ``i`` of a batch reset with seed ``s`` plays the game of seed
``game_seed(s, i, e)`` in its ``e``-th episode (see :mod:`piquet_env.vector.deal`); reset with
one seed per slot, slot ``i`` plays ``game_seed(seed[i], 0, e)``. A seed is an int in
``0..2**64 - 1`` (counts, seeds and slots follow :mod:`piquet_env.vector.checks`);
:meth:`BatchGame.to_game` rebuilds any game of the batch as a :class:`~piquet_env.game.Game`.

Autoreset (on by default): a game that ends in a step is dealt afresh in that same step, the
slot's next episode (Gymnasium's "same-step" mode). The step reports it in ``ended`` and
``results``, pays its final rewards, and gives both players' final observations in
``final_obs``; ``obs``, ``mask`` and ``seat`` are already those of the new game. With
``autoreset=False`` a finished game stays over: its mask is empty, its action must be
``NO_ACTION`` (-1) and :meth:`BatchGame.reset_games` restarts it.

An action of ``NO_ACTION`` (-1) leaves that game as it is for the step (to step a subset).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from piquet_env.actions import action_name
from piquet_env.game import DealScore, Game, check_deal
from piquet_env.game.scoring import breakdown
from piquet_env.rewards import BatchRewards
from piquet_env.rules import Rules
from piquet_env.settings import EnvSettings, env_settings
from piquet_env.vector import deal as vdeal
from piquet_env.vector.checks import (
    count_arg,
    flag_arg,
    fresh_seed,
    players_arg,
    reset_seed_arg,
    seed_arg,
    slot_arg,
    slots_arg,
)
from piquet_env.vector.encoder import BatchEncoder
from piquet_env.vector.state import DECLARE, EXCHANGE, PLAY, BatchState
from piquet_env.vector.steps import Events, Transitions

NO_ACTION = -1
"""Action that leaves a game untouched for one step."""
MAX_DECISIONS_PER_DEAL = 45
"""Room for one deal's decisions in the action history: at most 5 + 8 in the exchange (elder,
then ``classic`` younger under ``normand``), 6 declarations and 24 cards, i.e. 43 (fewer with a
smaller pack)."""


class BatchActionError(ValueError):
    """Actions that cannot be applied to the batch (wrong shape or type, illegal in some games,
    a finished game without autoreset). The batch is left untouched. ``games`` and ``actions``
    name the offending games and their actions."""

    def __init__(self, message: str, games: Sequence[int] = (), actions: Sequence[int] = ()):
        super().__init__(message)
        self.games = list(games)
        self.actions = list(actions)


@dataclass
class StepResult:
    """What :meth:`BatchGame.reset` and :meth:`BatchGame.step` return, one row per game.

    - ``seat`` ``(N,)`` int8: the player to act (-1 only for a finished game without autoreset);
    - ``obs`` ``(N, size)`` float32: that player's observation (player 0's when over), exactly
      ``encoder_for(rules).encode(game, seat)``; ``mask`` ``(N, n_actions)`` bool: his legal
      actions. Both are the batch's own buffers, overwritten by the next step: copy to keep;
    - ``rewards`` ``(N, 2)`` float32: what each player is paid for this step (the batch's reward
      mode, scale, settlement weight and density: :class:`piquet_env.rewards.BatchRewards`);
    - ``points`` ``(N, 2)`` int32: each player's points so far in the deal under way (the
      integers the observation's ``deal_total`` field shows scaled);
    - ``ended`` ``(N,)`` bool: the episode ended in this step; ``ended_games`` their indices,
      ``results`` ``(k, 2)`` their settled results, ``final_obs`` ``(k, 2, size)`` both players'
      final observations, ``ended_seeds`` their game seeds;
    - ``deal_games``: games whose deal ended in this step, ``deal_numbers`` which deal (0-based)
      and ``deal_scores`` ``(k, 2, 10)`` both players' score fields (see
      :mod:`piquet_env.game.scoring`; :func:`deal_score` turns one into a ``DealScore``).
    """

    seat: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    rewards: np.ndarray
    points: np.ndarray
    ended: np.ndarray
    ended_games: np.ndarray
    results: np.ndarray
    final_obs: np.ndarray
    ended_seeds: np.ndarray
    deal_games: np.ndarray
    deal_numbers: np.ndarray
    deal_scores: np.ndarray


class BatchGame:
    """``n`` games of Piquet under one rules object, as arrays (see the module docstring).

    The family's settings (:mod:`piquet_env.settings`): ``settings=`` (an
    :class:`~piquet_env.settings.EnvSettings`) or ``rules`` (preset name or
    :class:`~piquet_env.rules.Rules`), ``variants``, ``mode`` (``"partie"`` or ``"deal"``;
    ``episode=`` is its alias), ``reward`` (:data:`~piquet_env.rewards.REWARDS`), ``reward_scale``,
    ``settle_weight`` and ``dense`` (pay ``"deal_points"`` after every step, as a trainer credits
    them, rather than at each deal's end; see :mod:`piquet_env.rewards`); then the batch's own:
    ``n`` (the number of games), ``autoreset``,
    ``record`` (keep each episode's actions, for :meth:`to_game`) and ``seed`` (for the first
    :meth:`reset`; ``None`` draws one). ``observe=False`` skips the observations in
    :meth:`step` (call :meth:`observe` when needed).
    """

    def __init__(
        self,
        rules: str | Rules | None = None,
        *,
        n: int = 1024,
        variants: str | Sequence[str] | None = None,
        mode: str | None = None,
        reward: str | None = None,
        reward_scale: float | None = None,
        settle_weight: float | None = None,
        dense: bool | None = None,
        settings: EnvSettings | None = None,
        autoreset: bool = True,
        record: bool = True,
        seed: int | None = None,
        observe: bool = True,
        episode: str | None = None,
    ) -> None:
        self.settings = env_settings(
            settings,
            rules=rules,
            variants=variants,
            mode=mode,
            episode=episode,
            reward=reward,
            reward_scale=reward_scale,
            dense=dense,
            settle_weight=settle_weight,
        )
        self.rules = self.settings.rules
        mode, reward = self.settings.mode, self.settings.reward
        self.n = n = count_arg("n", n)
        autoreset, record = flag_arg("autoreset", autoreset), flag_arg("record", record)
        observe, seed = flag_arg("observe", observe), seed_arg("seed", seed)
        self.mode, self.reward, self.reward_scale = mode, reward, self.settings.reward_scale
        self.settle_weight, self.dense = self.settings.settle_weight, self.settings.dense
        self._rewards = BatchRewards(n, reward, settle_weight=self.settle_weight, dense=self.dense)
        self.autoreset, self.record, self.observe_steps = autoreset, record, observe
        self.encoder = BatchEncoder(self.rules, mode)
        self.size, self.n_actions = self.encoder.size, self.encoder.n_actions
        history = MAX_DECISIONS_PER_DEAL * vdeal.max_deals(self.rules, mode) if record else 0
        self.state = BatchState(self.rules, n, history)
        self.first_elder = np.zeros(n, dtype=np.int8)
        self.batch_seed: int | None = 0 if seed is None else seed
        self._seeded = seed is not None
        self._bases = np.zeros(n, dtype=np.uint64)  # slot i plays game_seed(_bases[i], _keys[i], e)
        self._keys = np.arange(n, dtype=np.uint64)
        self._given: dict[int, list[np.ndarray]] = {}
        self._rules_steps = Transitions(self.rules, mode, self._deal_packs)
        self._obs = np.zeros((n, self.size), dtype=np.float32)
        self._mask = np.zeros((n, self.n_actions), dtype=bool)
        self._bits = np.zeros(n, dtype=np.uint64)
        self._all = np.arange(n)

    # ------------------------------------------------------------------ reset

    def reset(self, seed: int | Sequence[int | None] | None = None) -> StepResult:
        """Deal a new episode in every slot: slot ``i`` plays the game of
        ``game_seed(seed, i, 0)``. Without ``seed``, the constructor's seed on the first call,
        then a fresh one. With one seed per slot (a sequence of ``n``; ``None`` draws one), slot
        ``i`` plays ``game_seed(seed[i], 0, e)`` in its ``e``-th episode, the games of slot 0 of
        a batch reset with ``seed[i]`` (:attr:`batch_seed` is then ``None``)."""
        seed = reset_seed_arg("seed", seed, self.n)
        if seed is None:
            seed = self.batch_seed if self._seeded and self.batch_seed is not None else fresh_seed()
            self._seeded = False
        if isinstance(seed, list):
            self.batch_seed = None
            self._bases[:] = [fresh_seed() if x is None else x for x in seed]
            self._keys[:] = 0
        else:
            self.batch_seed = seed
            self._bases[:] = seed
            self._keys[:] = self._all
        self.state.episode[:] = -1
        self._given.clear()
        ev = Events()
        self._start_episodes(self._all, ev)
        return self._finish(ev, np.zeros((self.n, 2), dtype=np.float32))

    def reset_games(self, games: Sequence[int] | np.ndarray) -> StepResult:
        """Start the next episode in the given slots only (the others are untouched)."""
        g = np.sort(slots_arg("games", games, self.n))
        for i in g.tolist():
            self._given.pop(i, None)
        ev = Events()
        self._start_episodes(g, ev)
        return self._finish(ev, np.zeros((self.n, 2), dtype=np.float32))

    def load(
        self,
        games: Sequence[int] | np.ndarray,
        deals: Sequence,
        first_elder: int | Sequence[int] | None = None,
    ) -> StepResult:
        """Start a new episode in slots ``games`` from given cards (for duplicate evaluation).

        ``deals[j]`` is for slot ``games[j]``: one deal ``(elder hand, younger hand, talon top
        first)`` (card names or ids, as :func:`piquet_env.game.check_deal`) or a list of
        deals, played in order (later deals come from the slot's seed). ``first_elder`` (one
        value or one per slot) gives the elder of the first deal, else the seed's cut does.
        Bad cards raise ``ValueError`` and leave the batch untouched."""
        g = slots_arg("games", games, self.n)
        if not isinstance(deals, (Sequence, np.ndarray)) or isinstance(deals, (str, bytes)):
            raise ValueError(
                "deals must be a sequence of one deal (or list of deals) per game, got "
                f"{type(deals).__name__}"
            )
        if len(deals) != g.size:
            raise ValueError(f"{len(deals)} deal lists for {g.size} games")
        parsed = []
        for spec in deals:
            many = (
                isinstance(spec, (list, tuple))
                and len(spec) > 0
                and not (len(spec) == 3 and _is_hand(spec[0]))
            )
            parsed.append(
                [
                    np.concatenate(check_deal(d, self.rules)).astype(np.int8)
                    for d in (spec if many else [spec])
                ]
            )
        elders = None if first_elder is None else players_arg("first_elder", first_elder, g.size)
        for i, packs in zip(g.tolist(), parsed):
            self._given[i] = packs
        ev = Events()
        self._start_episodes(g, ev, elders)
        return self._finish(ev, np.zeros((self.n, 2), dtype=np.float32))

    def _start_episodes(self, g: np.ndarray, ev: Events, elders: np.ndarray | None = None) -> None:
        s = self.state
        s.episode[g] += 1
        s.seed[g] = vdeal.game_seed(self._bases[g], self._keys[g], s.episode[g])
        e = vdeal.first_elder(s.seed[g]) if elders is None else elders.astype(np.int8)
        self.first_elder[g] = e
        s.elder[g] = e
        s.deal_number[g] = 0
        s.planned[g] = 1 if self.mode == "deal" else self.rules.deals
        for name in ("totals", "result", "n_actions_taken"):
            getattr(s, name)[g] = 0
        s.over[g] = False
        self._rewards.start(g)
        self._rules_steps.start_deal(s, g, ev)

    def _deal_packs(self, g: np.ndarray) -> np.ndarray:
        s = self.state
        packs = vdeal.deal_cards(s.seed[g], s.deal_number[g], self.rules.pack)
        if self._given:
            for j, i in enumerate(g.tolist()):
                given = self._given.get(i)
                if given is not None and s.deal_number[i] < len(given):
                    packs[j] = given[s.deal_number[i]]
        return packs

    # ------------------------------------------------------------------ step

    def step(self, actions: np.ndarray | Sequence[int]) -> StepResult:
        """Apply one action per game for its player to act (``NO_ACTION`` to leave a game as
        it is). Raises :class:`BatchActionError` (a ``ValueError``) naming the games and actions
        that are wrong, the batch untouched."""
        a = self._check(actions)
        s, rs = self.state, self._rules_steps
        ev = Events()
        acting = a >= 0
        if self.record:
            ga = np.flatnonzero(acting)
            s.history.reshape(-1)[ga * s.history.shape[1] + s.n_actions_taken[ga]] = a[ga]
            s.n_actions_taken[ga] += 1
        phase = np.where(acting, s.phase, -1)
        for code, apply in ((EXCHANGE, rs.exchange), (DECLARE, rs.decide), (PLAY, rs.play)):
            g = np.flatnonzero(phase == code)
            if g.size:
                apply(s, g, a[g], ev)
        return self._finish(ev, None)

    def _check(self, actions: np.ndarray | Sequence[int]) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.n,):
            raise BatchActionError(f"actions must have shape ({self.n},), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise BatchActionError(f"actions must be integers, got dtype {a.dtype}")
        a = a.astype(np.int64)
        bad_range = (a < NO_ACTION) | (a >= self.n_actions)
        a_ok = np.where(bad_range, 0, a)
        over = self.state.over
        illegal = bad_range | ((a >= 0) & ~self._mask[self._all, a_ok])
        if illegal.any():
            g = np.flatnonzero(illegal)
            shown = []
            for i in g[:5].tolist():
                if over[i]:
                    shown.append(
                        f"game {i}: action {a[i]} but the game is over (autoreset is "
                        "off: use NO_ACTION and reset_games)"
                    )
                else:
                    legal = np.flatnonzero(self._mask[i]).tolist()
                    names = ", ".join(f"{x}={action_name(x, self.rules)}" for x in legal)
                    shown.append(
                        f"game {i}: illegal action {a[i]} for player "
                        f"{self.state.current[i]}; legal: {names}"
                    )
            more = f" (and {g.size - 5} more)" if g.size > 5 else ""
            raise BatchActionError(
                f"{g.size} illegal action(s): " + "; ".join(shown) + more, g.tolist(), a[g].tolist()
            )
        if not self.autoreset and over.all():
            raise BatchActionError(
                "every game of the batch is over and autoreset is off: "
                "call reset() or reset_games()",
                self._all.tolist(),
                [],
            )
        return a

    def _finish(self, ev: Events, rewards: np.ndarray | None) -> StepResult:
        """Forced declarations, rewards, autoreset, then observations and masks."""
        s, rs = self.state, self._rules_steps
        rs.auto_declarations(s, np.flatnonzero(s.phase == DECLARE), ev)

        def cat(xs: list[np.ndarray], dt: type) -> np.ndarray:
            return np.concatenate(xs) if xs else np.zeros(0, dt)

        deal_games = cat(ev.deal_games, np.int64)
        deal_scores = (
            np.concatenate(ev.deal_scores) if ev.deal_scores else np.zeros((0, 2, 10), np.int16)
        )
        ended = np.zeros(self.n, dtype=bool)
        eg = cat(ev.ended, np.int64)
        ended[eg] = True
        results = s.result[eg].copy()
        if rewards is None:
            due = self._rewards.pay(
                s.deal_points,
                deal_games=deal_games,
                deal_totals=deal_scores.sum(axis=2, dtype=np.int64),
                ended_games=eg,
                results=results,
            )
            rewards = (due * self.reward_scale).astype(np.float32)
        seeds = s.seed[eg].copy()
        final = np.zeros((eg.size, 2, self.size), dtype=np.float32)
        if eg.size:
            for p in (0, 1):
                self.encoder.observe(s, np.full(eg.size, p, np.int8), final[:, p], eg)
            if self.autoreset:
                for i in eg.tolist():
                    self._given.pop(i, None)
                self._start_episodes(eg, ev)
                rs.auto_declarations(s, eg, ev)
        # After the forced decisions, whoever is declaring has both choices.
        bits = self.encoder.legal_bits(s, s.phase == DECLARE, self._exchange_min())
        self.encoder.mask_from_bits(bits, self._mask)
        if self.observe_steps:
            self.observe()
        return StepResult(
            seat=s.current.copy(),
            obs=self._obs,
            mask=self._mask,
            rewards=rewards,
            points=s.deal_points.astype(np.int32),
            ended=ended,
            ended_games=eg,
            results=results,
            final_obs=final,
            ended_seeds=seeds,
            deal_games=deal_games,
            deal_numbers=cat(ev.deal_numbers, np.int16),
            deal_scores=deal_scores,
        )

    def _exchange_min(self) -> np.ndarray:
        s = self.state
        out = np.zeros(self.n, dtype=np.int64)
        g = np.flatnonzero(s.phase == EXCHANGE)
        if g.size:
            out[g] = self._rules_steps.exchange_min(s, g, s.current[g].astype(np.int64))
        return out

    # ------------------------------------------------------------------ views

    def observe(self, out: np.ndarray | None = None) -> np.ndarray:
        """The observation of the player to act in every game (player 0's when a game is
        over), written into ``out`` (default: the batch's own buffer)."""
        seat = np.where(self.state.current >= 0, self.state.current, 0)
        return self.encoder.observe(self.state, seat, self._obs if out is None else out)

    def observation(self, seat: int | np.ndarray) -> np.ndarray:
        """A new ``(N, size)`` array: the observation of player ``seat`` (0, 1, or one per
        game) in every game."""
        out = np.empty((self.n, self.size), dtype=np.float32)
        return self.encoder.observe(self.state, self._seats(seat), out)

    def _seats(self, seat: int | np.ndarray) -> np.ndarray:
        """``seat`` as one player (0 or 1) per game, or a ``ValueError`` naming it."""
        arr = np.asarray(seat)
        shaped = arr.dtype != bool and arr.ndim <= 1 and arr.size in (1, self.n)
        if not (shaped and np.isin(arr, (0, 1)).all()):
            raise ValueError(
                f"seat must be 0 or 1, or one of them for each of the {self.n} games, got {seat!r}"
            )
        return np.broadcast_to(arr.astype(np.int8), (self.n,))

    def action_mask(self) -> np.ndarray:
        """The legal-action mask ``(N, n_actions)`` of the player to act (the batch's buffer)."""
        return self._mask

    def full_state(self, out: np.ndarray | None = None, seat: int | np.ndarray = 0) -> np.ndarray:
        """The full-information state ``(N, state_size)`` of every game seen from player
        ``seat`` (0, 1, or one per game), identical to ``encoder_for(rules).state(game, seat)``
        (for asymmetric critics), written into ``out`` (default: a new array)."""
        seats = self._seats(seat)
        if out is None:
            out = np.empty((self.n, self.encoder.state_size), dtype=np.float32)
        self.encoder.state(self.state, out)
        flip = seats == 1
        if flip.any():
            out[flip] = out[flip][:, self.encoder.seat_permutation]
        return out

    @property
    def current_player(self) -> np.ndarray:
        """The player to act in every game (-1 when over)."""
        return self.state.current

    @property
    def phase(self) -> np.ndarray:
        """Phase code of every game (0 exchange, 1 declarations, 2 play, 3 over)."""
        return self.state.phase

    @property
    def episode(self) -> str:
        """The game mode's former name (an alias of :attr:`mode`)."""
        return self.mode

    @property
    def nbytes(self) -> int:
        """Bytes held by the batch: its state arrays and its observation and mask buffers."""
        return self.state.nbytes + self._obs.nbytes + self._mask.nbytes + self.first_elder.nbytes

    # ------------------------------------------------------------------ one game out

    def game_seed(self, i: int) -> int:
        """The game seed of the episode now in slot ``i`` (see :mod:`piquet_env.vector.deal`)."""
        return int(self.state.seed[slot_arg("i", i, self.n)])

    def to_game(self, i: int, record: bool = True) -> Game:
        """The game now in slot ``i`` as a :class:`~piquet_env.game.Game`: built from its seed
        (and loaded deals) and replayed through its actions, so its event log, rendering and
        every query are today's. Needs ``record=True`` (the default)."""
        if not self.record:
            raise ValueError("to_game needs a batch built with record=True")
        i = slot_arg("i", i, self.n)
        s = self.state
        given = [vdeal.split_deal(self.rules, p) for p in self._given.get(int(i), [])]
        g = vdeal.make_game(
            self.rules,
            self.game_seed(i),
            self.mode,
            given=given,
            elder=int(self.first_elder[i]),
            record=record,
        )
        for a in s.history[i, : s.n_actions_taken[i]].tolist():
            g.apply(a)
        return g

    def events(self, i: int) -> list[dict]:
        """The event log of the game now in slot ``i`` (as ``Game.events``)."""
        return self.to_game(i).events


def deal_score(fields: np.ndarray) -> DealScore:
    """The :class:`~piquet_env.game.DealScore` of one player's score fields (a row of
    ``StepResult.deal_scores``)."""
    return breakdown([int(x) for x in fields])


def _is_hand(part: object) -> bool:
    """Whether ``part`` is one hand (a string of cards or a sequence of card ids)."""
    if isinstance(part, str):
        return True
    return isinstance(part, (list, tuple, np.ndarray)) and all(
        isinstance(c, (int, np.integer)) for c in part
    )


__all__ = ["NO_ACTION", "BatchActionError", "BatchGame", "StepResult", "deal_score"]
