"""Build agents from short text specs, as the command line and the evaluation workers do.

The spec grammar (case-insensitive names; :data:`SPEC_FORMS` lists it for help texts):

- ``random``, ``heuristic``;
- ``mcts`` or ``mcts:ITERATIONS`` (default 200), optionally followed by ``:KEY=VALUE`` options of
  :class:`~piquet_agents.mcts.MCTSAgent` (:data:`MCTS_OPTIONS`), e.g. ``mcts:400:c=0.5`` or
  ``mcts:0:time=0.2`` (0 iterations only with ``time=``);
- ``mcts:N:policy=PATH``: the search guided by a trained policy,
  :class:`~piquet_agents.guided_search.GuidedSearchAgent`, with the options of
  :data:`GUIDED_OPTIONS` (``batch``, ``mix``, ``margin``, ``belief``, ``floor``);
  ``policy=baseline`` for the shipped one. ``PATH`` may contain ``:`` (a Windows drive, a
  folder named ``a:b``): it runs up to the next ``:NAME=VALUE`` option, or over it where only
  the longer text is an existing file or folder;
- ``baseline``: the policy shipped in the package for the rules in use (one per rule set that
  has one: :mod:`piquet_agents.baseline`); ``baseline@TAG`` a policy it named before, kept in
  the package (:data:`~piquet_agents.baseline.RETIRED`, e.g. ``baseline@2026-11-30``);
- the path of a tabular policy file (``.npz``, :class:`piquet_env.exact.TabularPolicy`, which
  ``piquet solve`` writes), played by sampling its probabilities;
- the path of a policy checkpoint or run directory (loaded by
  :meth:`piquet_agents.policy.PolicyAgent.load`). An existing path is always read as a path,
  whatever ``:`` it contains;
- ``py:MODULE:FACTORY`` or ``py:FILE.py:FACTORY``: an agent of your own, ``FACTORY(rules, seed)``
  (:mod:`piquet_agents.external`).
- A policy (``baseline`` or a path) plays its most probable legal action; followed by
  ``:sample`` (``baseline:sample``, ``PATH:sample``) it samples from its probabilities instead,
  seeded by the agent's seed: the policy as it was trained, which is what an equilibrium is.

Each form is one row of :data:`KINDS` (its name, help, which specs it takes, how it builds one);
the dispatch, :data:`FORMS` and every help text come from that table.

Counts (``ITERATIONS``, ``batch``) are written in the digits ``0-9`` and numbers in
ASCII (``int()`` would take ``'٣'`` or ``'１'``). A spec that cannot be built raises
:class:`AgentSpecError` saying ``agent spec '<spec>': <what is wrong>``.

>>> from piquet_env.rules import STANDARD
>>> make_agent("random", STANDARD, seed=1).name
'random'
>>> make_agent("mcts:50", STANDARD).name
'mcts:50'
>>> make_agent("mcts:-3", STANDARD)
Traceback (most recent call last):
...
piquet_agents.registry.AgentSpecError: agent spec 'mcts:-3': iterations must be a positive ...
"""

from __future__ import annotations

import importlib
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from piquet_agents.external import ExternalAgentError, is_external, make_external, source_file
from piquet_env.agent import Agent
from piquet_env.rules import Rules


def _listed(items: list[str]) -> str:
    """``'a, b or c'``."""
    return ", ".join(items[:-1]) + f" or {items[-1]}"


