"""Action ids: one integer per decision, fixed for a rule set.

Ids ``0 .. n_cards-1`` are cards (:mod:`piquet_env.cards` ids), used both to discard in the
exchange and to play a card to a trick. Then come three ids: ``DONE`` (finish exchanging),
``DECLARE`` and ``PASS``. With 32 cards that is 35 actions (``DONE=32, DECLARE=33, PASS=34``); with
the ``normand`` joker, 36 (``DONE=33, DECLARE=34, PASS=35``).

>>> from piquet_env.rules import STANDARD
>>> n_actions(STANDARD), action_name(27, STANDARD), parse_action("declare", STANDARD)
(35, 'TS', 33)
"""

from __future__ import annotations

from typing import TypeAlias

from piquet_env.cards import card_str, parse_card
from piquet_env.rules import Rules

ActionId: TypeAlias = int
"""An action id: ``0 .. n_actions(rules) - 1`` (cards, then DONE, DECLARE and PASS)."""

SPECIAL_NAMES = ("done", "declare", "pass")


def n_actions(rules: Rules) -> int:
    """Size of the action space: the cards plus DONE, DECLARE and PASS."""
    return rules.n_cards + 3


def done_action(rules: Rules) -> ActionId:
    """Id of "done exchanging"."""
    return rules.n_cards


def declare_action(rules: Rules) -> ActionId:
    """Id of "declare" (announce the best combination of the current category)."""
    return rules.n_cards + 1


def pass_action(rules: Rules) -> ActionId:
    """Id of "pass" (sink the current category)."""
    return rules.n_cards + 2


def action_name(action: ActionId, rules: Rules) -> str:
    """Readable name of an action id: a card name (``'QH'``), ``'done'``, ``'declare'`` or
    ``'pass'``."""
    if (
        not isinstance(action, int)
        or isinstance(action, bool)
        or not 0 <= action < n_actions(rules)
    ):
        raise ValueError(f"action {action!r} is not an id in 0..{n_actions(rules) - 1}")
    if action < rules.n_cards:
        return card_str(action)
    return SPECIAL_NAMES[action - rules.n_cards]


def parse_action(text: str, rules: Rules) -> ActionId:
    """Action id of a name from :func:`action_name` (case-insensitive; ``'10s'`` works too)."""
    t = text.strip().lower()
    if t in SPECIAL_NAMES:
        return rules.n_cards + SPECIAL_NAMES.index(t)
    card = parse_card(t)
    if card >= rules.n_cards:
        raise ValueError(f"card {text!r} is not in the pack of rules {rules.name!r}")
    return card
