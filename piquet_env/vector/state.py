"""The state of N games as arrays with a leading batch dimension (struct of arrays).

Card sets are ``uint64`` bitmasks (bit ``c`` for card id ``c``; the joker of ``normand`` is bit
32). Per-player arrays have shape ``(N, 2)`` indexed by player; per-category ones ``(N, 3, 2)``
(point, sequence, set); scores ``(N, 2, 10)`` by the fields of :mod:`piquet_env.game.scoring`.
Every name follows :class:`~piquet_env.game.Game`'s attribute of the same meaning.
"""

from __future__ import annotations

import numpy as np

from piquet_env.game.scoring import N_SCORE_FIELDS
from piquet_env.rules import Rules

EXCHANGE, DECLARE, PLAY, OVER = 0, 1, 2, 3
"""Phase codes, as :class:`piquet_env.game.Phase`."""
NO_CARD = -1
"""``lead`` when no card is led; ``repique`` when nobody made one."""

_FIELDS: dict[str, tuple[tuple[int, ...], str]] = {
    # per game
    "seed": ((), "u8"),  # the game seed (see piquet_env.vector.deal)
    "episode": ((), "i8"),  # episodes this slot started since reset
    "phase": ((), "i1"),
    "current": ((), "i1"),  # player to act, -1 when over
    "elder": ((), "i1"),
    "deal_number": ((), "i2"),  # deals finished in this episode
    "planned": ((), "i2"),  # deals planned (tie-break deals add 2)
    "n_discarded": ((), "i1"),  # cards discarded in the exchange under way
    "talon_pos": ((), "i1"),  # talon cards taken so far (the talon is talon[talon_pos:])
    "decl_step": ((), "i1"),  # 0..5: category decl_step // 2, elder then younger
    "lead": ((), "i1"),  # card led to the current trick, -1 if none
    "leader": ((), "i1"),
    "repique": ((), "i1"),
    "pique_open": ((), "?"),
    "over": ((), "?"),
    "n_actions_taken": ((), "i2"),  # length of this episode's action history
    # per player
    "hands": ((2,), "u8"),
    "dealt": ((2,), "u8"),
    "discards": ((2,), "u8"),
    "seen_talon": ((2,), "u8"),
    "shown": ((2,), "u8"),
    "blanche": ((2,), "u8"),
    "played": ((2,), "u8"),
    "taken": ((2,), "i1"),
    "exchanged": ((2,), "?"),
    "tricks_won": ((2,), "i1"),
    "voids": ((2,), "u1"),
    "totals": ((2,), "i4"),
    "result": ((2,), "i4"),
    "point_height": ((2,), "i2"),  # pip total of the point declared, 0 if none
    "scores": ((2, N_SCORE_FIELDS), "i2"),
    "deal_points": ((2,), "i2"),  # sum of the scores: the deal score so far
    # per category and player
    "best_key": ((3, 2), "i2"),  # comparison key of the best combination (0: none)
    "best_cards": ((3, 2), "u8"),
    "won_value": ((3, 2), "i2"),  # points scored on winning the category
    "won_cards": ((3, 2), "u8"),
    "best_record": ((3, 2), "u4"),  # observation bits of the best combination, declared
    "declared_key": ((3, 2), "i2"),  # key of the declared combination (0: passed / undecided)
    "record": ((3, 2), "u4"),  # observation bits of the decision (0: undecided)
}


class BatchState:
    """Arrays for ``n`` games under ``rules`` (see the module docstring); ``talon`` is
    ``(n, talon_size)`` card ids top first, ``history`` ``(n, max_actions)`` the actions taken
    this episode (when recording)."""

    seed: np.ndarray
    episode: np.ndarray
    phase: np.ndarray
    current: np.ndarray
    elder: np.ndarray
    deal_number: np.ndarray
    planned: np.ndarray
    n_discarded: np.ndarray
    talon_pos: np.ndarray
    decl_step: np.ndarray
    lead: np.ndarray
    leader: np.ndarray
    repique: np.ndarray
    pique_open: np.ndarray
    over: np.ndarray
    n_actions_taken: np.ndarray
    hands: np.ndarray
    dealt: np.ndarray
    discards: np.ndarray
    seen_talon: np.ndarray
    shown: np.ndarray
    blanche: np.ndarray
    played: np.ndarray
    taken: np.ndarray
    exchanged: np.ndarray
    tricks_won: np.ndarray
    voids: np.ndarray
    totals: np.ndarray
    result: np.ndarray
    point_height: np.ndarray
    scores: np.ndarray
    deal_points: np.ndarray
    best_key: np.ndarray
    best_cards: np.ndarray
    won_value: np.ndarray
    won_cards: np.ndarray
    best_record: np.ndarray
    declared_key: np.ndarray
    record: np.ndarray
    talon: np.ndarray
    history: np.ndarray

    def __init__(self, rules: Rules, n: int, history: int = 0) -> None:
        self.n = n
        for name, (shape, dtype) in _FIELDS.items():
            setattr(self, name, np.zeros((n, *shape), dtype=np.dtype(dtype)))
        self.talon = np.zeros((n, rules.talon_size), dtype=np.int8)
        self.history = np.zeros((n, history), dtype=np.int8)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every state array by name."""
        return {name: getattr(self, name) for name in (*_FIELDS, "talon", "history")}

    @property
    def nbytes(self) -> int:
        """Bytes held by the state arrays."""
        return sum(a.nbytes for a in self.arrays().values())
