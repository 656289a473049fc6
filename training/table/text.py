"""Text for the terminal programs (``piquet play``, ``piquet replay``): cards, hands, scores.

A :class:`Style` formats cards with Unicode suits (``'10♠'``, red hearts and diamonds when colour is
on) or plain ASCII names (``'TS'``); a :class:`Cast` names the two players from the point of view of
whoever is reading ("You lead" / "random leads"). Everything here returns strings and prints
nothing.

>>> from piquet_env.cards import parse_mask
>>> Style().hand(parse_mask("7c ac 10s qh"))
'A♣ 7♣  Q♥  10♠'
>>> Style(ascii=True).hand(parse_mask("7c ac 10s qh"))
'AC 7C  QH  TS'
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from piquet_env.cards import JOKER, card_str, card_symbol, cards_of, sort_key
from piquet_env.game.scoring import DEAL_SCORE_FIELDS, DealScore
from piquet_env.rules import Rules

WIDTH = 78
"""Width of headings and rules, to fit an 80-column terminal."""

_RED, _DEFAULT_FG = "\x1b[31m", "\x1b[39m"
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"
_SCORE_WORDS = {"sequence": "sequences", "set": "sets", "cards": "the cards"}
SCORE_ROWS = tuple((f, _SCORE_WORDS.get(f, f.replace("_", " "))) for f in DEAL_SCORE_FIELDS)
"""The fields of a :class:`DealScore` in reckoning order, with the words a player uses."""


_ESCAPE = re.compile(r"(\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b.?")
"""ANSI escape sequences: CSI (colours, cursor moves, in 7 or 8 bits), OSC (titles, links), and
any other escape with the character after it."""


def printable(text: str, limit: int = 72) -> str:
    """``text`` made safe for the terminal: escape sequences and control or format characters
    (``\\x1b``, ``\\r``, bidirectional overrides...) removed, runs of spaces squeezed, cut to
    ``limit`` characters.

    >>> printable("evil\\x1b[2J\\x1b]0;owned\\x07 name\\r\\n")
    'evil name'
    """
    text = _ESCAPE.sub("", text)
    text = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def visible_len(text: str) -> int:
    """Columns ``text`` takes on the terminal (colour codes take none)."""
    return len(_ESCAPE.sub("", text))


def terminal_width(limit: int = 80) -> int:
    """Columns to write in: the terminal's width, at most ``limit`` (80), at least 40."""
    return max(40, min(limit, shutil.get_terminal_size((limit, 24)).columns))


def fit(line: str, width: int = 80) -> list[str]:
    """``line`` wrapped at spaces to ``width`` columns (colour codes take none); continuation lines
    are indented four columns past the line's own indent. A word longer than the width is not cut.

    >>> fit("  Totals  you 10 · policy:a_long_checkpoint_name.safetensors 20", 40)
    ['  Totals  you 10 ·', '      policy:a_long_checkpoint_name.safetensors', '      20']
    """
    if visible_len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    words = line.split(" ")[indent:]
    out: list[str] = []
    current, size = " " * indent, indent
    fresh = True
    for word in words:
        n = visible_len(word)
        if not fresh and size + 1 + n > width:
            out.append(current)
            current, size, fresh = " " * (indent + 4), indent + 4, True
        if fresh:
            current, size, fresh = current + word, size + n, not word
        else:
            current, size = current + " " + word, size + 1 + n
    out.append(current)
    return [x.rstrip() for x in out]


_ENTRY = re.compile(r"(\s*\S.*?\s{2,})(\S.*)")
"""A line of a help table: its head (``'  quit, q      '``: the name and the gap after it) and the
text that follows."""
_CODE = re.compile(r"`[^`]*`")
"""A `quoted example`, kept on one line when a help table is wrapped."""