MCTS_OPTIONS = {"c": "c", "time": "time_limit", "rollout": "rollout", "scale": "scale"}
"""Options of an ``mcts`` spec and the :class:`~piquet_agents.mcts.MCTSAgent` argument each
sets."""
GUIDED_OPTIONS = ("policy", "batch", "mix", "margin", "belief", "floor", "against")
"""Options of an ``mcts:N:policy=PATH`` spec (the search guided by a trained policy,
:class:`~piquet_agents.guided_search.GuidedSearchAgent`), each its argument of that name but
``against=SPEC`` (the last option: the rest of the spec is the agent's), the ``opponent`` that
plays the other seat of the playouts: the search of an exploiter of that agent (``mix`` 1 unless
given; ``belief=reach`` weighs its worlds by that agent's reach, :mod:`piquet_agents.belief`)."""
REMOVED_GUIDED_OPTIONS = {
    "search": "the search is the flat one (search=tree gained nothing on its policy)",
    "playout": "the playouts are the policy's own (playout=heuristic gained nothing)",
    "exchange": "the exchange is searched card by card (exchange=plan and exchange=value gained "
    "nothing; mcts:N plans whole discards)",
    "c": "it was the PUCT constant of search=tree",
    "depth": "it cut the tree of search=tree",
    "scale": "it weighed values against c in search=tree; the flat search compares values only "
    "with each other",
}
"""Options the guided search once had, each with why it went: forms that gained nothing on their
policy in the measurements (the docs' Results, the guided search), and their settings."""
_ITERATIONS_RULE = "iterations must be a positive integer (or 0 with a time=SECONDS option)"
_COUNT = re.compile(r"[0-9]+")
"""A count as the grammar writes it: ASCII digits only (``int()`` also takes ``'٣'``, ``'１'``,
``'+5'`` and ``'1_0'``, and ``str.isdigit()`` takes ``'²'``, which ``int()`` refuses)."""
_OPTION = re.compile(r"\s*[A-Za-z_]+\s*=")
"""The start of a ``KEY=VALUE`` option, where a policy's path stops."""


def _digits(text: str) -> str:
    """``' (digits 0-9 only)'`` for a text that holds other characters than ASCII, else ``''``:
    said after a refused count or number."""
    return "" if text.isascii() else " (digits 0-9 only)"


def _count(spec: str, what: str, text: str, low: int, rule: str | None = None) -> int:
    """The count ``text`` (ASCII digits) if it is at least ``low``, else :class:`AgentSpecError`
    ``'<rule>, got <text>'`` (``rule`` defaults to ``'<what> must be a positive integer'``)."""
    text = text.strip()
    if _COUNT.fullmatch(text) and int(text) >= low:
        return int(text)
    rule = rule or f"{what} must be a positive integer"
    raise AgentSpecError(spec, f"{rule}, got {text!r}{_digits(text)}")


class AgentSpecError(ValueError):
    """An agent spec that names no agent, or whose options or checkpoint are unusable; the message
    names the spec and what is wrong."""

    def __init__(self, spec: object, reason: str) -> None:
        super().__init__(f"agent spec {spec!r}: {reason}")
        self.spec = spec
        self.reason = reason


def _torch_module(spec: str, name: str) -> ModuleType:
    """``piquet_agents.<name>`` (``policy`` or ``guided_search``: they need torch), or
    :class:`AgentSpecError` saying what to install."""
    try:
        return importlib.import_module(f"piquet_agents.{name}")
    except ImportError as exc:
        cause = exc if isinstance(exc, ModuleNotFoundError) else exc.__cause__
        absent = getattr(cause, "name", None)
        reason = f"needs {absent.partition('.')[0]}: pip install -e '.[train]'"
        raise AgentSpecError(spec, reason if absent else str(exc)) from exc


def _number(spec: str, key: str, text: str, low: float, strict: bool) -> float:
    """A finite option value above ``low`` (``strict``) or at least ``low``, written in ASCII."""
    try:
        if not text.isascii():
            raise ValueError(text)
        value = float(text)
    except ValueError:
        raise AgentSpecError(
            spec, f"option {key}={text!r} is not a number{_digits(text)}"
        ) from None
    bound = f"> {low:g}" if strict else f">= {low:g}"
    if not math.isfinite(value) or value < low or (strict and value == low):
        raise AgentSpecError(spec, f"option {key} must be a finite number {bound}, got {text!r}")
    return value


