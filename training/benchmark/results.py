"""Benchmark result files: what ``piquet benchmark`` writes, how it is checked, and the leaderboard.

A result file is one JSON object (:func:`~piquet_training.benchmark.run.run_benchmark` makes it):

- ``protocol``: the protocol it was run under, with its ``version``
  (:meth:`~piquet_training.benchmark.protocol.Protocol.to_dict`);
- ``agent``: ``name`` (the row's label), ``spec`` (what was run) and ``files`` (each file the
  spec loads, with its SHA-256: a policy's weights, an external agent's module);
- ``matches``: per opponent, either ``{"skipped": REASON}`` or ``pairs``, ``points_per_deal``
  (``mean``, ``ci_low``, ``ci_high``: the agent's points per deal over the opponent, 95%),
  ``p``, ``win_rate`` (the same three, Wilson) and ``minutes`` (its pairs' playing time, summed
  over the sittings of a run continued with ``--resume``);
- ``exploit``: either ``{"skipped": REASON}`` or ``env_steps``, ``pairs``, ``edge`` (the
  exploiter's points per deal over the agent: the lower bound, with ``p``), ``reference``,
  ``reference_edge`` and ``gain_over_reference`` (``null`` where there is no reference),
  ``minutes`` (the exploiter's training over every sitting and the final evaluation; files of
  commit ``83e9f7e`` and before: of the last sitting) and ``config`` (the exploiter's
  training settings, its starting weights as ``init_from``, a file name, and
  ``init_from_sha256``; files written before 2026-12-03 hold the starting weights' path on the
  machine that ran them instead);
- ``exact_nashconv``: ``{"rules", "value", "command"}``, the exact NashConv of the agent under
  the protocol's small exactly solved rules (``mini``) and a command that gives the same figure,
  or ``{"skipped": REASON}`` (a search; an agent that does not play those rules); with
  ``upgraded_from`` (``version``, ``sha256``, and ``run``, the upgrade's own ``run`` block, in
  files upgraded after commit ``1040cf4``) where a file of an earlier version was brought up to
  this one by measuring it alone. Version 1 does not measure it: its files hold ``null``;
- ``run``: ``date``, ``command``, ``package_version``, ``commit`` and ``dirty`` (``null`` off a
  checkout), ``python``, ``torch``, ``machine``, all of the sitting that wrote the file (the
  last one of a run continued with ``--resume``), and ``minutes``, the run's over every sitting
  (this sitting's and what its matches and exploit took in earlier ones; files of commit
  ``83e9f7e`` and before: of the last sitting).

:func:`read_result` reads a file as untrusted input and checks every field
(:class:`ResultFileError` names the file and the field); with ``official=True`` (the
leaderboard's) its protocol must be :data:`~piquet_training.benchmark.protocol.PROTOCOL` exactly.
:func:`leaderboard` and :func:`runs_table` are the two tables of the docs, generated from the
checked-in files when the site is built.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piquet_env.untrusted import UntrustedError, json_kind, read_json_file
from piquet_training.benchmark.protocol import (
    EXACT_SEARCH_SKIP,
    PROTOCOL,
    SEARCH_SKIP,
    BenchmarkError,
    Protocol,
)

MAX_BYTES = 1 << 20
"""The largest result file read (a real one is about 5 kB)."""
TOP_KEYS = frozenset({"protocol", "agent", "matches", "exploit", "exact_nashconv", "run"})
"""The keys of a result file."""
NASHCONV_KEYS = frozenset({"rules", "value", "command"})
"""The keys of ``exact_nashconv`` where it is measured."""
UPGRADE_KEYS = frozenset({"version", "sha256"})
"""The keys of ``exact_nashconv.upgraded_from``, besides ``run`` (the upgrade's own ``run``
block, written after commit ``1040cf4``: the files upgraded before it lack it)."""
RUN_KEYS = frozenset(
    {"date", "command", "package_version", "commit", "dirty", "python", "torch", "machine"}
    | {"minutes"}
)
"""The keys of ``run``."""
_SHA = re.compile(r"[0-9a-f]{64}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class ResultFileError(ValueError):
    """A result file that is not one ``piquet benchmark`` writes: the message names the file and
    the field."""


class _Check:
    """The checks of one file's fields, each failure a :class:`ResultFileError` naming it."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, field: str, problem: str) -> ResultFileError:
        return ResultFileError(f"{self.where}: {field}: {problem}")

    def table(self, d: object, field: str, keys: frozenset[str]) -> dict[str, Any]:
        if not isinstance(d, dict):
            raise self.fail(field, f"expected an object, got {_kind(d)}")
        if set(d) != keys:
            missing, extra = sorted(keys - set(d)), sorted(set(d) - keys)
            parts = [f"missing {', '.join(missing)}"] * bool(missing)
            parts += [f"unknown {', '.join(extra)}"] * bool(extra)
            raise self.fail(field, "; ".join(parts))
        return d

    def text(self, v: object, field: str) -> str:
        if not isinstance(v, str) or not v.strip():
            got = "a blank string" if isinstance(v, str) else _kind(v)
            raise self.fail(field, f"expected a non-empty string, got {got}")
        return v

    def number(self, v: object, field: str, low: float = -math.inf, high: float = math.inf):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= high:
            raise self.fail(field, f"expected a number in [{low:g}, {high:g}], got {v!r}")
        return float(v)

    def integer(self, v: object, field: str, low: int = 0) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise self.fail(field, f"expected an integer of at least {low}, got {v!r}")
        return v

    def estimate(self, d: object, field: str, p: bool = False, rate: bool = False) -> None:
        keys = frozenset({"mean", "ci_low", "ci_high"} | ({"p"} if p else set()))
        d = self.table(d, field, keys)
        low, high = (0.0, 1.0) if rate else (-math.inf, math.inf)
        values = [self.number(d[k], f"{field}.{k}", low, high) for k in ("ci_low", "mean")]
        values.append(self.number(d["ci_high"], f"{field}.ci_high", low, high))
        if not values[0] <= values[1] <= values[2]:
            raise self.fail(field, "expected ci_low <= mean <= ci_high")
        if p:
            self.number(d["p"], f"{field}.p", 0.0, 1.0)

    def skipped(self, d: dict, field: str) -> bool:
        """Whether ``d`` is ``{"skipped": REASON}``."""
        if "skipped" not in d:
            return False
        self.table(d, field, frozenset({"skipped"}))
        self.text(d["skipped"], f"{field}.skipped")
        return True


