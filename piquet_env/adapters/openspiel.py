"""Piquet as an OpenSpiel Python game: ``pyspiel.load_game("python_piquet")`` (``openspiel`` extra).

Importing this module registers the game (``pip install -e ".[openspiel]"``; without
OpenSpiel the import raises an ImportError naming the extra). Game parameters, all strings:
``rules`` (``"standard"``, ``"classic"``, or with variants ``"classic+normand"``), ``mode``
(``"partie"`` or ``"deal"``) and ``reward`` (``"result"``: the settled partie result, or the deal
point difference in ``mode="deal"``; ``"win"``: +1/-1/0 on that result)::

    import pyspiel
    import piquet_env.adapters.openspiel  # registers python_piquet
    game = pyspiel.load_game("python_piquet", {"rules": "classic", "mode": "deal"})

- Chance nodes: the cut for deal (two outcomes, ids 0 and 1: which player is elder in the first
  deal, each with probability 1/2, as the cut gives by symmetry), then every card of every deal
  (uniform over the cards of the pack not dealt yet: elder's hand, younger's, then the talon from
  the top). The engine's own shuffles are not used.
- Player actions: the engine's action ids (:mod:`piquet_env.actions`), ``num_distinct_actions``
  35 (36 under ``normand``); ``legal_actions`` are the engine's.
- ``observation_tensor`` and ``information_state_tensor``: the project's encoder
  (:func:`piquet_env.observation.encoder_for`), which holds everything the player knows about
  the deal under way and nothing he does not (zeros before the first deal is complete);
  ``observation_string``: the table as the player sees it (:func:`piquet_env.render.render_text`);
  ``information_state_string``: the player's own record of the cut, his dealt hands and every
  exchange move and card played as he saw them (the opponent's discards as ``?``), then that view
  of the table (which holds the declarations of the deal).
- ``returns``: at the end, ``Game.result`` (or its sign under ``reward="win"``); zero before.
- Serialisation: OpenSpiel's default, the action history (``game.deserialize_state``).
- ``resample_from_infostate(player, sampler)``: a state whose hidden cards are dealt afresh
  consistently with what ``player`` knows (:func:`piquet_env.game.knowledge.determinize`), with a
  history that replays to it; OpenSpiel's Python ISMCTS calls it. The sampler's own random
  numbers are not used: the state keeps a generator seeded from the game's ``seed`` parameter.
  A sample must replay this history to the same information state: the engine's forced
  declaration passes are taken over where the two worlds differ, but a sample whose declarations
  or known cards come out otherwise (``determinize`` gives up after its tries) is refused; when 20
  samples are refused, the state itself is returned, which is consistent but tells the searcher
  the real cards (how often: the docs' Results, correctness runs).
- Bots: :class:`PlayerBot` plays any :class:`piquet_env.agent.Agent` (the project's agents)
  in ``evaluate_bots``. OpenSpiel's Python ``ISMCTSBot`` does not implement ``restart_at``, which
  ``evaluate_bots`` calls: subclass it with ``restart_at = lambda self, state: self.reset()``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as e:  # pragma: no cover - exercised in an env-only install
    raise ImportError(
        'the OpenSpiel adapter needs open_spiel: pip install -e ".[openspiel]"'
    ) from e

from piquet_env.agent import Agent, Turn
from piquet_env.cards import card_str, cards_str
from piquet_env.game import Game, Phase
from piquet_env.game.knowledge import determinize
from piquet_env.game.scoring import MAX_TOTAL
from piquet_env.observation import encoder_for
from piquet_env.render import render_text
from piquet_env.settings import EnvSettings, env_settings

GAME_NAME = "python_piquet"
REWARDS = ("result", "win")
"""The reward modes of the family (:data:`piquet_env.rewards.REWARDS`) that pay only at the end,
as OpenSpiel's terminal reward model does."""
_DEFAULTS = EnvSettings().to_params()
DEFAULT_PARAMS = {
    "rules": _DEFAULTS["rules"],
    "mode": _DEFAULTS["mode"],
    "episode": "",
    "reward": _DEFAULTS["reward"],
    "seed": 0,
}
"""The game's parameters and their defaults: the env family's settings
(:data:`piquet_env.settings.PARAMETERS`) that a terminal-reward game has, validated by them,
and the resampling ``seed``; ``episode``, empty by default, is ``mode``'s former name, kept as an
alias."""
_MOVES_PER_DEAL = 100  # generous: 24 plays, 6 declarations, at most 12 exchange moves
_RESAMPLE_TRIES = 20

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Piquet",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


