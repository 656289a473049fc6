"""The benchmark protocol as data: what a result depends on, its version, and its checks.

:data:`PROTOCOL` is version 2, :data:`PROTOCOL_V1` the one before
(:mod:`piquet_training.benchmark.run` runs it, explained there);
:meth:`Protocol.from_dict` reads the ``protocol`` block of a result file or a ``--protocol``
file, every value checked (:class:`BenchmarkError` naming the field).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from piquet_env.game.state import MODES
from piquet_env.rules import make_rules
from piquet_training.settings.train import EXPLOIT_LEARNING_RATE, ConfigError, TrainConfig

PROTOCOL_NAME = "piquet-benchmark"
"""The ``name`` in every result file's ``protocol`` block."""


class BenchmarkError(ValueError):
    """A benchmark that cannot run as asked (a bad protocol, an agent that does not build, a work
    folder in use); the message says what is wrong."""


@dataclass(frozen=True)
class Match:
    """One match of the protocol: the agent against ``opponent`` over ``pairs`` duplicate pairs
    dealt from ``seed``."""

    opponent: str
    pairs: int
    seed: int


@dataclass(frozen=True)
class ExploitBudget:
    """The exploitability bound's budget: ``env_steps`` of exploiter training (seed ``seed``,
    training settings ``settings`` on top of the exploiter's defaults), then ``eval_pairs`` fresh
    duplicate pairs; periodic evaluations of ``periodic_pairs`` every ``eval_every`` updates; the
    ``reference`` agent's edge measured on the same deals."""

    env_steps: int
    seed: int = 0
    eval_pairs: int = 2000
    eval_every: int = 50
    periodic_pairs: int = 100
    reference: str = "baseline"
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExactMeasure:
    """The exact NashConv's setting (version 2 on): the agent's exact exploitability under the
    small, exactly solvable ``rules`` (the agent's spec built for those rules, its plans seeded
    with ``seed``), by full traversal (:func:`~piquet_training.exact.exact_report`)."""

    rules: str = "mini"
    seed: int = 0