def _kind(v: object) -> str:
    return json_kind(v)


def check_result(data: object, where: str = "result", official: bool = True) -> dict[str, Any]:
    """``data`` if it is a result file's content, every field checked; else
    :class:`ResultFileError` naming ``where`` and the field. ``official``: its protocol must be
    :data:`~piquet_training.benchmark.protocol.PROTOCOL` (a file of another version or of
    changed settings is refused, saying which)."""

    c = _Check(where)
    d = c.table(data, "the file", TOP_KEYS)
    try:
        protocol = Protocol.from_dict(d["protocol"])
    except BenchmarkError as exc:
        raise ResultFileError(f"{where}: {exc}") from None
    if official and protocol.version != PROTOCOL.version:
        raise c.fail(
            "protocol.version",
            f"{protocol.version}, where this package's protocol is version {PROTOCOL.version}: "
            "results of different versions are not compared",
        )
    if official and protocol != PROTOCOL:
        raise c.fail(
            "protocol",
            f"not the settings of protocol version {PROTOCOL.version} (a file of a changed "
            "protocol: only the shipped protocol's results are official)",
        )
    agent = c.table(d["agent"], "agent", frozenset({"name", "spec", "files"}))
    c.text(agent["name"], "agent.name")
    c.text(agent["spec"], "agent.spec")
    if not isinstance(agent["files"], list):
        raise c.fail("agent.files", f"expected a list, got {_kind(agent['files'])}")
    for i, f in enumerate(agent["files"]):
        f = c.table(f, f"agent.files[{i}]", frozenset({"name", "sha256"}))
        c.text(f["name"], f"agent.files[{i}].name")
        if not isinstance(f["sha256"], str) or not _SHA.fullmatch(f["sha256"]):
            raise c.fail(f"agent.files[{i}].sha256", "expected 64 hex digits")
    wanted = frozenset(m.opponent for m in protocol.matches)
    matches = c.table(d["matches"], "matches", wanted)
    for m in protocol.matches:
        field = f"matches[{m.opponent!r}]"
        entry = matches[m.opponent]
        if not isinstance(entry, dict):
            raise c.fail(field, f"expected an object, got {_kind(entry)}")
        if c.skipped(entry, field):
            continue
        keys = frozenset({"pairs", "points_per_deal", "p", "win_rate", "minutes"})
        entry = c.table(entry, field, keys)
        if entry["pairs"] != m.pairs:
            raise c.fail(f"{field}.pairs", f"the protocol plays {m.pairs}, got {entry['pairs']!r}")
        c.estimate(entry["points_per_deal"], f"{field}.points_per_deal")
        c.number(entry["p"], f"{field}.p", 0.0, 1.0)
        c.estimate(entry["win_rate"], f"{field}.win_rate", rate=True)
        c.number(entry["minutes"], f"{field}.minutes", 0.0)
    _check_exploit(c, d["exploit"], protocol)
    _check_exact(c, d["exact_nashconv"], protocol)
    _check_run(c, d["run"])
    return d