class PiquetGame(pyspiel.Game):
    """The Piquet game for OpenSpiel (parameters and conventions in the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        merged = {**DEFAULT_PARAMS, **(params or {})}
        unknown = sorted(set(merged) - set(DEFAULT_PARAMS))
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {unknown}; the game's are {list(DEFAULT_PARAMS)}"
            )
        given = params or {}
        settings = env_settings(
            rules=merged["rules"],
            mode=given.get("mode"),
            episode=given.get("episode") or None,
            reward=merged["reward"],
        )
        if settings.reward not in REWARDS:
            raise ValueError(
                f"reward must be one of {REWARDS} (OpenSpiel's terminal reward model), got "
                f"{settings.reward!r}"
            )
        rules, mode, reward = settings.rules, settings.mode, settings.reward
        merged["mode"], merged["episode"] = mode, ""
        encoder = encoder_for(rules)
        deals = 1 if mode == "deal" else rules.deals + (2 if rules.tie_break_deals else 0)
        bound = 1.0 if reward == "win" else float(2 * MAX_TOTAL + 100)
        info = pyspiel.GameInfo(
            num_distinct_actions=encoder.n_actions,
            max_chance_outcomes=rules.n_cards,
            num_players=2,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=1 + deals * (rules.pack_size + _MOVES_PER_DEAL),
        )
        super().__init__(_GAME_TYPE, info, merged)
        self.rules = rules
        self.mode = mode
        self.reward = reward
        self.encoder = encoder
        self.seed = int(merged["seed"])

    def new_initial_state(self) -> PiquetState:
        """The state before the cut."""
        return PiquetState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> PiquetObserver:
        """The observer for tensors and strings (the same encoder for both kinds)."""
        return PiquetObserver(self, iig_obs_type, params)


class _Random(random.Random):
    """A ``random.Random`` whose deep copy shares its (immutable) state tuple: OpenSpiel's
    ``child`` deep-copies the state, and ``copy.deepcopy`` would walk the generator's 625
    integers one by one."""

    def __deepcopy__(self, memo: dict) -> _Random:
        copied = _Random(0)
        copied.setstate(self.getstate())
        return copied


class PiquetState(pyspiel.State):
    """A Piquet state: chance nodes for the cut and the deals, then the engine's game."""

    def __init__(self, game: PiquetGame) -> None:
        super().__init__(game)
        # OpenSpiel's clone copies the state, not the Python game's attributes: keep what is needed
        self._rules = game.rules
        self._mode = game.mode
        self._reward = game.reward
        self.game: Game | None = None
        self._first_elder: int | None = None
        self._dealing: list[int] | None = []  # cards of the deal being dealt (None: play)
        self._actions: list[int] = []
        self._decisions: list[tuple[int, int] | None] = []
        """Per action: (player, category) for a declaration decision, else None."""
        self._deal_start = 0  # index in _actions of the current deal's first card
        self._log: tuple[list[str], list[str]] = ([], [])
        self._rng = _Random(game.seed)

    # ------------------------------------------------------------------ OpenSpiel API

    def current_player(self) -> int:
        """The player to act, CHANCE while cutting or dealing, TERMINAL at the end."""
        if self.game is not None and self.game.is_over:
            return pyspiel.PlayerId.TERMINAL
        if self._first_elder is None or self._dealing is not None:
            return pyspiel.PlayerId.CHANCE
        return self.game.current_player

    def _legal_actions(self, player: int) -> list[int]:
        """The engine's legal action ids for ``player`` (who is to act)."""
        return sorted(self.game.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The cut (two outcomes) or the next card (uniform over the cards left)."""
        if self._first_elder is None:
            return [(0, 0.5), (1, 0.5)]
        left = sorted(set(self._rules.pack) - set(self._dealing))
        p = 1.0 / len(left)
        return [(c, p) for c in left]

    def _apply_action(self, action: int) -> None:
        """Cut, deal a card, or play a move in the engine."""
        self._actions.append(action)
        g = self.game
        declaring = self._dealing is None and g is not None and g.phase == Phase.DECLARE
        self._decisions.append((g.current_player, g.category) if declaring else None)
        if self._first_elder is None:
            self._first_elder = action
            for p in (0, 1):
                self._log[p].append(f"cut: player_{action} elder")
            self._deal_start = len(self._actions)
            return
        if self._dealing is not None:
            self._dealing.append(action)
            if len(self._dealing) == self._rules.pack_size:
                self._start_deal(self._dealing)
                self._dealing = None
            return
        mover, exchanging = g.current_player, g.phase == Phase.EXCHANGE
        name = g.action_name(action)
        n_deals = len(g.deal_scores)
        g.apply(action)
        if not declaring:  # declarations are in the view; whether a pass was forced is not seen
            self._log[mover].append(name)
            hidden = exchanging and action < self._rules.n_cards
            self._log[1 - mover].append("discard ?" if hidden else name)
        if len(g.deal_scores) > n_deals and not g.is_over:
            self._dealing = []  # the next deal comes from chance nodes
            self._deal_start = len(self._actions)

    def _action_to_string(self, player: int, action: int) -> str:
        """``cut: player_0 elder``, ``deal AS``, or the engine's action name."""
        if player == pyspiel.PlayerId.CHANCE:
            if self._first_elder is None:
                return f"cut: player_{action} elder"
            return f"deal {card_str(action)}"
        return self.game.action_name(action)

    def is_terminal(self) -> bool:
        """Whether the episode is settled."""
        return self.game is not None and self.game.is_over

    def returns(self) -> list[float]:
        """The settled result (its sign under ``reward="win"``) at the end; zeros before."""
        if not self.is_terminal():
            return [0.0, 0.0]
        r0 = self.game.result[0]
        if self._reward == "win":
            r0 = (r0 > 0) - (r0 < 0)
        return [float(r0), float(-r0)]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> PiquetState:
        """A state ``player_id`` cannot tell from this one, its hidden cards dealt afresh
        (:func:`~piquet_env.game.knowledge.determinize`); this state itself while cutting or
        dealing, or if no consistent replay is found."""
        del probability_sampler  # the state's own generator draws the sample
        if self.game is None or self._dealing is not None or self.is_terminal():
            return self.clone()
        target = self.information_state_string(player_id)
        for _ in range(_RESAMPLE_TRIES):
            sample = determinize(self.game, player_id, self._rng)
            state = self._replay(sample, player_id)
            if state is not None and state.information_state_string(player_id) == target:
                state._rng = _Random(self._rng.getrandbits(64))
                return state
        return self.clone()

    def __str__(self) -> str:
        """The spectator's view of the table (or the cut and cards dealt so far)."""
        if self.game is None or self._dealing is not None:
            dealt = " ".join(card_str(c) for c in self._dealing or [])
            return f"cut: {self._first_elder}; dealing: {dealt}"
        return render_text(self.game, None)

    # ------------------------------------------------------------------ helpers

    def _start_deal(self, cards: list[int]) -> None:
        """Start the engine's deal with ``cards`` (elder's hand, younger's, the talon)."""
        h = self._rules.hand_size
        deal = (cards[:h], cards[h : 2 * h], cards[2 * h :])
        if self.game is None:
            self.game = Game(
                self._rules,
                seed=0,
                mode=self._mode,
                deals=[deal],
                first_elder=self._first_elder,
                record=False,
            )
        else:
            # The engine has started its next deal from its own shuffle; deal these cards instead
            # (the deal's whole state is rebuilt from them; totals and the deal count stay).
            self.game._preset = [deal]
            self.game._start_deal()
        g = self.game
        for p in (0, 1):
            self._log[p].append(f"deal {g.deal_number + 1}: {cards_str(g.dealt[p])}")

    def _replay(self, sample: Game, player: int) -> PiquetState | None:
        """A fresh state replaying this history up to the current deal, then ``sample``'s deal
        of the current cards and this deal's moves (the opponent's discards from the sample)."""
        g = self.game
        e, o = g.elder, 1 - player
        taken_e = _taken(sample, e)
        taken_y = _taken(sample, 1 - e)
        talon = sorted(taken_e) + sorted(taken_y) + list(sample.talon)
        cards = sorted(_bits(sample.dealt[e])) + sorted(_bits(sample.dealt[1 - e])) + talon
        discards = sorted(_bits(sample.discards[o]))
        state = self.get_game().new_initial_state()
        for a in self._actions[: self._deal_start]:
            state.apply_action(a)
        for c in cards:
            state.apply_action(c)
        n = self._rules.n_cards
        start = self._deal_start + len(cards)
        for a, decision in zip(self._actions[start:], self._decisions[start:]):
            sg = state.game
            if decision is not None and sg.decided[decision[1]][decision[0]]:
                continue  # the sample's engine took this decision itself (a forced pass)
            if not self._catch_up(state, decision):
                return None
            if sg.current_player == o and sg.phase == Phase.EXCHANGE and a < n:
                if not discards:
                    return None
                a = discards.pop(0)
            if a not in sg.legal_actions():
                return None
            state.apply_action(a)
        if not self._catch_up(state, None, until=g):
            return None
        return state

    def _catch_up(
        self, state: PiquetState, decision: tuple[int, int] | None, until: Game | None = None
    ) -> bool:
        """Take, in ``state``, the declaration decisions this state's engine took itself (forced
        here, a choice in the sample) before ``decision`` (or, with ``until``, until ``state``
        reaches that game's turn), each as it went here; False if one cannot be."""
        n = self._rules.n_cards
        sg = state.game
        while sg.phase == Phase.DECLARE:
            pending = (sg.current_player, sg.category)
            if pending == decision:
                return True
            if until is not None and (until.phase, until.current_player, until.decl_step) == (
                sg.phase,
                sg.current_player,
                sg.decl_step,
            ):
                return True
            q, c = pending
            if not self.game.decided[c][q]:
                return False
            choice = n + 2 if self.game.declared[c][q] is None else n + 1  # pass / declare
            if choice not in sg.legal_actions():
                return False
            state.apply_action(choice)
        return True


class PlayerBot(pyspiel.Bot):
    """An OpenSpiel bot playing a :class:`piquet_env.agent.Agent` (every agent of
    :mod:`piquet_agents` is one), for ``evaluate_bots`` and OpenSpiel's other tools."""

    def __init__(self, player: Agent, seed: int = 0) -> None:
        pyspiel.Bot.__init__(self)
        self.player = player
        self._seed = seed
        self.player.reset(seed)

    def restart_at(self, state: PiquetState) -> None:
        """A new game: reset the player."""
        self._seed += 1
        self.player.reset(self._seed)

    def step(self, state: PiquetState) -> int:
        """The player's move in ``state``."""
        return int(self.player.act(Turn(state.game, state.current_player())))


class PiquetObserver:
    """OpenSpiel's PyObserver for Piquet: the encoder's vector as ``tensor`` (``dict`` holds it
    under ``"observation"``) and the player's view as a string."""

    def __init__(self, game: PiquetGame, iig_obs_type: Any, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        self._encoder = game.encoder
        self._perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.tensor = np.zeros(game.encoder.size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: PiquetState, player: int) -> None:
        """Fill :attr:`tensor` with ``player``'s observation of ``state``."""
        if state.game is None or state._dealing is not None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = self._encoder.encode(state.game, player)

    def string_from(self, state: PiquetState, player: int) -> str:
        """``player``'s view of the table; with perfect recall, his record of the game first."""
        view = "" if state.game is None else render_text(state.game, player)
        if state._dealing is not None and state.game is not None:
            view = f"dealing deal {state.game.deal_number + 1}"
        if not self._perfect_recall:
            return view
        return f"player_{player}\n" + "\n".join(state._log[player]) + "\n" + view


def _bits(mask: int) -> list[int]:
    return [c for c in range(mask.bit_length()) if mask >> c & 1]


def _taken(game: Game, p: int) -> list[int]:
    """The talon cards player ``p`` took this deal: what he holds, played or showed beyond his
    dealt hand."""
    return _bits((game.hands[p] | game.played[p]) & ~game.dealt[p])


pyspiel.register_game(_GAME_TYPE, PiquetGame)