def _parse_guided(spec: str, parts: list[str], rules: Rules | None, seed: int | None) -> Agent:
    """``mcts:N:policy=PATH`` with options ``batch``, ``mix``, ``margin``, ``belief``, ``floor``
    and ``against`` (``:KEY=VALUE`` each): the search guided by a policy."""
    GuidedSearchAgent = _torch_module(spec, "guided_search").GuidedSearchAgent

    kwargs: dict[str, object] = {}
    for opt in guided_options(parts):
        key, sep, value = opt.partition("=")
        key = key.strip().lower()
        if sep and key in REMOVED_GUIDED_OPTIONS:
            raise AgentSpecError(
                spec, f"option {key} was removed: {REMOVED_GUIDED_OPTIONS[key]}; drop it"
            )
        if not sep or key not in GUIDED_OPTIONS:
            raise AgentSpecError(
                spec,
                f"bad option {opt!r}; with policy= the options are "
                f"{', '.join(k + '=VALUE' for k in GUIDED_OPTIONS)}",
            )
        if key in kwargs:
            raise AgentSpecError(spec, f"option {key} given twice")
        if key in ("policy", "against"):
            kwargs[key] = value.strip()
        elif key == "belief":
            from piquet_agents.belief import BELIEFS

            if value.strip().lower() not in BELIEFS:
                raise AgentSpecError(
                    spec, f"option belief must be one of {', '.join(BELIEFS)}, got {value!r}"
                )
            kwargs[key] = value.strip().lower()
        elif key == "batch":
            kwargs[key] = _count(spec, f"option {key}", value, 1)
        else:  # mix, margin or floor
            kwargs[key] = _number(spec, key, value, 0.0, strict=False)
            if key in ("mix", "floor") and float(kwargs[key]) > 1:  # type: ignore[arg-type]
                raise AgentSpecError(
                    spec, f"option {key} must be a number in [0, 1], got {value!r}"
                )
    text = parts[1] if len(parts) > 1 else ""
    iterations = _count(spec, "with policy= iterations", text, 1)
    from piquet_agents.baseline import NoBaselineError

    try:
        path = _policy_path(str(kwargs.pop("policy")), rules=rules)
    except NoBaselineError as exc:
        raise AgentSpecError(spec, f"policy: {exc}") from None
    if not os.path.exists(path):
        raise AgentSpecError(spec, f"policy: no checkpoint file or run directory at {path!r}")
    if "against" in kwargs:
        against = str(kwargs.pop("against"))
        kwargs.setdefault("mix", 1.0)
        try:
            kwargs["opponent"] = make_agent(against, rules, seed=seed)
        except AgentSpecError as exc:
            raise AgentSpecError(spec, f"against: {exc}") from None
    try:
        return GuidedSearchAgent.load(path, iterations, rules=rules, seed=seed, name=spec, **kwargs)
    except ValueError as exc:  # CheckpointError, or a network of the wrong size
        raise AgentSpecError(spec, f"cannot use the policy: {exc}") from exc


def guided_options(parts: list[str]) -> list[str]:
    """The ``KEY=VALUE`` options of a split ``mcts:N:...`` spec (``parts[2:]``), with the path of
    ``policy=`` joined back over the ``:`` it contains: up to the next ``NAME=VALUE`` option, or
    over it when only the longer text is an existing file or folder.

    >>> guided_options("mcts:9:policy=C:/runs/a:b:batch=8".split(":"))
    ['policy=C:/runs/a:b', 'batch=8']
    >>> guided_options("mcts:9:policy=p.safetensors:against=heuristic:seed=3".split(":"))
    ['policy=p.safetensors', 'against=heuristic:seed=3']
    """
    opts, out, i = parts[2:], [], 0
    while i < len(opts):
        key, sep, value = opts[i].partition("=")
        end = i + 1
        if sep and key.strip().lower() == "against":  # the rest of the spec is the agent's
            out.append(":".join(opts[i:]))
            break
        if sep and key.strip().lower() == "policy":
            stop = next((j for j in range(i + 1, len(opts)) if _OPTION.match(opts[j])), len(opts))
            longer = range(len(opts), stop, -1)
            end = next(
                (j for j in longer if os.path.exists(":".join([value, *opts[i + 1 : j]]).strip())),
                stop,
            )
        out.append(":".join(opts[i:end]))
        i = end
    return out


def _parse_mcts(spec: str, seed: int | None, rules: Rules | None = None) -> Agent:
    from piquet_agents.mcts import ROLLOUT_POLICIES, MCTSAgent

    parts = spec.split(":")
    if any(p.strip().lower().startswith("policy=") for p in parts[2:]):
        return _parse_guided(spec, parts, rules, seed)
    kwargs: dict[str, object] = {}
    for opt in parts[2:]:
        key, sep, value = opt.partition("=")
        key = key.strip().lower()
        if not sep or key not in MCTS_OPTIONS:
            raise AgentSpecError(
                spec,
                f"bad option {opt!r}; options are {', '.join(k + '=VALUE' for k in MCTS_OPTIONS)}",
            )
        arg = MCTS_OPTIONS[key]
        if arg in kwargs:
            raise AgentSpecError(spec, f"option {key} given twice")
        if key == "rollout":
            if value not in ROLLOUT_POLICIES:
                raise AgentSpecError(
                    spec, f"option rollout must be one of {ROLLOUT_POLICIES}, got {value!r}"
                )
            kwargs[arg] = value
        else:
            kwargs[arg] = _number(spec, key, value, 0.0, strict=key != "c")
    iterations = 200
    if len(parts) > 1 and parts[1].strip() != "":
        low = 0 if "time_limit" in kwargs else 1
        iterations = _count(spec, "iterations", parts[1], low, _ITERATIONS_RULE)
    try:
        return MCTSAgent(iterations=iterations, seed=seed, name=spec, **kwargs)  # type: ignore[arg-type]
    except ValueError as exc:  # pragma: no cover - every option was checked above
        raise AgentSpecError(spec, str(exc)) from None