def fit_help(text: str, width: int = 80) -> list[str]:
    """The lines of a help table (``NAME   what it does``, a long text carried on under its first
    column) wrapped to ``width`` columns: each entry's text is reflowed and its wrapped lines line
    up under the column where it starts; a `quoted example` is not split. Lines without such a
    column (headings) are wrapped by :func:`fit`.

    >>> fit_help("  quit, q   leave the partie (Ctrl-D too); the game so far is saved", 44)
    ['  quit, q   leave the partie (Ctrl-D too);', '            the game so far is saved']
    """
    out: list[str] = []
    head, words = "", []

    def flush() -> None:
        if not head:
            return
        column = len(head) if len(head) <= width // 2 else len(head) - len(head.lstrip()) + 4
        joined = _CODE.sub(lambda m: m.group().replace(" ", "\xa0"), " ".join(words))
        wrapped = textwrap.wrap(
            joined,
            width,
            initial_indent=head,
            subsequent_indent=" " * column,
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.extend(line.replace("\xa0", " ") for line in wrapped)

    for line in text.splitlines():
        if head and line.startswith(" " * len(head)) and line.strip():
            words.append(line.strip())  # the entry carried on under its column
            continue
        flush()
        match = _ENTRY.fullmatch(line)
        head, words = (match.group(1), [match.group(2)]) if match else ("", [])
        if not match:
            out.extend(fit(line, width))
    flush()
    return out


def want_color(ascii_only: bool, stream: object = None) -> bool:
    """Whether to colour output: a terminal, not ``--ascii``, and no ``NO_COLOR`` in the
    environment (https://no-color.org)."""
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return not ascii_only and "NO_COLOR" not in os.environ and isatty is not None and bool(isatty())


@dataclass(frozen=True)
class Style:
    """How to draw cards and headings: Unicode suits or plain ASCII, with or without colour."""

    ascii: bool = False
    color: bool = False

    def card(self, card: int) -> str:
        """One card: ``'Q♥'`` (red when coloured) or ``'QH'``."""
        if self.ascii:
            return card_str(card)
        text = card_symbol(card)
        if self.color and card != JOKER and card >> 3 in (1, 2):
            return _RED + text + _DEFAULT_FG
        return text

    def cards(self, cards: int | Iterable[int]) -> str:
        """Cards in the order a hand is held (by suit, high to low), one space apart; ``'-'`` if
        none."""
        ids = cards_of(cards) if isinstance(cards, int) else list(cards)
        return " ".join(self.card(c) for c in sorted(ids, key=sort_key)) or "-"

    def hand(self, mask: int) -> str:
        """A hand sorted by suit, high to low, with two spaces between suits; ``'-'`` if empty."""
        groups: dict[int, list[int]] = {}
        for c in sorted(cards_of(mask), key=sort_key):
            groups.setdefault(-1 if c == JOKER else c >> 3, []).append(c)
        return "  ".join(" ".join(self.card(c) for c in g) for g in groups.values()) or "-"

    def bold(self, text: str) -> str:
        """Bold text when coloured."""
        return _BOLD + text + _RESET if self.color else text

    def heading(self, title: str) -> str:
        """A full-width heading line: ``'══ Deal 2 of 6 ═══…'``."""
        bar = "=" if self.ascii else "═"
        text = f"{bar * 2} {title} "
        return self.bold(text + bar * max(0, WIDTH - len(text)))

    def rule(self) -> str:
        """A thin full-width line."""
        return ("-" if self.ascii else "─") * WIDTH

    @property
    def arrow(self) -> str:
        """The arrow used in trick lines."""
        return "->" if self.ascii else "→"

    @property
    def dot(self) -> str:
        """The separator between items on a line."""
        return "|" if self.ascii else "·"


@dataclass(frozen=True)
class Cast:
    """The two players' names as the reader says them.

    ``viewer`` is the player reading (addressed as "you"), or ``None`` for an onlooker who sees
    both hands (a replay), who reads both players' names.
    """

    names: tuple[str, str]
    viewer: int | None = None

    def who(self, p: int, capital: bool = True) -> str:
        """The subject for player ``p``: ``'You'``/``'you'`` for the viewer, else his name."""
        if p == self.viewer:
            return "You" if capital else "you"
        return self.names[p]

    def verb(self, p: int, base: str, third: str | None = None, capital: bool = True) -> str:
        """Subject and verb agreeing: ``'You lead'``, ``'random leads'``."""
        return f"{self.who(p, capital)} {base if p == self.viewer else third or base + 's'}"

    def label(self, p: int, limit: int = 16) -> str:
        """The player's name for a table column: :meth:`who`, cut to ``limit`` characters."""
        name = self.who(p)
        return name if len(name) <= limit else name[: limit - 3] + "..."


def role(game_elder: int, p: int) -> str:
    """``'elder'`` or ``'younger'`` for player ``p`` when ``game_elder`` is elder hand."""
    return "elder" if p == game_elder else "younger"


def score_table(
    scores: tuple[DealScore, DealScore] | list[dict], cast: Cast, style: Style
) -> list[str]:
    """Lines of a deal's score breakdown: one row per field either player scored, then the total.

    ``scores`` are the two players' :class:`DealScore` or their ``to_dict()`` forms.
    """
    rows = [s.to_dict() if isinstance(s, DealScore) else dict(s) for s in scores]
    left = 16
    col = max(10, *(len(cast.label(p)) + 2 for p in (0, 1)))
    out = [" " * left + "".join(f"{cast.label(p):>{col}}" for p in (0, 1))]
    for key, label in SCORE_ROWS:
        if rows[0].get(key) or rows[1].get(key):
            out.append(f"  {label:<{left - 2}}" + "".join(f"{rows[p][key]:>{col}}" for p in (0, 1)))
    out.append(
        style.bold(
            f"  {'deal total':<{left - 2}}" + "".join(f"{rows[p]['total']:>{col}}" for p in (0, 1))
        )
    )
    return out


def score_sheet(
    deals: Sequence[tuple[int, int, tuple[int, int], tuple[int, int]]], cast: Cast, style: Style
) -> list[str]:
    """The score sheet of a partie: one row per deal ``(deal number (0-based), elder, the two
    players' deal scores, the totals after it)``, with who was elder and the running totals."""
    col = max(8, *(len(cast.label(p)) + 2 for p in (0, 1)))
    elder_col = max(7, *(len(cast.label(p)) + 2 for p in (0, 1)))
    dash = "-" if style.ascii else "–"
    out = [
        "Score sheet:",
        f"  {'deal':>4}  {'elder':<{elder_col}}"
        + "".join(f"{cast.label(p):>{col}}" for p in (0, 1))
        + "   totals",
    ]
    for number, elder, scored, totals in deals:
        out.append(
            f"  {number + 1:>4}  {cast.label(elder):<{elder_col}}"
            + "".join(f"{scored[p]:>{col}}" for p in (0, 1))
            + f"   {totals[0]} {dash} {totals[1]}"
        )
    return out


def settlement_lines(
    totals: list[int] | tuple[int, int],
    result: list[int] | tuple[int, int],
    rules: Rules,
    cast: Cast,
) -> list[str]:
    """How the partie was settled, with the arithmetic (RULES.md section 8)."""
    a, b = totals
    out = [f"Final totals: {cast.who(0, False)} {a}, {cast.who(1, False)} {b}."]
    if a == b:
        out.append("The totals are equal: the partie is drawn, nobody scores.")
        return out
    w = 0 if a > b else 1
    hi, lo = max(a, b), min(a, b)
    loser = cast.who(1 - w, False)
    rubicon = lo < 100 <= hi if rules.settlement == "standard" else lo < 100
    head = f"{cast.verb(w, 'win')} the partie by {result[w]}:"
    if rubicon:
        be = "are" if 1 - w == cast.viewer else "is"
        out.append(
            f"{head} {loser} {be} rubiconed (under 100), so the winner scores both totals "
            f"plus 100 for the game: {hi} + {lo} + 100 = {hi + lo + 100}."
        )
    else:
        if lo >= 100:
            why = f"{loser} reached 100, so nobody is rubiconed"
        else:
            why = "neither player reached 100, so nobody is rubiconed"
        out.append(
            f"{head} the difference {hi} - {lo} = {hi - lo}, plus 100 for the game "
            f"= {hi - lo + 100} ({why})."
        )
    return out