@dataclass(frozen=True)
class Protocol:
    """Everything a benchmark result depends on (see the module docstring); :data:`PROTOCOL` is
    the one results are compared under."""

    version: int
    matches: tuple[Match, ...]
    exploit: ExploitBudget
    rules: str = "standard"
    mode: str = "deal"
    variance_reduction: bool = False
    exact: ExactMeasure | None = None
    """The exact NashConv's setting; ``None`` in version 1, which does not measure it."""

    def to_dict(self) -> dict[str, Any]:
        """The ``protocol`` block of a result file (``exact`` from version 2 on)."""
        out = {
            "name": PROTOCOL_NAME,
            "version": self.version,
            "rules": self.rules,
            "mode": self.mode,
            "variance_reduction": self.variance_reduction,
            "matches": [dataclasses.asdict(m) for m in self.matches],
            "exploit": dataclasses.asdict(self.exploit),
        }
        if self.exact is not None:
            out["exact"] = dataclasses.asdict(self.exact)
        return out

    @classmethod
    def from_dict(cls, d: object, where: str = "protocol") -> Protocol:
        """A protocol from its :meth:`to_dict` form, every value checked; :class:`BenchmarkError`
        naming the field that is wrong."""
        version = d.get("version") if isinstance(d, dict) else None
        exact_kept = isinstance(version, int) and not isinstance(version, bool) and version >= 2
        d = _table(d, where, PROTOCOL_KEYS | ({"exact"} if exact_kept else set()))
        if d["name"] != PROTOCOL_NAME:
            raise BenchmarkError(f"{where}.name: expected {PROTOCOL_NAME!r}, got {d['name']!r}")
        matches = d["matches"]
        if not isinstance(matches, list) or not matches:
            raise BenchmarkError(f"{where}.matches: expected a non-empty list of matches")
        parsed = []
        for i, m in enumerate(matches):
            m = _table(m, f"{where}.matches[{i}]", {"opponent", "pairs", "seed"})
            parsed.append(
                Match(
                    _text(m["opponent"], f"{where}.matches[{i}].opponent"),
                    _count(m["pairs"], f"{where}.matches[{i}].pairs", 1),
                    _count(m["seed"], f"{where}.matches[{i}].seed", 0),
                )
            )
        opponents = [m.opponent for m in parsed]
        if len(set(opponents)) != len(opponents):
            raise BenchmarkError(f"{where}.matches: an opponent is named twice: {opponents}")
        e = _table(d["exploit"], f"{where}.exploit", BUDGET_KEYS)
        if not isinstance(e["settings"], dict):
            raise BenchmarkError(f"{where}.exploit.settings: expected a table of settings")
        budget = ExploitBudget(
            env_steps=_count(e["env_steps"], f"{where}.exploit.env_steps", 0),
            seed=_count(e["seed"], f"{where}.exploit.seed", 0),
            eval_pairs=_count(e["eval_pairs"], f"{where}.exploit.eval_pairs", 1),
            eval_every=_count(e["eval_every"], f"{where}.exploit.eval_every", 0),
            periodic_pairs=_count(e["periodic_pairs"], f"{where}.exploit.periodic_pairs", 1),
            reference=_text(e["reference"], f"{where}.exploit.reference", empty=True),
            settings=dict(e["settings"]),
        )
        if d["mode"] not in MODES:
            raise BenchmarkError(f"{where}.mode: expected one of {MODES}, got {d['mode']!r}")
        if not isinstance(d["variance_reduction"], bool):
            raise BenchmarkError(f"{where}.variance_reduction: expected true or false")
        try:
            make_rules(_text(d["rules"], f"{where}.rules"))
        except ValueError as exc:
            raise BenchmarkError(f"{where}.rules: {exc}") from None
        out = cls(
            version=_count(d["version"], f"{where}.version", 1),
            matches=tuple(parsed),
            exploit=budget,
            rules=d["rules"],
            mode=d["mode"],
            variance_reduction=d["variance_reduction"],
            exact=_exact_measure(d["exact"], f"{where}.exact") if exact_kept else None,
        )
        out.exploit_config_base()  # the settings are checked here too
        return out

    def spec(self, name: str) -> str:
        """The agent spec that the protocol's opponent or exploit reference ``name`` plays: the
        name itself, except in versions 1 and 2, set while ``baseline`` was the policy now kept
        as ``baseline@2026-11-30``: their ``baseline`` is that policy (:data:`PINNED`), whatever
        ``baseline`` ships now, so that a new result stays comparable with the old.

        >>> PROTOCOL.spec("baseline"), PROTOCOL.spec("mcts:100")
        ('baseline@2026-11-30', 'mcts:100')
        """
        return PINNED.get(name, name) if self.version <= 2 else name

    def match(self, opponent: str) -> Match:
        """The protocol's match against ``opponent``; :class:`BenchmarkError` if it has none."""
        for m in self.matches:
            if m.opponent == opponent:
                return m
        names = ", ".join(m.opponent for m in self.matches)
        raise BenchmarkError(f"the protocol has no match against {opponent!r} (it has {names})")

    def exploit_config_base(self) -> TrainConfig:
        """The exploiter's training settings before :func:`~piquet_training.exploit.exploiter.
        exploit_config` adds the target's: the exploiter's learning rate and the budget's
        ``settings``, checked."""
        try:
            return TrainConfig.from_dict(
                {"learning_rate": EXPLOIT_LEARNING_RATE, **self.exploit.settings},
                source="the protocol's exploit settings",
            )
        except ConfigError as exc:
            raise BenchmarkError(str(exc)) from None