def spec_files(spec: str, rules: Rules | None = None) -> list[str]:
    """The checkpoint files an agent spec loads under ``rules`` (default: the standard rules), as
    :func:`make_agent` would resolve them (the rules' shipped file for ``baseline``, a run
    directory's policy file): none for ``random``, ``heuristic``, the plain ``mcts``, and
    ``baseline`` under rules with no shipped policy. What identifies a trained agent beyond its
    spec.

    >>> spec_files("mcts:100")
    []
    >>> [os.path.basename(f) for f in spec_files("mcts:200:policy=baseline")]
    ['baseline.safetensors']
    """
    spec = _sampled(spec.strip())[0]
    if is_external(spec) and not os.path.exists(spec):
        source = source_file(spec)
        return [source] if source else []
    if spec.lower().split(":")[0] == "mcts" and not os.path.exists(spec):
        for part in guided_options(spec.split(":")):
            key, _, value = part.partition("=")
            if key.strip().lower() == "policy":
                return _policy_files(value.strip(), rules)
        return []
    return _policy_files(spec, rules, case=False)


def _policy_files(text: str, rules: Rules | None, case: bool = True) -> list[str]:
    """The checkpoint file a policy is named by (:func:`_policy_path`), if there is one: none for
    ``baseline`` under rules that ship no policy."""
    from piquet_agents.baseline import NoBaselineError
    from piquet_agents.checkpoint import resolve

    try:
        path = _policy_path(text, case, rules)
    except NoBaselineError:
        return []
    return [str(resolve(path))] if os.path.exists(path) else []


def _policy_path(text: str, case: bool = True, rules: Rules | None = None) -> str:
    """The checkpoint path a policy is named by: the shipped file of ``rules`` for ``baseline``
    and the retired one for ``baseline@TAG`` (unless a file of that name exists here;
    ``case=False`` accepts any case; :class:`~piquet_agents.baseline.NoBaselineError` where the
    rules have none), else ``text`` itself."""
    name = text if case else text.lower()
    tag = _baseline_tag(text, case)
    if (name == "baseline" or tag is not None) and not os.path.exists(text):
        from piquet_agents.baseline import baseline_path

        return str(baseline_path(rules, tag))
    return text


# ---------------------------------------------------------------------------- the table


SAMPLE = ":sample"
"""The suffix that makes a policy spec play by sampling from its probabilities (seeded) rather
than its most probable action: ``baseline:sample``, ``PATH:sample``."""


def _sampled(spec: str) -> tuple[str, bool]:
    """``(spec without ':sample', True)`` for a sampled policy spec, else ``(spec, False)``. An
    existing path is a path, whatever it ends with."""
    if spec.lower().endswith(SAMPLE) and not os.path.exists(spec):
        return spec[: -len(SAMPLE)].rstrip(), True
    return spec, False


def _build_random(spec: str, rules: Rules | None, seed: int | None) -> Agent:
    from piquet_env.agent import RandomAgent

    return RandomAgent(seed=seed)


_FIXED_SEED = re.compile(r"heuristic:seed=([0-9]+)", re.IGNORECASE)


def _is_heuristic(spec: str) -> bool:
    return spec.lower() == "heuristic" or spec.lower().startswith("heuristic:")


def _build_heuristic(spec: str, rules: Rules | None, seed: int | None) -> Agent:
    from piquet_agents.heuristic import HeuristicAgent

    if spec.lower() == "heuristic":
        return HeuristicAgent(seed=seed)
    fixed = _FIXED_SEED.fullmatch(spec.strip())
    if fixed is None:
        raise AgentSpecError(spec, "the heuristic's one option is seed=N (a count, 0-9 digits)")
    return HeuristicAgent(seed=int(fixed.group(1)), name=spec, fixed=True)


