"""MkDocs hooks (mkdocs.yml ``hooks:``): the parts of the pages that are generated from the code.

A page asks for a generated part with a line of its own, ``<!-- generated: NAME -->``; the hook
puts the Markdown of :data:`GENERATORS` ``[NAME]`` there when the site is built, so the page cannot
drift from the code it describes:

- ``piquet_v0`` and ``piquet_v1``: the environments' module docstrings (PettingZoo documents its
  environments the same way), their observation index list replaced by ``observation``;
- ``observation`` and ``state``: the layouts, from :func:`piquet_env.observation.observation_layout`
  and :func:`~piquet_env.observation.state_layout`, for 32 and 33 cards;
- ``spaces``: the action, observation and state sizes of every preset;
- ``cli``: every subcommand's ``--help``, from :func:`piquet_cli.build_parser`;
- ``env_card``: the environment's card (import, agents, actions, spaces and their values, rewards,
  decisions per deal and per partie counted on seeded games when the site is built, properties);
- ``protocol``, ``leaderboard`` and ``benchmark_runs``: the benchmark protocol's settings, and
  the leaderboard and the runs behind it, from the result files checked in under
  ``docs/results/benchmark/`` (:mod:`piquet_training.benchmark.results`; a file that fails its
  checks fails the build).

An unknown name, or a command that cannot be documented because its extra is missing, is an
error (``mkdocs build --strict`` fails on it).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from griffe_rst import convert_roles

log = logging.getLogger("mkdocs.hooks.generated")
MARKER = re.compile(r"^<!-- generated: ([a-z0-9_]+) -->$", flags=re.M)
"""A page's request for a generated part, on a line of its own."""
OBS_ITEM = re.compile(r"^- \d+-\d+ `\w+`:.*(?:\n  .*)*\n?", flags=re.M)
"""One entry of the observation index list in the environment's docstring."""


def _no_scope(name: str) -> str:
    """Page text has no Python scope: only full paths resolve."""
    raise LookupError(name)


def _markdown(doc: str, shift: int = 1) -> str:
    """A module docstring as page Markdown: its title dropped, its headings ``shift`` levels
    down, its cross-reference roles as links."""
    text = textwrap.dedent(doc).strip()
    text = re.sub(r"\A# .*\n+", "", text)
    text = re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + shift) + " ", text, flags=re.M)
    return convert_roles(text, _no_scope)


def _layout_table(state: bool) -> str:
    from piquet_env.observation import encoder_for, observation_layout, state_layout
    from piquet_env.rules import STANDARD, make_rules

    def rows(rules):
        enc = encoder_for(rules)
        specs = state_layout(rules, enc.size) if state else observation_layout(rules)
        at = 0
        for spec in specs:
            yield spec, at
            at += spec.width

    head = "| 32 cards | 33 cards (`normand`) | field | width | meaning |\n|---|---|---|---|---|\n"
    lines = []
    for (spec, a), (joker, b) in zip(
        rows(STANDARD), rows(make_rules("standard+normand")), strict=True
    ):
        assert spec.name == joker.name
        scaled = f" (÷ {spec.scale:g}, at most {spec.high:g})" if spec.scale else ""
        lines.append(
            f"| {a}–{a + spec.width - 1} | {b}–{b + joker.width - 1} | `{spec.name}` "
            f"| {spec.width} | {spec.description}{scaled} |"
        )
    return head + "\n".join(lines) + "\n"


def observation() -> str:
    """The observation layout (``observation_layout``) as a table."""
    return _layout_table(state=False)


def state() -> str:
    """The full-state layout (``state_layout``) as a table."""
    return _layout_table(state=True)


def spaces() -> str:
    """Action, observation and state sizes of every preset."""
    from piquet_env.observation import encoder_for
    from piquet_env.rules import all_presets

    lines = [
        "| preset | actions | observation | state | deals | talon |",
        "|---|---|---|---|---|---|",
    ]
    for rules in all_presets():
        enc = encoder_for(rules)
        lines.append(
            f"| `{rules.name}` | `Discrete({enc.n_actions})` | `({enc.size},)` "
            f"| `({enc.state_size},)` | {rules.deals} | {rules.talon_size} |"
        )
    return "\n".join(lines) + "\n"