def _check_exploit(c: _Check, e: object, protocol: Any) -> None:
    if not isinstance(e, dict):
        raise c.fail("exploit", f"expected an object, got {_kind(e)}")
    if c.skipped(e, "exploit"):
        return
    keys = frozenset(
        {"env_steps", "pairs", "edge", "reference", "reference_edge", "gain_over_reference"}
        | {"minutes", "config"}
    )
    e = c.table(e, "exploit", keys)
    budget = protocol.exploit
    if c.integer(e["env_steps"], "exploit.env_steps") < budget.env_steps:
        raise c.fail(
            "exploit.env_steps", f"{e['env_steps']:,}, short of the budget's {budget.env_steps:,}"
        )
    if e["pairs"] != budget.eval_pairs:
        raise c.fail("exploit.pairs", f"the protocol plays {budget.eval_pairs}, got {e['pairs']!r}")
    c.estimate(e["edge"], "exploit.edge", p=True)
    if e["reference"] is None:
        if e["reference_edge"] is not None or e["gain_over_reference"] is not None:
            raise c.fail("exploit.reference", "null, but a reference's edge is given")
    else:
        c.text(e["reference"], "exploit.reference")
        c.estimate(e["reference_edge"], "exploit.reference_edge", p=True)
        c.estimate(e["gain_over_reference"], "exploit.gain_over_reference", p=True)
    c.number(e["minutes"], "exploit.minutes", 0.0)
    if not isinstance(e["config"], dict):
        raise c.fail("exploit.config", f"expected an object, got {_kind(e['config'])}")


def _check_exact(c: _Check, n: object, protocol: Protocol) -> None:
    """``exact_nashconv``: ``null`` where the protocol does not measure it (version 1), else
    measured under the protocol's exact rules or skipped, with ``upgraded_from`` where a file of
    an earlier version was brought up to it."""
    if protocol.exact is None:
        if n is not None:
            version = protocol.version
            raise c.fail("exact_nashconv", f"protocol version {version} does not measure it")
        return
    if not isinstance(n, dict):
        raise c.fail("exact_nashconv", f"expected an object, got {_kind(n)}")
    if "upgraded_from" in n:
        u, where = n["upgraded_from"], "exact_nashconv.upgraded_from"
        keys = UPGRADE_KEYS | ({"run"} if isinstance(u, dict) and "run" in u else set())
        u = c.table(u, where, keys)
        c.integer(u["version"], f"{where}.version", 1)
        if not isinstance(u["sha256"], str) or not _SHA.fullmatch(u["sha256"]):
            raise c.fail(f"{where}.sha256", "expected 64 hex digits")
        if "run" in u:
            _check_run(c, u["run"], f"{where}.run")
        n = {k: v for k, v in n.items() if k != "upgraded_from"}
    if c.skipped(n, "exact_nashconv"):
        return
    n = c.table(n, "exact_nashconv", NASHCONV_KEYS)
    if n["rules"] != protocol.exact.rules:
        want = protocol.exact.rules
        raise c.fail("exact_nashconv.rules", f"the protocol measures {want}, got {n['rules']!r}")
    c.number(n["value"], "exact_nashconv.value", 0.0)
    c.text(n["command"], "exact_nashconv.command")


