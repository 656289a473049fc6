"""The pure game: a partie of Piquet as a state machine (no numpy, gymnasium or torch here).

- :mod:`.state`: :class:`Game`, the one place that mutates game state.
- :mod:`.scoring`: pure scoring (trick points, repique, capot, settlement) and :class:`DealScore`.
- :mod:`.knowledge`: what a player knows; :func:`determinize` (and its
  opponent's hand alone, :func:`determinize_hand`) for search agents.
- :mod:`.record`: the JSON event log, game records on disk and :func:`replay`.
"""

from piquet_env.game.knowledge import (
    determinize,
    determinize_hand,
    hidden_cards,
    opponent_known,
    opponent_unplaced,
    talon_known,
)
from piquet_env.game.record import (
    RECORD_FORMAT,
    RecordError,
    check_record,
    load_events,
    load_record,
    parse_record,
    record_of,
    replay,
    save_record,
    start_game,
    to_json,
)
from piquet_env.game.scoring import DEAL_SCORE_FIELDS, SCORE_FIELD_NAMES, DealScore, settle
from piquet_env.game.state import (
    PHASE_NAMES,
    Game,
    IllegalActionError,
    Phase,
    check_deal,
    max_start_total,
)

__all__ = [
    "DEAL_SCORE_FIELDS",
    "PHASE_NAMES",
    "RECORD_FORMAT",
    "SCORE_FIELD_NAMES",
    "DealScore",
    "Game",
    "IllegalActionError",
    "Phase",
    "RecordError",
    "check_deal",
    "check_record",
    "determinize",
    "determinize_hand",
    "hidden_cards",
    "load_events",
    "load_record",
    "max_start_total",
    "opponent_known",
    "opponent_unplaced",
    "parse_record",
    "record_of",
    "replay",
    "save_record",
    "settle",
    "start_game",
    "talon_known",
    "to_json",
]