def _decisions(mode: str, games: int, agent: str) -> tuple[list[int], list[int]]:
    """Decisions (both players) and player 0's result in ``games`` seeded games of ``agent``
    against itself under the standard rules."""
    from piquet_agents import make_agent
    from piquet_env.agent import Turn
    from piquet_env.game import Game
    from piquet_env.rules import STANDARD

    counts, results = [], []
    for i in range(games):
        g = Game(STANDARD, seed=i, mode=mode, record=False)
        seats = [make_agent(agent, STANDARD, seed=2 * i + p) for p in (0, 1)]
        n = 0
        while not g.is_over:
            p = g.current_player
            g.apply(seats[p].act(Turn(g, p)))
            n += 1
        counts.append(n)
        results.append(g.result[0])
    return counts, results


def env_card() -> str:
    """The card at the top of the environment page: what PettingZoo's and pgx's pages give."""
    import statistics

    from piquet_env import piquet_v1
    from piquet_env.actions import declare_action, done_action, pass_action
    from piquet_env.observation import observation_layout
    from piquet_env.rules import STANDARD, make_rules

    joker = make_rules("standard+normand")
    e, ej = piquet_v1.raw_env(), piquet_v1.raw_env(rules=joker)
    obs, obs_j = e.observation_space("player_0")["observation"], ej.observation_space("player_0")
    scaled = [f"`{f.name}` ≤ {f.high:g}" for f in observation_layout(STANDARD) if f.high > 1]
    sizes = (STANDARD.n_cards, done_action(STANDARD), declare_action(STANDARD))
    specials = f"{sizes[1]} `DONE`, {sizes[2]} `DECLARE`, {pass_action(STANDARD)} `PASS`"
    specials_j = f"{done_action(joker)}, {declare_action(joker)}, {pass_action(joker)}"

    def counted(mode: str, games: int, agent: str) -> tuple[str, str]:
        n, r = _decisions(mode, games, agent)
        q = statistics.quantiles(r, n=20)
        spread = f"{q[0]:+.0f} to {q[-1]:+.0f} (5th–95th percentile)" if mode == "deal" else (
            f"{min(r):+d} to {max(r):+d} (the extremes)")  # fmt: skip
        return (
            f"{statistics.mean(n):.1f} ({min(n)}–{max(n)}) with `{agent}` play ({games} games)",
            f"{spread} over {games} games of `{agent}` play",
        )

    deal_h, deal_rh = counted("deal", 200, "heuristic")
    deal_r, deal_rr = counted("deal", 1000, "random")
    partie_h, partie_rh = counted("partie", 20, "heuristic")
    partie_r, _ = counted("partie", 200, "random")
    rows = [
        ("Import", "`from piquet_env import piquet_v1`, then `piquet_v1.env(**options)`"),
        ("Agents", "`player_0`, `player_1` (2 players; the cut decides the first elder)"),
        ("Actions", f"`Discrete({e.action_space('player_0').n})`, "
         f"`Discrete({ej.action_space('player_0').n})` under `normand`: ids 0–{sizes[0] - 1} the "
         f"cards (discard in the exchange, play in the tricks; `suit * 8 + rank`, suits C D H S, "
         f"ranks 7 to A; the joker is {STANDARD.n_cards}), then {specials} ({specials_j} with the "
         "joker); the `action_mask` marks the legal ones"),
        ("Observation", f"dict: `observation` float32 `{obs.shape}` (`{obs_j['observation'].shape}`"
         f" under `normand`), in [{obs.low.min():g}, {obs.high.max():g}]: 0/1 flags and one-hots, "
         f"counts scaled to [0, 1] but {', '.join(scaled)}; `action_mask` int8 "
         f"`{e.observation_space('player_0')['action_mask'].shape}`, 0/1"),
        ("State", f"`state()`: float32 `{e.state_space.shape}` (`{ej.state_space.shape}` under "
         "`normand`): both observations, both hands, discards, the talon; ≥ 0"),
        ("Rewards (`reward=`, times `reward_scale`)",
         f"`result` (default): 0 until the end, then the result, zero-sum. Deal mode: the deal's "
         f"point difference, {deal_rh}; {deal_rr}. Partie mode: the settled result, 0 (a tie) "
         f"or ±(winner − loser + 100), ±(winner + loser + 100) when the loser is rubiconed, "
         f"{partie_rh}. `deal_points`: each deal's difference as it ends, summing to the result. "
         "`win`: −1, 0 or +1 at the end"),
        ("Decisions per deal (both players)", f"{deal_h}; {deal_r}"),
        ("Decisions per partie (6 deals)", f"{partie_h}; {partie_r}"),
        ("Properties", "two players, zero-sum, turn-based (one agent acts at a time, AEC), "
         "imperfect information (the hands, the talon and the discards are hidden), chance "
         "(the cut and the shuffle of every deal, from the seed), action masks"),
    ]  # fmt: skip
    lines = ["| | `piquet_v1` |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]
    return (
        "\n".join(lines) + "\n\nThe decisions and result ranges are counted when this site is "
        "built, on games of seeds 0 onwards (`docs/_scripts/hooks.py`, `env_card`).\n"
    )


def _env_page(module_name: str) -> str:
    import importlib

    doc = importlib.import_module(module_name).__doc__ or ""
    if not OBS_ITEM.search(doc):
        return _markdown(doc, shift=1)
    start = OBS_ITEM.search(doc).start()
    items = list(OBS_ITEM.finditer(doc))
    end = items[-1].end()
    text = doc[:start] + "<!-- generated: observation -->\n" + doc[end:]
    return _markdown(text, shift=1).replace("<!-- generated: observation -->", observation())


def piquet_v0() -> str:
    """The docstring of :mod:`piquet_env.piquet_v0`, its index list as the layout table."""
    return _env_page("piquet_env.piquet_v0")


def piquet_v1() -> str:
    """The docstring of :mod:`piquet_env.piquet_v1`."""
    return _env_page("piquet_env.piquet_v1")


def _commands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, str]]:
    """(command line, help text) of ``parser`` and of each subcommand below it, in order."""
    yield prefix, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{prefix} {name}")


