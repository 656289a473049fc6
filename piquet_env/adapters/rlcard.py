"""Piquet as an RLCard environment: ``rlcard.make("piquet")`` (``integrations`` extra: rlcard).

``import piquet_env`` registers the id ``"piquet"`` with RLCard's registry when RLCard is
imported, in either order (:mod:`piquet_env.registration`); nothing to wrap::

    import piquet_env  # registers "piquet" with RLCard (when it is imported)
    import rlcard
    env = rlcard.make("piquet", config={"seed": 0, "game_mode": "deal"})

Config (RLCard's ``config`` dict): RLCard's own ``seed`` and ``allow_step_back``, and the game's
settings, each with the ``game_`` prefix RLCard's convention gives them: ``game_rules`` (a preset
name, ``"standard"`` by default, or ``"classic+normand"``...), ``game_mode`` (``"deal"``, the
default: a game is one deal; or ``"partie"``), ``game_reward`` (``"result"``: the settled result,
the deal's point difference in deal mode; or ``"win"``: +1/-1/0 on it) and ``game_reward_scale``
(the payoffs are the result times it, default 1). An unknown key or a bad value raises
``ValueError`` naming it.

- **Players** 0 and 1 (``num_players`` 2), **actions** the engine's ids (:mod:`piquet_env.actions`;
  ``num_actions`` 35, 36 with the joker); RLCard's raw actions are their names in the situation
  (``"discard QH"``, ``"play TS"``, ``"done"``, ``"declare point"``, ``"pass set"``).
- **The state** of a player, RLCard's dict: ``obs`` (the project's observation vector,
  float32 ``(433,)``: :func:`piquet_env.observation.encoder_for`; ``state_shape`` ``[[433],
  [433]]``), ``legal_actions`` (an ``OrderedDict`` of the legal ids, empty for the player not to
  act), ``raw_obs`` (what that player sees, readable: his hand and discards, the phase, the
  trick, the deal's points, the partie's totals), ``raw_legal_actions`` (the legal actions'
  names) and ``action_record`` (every ``(player, raw action)`` of the game so far).
- **Payoffs** at the end: the game's result for each player (zero-sum) times the scale; RLCard's
  ``run`` and ``tournament`` read them.
- ``step_back`` (``allow_step_back=True``) keeps a copy of the game per step
  (:meth:`piquet_env.game.Game.clone`); ``get_perfect_information`` shows both hands and the talon.

:class:`RLCardAgent` goes the other way: any RLCard agent (``eval_step(state)``, such as a trained
``DQNAgent`` or ``NFSPAgent``) as a :class:`piquet_env.agent.Agent`. :func:`save_weights` writes
a trained DQN's Q-network or NFSP's average policy as safetensors, and :func:`dqn` and
:func:`nfsp` build the agent back from them, as the ``py:`` agent specs of
:mod:`piquet_agents.external` call them, so that ``piquet eval``, the ladder and the benchmark
play it with nothing of yours to write::

    piquet eval py:piquet_env.adapters.rlcard:dqn:weights=dqn.safetensors baseline
    piquet eval py:piquet_env.adapters.rlcard:nfsp:weights=nfsp.safetensors:layers=128,128 random
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

try:
    from rlcard.envs.env import Env
except ImportError as e:  # pragma: no cover - exercised in an install without rlcard
    raise ImportError(
        'the RLCard adapter needs rlcard: pip install -e ".[integrations]" (or rlcard)'
    ) from e

from piquet_env.agent import Turn
from piquet_env.cards import card_str, cards_str
from piquet_env.game import PHASE_NAMES, Game
from piquet_env.game.state import MODES
from piquet_env.observation import encoder_for
from piquet_env.registration import register_rlcard
from piquet_env.rules import Rules, make_rules

__all__ = [
    "CONFIG",
    "PiquetRLCardEnv",
    "PiquetRLCardGame",
    "RLCardAgent",
    "dqn",
    "extract_state",
    "nfsp",
    "save_weights",
]

ENV_ID = "piquet"
"""The id registered with RLCard."""
CONFIG: dict[str, Any] = {
    "game_rules": "standard",
    "game_mode": "deal",
    "game_reward": "result",
    "game_reward_scale": 1.0,
}
"""The game's settings and their defaults (RLCard's ``seed`` and ``allow_step_back`` besides)."""
RLCARD_KEYS = ("seed", "allow_step_back")
REWARDS = ("result", "win")


def _settings(config: dict[str, Any]) -> dict[str, Any]:
    """The game's settings from an RLCard config, each checked (``ValueError`` naming it)."""
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict, got {type(config).__name__}")
    unknown = sorted(set(config) - set(CONFIG) - set(RLCARD_KEYS), key=str)
    if unknown:
        raise ValueError(
            f"unknown config key(s) {', '.join(map(repr, unknown))} for piquet; expected "
            f"{', '.join(map(repr, (*RLCARD_KEYS, *CONFIG)))}"
        )
    out = {**CONFIG, **{k: v for k, v in config.items() if k in CONFIG}}
    rules = out["game_rules"]
    if not isinstance(rules, (str, Rules)):
        raise ValueError(f"game_rules must be a preset name, got {type(rules).__name__}")
    try:
        out["game_rules"] = make_rules(rules)
    except ValueError as exc:
        raise ValueError(f"game_rules: {exc}") from None
    if out["game_mode"] not in MODES:
        raise ValueError(f"game_mode must be one of {MODES}, got {out['game_mode']!r}")
    if out["game_reward"] not in REWARDS:
        raise ValueError(f"game_reward must be one of {REWARDS}, got {out['game_reward']!r}")
    scale = out["game_reward_scale"]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < np.inf:
        raise ValueError(f"game_reward_scale must be a positive number, got {scale!r}")
    if not isinstance(config.get("allow_step_back", False), bool):
        raise ValueError("allow_step_back must be True or False")
    return out


