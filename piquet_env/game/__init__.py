"""The pure game: a partie of Piquet as a state machine (no numpy, gymnasium or torch here).

- :mod:`.state`: :class:`Game`, the one place that mutates game state.
- :mod:`.scoring`: pure scoring (trick points, repique, capot, settlement) and :class:`DealScore`.
- :mod:`.knowledge`: what a player knows; :func:`determinize` for search agents.
- :mod:`.record`: the JSON event log and :func:`replay`.
"""

from piquet_env.game.knowledge import (
    determinize,
    hidden_cards,
    opponent_known,
    opponent_unplaced,
    talon_known,
)
from piquet_env.game.record import load_events, replay, to_json
from piquet_env.game.scoring import DealScore, settle
from piquet_env.game.state import Game, IllegalActionError, Phase, check_deal

__all__ = [
    "DealScore",
    "Game",
    "IllegalActionError",
    "Phase",
    "check_deal",
    "determinize",
    "hidden_cards",
    "load_events",
    "opponent_known",
    "opponent_unplaced",
    "replay",
    "settle",
    "talon_known",
    "to_json",
]
