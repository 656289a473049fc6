"""Exact evaluation of a rule set small enough to enumerate (the ``mini`` variant): the whole game
tree of one deal (:mod:`~piquet_env.exact.tree`), information-state keys
(:mod:`~piquet_env.exact.keys`), expected values, best responses, NashConv and CFR+
(:mod:`~piquet_env.exact.solve`), and agents as policies of the tree, tabular policies included
(:mod:`~piquet_env.exact.policy`).

>>> from piquet_env.exact import build_tree, exploitability, uniform_policy
>>> from piquet_env.rules import make_rules
>>> tree = build_tree(make_rules("mini[suits=2,ranks=2,hand_size=1]"))
>>> tree.counts()["deals"], round(exploitability(tree, uniform_policy(tree)).nash_conv, 4)
(24, 7.8333)
"""

from piquet_env.exact.policy import TabularAgent, TabularPolicy, tabulate
from piquet_env.exact.solve import (
    CFRPlus,
    Exploitability,
    best_response,
    expected_value,
    exploitability,
    nash_conv,
    uniform_policy,
)
from piquet_env.exact.tree import GameTree, TreeError, build_tree, check_size

__all__ = [
    "CFRPlus",
    "Exploitability",
    "GameTree",
    "TabularAgent",
    "TabularPolicy",
    "TreeError",
    "best_response",
    "build_tree",
    "check_size",
    "expected_value",
    "exploitability",
    "nash_conv",
    "tabulate",
    "uniform_policy",
]