PROTOCOL_V1 = Protocol(
    version=1,
    matches=(
        Match("random", pairs=500, seed=2026),
        Match("heuristic", pairs=2000, seed=2026),
        Match("mcts:100", pairs=500, seed=2026),
        Match("baseline", pairs=2000, seed=2026),
    ),
    exploit=ExploitBudget(
        env_steps=20_000_000,
        seed=0,
        eval_pairs=2000,
        eval_every=50,
        periodic_pairs=100,
        reference="baseline",
        settings={"torch_threads": 1, "learning_rate": EXPLOIT_LEARNING_RATE},
    ),
)
"""Version 1 of the protocol (2026-12-01). Sized so that the whole of it takes about 20 minutes
for a policy on a free core of the project's 2-core machine (the exploiter's 20 M env steps most
of it, the 500 pairs against ``mcts:100`` 5 to 7 minutes; more on a busy machine:
docs/results/benchmark.md); a search takes longer in its matches and is not exploited
(:func:`~piquet_agents.registry.is_search`)."""

PROTOCOL = dataclasses.replace(PROTOCOL_V1, version=2, exact=ExactMeasure("mini", seed=0))
"""Version 2 (2026-12-03), the current one: version 1 and the exact NashConv of the agent under
the ``mini`` rules (about 5 minutes, most of it the tree; a search, or an agent that does not play
``mini``, is not measured and the file says why). A version-1 file is brought to version 2 by
measuring that alone (:func:`~piquet_training.benchmark.run.upgrade_result`): everything else is the
same."""

PINNED = {"baseline": "baseline@2026-11-30"}
"""What versions 1 and 2 of the protocol play for the names they give (:meth:`Protocol.spec`):
every file of theirs was made while ``baseline`` was this policy (SHA-256 ``6e3fd72474bf...``)."""

SEARCH_SKIP = (
    "a search: an exploiter plays it one game at a time at the search's own cost (12 M env steps "
    "against mcts:100 would take 35-55 CPU-hours), so the protocol does not exploit searches"
)
"""Why the exploitability bound of a search is not measured (the result file says it)."""
EXACT_SEARCH_SKIP = "a search: its moves have no exact probabilities to traverse"
"""Why the exact NashConv of a search is not measured (the result file says it)."""
SELF_SKIP = "the agent itself: 0 by symmetry, not played"
"""Why a match against the same agent is not played (the result file says it)."""


PROTOCOL_KEYS = frozenset(
    {"name", "version", "rules", "mode", "variance_reduction", "matches", "exploit"}
)
"""The keys of a ``protocol`` block."""
BUDGET_KEYS = frozenset(f.name for f in dataclasses.fields(ExploitBudget))
"""The keys of its ``exploit`` block."""


def _exact_measure(d: object, where: str) -> ExactMeasure:
    """The ``exact`` block, its rules small enough to traverse; else :class:`BenchmarkError`."""
    from piquet_env.exact import TreeError, check_size

    d = _table(d, where, {"rules", "seed"})
    rules = _text(d["rules"], f"{where}.rules")
    try:
        check_size(make_rules(rules))
    except (ValueError, TreeError) as exc:
        raise BenchmarkError(f"{where}.rules: {exc}") from None
    return ExactMeasure(rules, _count(d["seed"], f"{where}.seed", 0))


def _table(d: object, where: str, want: set[str] | frozenset[str]) -> dict:
    """``d`` if it is a dict with exactly the keys ``want``; else :class:`BenchmarkError`."""
    if not isinstance(d, dict):
        raise BenchmarkError(f"{where}: expected an object, got {type(d).__name__}")
    if set(d) != want:
        missing, extra = sorted(want - set(d)), sorted(set(d) - want)
        parts = [f"missing {', '.join(missing)}"] * bool(missing)
        parts += [f"unknown {', '.join(extra)}"] * bool(extra)
        raise BenchmarkError(f"{where}: {'; '.join(parts)}")
    return d


def _count(v: object, where: str, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise BenchmarkError(f"{where}: expected an integer of at least {low}, got {v!r}")
    return v


def _text(v: object, where: str, empty: bool = False) -> str:
    if not isinstance(v, str) or not (v.strip() or (empty and v == "")):
        kind = "string" if empty else "non-empty string"
        raise BenchmarkError(f"{where}: expected a {kind}, got {v!r}")
    return v