def cli() -> str:
    """Every ``piquet`` subcommand's ``--help``, a section each."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"  # argparse wraps to the terminal's width: the page's
    try:
        from piquet_cli import COMMANDS, build_parser
        from piquet_cli.common import missing

        for commands, needs, extra in COMMANDS.values():
            reason = missing(needs, extra)
            if reason:
                log.warning("the CLI reference lacks %s: %s", ", ".join(commands), reason)
        parts = []
        for line, text in _commands(build_parser(), "piquet"):
            level = "#" * min(2 + line.count(" "), 4)
            parts.append(f"{level} `{line}`\n\n```text\n{text.rstrip()}\n```\n")
        return "\n".join(parts)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


BENCHMARK_RESULTS = Path(__file__).resolve().parents[1] / "results" / "benchmark"
"""The checked-in benchmark result files, one leaderboard row each."""


def _result_files() -> list[Path]:
    return sorted(BENCHMARK_RESULTS.glob("*.json"))


def protocol() -> str:
    """The benchmark protocol's settings."""
    from piquet_training.benchmark.results import protocol_table

    return protocol_table()


def leaderboard() -> str:
    """The leaderboard (on docs/benchmark.md), one row per checked-in result file."""
    from piquet_training.benchmark.results import leaderboard as table

    return table(_result_files(), link="results/benchmark/")


def benchmark_runs() -> str:
    """How each checked-in result file was made (on docs/results/benchmark.md)."""
    from piquet_training.benchmark.results import runs_table

    return runs_table(_result_files())


GENERATORS: dict[str, Callable[[], str]] = {
    "piquet_v0": piquet_v0,
    "piquet_v1": piquet_v1,
    "observation": observation,
    "state": state,
    "spaces": spaces,
    "cli": cli,
    "env_card": env_card,
    "protocol": protocol,
    "leaderboard": leaderboard,
    "benchmark_runs": benchmark_runs,
}
"""Generated parts by name (the ``NAME`` of ``<!-- generated: NAME -->``)."""


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    """Replace each ``<!-- generated: NAME -->`` line of a page by the generated part."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            log.warning("%s: no generated part named %r", page.file.src_uri, name)
            return match.group(0)
        return GENERATORS[name]()

    return MARKER.sub(one, markdown)
