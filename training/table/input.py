"""Reading a player's typed choices: cards by name or number, the exchange as a list, declarations.

Each parser takes the text typed and what is legal, and returns engine action ids or raises
:class:`InputError` with a reason the player can act on ("you must follow hearts: ...").

>>> from piquet_env.cards import parse_card
>>> from piquet_env.rules import STANDARD
>>> legal = [parse_card("QH"), parse_card("7H")]
>>> parse_play("qh", legal, STANDARD) == parse_card("QH")
True
>>> parse_play("2", legal, STANDARD) == legal[1]
True
>>> parse_play("Q♥", legal, STANDARD) == parse_play("qh", legal, STANDARD)
True
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence

from piquet_env.cards import JOKER, SUIT_NAMES, card_str, parse_card
from piquet_env.rules import Rules

try:
    import termios
    import tty
except ImportError:  # pragma: no cover - no terminal control here (Windows): line input only
    termios = tty = None  # type: ignore[assignment]

DECLARE_WORDS = ("declare", "d", "yes", "y")
PASS_WORDS = ("pass", "p", "no", "n", "sink")
KEEP_WORDS = ("none", "done", "keep", "-")
"""Words that mean "discard nothing" in the exchange (where that is allowed)."""


class InputError(ValueError):
    """Typed input that is not a legal choice; the message says why."""


_SUIT_LETTERS = str.maketrans(
    {"♣": "C", "♧": "C", "♦": "D", "♢": "D", "♥": "H", "♡": "H", "♠": "S", "♤": "S", "\ufe0f": None}
)
"""Suit symbols (black and white, with or without the emoji variation selector) to letters."""


def _shown(token: str, limit: int = 16) -> str:
    """``token`` quoted for an error message, cut to ``limit`` characters."""
    return repr(token if len(token) <= limit else token[: limit - 3] + "...")


def _card_or_number(token: str, numbered: Sequence[int], rules: Rules, numbers: bool = True) -> int:
    """A card id from a card name (``qh``, ``10s``, ``ts``, ``10♠``) or, with ``numbers``, a
    1-based number into ``numbered``."""
    if token.isascii() and token.isdigit() and not numbers:
        raise InputError(f"{_shown(token)} is not a card: name one, such as qh or 10s")
    if token.isascii() and token.isdigit():
        k = int(token) if len(token) <= 3 else 0  # a long line of digits is no choice
        if not 1 <= k <= len(numbered):
            raise InputError(
                f"there is no choice {_shown(token)[1:-1]}: choose 1 to {len(numbered)}"
            )
        return numbered[k - 1]
    try:
        card = parse_card(token.translate(_SUIT_LETTERS))
    except ValueError as err:
        raise InputError(
            f"{_shown(token)} is not a card: type a rank (7 8 9 10 J Q K A) and a suit "
            f"(c d h s), like qh or 10s{', or a number' if numbers else ''}"
        ) from err
    if card not in rules.pack:
        what = "joker" if card == JOKER else card_str(card)
        raise InputError(f"there is no {what} in the pack of {rules.name} rules")
    return card


def parse_play(
    text: str,
    legal: Sequence[int],
    rules: Rules,
    hand: int | None = None,
    lead: int | None = None,
    name: Callable[[int], str] = card_str,
    numbers: bool = True,
) -> int:
    """The card to play from ``text``: a card name (``'qh'``, ``'10s'``, ``'10♠'``) or the number
    of a legal card (1-based, in the order of ``legal``; not with ``numbers=False``, as on the
    web page, which shows no numbers).

    ``hand`` (a bitmask) and ``lead`` (the card led, if following) make the errors precise;
    ``name`` writes a card in them (``'QH'`` by default).
    """
    tokens = text.replace(",", " ").split()
    if len(tokens) != 1:
        number = " or its number" if numbers else ""
        raise InputError(f"play one card: its name (like qh or 10s){number}")
    card = _card_or_number(tokens[0], legal, rules, numbers)
    if card in legal:
        return card
    if hand is not None and not hand >> card & 1:
        raise InputError(f"you do not hold {name(card)}")
    if lead is not None and lead != JOKER:
        suit = SUIT_NAMES[lead >> 3]
        raise InputError(f"you must follow {suit}: play one of {' '.join(name(c) for c in legal)}")
    raise InputError(
        f"{name(card)} cannot be played now; legal: {' '.join(name(c) for c in legal)}"
    )


def parse_discards(
    text: str,
    hand: Sequence[int],
    lo: int,
    hi: int,
    rules: Rules,
    name: Callable[[int], str] = card_str,
    numbers: bool = True,
) -> list[int]:
    """The cards to discard from ``text``: card names or (unless ``numbers=False``) numbers into
    ``hand`` (the hand as shown, 1-based), optionally after the word ``discard``; ``none`` (or
    ``done``) discards nothing.

    The count must be within ``lo..hi`` (the exchange limits); every card must be in the hand, and
    none given twice. ``name`` writes a card in the errors.
    """
    tokens = text.replace(",", " ").lower().split()
    if tokens and tokens[0] in ("discard", "x"):
        tokens = tokens[1:]
    if len(tokens) == 1 and tokens[0] in KEEP_WORDS:
        tokens = []
    cards = [_card_or_number(t, hand, rules, numbers) for t in tokens]
    for c in cards:
        if c not in hand:
            raise InputError(f"you do not hold {name(c)}")
    seen: set[int] = set()
    for c in cards:
        if c in seen:
            raise InputError(f"{name(c)} is given twice")
        seen.add(c)
    if not lo <= len(cards) <= hi:
        span = f"{lo} to {hi}" if lo < hi else str(lo)
        given = f"you gave {len(cards)}" if cards else "you gave none"
        raise InputError(f"discard {span} card{'s' if hi != 1 else ''}; {given}")
    return cards


def parse_decision(text: str) -> bool:
    """``True`` to declare, ``False`` to pass: ``declare``/``d``/``1`` or ``pass``/``p``/``2``."""
    t = text.strip().lower()
    if t in (*DECLARE_WORDS, "1"):
        return True
    if t in (*PASS_WORDS, "2"):
        return False
    raise InputError("answer declare (d, 1) or pass (p, 2)")


def read_line(prompt: str) -> str:
    """Print ``prompt`` on standard output and read one line (``EOFError`` at end of input).

    Unlike ``input()`` on a terminal, the prompt never goes to standard error."""
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


def read_key(prompt: str) -> str:
    """Print ``prompt`` and read one keypress from the terminal on standard input, without
    waiting for Enter; return it (``''`` for Enter) after writing it and a newline.

    The terminal is in cbreak mode (no echo, no line editing; Ctrl-C still interrupts) only while
    the key is awaited, set again after a suspension (Ctrl-Z, then ``fg``), and restored on
    every way out: a key, end of input (Ctrl-D: ``EOFError``), ``KeyboardInterrupt`` or any
    exception a signal handler raises. An escape sequence (an arrow key) is returned whole; what
    else one read brings (keys pasted at once) is the first key alone.
    """
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)

    def cbreak(*_: object) -> None:
        with contextlib.suppress(termios.error, OSError):
            tty.setcbreak(fd, termios.TCSANOW)  # TCSANOW: keys typed ahead are kept

    resume = None
    if hasattr(signal, "SIGCONT") and threading.current_thread() is threading.main_thread():
        resume = signal.signal(signal.SIGCONT, cbreak)
    try:
        cbreak()
        sys.stdout.write(prompt)
        sys.stdout.flush()
        data = os.read(fd, 64)
    finally:
        if resume is not None:
            signal.signal(signal.SIGCONT, resume)
        with contextlib.suppress(termios.error, OSError):  # a terminal that hung up
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    text = data.decode("utf-8", errors="replace")
    if not text or text[0] == "\x04":  # the terminal closed, or Ctrl-D
        raise EOFError
    key = text if text[0] == "\x1b" else text[0]
    key = "" if key in ("\n", "\r") else key
    sys.stdout.write((key if key.isprintable() else "") + "\n")
    sys.stdout.flush()
    return key


def keys_on_terminal() -> bool:
    """Whether standard input is a terminal whose keys :func:`read_key` can read one by one."""
    try:
        return termios is not None and os.isatty(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):  # no stdin, or one without a file descriptor
        return False


def key_reader() -> Callable[[str], str]:
    """:func:`read_key` (single keypresses) on a terminal, else :func:`read_line` (one key per
    line: pipes, files, tests)."""
    return read_key if keys_on_terminal() else read_line
