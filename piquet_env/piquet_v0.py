"""
# Piquet

A PettingZoo AEC environment for Piquet, the two-player French trick-taking card game (rules:
``RULES.md``, installed with the package: ``piquet_env.rules_document()`` returns its text; engine:
:mod:`piquet_env.game`). :mod:`piquet_env.piquet_v1` is the same environment with infos that array
libraries can hold (see *Version history*); new code should use it.

| Import             | `from piquet_env import piquet_v0` (or `from piquet_env import env`)    |
|--------------------|------------------------------------------------------------------------|
| Actions            | Discrete                                                               |
| Parallel API       | No                                                                     |
| Agents             | `agents = ['player_0', 'player_1']`                                    |
| Action Values      | Discrete(35), Discrete(36) under `normand`                              |
| Observation Shape  | (433,), (442,) under `normand`                                         |
| Observation Values | [0, 1] for the first 399 (408) entries, scaled counts after            |

`env(**options)` is `raw_env(**options)` wrapped in PettingZoo's TerminateIllegalWrapper (an
illegal action ends the game: -1 for the offender, 0 for the other), AssertOutOfBoundsWrapper and
OrderEnforcingWrapper, as PettingZoo's classic environments are.
Importing `piquet_env` registers it with PettingZoo's registry (PettingZoo 1.27 and later):
`pettingzoo.make("aec", "piquet-v0", **options)` then builds `env(**options)`.

## Options

- `rules`: `"standard"` (default) or `"classic"`, a `+`-joined preset such as `"classic+normand"`,
  or a `Rules` object; `variants`: any of `"orbis"`, `"saison"`, `"normand"`.
- `mode`: `"partie"` (default: 6 deals, 12 under `saison`, then the settlement) or `"deal"`
  (a single deal; its result is the deal point difference). `episode`, its former name, is
  accepted as an alias.
- `reward`: `"result"` (default): nothing until the end, then each player's settled result
  (zero-sum). `"deal_points"`: at the end of each deal, each player gets his deal score minus the
  opponent's; at the end of the episode a settlement adjustment brings each player's sum to his
  settled result. Under both modes an episode's rewards sum, per player, to `reward_scale` times
  `Game.result` (RULES.md section 8; in `mode="deal"` the deal point difference).
  `"win"`: nothing until the end, then +1 for a won episode, -1 for a lost one, 0 for a tie
  (times `reward_scale`), as benchmark code expects (:mod:`piquet_env.rewards` defines the modes).
- `reward_scale`: a positive factor applied to every reward (default 1.0; e.g. 0.01).
- `dense`: under `"deal_points"`, pay each player's deal-point difference after every move, as it
  accrues, rather than at each deal's end (default `False`; the sums are the same).
- `settle_weight`: under `"deal_points"`, the weight (at least 0, default 1.0) of the
  settlement's remainder paid at the episode's end; below 1 an episode no longer sums to its
  result (a trainer's shaping).
- `settings`: all of the above at once, as one `piquet_env.settings.EnvSettings` (the same object
  `BatchGame`, `PiquetVectorEnv`, `SelfPlayEnv` and the Gymnasium adapter take); options given
  beside it replace its values. Every env of the family validates its options there, so a value
  is accepted or refused the same way by all of them.
- `render_mode`: `None`, `"human"` (prints), `"ansi"` (returns the text) or `"rgb_array"` (returns
  the table as a uint8 HxWx3 image; needs matplotlib: `pip install -e ".[render]"`);
  `render_view`: `"player"` (default: player_0's view, whoever acts, so that consecutive frames
  never switch between the two hands), `"player_0"`, `"player_1"`, or `"spectator"` (both hands
  and the talon). Hands are shown grouped by suit, high to low, as `piquet play` shows them.
- `observation_format`: `"dict"` (default: `{"observation", "action_mask"}`) or `"vector"` (the
  float32 observation alone, a Box, so that SuperSuit's observation wrappers apply; the action
  mask is then in `infos[agent]["action_mask"]`).
- `info_names`: whether infos carry the human-readable fields below (default: `True` in v0,
  `False` in v1). `readable_info(agent)` returns them whatever this option says.

Bad option values raise `ValueError` naming the option.

## Agents and seats

Agents `player_0` and `player_1` are the engine's players 0 and 1. Which one is elder in the first
deal follows the cut for deal (random from the seed); the elder alternates every deal. The
observation's `elder` entry says which seat the observer holds.

## Reset

`reset(seed=s)` is deterministic: the same seed gives the same cut and deals. Without a seed the
environment's own generator (seeded by the last seeded reset) draws a fresh one. `options` may hold
`{"deal": {"elder": "AS KS ...", "younger": "...", "talon": "...", "first_elder": "player_1"}}`
to start from given cards (12, 12 and the talon top first; card names or ids; `first_elder`
optional: `0`, `1` or an agent name, else the cut decides), or `{"deals": [ ... ]}` for several
deals in order. Other keys are ignored (PettingZoo's `api_test` passes one); options that are not
a dict raise `ValueError`. Calling `step`,
`observe`, `last`, `state` or `render` before the first `reset` raises `RuntimeError`.

## Action space

`Discrete(n_cards + 3)`: ids `0 .. n_cards-1` are cards (`suit * 8 + rank`, suits C D H S, ranks
7 8 9 T J Q K A; the joker is 32), meaning *discard this card* in the exchange and *play this card*
in the tricks; then `DONE` (finish exchanging), `DECLARE` and `PASS` (decide the current
declaration category). See :mod:`piquet_env.actions`.

## Observation space

A dict: `observation`, a float32 `Box(0, high, (size,))`, and `action_mask`, an int8
`Box(0, 1, (n_actions,))` marking exactly the engine's legal actions for the agent to act (all zeros
for the other agent). The observation holds everything the observing player knows and nothing he
does not. Index ranges for the 32-card pack (under `normand` every card plane is 33 wide and the
later ranges shift; `piquet_env.observation.encoder_for(rules).fields` lists them for any rules):

- 0-31 `hand`: own hand.
- 32-63 `discards`: own discards (this deal).
- 64-95 `talon_seen`: talon cards the player looked at (elder's untaken part), wherever they are
  now.
- 96-127 `opp_known`: cards known to be in the opponent's hand now (declared or scored by him,
  his carte blanche before his exchange, or taken by him from talon cards the player saw).
- 128-159 `opp_shown`: every card the opponent has shown this deal (carte blanche, declared and
  scored combinations), played since or not.
- 160-191 `own_shown`: every card the player has shown to the opponent this deal.
- 192-223 `own_played`: cards the player has played to tricks this deal.
- 224-255 `opp_played`: cards the opponent has played to tricks this deal.
- 256-287 `trick`: the card led to the current trick (empty when no card is led).
- 288-291 `own_voids`: suits (C D H S) the player showed void in.
- 292-295 `opp_voids`: suits (C D H S) the opponent showed void in.
- 296-296 `elder`: 1 if the player is elder hand this deal, 0 if younger.
- 297-300 `phase`: phase one-hot: exchange, declarations, play, over.
- 301-303 `category`: declarations: category being decided, one-hot (point, sequence, set).
- 304-304 `to_act`: 1 if the player is the one to act.
- 305-305 `leader`: play: 1 if the player leads (or led) the current trick.
- 306-307 `pique_possible`: pique still possible for (me, opp): elder only, open until younger
  scores, elder reaches 30 in play, or a repique.
- 308-309 `repique_possible`: repique not yet ruled out for (me, opp) by the public scores and
  decisions (0 once play begins).
- 310-311 `capot_possible`: capot still possible for (me, opp): the other has won no trick this
  deal and it is not over.
- 312-312 `last_deal`: 1 in the last deal of the partie (or of a single-deal game).
- 313-326 `decl_point_me`: my point declaration: decided, declared, length one-hot (1..8), suit
  one-hot (C D H S). Decided and not declared means passed.
- 327-340 `decl_point_opp`: the opponent's, the same way.
- 341-360 `decl_sequence_me`: my sequence declaration: decided, declared, length one-hot (3..8),
  top card rank one-hot (7..A), suit one-hot (C D H S).
- 361-380 `decl_sequence_opp`: the opponent's, the same way.
- 381-389 `decl_set_me`: my set declaration: decided, declared, trio/quatorze, rank one-hot
  (10 J Q K A).
- 390-398 `decl_set_opp`: the opponent's, the same way.
- 399-400 `decl_point_value`: pip value of the point declared by (me, opp), 0 if none (/100).
- 401-402 `tricks_won`: tricks won this deal by (me, opp) (/12).
- 403-412 `deal_points_me`: my points this deal by source: carte blanche, point, sequence, set,
  leads, tricks, repique, pique, capot, cards (/100).
- 413-422 `deal_points_opp`: the opponent's points this deal, same sources (/100).
- 423-424 `deal_total`: points this deal so far of (me, opp) (/100).
- 425-426 `partie_totals`: partie totals of (me, opp) before this deal (/100).
- 427-427 `deal_number`: deals played before this one (/ deals in a partie).
- 428-428 `deals_left`: deals left including this one (/ deals in a partie).
- 429-430 `exchanged`: cards exchanged this deal by (elder, younger) (/5).
- 431-431 `discarding`: cards discarded so far in the exchange under way (/5).
- 432-432 `talon_left`: cards left in the talon (/ talon size).

`state()` is the full-information vector for centralized critics (float32, 1060 values; 1084 under
`normand`): player 0's observation, player 1's observation, then both hands, both discards, the
talon, each talon card's position (1 = top, divided by the talon size) and the player to act.

## Rewards

Zero-sum. See `reward` above: the settled partie result at the end, or per-deal point differences
plus a final settlement adjustment; both sum to the same total.

## Infos

In v1 `infos[agent]` is `{"action_mask": mask}` (the int8 mask of the observation; all zeros for
the agent not to act), the same keys and shapes at every step, as array-based libraries (Tianshou,
TorchRL, AgileRL) need. In v0, and in v1 with `info_names=True`, `infos[agent]` holds `phase`
(`"exchange"`, `"declarations"`, `"play"`, `"over"`), `to_act` (whether it is this agent's turn),
`legal_actions` (the names of the agent's legal actions, e.g. `"discard QH"`, `"declare point"`,
`"play TS"`; empty when not his turn) and, from the end of a deal until that agent next acts,
`deal_score`: `{"deal": n, "player_0": {...}, "player_1": {...}}` with both players' score
breakdowns (`DealScore.to_dict()`); in v1, and in v0 with `observation_format="vector"`, also
`action_mask`.

## Version history

- v1: infos hold only `action_mask` (fixed shape) unless `info_names=True`; the names, phase and
  deal breakdown are available from `readable_info(agent)`.
- v0: first release (observation layout version 1, `piquet_env.observation.OBS_VERSION`); infos
  hold `phase`, `to_act`, `legal_actions` and `deal_score` (strings, lists and dicts).
"""