def _baseline_tag(name: str, case: bool = False) -> str | None:
    """``TAG`` for ``baseline@TAG`` (``case=False``: ``baseline`` in any case), else ``None``
    (``baseline`` or another spec)."""
    head, at, tag = name.partition("@")
    head = head.strip() if case else head.strip().lower()
    return tag.strip() if at and head == "baseline" else None


def _is_baseline(spec: str) -> bool:
    base = _sampled(spec)[0]
    named = base.lower() == "baseline" or _baseline_tag(base) is not None
    return named and not os.path.exists(base)


def _build_baseline(spec: str, rules: Rules | None, seed: int | None) -> Agent:
    from piquet_agents.baseline import NoBaselineError, baseline_path

    base, sample = _sampled(spec)
    tag = _baseline_tag(base)
    PolicyAgent = _torch_module(spec, "policy").PolicyAgent
    name = ("baseline" if tag is None else "baseline@" + tag) + (SAMPLE if sample else "")
    try:
        return PolicyAgent.load(
            baseline_path(rules, tag), rules=rules, seed=seed, name=name, greedy=not sample
        )
    except NoBaselineError as exc:
        raise AgentSpecError(spec, str(exc)) from None
    except ValueError as exc:
        raise AgentSpecError(spec, f"cannot use the shipped policy: {exc}") from exc


def is_search(spec: str) -> bool:
    """Whether ``spec`` is a search (``mcts:N``, ``mcts:N:policy=P``), not a file of that name.

    >>> is_search("mcts:100"), is_search("MCTS:200:policy=baseline"), is_search("baseline")
    (True, True, False)
    """
    return spec.strip().lower().split(":")[0] == "mcts" and not os.path.exists(spec)


def same_agent(a: str, b: str, rules: Rules | None = None) -> bool:
    """Whether specs ``a`` and ``b`` name the same agent under ``rules``: the same spec (case
    and spaces aside), or two plain policy specs that load the same checkpoint file
    (``baseline`` and its path). The one rule behind the benchmark's self-match skip and
    ``piquet exploit``'s reference.

    >>> same_agent("Heuristic", "heuristic"), same_agent("mcts:50", "mcts:100")
    (True, False)
    """
    if a.strip().lower() == b.strip().lower():
        return True
    if is_search(a) or is_search(b):
        return False
    files_a, files_b = spec_files(a, rules), spec_files(b, rules)
    return bool(files_a) and [os.path.realpath(f) for f in files_a] == [
        os.path.realpath(f) for f in files_b
    ]


def _is_guided(spec: str) -> bool:
    return is_search(spec) and any(
        p.strip().lower().startswith("policy=") for p in spec.split(":")[2:]
    )


def _is_mcts(spec: str) -> bool:
    return is_search(spec) and not _is_guided(spec)


def _is_tabular(spec: str) -> bool:
    from piquet_env.exact.policy import is_tabular_file

    return is_tabular_file(spec)


def _build_tabular(spec: str, rules: Rules | None, seed: int | None) -> Agent:
    from piquet_env.exact.policy import ExactPolicyError, TabularAgent, TabularPolicy

    try:
        table = TabularPolicy.load(spec)
    except ExactPolicyError as exc:
        raise AgentSpecError(spec, str(exc)) from None
    if rules is not None and table.rules != rules:
        raise AgentSpecError(
            spec, f"the tabular policy is of {table.rules.name!r}, not {rules.name!r}"
        )
    return TabularAgent(table, greedy=False, seed=seed, name=spec)


def _build_external(spec: str, rules: Rules | None, seed: int | None) -> Agent:
    try:
        return make_external(spec, rules, seed)
    except ExternalAgentError as exc:
        raise AgentSpecError(spec, str(exc)) from exc


def _is_policy(spec: str) -> bool:
    return os.path.exists(_sampled(spec)[0])


def _build_policy(spec: str, rules: Rules | None, seed: int | None) -> Agent:
    path, sample = _sampled(spec)
    PolicyAgent = _torch_module(spec, "policy").PolicyAgent
    try:
        agent = PolicyAgent.load(path, rules=rules, seed=seed, greedy=not sample)
    except ValueError as exc:  # CheckpointError, or a network of the wrong size
        raise AgentSpecError(spec, f"cannot use the checkpoint: {exc}") from exc
    if sample:
        agent.name = f"{agent.name}{SAMPLE}"
    return agent