def raw_observation(game: Game, player: int) -> dict[str, Any]:
    """What ``player`` sees, readable (RLCard's ``raw_obs``): nothing he does not know."""
    opp = 1 - player
    return {
        "player": player,
        "phase": PHASE_NAMES[game.phase] if not game.is_over else "over",
        "deal": game.deal_number,
        "elder": game.elder == player,
        "hand": cards_str(game.hands[player]).split(),
        "discards": cards_str(game.discards[player]).split(),
        "trick": [card_str(c) for c in game.trick],
        "tricks_won": [game.tricks_won[player], game.tricks_won[opp]],
        "deal_points": [sum(game.scores[player]), sum(game.scores[opp])],
        "totals": [game.totals[player], game.totals[opp]],
    }


def extract_state(
    game: Game, player: int, action_record: list | None = None, obs: np.ndarray | None = None
) -> dict[str, Any]:
    """RLCard's state dict of ``player`` (see the module docstring): ``obs``, ``legal_actions``,
    ``raw_obs``, ``raw_legal_actions``, ``action_record``."""
    legal = game.legal_actions() if game.current_player == player else []
    return {
        "obs": encoder_for(game.rules).encode(game, player) if obs is None else obs,
        "legal_actions": OrderedDict((a, None) for a in legal),
        "raw_obs": raw_observation(game, player),
        "raw_legal_actions": [game.action_name(a) for a in legal],
        "action_record": action_record if action_record is not None else [],
    }


def action_of(game: Game, raw: object) -> int:
    """The legal action id of ``raw``: an id, or a legal action's name in the situation;
    ``ValueError`` naming it and the legal ones otherwise."""
    legal = game.legal_actions()
    if isinstance(raw, (int, np.integer)) and not isinstance(raw, bool):
        if int(raw) in legal:
            return int(raw)
    elif isinstance(raw, str):
        for a in legal:
            if game.action_name(a) == raw:
                return a
    names = ", ".join(f"{a} ({game.action_name(a)})" for a in legal)
    who = game.current_player
    raise ValueError(f"{raw!r} is not a legal action of player {who}; legal: {names}")