from __future__ import annotations

import copy
import functools
import operator
import random
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers as pz_wrappers

from piquet_env import wrappers
from piquet_env.actions import SPECIAL_NAMES
from piquet_env.cards import card_str
from piquet_env.combinations import CATEGORY_NAMES
from piquet_env.game import PHASE_NAMES, Game, Phase
from piquet_env.observation import encoder_for
from piquet_env.render import render_text
from piquet_env.rewards import reward_due
from piquet_env.rules import Rules
from piquet_env.settings import EnvSettings, env_settings

AGENTS = ("player_0", "player_1")
_INDEX = {"player_0": 0, "player_1": 1}
RENDER_VIEWS = ("player", "player_0", "player_1", "spectator")
RENDER_MODES = ("human", "ansi", "rgb_array")
OBSERVATION_FORMATS = ("dict", "vector")
RESET_OPTION_KEYS = ("deal", "deals", "first_elder")

_DECLARE, _PLAY = Phase.DECLARE, Phase.PLAY
ILLEGAL_REWARD = -1
"""Reward of an agent whose illegal action ends the game under :func:`env`'s wrapper."""


def env(**kwargs: Any) -> AECEnv:
    """The Piquet AEC environment: :class:`raw_env` wrapped in TerminateIllegalWrapper,
    AssertOutOfBoundsWrapper and OrderEnforcingWrapper. Options as for :class:`raw_env`.

    The wrappers are PettingZoo's own, subclassed (:mod:`piquet_env.wrappers`) so
    that the per-step attribute reads and pass-throughs go straight to the raw environment; their
    checks and outcomes are unchanged (``tests/test_env_api.py`` compares them with the plain
    stack, :func:`plain_env`).
    """
    return wrappers.wrap(raw_env(**kwargs), ILLEGAL_REWARD)