@dataclass(frozen=True)
class AgentKind:
    """One kind of agent a spec can name: the form a help text shows, what it builds, which specs
    it takes, and how it builds one (``build(spec, rules, seed)``)."""

    name: str
    form: str
    help: str
    matches: Callable[[str], bool]
    build: Callable[[str, Rules | None, int | None], Agent]


KINDS: tuple[AgentKind, ...] = (
    AgentKind(
        "random",
        "random",
        "uniform over the legal moves",
        lambda s: s.lower() == "random",
        _build_random,
    ),
    AgentKind(
        "heuristic",
        "heuristic[:seed=N]",
        "rules of thumb (seed=N: one fixed pure policy, not reseeded every game)",
        _is_heuristic,
        _build_heuristic,
    ),
    AgentKind(
        "mcts",
        "mcts[:N[:KEY=VALUE...]]",
        "information-set MCTS, N iterations",
        _is_mcts,
        lambda spec, rules, seed: _parse_mcts(spec, seed, rules),
    ),
    AgentKind(
        "baseline",
        "baseline[@TAG][:sample]",
        "the policy shipped for the rules in use (@TAG: one it named before; :sample: "
        "sampling, seeded)",
        _is_baseline,
        _build_baseline,
    ),
    AgentKind(
        "guided",
        "mcts:N:policy=PATH",
        "the search guided by a policy; policy=baseline for the shipped one; :against=SPEC: "
        "an exploiter's search against that agent",
        _is_guided,
        lambda spec, rules, seed: _parse_guided(spec, spec.split(":"), rules, seed),
    ),
    AgentKind(
        "py",
        "py:MODULE:FACTORY",
        "your own agent, FACTORY(rules, seed); or py:FILE.py:FACTORY",
        lambda s: is_external(s) and not os.path.exists(s),
        _build_external,
    ),
    AgentKind(
        "tabular",
        "TABLE.npz",
        "a tabular policy file (piquet solve's), sampled",
        _is_tabular,
        _build_tabular,
    ),
    AgentKind(
        "policy",
        "PATH[:sample]",
        "a policy checkpoint or run directory (:sample: sampling, seeded)",
        _is_policy,
        _build_policy,
    ),
)
"""Every kind of agent, in the order specs are matched and help texts list them. Adding an
agent is one module and one row here (the development page's checklist)."""

FORMS = tuple((kind.form, kind.help) for kind in KINDS)
"""Every form of a spec with what it builds, in the order help texts list them."""


def _listed(items: list[str]) -> str:
    """``'a, b or c'``."""
    return ", ".join(items[:-1]) + f" or {items[-1]}"


SPEC_FORMS = _listed([form for form, _ in FORMS[:-1]] + [f"{FORMS[-1][0]} ({FORMS[-1][1]})"])
"""The forms of a spec in one line, as error messages list them."""
SPEC_HELP = _listed([f"{form} ({what})" for form, what in FORMS])
"""The forms of a spec with what each builds, as every ``--help`` lists them."""


def agent_kind(spec: str) -> AgentKind | None:
    """The row of :data:`KINDS` that takes ``spec`` (stripped), or ``None``."""
    return next((kind for kind in KINDS if kind.matches(spec)), None)


def make_agent(spec: str, rules: Rules | None = None, seed: int | None = None) -> Agent:
    """An agent from its spec (see the module docstring); ``seed`` seeds its randomness.

    ``rules`` must match a checkpoint's rules. Raises :class:`AgentSpecError` (a ``ValueError``)
    naming the spec and what is wrong: an unknown name, a bad ``mcts`` iteration count or option,
    a path with no checkpoint, or a checkpoint that cannot be used (its
    :class:`~piquet_agents.checkpoint.CheckpointError` is the cause).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(spec, f"expected a non-empty string: {SPEC_FORMS}")
    if rules is not None and not isinstance(rules, Rules):
        raise AgentSpecError(spec, f"rules must be a Rules object, got {type(rules).__name__}")
    spec = spec.strip()
    kind = agent_kind(spec)
    if kind is not None:
        return kind.build(spec, rules, seed)
    if os.sep in spec or "/" in spec or spec.endswith((".safetensors", ".npz")):
        raise AgentSpecError(spec, "no checkpoint file or run directory at this path")
    raise AgentSpecError(spec, f"not an agent name nor an existing path; expected {SPEC_FORMS}")