class PiquetRLCardGame:
    """RLCard's game interface (``init_game``, ``step``, ``step_back``, ``get_state``,
    ``get_payoffs``...) over one :class:`~piquet_env.game.Game`; made by
    :class:`PiquetRLCardEnv`, which sets ``np_random`` (every deal is drawn from it)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.rules: Rules = settings["game_rules"]
        self.mode: str = settings["game_mode"]
        self.reward: str = settings["game_reward"]
        self.scale = float(settings["game_reward_scale"])
        self.allow_step_back = False
        self.np_random = np.random.RandomState()
        self.game: Game | None = None
        self.history: list[Game] = []

    def _game(self) -> Game:
        if self.game is None:
            raise RuntimeError("the game has not started: call env.reset() first")
        return self.game

    def init_game(self) -> tuple[dict[str, Any], int]:
        """Deal a new game from ``np_random``; the first state and the player to act."""
        seed = int(self.np_random.randint(0, 2**62, dtype=np.int64))
        self.game = Game(self.rules, seed=seed, mode=self.mode, record=False)
        self.history = []
        return self.get_state(self.game.current_player), self.game.current_player

    def step(self, action: object) -> tuple[dict[str, Any], int]:
        """Play ``action`` (a name or an id) for the player to act; the next state and player
        (the first player's state when the game ends)."""
        g = self._game()
        if g.is_over:
            raise ValueError("the game is over: call env.reset()")
        a = action_of(g, action)
        if self.allow_step_back:
            self.history.append(g.clone())
        g.apply(a)
        player = max(g.current_player, 0)
        return self.get_state(player), player

    def step_back(self) -> bool:
        """Undo the last step (with ``allow_step_back``); False at the first state."""
        if not self.history:
            return False
        self.game = self.history.pop()
        return True

    def get_num_players(self) -> int:
        """2."""
        return 2

    def get_num_actions(self) -> int:
        """The size of the action space (35, 36 with the joker)."""
        return self.rules.n_cards + 3

    def get_player_id(self) -> int:
        """The player to act (0 once the game is over)."""
        return max(self._game().current_player, 0)

    def is_over(self) -> bool:
        """Whether the game (one deal, or the partie) has ended."""
        return self._game().is_over

    def get_state(self, player: int) -> dict[str, Any]:
        """``player``'s state (:func:`extract_state`, without the action record, which the env
        adds)."""
        return extract_state(self._game(), player)

    def get_payoffs(self) -> np.ndarray:
        """Each player's result (its sign under ``reward="win"``) times the scale; 0 before the
        end."""
        r = np.array(self._game().returns(), dtype=np.float64)
        if self.reward == "win":
            r = np.sign(r)
        return r * self.scale


class PiquetRLCardEnv(Env):
    """``rlcard.make("piquet", config)``: RLCard's ``Env`` over :class:`PiquetRLCardGame` (see the
    module docstring for the config, the state and the payoffs)."""

    def __init__(self, config: dict[str, Any]) -> None:
        settings = _settings(config)
        self.name = ENV_ID
        self.game = PiquetRLCardGame(settings)
        super().__init__({"allow_step_back": False, "seed": None, **config})
        self.rules = settings["game_rules"]
        size = encoder_for(self.rules).size
        self.state_shape = [[size] for _ in range(self.num_players)]
        self.action_shape = [None for _ in range(self.num_players)]

    def _extract_state(self, state: dict[str, Any]) -> dict[str, Any]:
        """The game's state with the env's record of actions."""
        return {**state, "action_record": self.action_recorder}

    def _decode_action(self, action_id: int) -> str:
        """The name of a legal action id (``ValueError`` for an illegal one)."""
        g = self.game._game()
        return g.action_name(action_of(g, action_id))

    def get_payoffs(self) -> np.ndarray:
        """Both players' payoffs (see :meth:`PiquetRLCardGame.get_payoffs`)."""
        return self.game.get_payoffs()

    def get_perfect_information(self) -> dict[str, Any]:
        """Both hands, both discards, the talon (top first), the phase and the player to act."""
        g = self.game._game()
        return {
            "hands": [cards_str(g.hands[p]).split() for p in (0, 1)],
            "discards": [cards_str(g.discards[p]).split() for p in (0, 1)],
            "talon": [card_str(c) for c in g.talon],
            "phase": PHASE_NAMES[g.phase] if not g.is_over else "over",
            "current_player": g.current_player,
            "legal_actions": [g.action_name(a) for a in g.legal_actions()],
        }


class RLCardAgent:
    """An RLCard agent (anything with ``eval_step(state) -> (action, info)`` and ``use_raw``) as a
    :class:`piquet_env.agent.Agent`: each turn is given to it as RLCard's state dict
    (:func:`extract_state`; its ``action_record`` is empty: the engine's games keep none), and the
    action it answers (an id, or a name where ``use_raw``) is checked to be legal.

    ``reset(seed)`` seeds NumPy's global generator, which RLCard's agents sample from (as
    ``rlcard.utils.set_seed`` does), so that a stochastic one (``NFSPAgent``'s average policy)
    plays the same given the same seed.
    """

    def __init__(self, agent: Any, name: str = "rlcard") -> None:
        if not callable(getattr(agent, "eval_step", None)):
            kind = type(agent).__name__
            raise ValueError(f"RLCardAgent needs an RLCard agent with eval_step(state), got {kind}")
        self.agent = agent
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        """Seed NumPy's global generator (``None``: leave it)."""
        if seed is not None:
            np.random.seed(seed % 2**32)

    def act(self, turn: Turn) -> int:
        """The wrapped agent's ``eval_step`` answer for the turn, as a legal action id."""
        state = extract_state(turn.game, turn.player, obs=turn.observation)
        action, _ = self.agent.eval_step(state)
        return action_of(turn.game, action)


def _network(agent: Any) -> Any:
    """The network an RLCard agent acts with: a ``DQNAgent``'s Q-network, an ``NFSPAgent``'s
    average policy (what ``eval_step`` uses by default)."""
    if hasattr(agent, "q_estimator"):
        return agent.q_estimator.qnet
    if hasattr(agent, "policy_network"):
        return agent.policy_network
    raise ValueError(f"expected RLCard's DQNAgent or NFSPAgent, got {type(agent).__name__}")


def save_weights(agent: Any, path: str) -> None:
    """Write the network ``agent`` acts with (a ``DQNAgent``'s Q-network, an ``NFSPAgent``'s
    average policy) to ``path`` as safetensors: what :func:`dqn` and :func:`nfsp` load."""
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in _network(agent).state_dict().items()}, path)