def plain_env(**kwargs: Any) -> AECEnv:
    """:func:`env` with PettingZoo's wrapper classes exactly as shipped (slower attribute access);
    for comparison and benchmarks."""
    e: AECEnv = raw_env(**kwargs)
    e = pz_wrappers.TerminateIllegalWrapper(e, illegal_reward=ILLEGAL_REWARD)
    e = pz_wrappers.AssertOutOfBoundsWrapper(e)
    return pz_wrappers.OrderEnforcingWrapper(e)


class _Discrete(spaces.Discrete):
    """``gymnasium.spaces.Discrete`` with a fast ``contains`` for plain ints (checked by
    AssertOutOfBoundsWrapper at every step); anything else goes to the parent's check."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self._n_int = int(n)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is an action id of this space."""
        if type(x) is int:
            return 0 <= x < self._n_int
        return super().contains(x)


@functools.cache
def _spaces(rules: Rules, vector: bool = False) -> tuple[spaces.Space, spaces.Discrete, spaces.Box]:
    """Observation, action and state spaces of a rules object, built once (a Box with per-entry
    bounds is slow to build) and deep-copied per environment so each has its own random state.
    ``vector``: the observation space is the float32 Box alone (``observation_format="vector"``)."""
    enc = encoder_for(rules)
    box = spaces.Box(low=0.0, high=enc.high, shape=(enc.size,), dtype=np.float32)
    observation: spaces.Space = box
    if not vector:
        mask = spaces.Box(low=0, high=1, shape=(enc.n_actions,), dtype=np.int8)
        observation = spaces.Dict({"observation": box, "action_mask": mask})
    state = spaces.Box(low=0.0, high=np.inf, shape=(enc.state_size,), dtype=np.float32)
    return observation, _Discrete(enc.n_actions), state