def _check_run(c: _Check, r: object, field: str = "run") -> None:
    r = c.table(r, field, RUN_KEYS)
    if not isinstance(r["date"], str) or not _DATE.fullmatch(r["date"]):
        raise c.fail(f"{field}.date", f"expected YYYY-MM-DD, got {r['date']!r}")
    for key in ("command", "package_version", "python", "torch", "machine"):
        c.text(r[key], f"{field}.{key}")
    if r["commit"] is not None:
        c.text(r["commit"], f"{field}.commit")
    if r["dirty"] is not None and not isinstance(r["dirty"], bool):
        raise c.fail(f"{field}.dirty", f"expected true, false or null, got {r['dirty']!r}")
    c.number(r["minutes"], f"{field}.minutes", 0.0)


def read_result(path: str | os.PathLike, official: bool = True) -> dict[str, Any]:
    """The checked content of the result file ``path`` (see :func:`check_result`);
    :class:`ResultFileError` naming the file if it cannot be read, is not strict JSON or holds a
    field that is wrong."""
    try:
        data = read_json_file(path, MAX_BYTES, "a benchmark result")
    except UntrustedError as exc:
        raise ResultFileError(str(exc)) from None
    return check_result(data, str(path), official)


# -------------------------------------------------------------------------------- the tables


def _signed(e: dict[str, float]) -> str:
    return f"{e['mean']:+.2f} [{e['ci_low']:+.2f}, {e['ci_high']:+.2f}]"


def _match_cell(entry: dict[str, Any]) -> str:
    if "skipped" in entry:
        return "0 (itself)"
    return _signed(entry["points_per_deal"])


def _exploit_cell(e: dict[str, Any]) -> str:
    if "skipped" in e:
        return "not measured (a search)" if e["skipped"].startswith("a search") else "not measured"
    cell = f"{_signed(e['edge'])}"
    if e["gain_over_reference"] is not None:
        cell += f"; over {PROTOCOL.spec(e['reference'])}: {_signed(e['gain_over_reference'])}"
    return cell


def _nashconv_cell(n: dict[str, Any] | None) -> str:
    if n is None:
        return "—"
    if "skipped" in n:
        if n["skipped"] == EXACT_SEARCH_SKIP:
            return "not measured (a search)"
        return "not measured (does not play it)"
    return f"{n['value']:.4g}"


def _sort_key(d: dict[str, Any], last: str) -> float:
    entry = d["matches"][last]
    return 0.0 if "skipped" in entry else entry["points_per_deal"]["mean"]