def _layers(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ValueError(f"layers must be positive sizes separated by commas, got {text!r}")
    return sizes


def _load(agent: Any, weights: str) -> None:
    """Load ``weights`` (from :func:`save_weights`) into the network ``agent`` acts with."""
    from safetensors.torch import load_file

    if not weights:
        raise ValueError("give the weights: weights=FILE.safetensors (from save_weights)")
    try:
        _network(agent).load_state_dict(load_file(weights))
    except (OSError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"cannot load {weights!r} into this network: {first}") from None


def dqn(rules: Rules, seed: int | None = None, weights: str = "", layers: str = "128,128"):
    """A trained RLCard ``DQNAgent`` (``mlp_layers`` ``layers``, its Q-network's ``weights`` from
    :func:`save_weights`) as an :class:`RLCardAgent` that plays ``rules``; greedy, as its
    ``eval_step``. The factory of ``py:piquet_env.adapters.rlcard:dqn:weights=FILE``."""
    import torch
    from rlcard.agents import DQNAgent

    enc = encoder_for(rules)
    agent = DQNAgent(
        num_actions=enc.n_actions,
        state_shape=[enc.size],
        mlp_layers=_layers(layers),
        device=torch.device("cpu"),
    )
    _load(agent, weights)
    return RLCardAgent(agent, name="rlcard-dqn")


def nfsp(rules: Rules, seed: int | None = None, weights: str = "", layers: str = "128,128"):
    """A trained RLCard ``NFSPAgent`` (``hidden_layers_sizes`` ``layers``, its average policy's
    ``weights`` from :func:`save_weights`) as an :class:`RLCardAgent` that plays ``rules``; it
    samples from its average policy, as its ``eval_step``. The factory of
    ``py:piquet_env.adapters.rlcard:nfsp:weights=FILE``."""
    import torch
    from rlcard.agents import NFSPAgent

    enc = encoder_for(rules)
    sizes = _layers(layers)
    agent = NFSPAgent(
        num_actions=enc.n_actions,
        state_shape=[enc.size],
        hidden_layers_sizes=sizes,
        q_mlp_layers=sizes,
        device=torch.device("cpu"),
    )
    _load(agent, weights)
    return RLCardAgent(agent, name="rlcard-nfsp")


register_rlcard()  # a no-op where RLCard has it; else the import above ran first (registration)