def _action_names(rules: Rules) -> tuple[tuple[str, ...], ...]:
    """Names of every action id per situation: exchange, play, then declaring each category."""
    n = rules.n_cards
    cards = [card_str(c) for c in range(n)]
    exchange = tuple([f"discard {c}" for c in cards] + list(SPECIAL_NAMES))
    play = tuple([f"play {c}" for c in cards] + list(SPECIAL_NAMES))
    declare = tuple((*cards, "done", f"declare {cat}", f"pass {cat}") for cat in CATEGORY_NAMES)
    return (exchange, play, *declare)


class raw_env(AECEnv):
    """Piquet as a PettingZoo AEC environment (see the module docstring for spaces and rewards).

    Options: the family's settings (:mod:`piquet_env.settings`): ``settings=`` or ``rules`` (a
    preset name or :class:`~piquet_env.rules.Rules`), ``variants``, ``mode`` (``"partie"`` or
    ``"deal"``; ``episode=`` is its alias), ``reward`` (see
    :data:`~piquet_env.rewards.REWARDS`), ``reward_scale``, ``dense``, ``settle_weight``; then
    ``render_mode`` (``None``, ``"human"``, ``"ansi"``, ``"rgb_array"``), ``render_view``
    (``"player"``, ``"player_0"``, ``"player_1"`` or ``"spectator"``), ``observation_format``
    (``"dict"`` or ``"vector"``) and ``info_names`` (``None``: the version's default).

    :mod:`piquet_env.piquet_v1` subclasses this class, changing only :attr:`version` and the
    metadata name: the version decides the default infos.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "name": "piquet_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }
    version: ClassVar[int] = 0
    """Environment version: 0 keeps v0's infos (names, strings and dicts) by default; 1 gives
    ``{"action_mask": mask}`` only."""

    def __init__(
        self,
        rules: str | Rules | None = None,
        variants: str | Iterable[str] | None = None,
        mode: str | None = None,
        reward: str | None = None,
        reward_scale: float | None = None,
        render_mode: str | None = None,
        render_view: str = "player",
        observation_format: str = "dict",
        info_names: bool | None = None,
        *,
        dense: bool | None = None,
        settle_weight: float | None = None,
        settings: EnvSettings | None = None,
        episode: str | None = None,
    ) -> None:
        super().__init__()
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
        check_render_mode(render_mode)
        if render_view not in RENDER_VIEWS:
            raise ValueError(f"render_view must be one of {RENDER_VIEWS}, got {render_view!r}")
        if observation_format not in OBSERVATION_FORMATS:
            raise ValueError(
                f"observation_format must be one of {OBSERVATION_FORMATS}, "
                f"got {observation_format!r}"
            )
        if info_names is None:
            info_names = self.version == 0
        if not isinstance(info_names, bool):
            raise ValueError(f"info_names must be True, False or None, got {info_names!r}")
        self.observation_format = observation_format
        self.info_names = info_names
        self._vector_obs = observation_format == "vector"
        self._info_mask = self.version >= 1 or self._vector_obs
        """Whether infos carry ``action_mask`` (always in v1; in v0 with vector observations,
        where the mask would otherwise be nowhere)."""
        self.mode = self.settings.mode
        self.reward_mode = self.settings.reward
        self.reward_scale = self.settings.reward_scale
        self._dense = self.settings.dense and self.reward_mode == "deal_points"
        """Whether rewards are paid after every move (else at each deal's end)."""
        self.render_mode = render_mode
        self.render_view = render_view
        self.encoder = encoder_for(self.rules)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        obs_space, act_space, state_space = copy.deepcopy(_spaces(self.rules, self._vector_obs))
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: act_space for a in AGENTS}
        self.state_space = state_space
        self._names = _action_names(self.rules)
        self._rng = random.Random()
        self.game: Game | None = None
        self._legal: list[int] = []
        """Legal action ids of the agent to act, refreshed after every reset and step: exactly
        what its action mask marks (the wrappers in ``piquet_env.wrappers`` read it)."""

    # ------------------------------------------------------------------ PettingZoo API

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (the same for both)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (the same for both)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new episode: a partie (or one deal) dealt from ``seed``, or from the cards in
        ``options["deal"]`` / ``options["deals"]`` (see the module docstring)."""
        if seed is not None:
            self._rng = random.Random(_seed_option(seed))
        deals, first_elder = _deal_options(options)
        self.game = Game(
            self.rules,
            seed=self._rng.getrandbits(64),
            mode=self.mode,
            deals=deals,
            first_elder=first_elder,
            record=False,
        )
        self.agents = list(AGENTS)
        self.rewards = {a: 0 for a in AGENTS}
        self._cumulative_rewards = {a: 0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self._paid = [0, 0]
        self._credited = [0, 0]
        """Each player's deal-point difference already paid in the deal under way (dense)."""
        self._pending: list[dict | None] = [None, None]
        self._after_move()

    def observe(self, agent: str) -> dict[str, np.ndarray] | np.ndarray:
        """``{"observation": float32 vector, "action_mask": int8 mask}`` for ``agent`` (the vector
        alone under ``observation_format="vector"``)."""
        p = _agent_index(agent)
        g = self._started("observe")
        if self._vector_obs:
            return self.encoder.encode(g, p)
        return {
            "observation": self.encoder.encode(g, p),
            "action_mask": self.encoder.action_mask(g, p, self._legal),
        }

    def state(self) -> np.ndarray:
        """The full-information vector (both hands, discards and the talon; see the docstring)."""
        return self.encoder.state(self._started("state"))

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """As ``AECEnv.last``, with a clear error before the first reset."""
        self._started("last")
        return super().last(observe)

    def step(self, action: int | None) -> None:
        """Play ``action`` for :attr:`agent_selection` (``None`` for an agent that is done)."""
        g = self._started("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = _action_id(action)
        p = g.current_player
        n_deals = len(g.deal_scores)
        g.apply(action)
        self._pending[p] = None
        self._cumulative_rewards[agent] = 0
        deal_ended = len(g.deal_scores) != n_deals
        if deal_ended or self._dense:
            self._pay(n_deals, deal_ended)
        else:  # the deal goes on: nothing to pay
            self.rewards = {"player_0": 0.0, "player_1": 0.0}
        self._after_move()
        if self.render_mode == "human":
            self.render()

    def _pay(self, deal: int, deal_ended: bool) -> None:
        """Rewards after a move in deal number ``deal``: at its end (with the deal's infos, and
        the settlement at the episode's), or after every move when paying densely."""
        g = self.game
        if deal_ended:
            ds0, ds1 = g.deal_scores[-1]
            info = {"deal": deal, "player_0": ds0.to_dict(), "player_1": ds1.to_dict()}
            self._pending = [info, info]
        w, credited = self.settings.settle_weight, self._credited
        r0, credited[0] = reward_due(
            self.reward_mode, g, 0, deal_ended=deal_ended, credited=credited[0], settle_weight=w
        )
        r1, credited[1] = reward_due(
            self.reward_mode, g, 1, deal_ended=deal_ended, credited=credited[1], settle_weight=w
        )
        if g.is_over:
            self.terminations = {a: True for a in AGENTS}
        self._paid[0] += r0
        self._paid[1] += r1
        scale = self.reward_scale
        self.rewards = {"player_0": r0 * scale, "player_1": r1 * scale}
        self._accumulate_rewards()

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the table as a string; ``human``: print it; ``rgb_array``: the table as a
        uint8 HxWx3 image. The view of ``render_view`` (:func:`render_view_player`)."""
        if self.render_mode is None:
            logger.warn(
                "You are calling render without specifying a render_mode "
                "(raw_env(render_mode='ansi'), 'human' or 'rgb_array')."
            )
            return None
        g = self._started("render")
        return render_frame(self.render_mode, g, render_view_player(self.render_view, g))

    def close(self) -> None:
        """Nothing to release."""

    def readable_info(self, agent: str) -> dict[str, Any]:
        """v0's human-readable info of ``agent`` now, whatever ``info_names`` says: ``phase``,
        ``to_act``, ``legal_actions`` (names) and, from the end of a deal until the agent next
        acts, ``deal_score`` (both players' breakdowns; see the module docstring)."""
        p = _agent_index(agent)
        self._started("readable_info")
        names = self._names_now()
        g = self.game
        info: dict[str, Any] = {
            "phase": PHASE_NAMES[g.phase],
            "to_act": p == g.current_player,
            "legal_actions": [names[a] for a in self._legal] if p == g.current_player else [],
        }
        if self._pending[p] is not None:
            info["deal_score"] = self._pending[p]
        return info

    # ------------------------------------------------------------------ helpers

    def _started(self, what: str) -> Game:
        """The game, or a clear error when ``what`` is called before the first reset."""
        g = self.game
        if g is None:
            raise RuntimeError(f"{what}() called before reset(): call reset() first")
        return g

    def _names_now(self) -> tuple[str, ...]:
        """Names of the action ids in the current situation (:func:`_action_names`): the card's
        in play, the category's being decided in the declarations, the exchange's otherwise."""
        g = self.game
        if g.phase == _PLAY:
            return self._names[1]
        if g.phase == _DECLARE:
            return self._names[2 + (g.decl_step >> 1)]  # the category being decided
        return self._names[0]

    def _mask_infos(self) -> dict[str, dict[str, Any]]:
        """``{"action_mask": mask}`` per agent: the legal ids of the agent to act, zeros for the
        other."""
        g, enc, legal = self.game, self.encoder, self._legal
        return {
            "player_0": {"action_mask": enc.action_mask(g, 0, legal)},
            "player_1": {"action_mask": enc.action_mask(g, 1, legal)},
        }

    def _after_move(self) -> None:
        """Select the agent to act and refresh the infos after a reset or a move."""
        g = self.game
        p = g.current_player
        phase = g.phase
        self._legal = legal = g.legal_actions()
        if not self.info_names:
            self.infos = self._mask_infos() if self._info_mask else {a: {} for a in AGENTS}
            self._select(p)
            return
        names = self._names_now()
        pname = PHASE_NAMES[phase]
        acting = list(map(names.__getitem__, legal))
        i0 = {"phase": pname, "to_act": p == 0, "legal_actions": acting if p == 0 else []}
        i1 = {"phase": pname, "to_act": p == 1, "legal_actions": acting if p == 1 else []}
        pending = self._pending
        if pending[0] is not None:
            i0["deal_score"] = pending[0]
        if pending[1] is not None:
            i1["deal_score"] = pending[1]
        if self._info_mask:
            masks = self._mask_infos()
            i0["action_mask"] = masks["player_0"]["action_mask"]
            i1["action_mask"] = masks["player_1"]["action_mask"]
        self.infos = {"player_0": i0, "player_1": i1}
        self._select(p)

    def _select(self, p: int) -> None:
        """Select engine player ``p`` to act (the last selected agent once the game is over)."""
        if p >= 0:
            self.agent_selection = AGENTS[p]
        elif not hasattr(self, "agent_selection") or self.agent_selection not in AGENTS:
            self.agent_selection = AGENTS[0]

    @property
    def episode(self) -> str:
        """The game mode's former name (an alias of :attr:`mode`)."""
        return self.mode

    @property
    def returns(self) -> tuple[float, float]:
        """Scaled rewards paid so far to (player_0, player_1) this episode."""
        return (self._paid[0] * self.reward_scale, self._paid[1] * self.reward_scale)


def render_view_player(render_view: str, game: Game) -> int | None:
    """The engine player whose view ``render_view`` shows (``None``: everything).

    ``"player"`` is player_0's view throughout (a fixed seat, so that consecutive frames never
    switch between the two hands); ``"player_0"``/``"player_1"`` name the seat; ``"spectator"``,
    and any view once the game is over, shows everything."""
    if render_view == "spectator" or game.is_over:
        return None
    return 1 if render_view == "player_1" else 0


def check_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if it is ``None`` or one of :data:`RENDER_MODES`, else a ``ValueError``
    naming it (the AEC env and the Gymnasium adapter check it here)."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(
            f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}"
        )
    return render_mode