def leaderboard(paths: Sequence[str | os.PathLike], link: str = "") -> str:
    """The leaderboard as a Markdown table: one row per result file (each checked against the
    protocol, :func:`read_result`), best first by points per deal against the protocol's last
    opponent (``baseline``); each row links its file (``link`` + the file's name). A pinned
    opponent is headed by the agent it plays (``baseline@2026-11-30``, not ``baseline``)."""
    results = [(Path(p), read_result(p)) for p in paths]
    last = PROTOCOL.matches[-1].opponent
    results.sort(key=lambda r: (-_sort_key(r[1], last), r[1]["agent"]["name"]))
    steps = PROTOCOL.exploit.env_steps
    head = ["rank", "agent", *(f"vs `{PROTOCOL.spec(m.opponent)}`" for m in PROTOCOL.matches)]
    head += [f"exploitability, lower bound ({steps / 1e6:g} M env steps)"]
    head += [f"exact NashConv (`{PROTOCOL.exact.rules}`)" if PROTOCOL.exact else "exact NashConv"]
    head += ["run", "file"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for rank, (path, d) in enumerate(results, 1):
        run = d["run"]
        commit = f", `{run['commit']}`" if run["commit"] else ""
        cells = [str(rank), f"`{d['agent']['name']}`"]
        cells += [_match_cell(d["matches"][m.opponent]) for m in PROTOCOL.matches]
        cells += [_exploit_cell(d["exploit"]), _nashconv_cell(d["exact_nashconv"])]
        cells += [f"{run['date']}{commit}", f"[{path.name}]({link}{path.name})"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _pinned(name: str) -> str:
    """``''`` for a name the protocol plays as written, else a note saying which agent it is
    (:meth:`~piquet_training.benchmark.protocol.Protocol.spec`)."""
    spec = PROTOCOL.spec(name)
    if spec == name:
        return ""
    return f" (`{name}` is `{spec}`, the policy it named when this version was set)"


def protocol_table() -> str:
    """The protocol's settings as a Markdown table (what
    :data:`~piquet_training.benchmark.protocol.PROTOCOL` fixes)."""
    p, e = PROTOCOL, PROTOCOL.exploit
    settings = ", ".join(f"`{k} = {v}`" for k, v in e.settings.items())
    rows = [
        ("version", f"{p.version}"),
        ("rules, mode", f"`{p.rules}`, `{p.mode}` (single deals)"),
        ("variance reduction", "on" if p.variance_reduction else "off"),
    ]
    rows += [
        (
            f"match vs `{m.opponent}`",
            f"{m.pairs:,} duplicate pairs, deals of seed {m.seed}{_pinned(m.opponent)}",
        )
        for m in p.matches
    ]
    rows += [
        (
            "exploitability bound",
            f"an exploiter trained {e.env_steps:,} env steps (seed {e.seed}; {settings}; "
            f"periodic evaluations of {e.periodic_pairs} pairs every {e.eval_every} updates), "
            f"then {e.eval_pairs:,} fresh duplicate pairs against the agent, "
            f"`{e.reference}`'s edge on the same deals beside it{_pinned(e.reference)}",
        ),
        ("not exploited", SEARCH_SKIP.replace("mcts:100", "`mcts:100`")),
        (
            "exact NashConv",
            f"the agent's, by full traversal under `{p.exact.rules}` (its plans seeded "
            f"{p.exact.seed}): `piquet exploit AGENT --rules {p.exact.rules} --exact`; not for "
            "a search or an agent that does not play those rules (the file says why)"
            if p.exact
            else "not measured",
        ),
    ]
    lines = ["| setting | version " + str(p.version) + " |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines) + "\n"


def _date_commit(run: dict[str, Any]) -> str:
    """A ``run`` block's date and commit, ``2026-12-03, `abc1234` (with changes)``."""
    if not run["commit"]:
        return run["date"]
    return f"{run['date']}, `{run['commit']}`" + (" (with changes)" if run["dirty"] else "")


def _exact_origin(n: dict[str, Any] | None) -> str:
    """How a file's exact NashConv came, for the runs table."""
    if n is None:
        return "—"
    what = "not measured" if "skipped" in n else "measured"
    if "upgraded_from" in n:
        u = n["upgraded_from"]
        when = f" ({_date_commit(u['run'])})" if "run" in u else ""
        return (
            f"{what} by `--upgrade`{when} of the version-{u['version']} file `{u['sha256'][:12]}`"
        )
    return f"{what} in the run"


def runs_table(paths: Sequence[str | os.PathLike]) -> str:
    """How each result file was made, as a Markdown table: the command, date, commit, machine,
    the minutes of each part, and how its exact NashConv came (in the run, or by ``--upgrade``
    of a file of an earlier version)."""
    head = ["agent", "command", "date, commit", "machine"]
    head += [f"`{m.opponent}` (min)" for m in PROTOCOL.matches] + ["exploit (min)", "total (min)"]
    head += ["exact NashConv"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in paths:
        d = read_result(p)
        run = d["run"]
        cells = [f"`{d['agent']['name']}`", f"`{run['command']}`"]
        cells += [_date_commit(run), run["machine"]]
        for m in PROTOCOL.matches:
            entry = d["matches"][m.opponent]
            cells.append("—" if "skipped" in entry else f"{entry['minutes']:.1f}")
        e = d["exploit"]
        cells += ["—" if "skipped" in e else f"{e['minutes']:.1f}", f"{run['minutes']:.1f}"]
        cells.append(_exact_origin(d["exact_nashconv"]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