def render_frame(render_mode: str, game: Game, view: int | None) -> str | np.ndarray | None:
    """Render ``game`` from player ``view`` (``None``: everything) in ``render_mode``: the image
    (``rgb_array``), the text (``ansi``), or the text printed (``human``, returning ``None``)."""
    if render_mode == "rgb_array":
        return render_rgb(game, view)
    text = render_text(game, view)
    if render_mode == "ansi":
        return text
    print(text + "\n")
    return None


def render_rgb(game: Game, player: int | None) -> np.ndarray:
    """The table as a uint8 HxWx3 image (:func:`piquet_env.image.render_image`, which needs
    matplotlib: the ``render`` extra)."""
    from piquet_env.image import render_image  # matplotlib only when an image is asked for

    return render_image(game, player)


def _action_id(action: Any) -> int:
    """``action`` as a plain int id (numpy integers and 0-d integer arrays accepted)."""
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        action = action.item()
    if isinstance(action, bool):
        raise ValueError(f"action must be an integer action id, got {action!r}")
    try:
        return operator.index(action)
    except TypeError:
        raise ValueError(
            f"action must be an integer action id, got {type(action).__name__} {action!r}"
        ) from None


def _deal_options(options: Any) -> tuple[list, int | None]:
    """Preset deals and first elder from reset ``options`` (``None`` or a dict; keys other than
    :data:`RESET_OPTION_KEYS` are ignored, as PettingZoo's api_test expects)."""
    if options is None:
        return [], None
    if not isinstance(options, Mapping):
        raise ValueError(f"reset options must be a dict or None, got {type(options).__name__}")
    specs = []
    if "deal" in options:
        specs.append(options["deal"])
    if "deals" in options:
        if not isinstance(options["deals"], (list, tuple)):
            raise ValueError("options['deals'] must be a list of deals")
        specs.extend(options["deals"])
    deals = []
    first_elder = _elder_option(options.get("first_elder"))
    for i, spec in enumerate(specs):
        if isinstance(spec, Mapping):
            missing = [k for k in ("elder", "younger", "talon") if k not in spec]
            if missing:
                raise ValueError(
                    f"deal option {i} lacks {missing}; it needs 'elder', 'younger' "
                    "and 'talon' (and optionally 'first_elder')"
                )
            deals.append((spec["elder"], spec["younger"], spec["talon"]))
            if i == 0 and spec.get("first_elder") is not None:
                first_elder = _elder_option(spec["first_elder"])
        elif isinstance(spec, (list, tuple)) and len(spec) == 3:
            deals.append(tuple(spec))
        else:
            raise ValueError(
                f"deal option {i} must be a dict with 'elder', 'younger' and 'talon' "
                f"(or a 3-tuple), got {spec!r}"
            )
    return deals, first_elder


def _elder_option(value: Any) -> int | None:
    """The ``first_elder`` reset option: ``None``, the int 0 or 1 (numpy's too; not a bool nor
    a float), or an agent name."""
    if value is None:
        return None
    if isinstance(value, str):
        if value in AGENTS:
            return AGENTS.index(value)
    elif not isinstance(value, (bool, np.bool_)):
        try:
            index = operator.index(value)
        except TypeError:
            index = None
        if index in (0, 1):
            return index
    raise ValueError(f"first_elder must be 0, 1, 'player_0' or 'player_1', got {value!r}")


def _seed_option(seed: Any) -> int:
    """A reset seed: an int of at least 0 (numpy's too; not a bool nor a float), as Gymnasium's
    seeding asks."""
    if not isinstance(seed, (bool, np.bool_)):
        try:
            value = operator.index(seed)
        except TypeError:
            value = -1
        if value >= 0:
            return value
    raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")


def _agent_index(agent: Any) -> int:
    """The engine player of an agent name, or a ``ValueError`` naming the agents."""
    if isinstance(agent, str) and agent in _INDEX:
        return _INDEX[agent]
    raise ValueError(f"agent must be one of {list(AGENTS)}, got {agent!r}")
