"""A user error's message as a value: its text, the settings it names and the path in question.

A library error that tells its caller what to change names a setting by the library's own name
for it (a parameter, a settings field) with the value it has or should have: a :class:`Setting`.
The error's message is a :class:`Message`, a sequence of text and settings: read as text (``str``
of the error) each setting is written as a keyword argument (``rules='mini'``), so a library
caller reads the names it passes; the command line renders the same message with its flags
(``--rules mini``) through its one map of setting names to flags (``piquet_cli.flags``). So no
library module spells a command-line flag.

>>> err = ValueError(Message("too large; use ", Setting("rules", "mini")))
>>> str(err)
"too large; use rules='mini'"
>>> err.args[0].render(lambda s: f"--{s.name} {s.value}")
'too large; use --rules mini'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Message", "Setting", "message_of"]


@dataclass(frozen=True)
class Setting:
    """A setting that a message names: ``name``, the library's name for it (a parameter or a
    settings field), and ``value``, the value it has or should have (None: the setting alone, as
    a switch such as ``resume`` or a setting whose value the text does not give)."""

    name: str
    value: object = None

    def __str__(self) -> str:
        return self.name if self.value is None else f"{self.name}={self.value!r}"


class Message:
    """A message of text and :class:`Setting` parts, and ``path``, the file or folder in
    question where there is one. ``str()`` writes the settings in the library's names;
    :meth:`render` in any other (a command line's flags)."""

    __slots__ = ("parts", "path")

    def __init__(self, *parts: str | Setting, path: str | Path | None = None) -> None:
        self.parts: tuple[str | Setting, ...] = parts
        self.path = None if path is None else str(path)

    def render(self, name: Callable[[Setting], str] = str) -> str:
        """The message with each setting written by ``name``."""
        return "".join(p if isinstance(p, str) else name(p) for p in self.parts)

    @property
    def settings(self) -> tuple[Setting, ...]:
        """The settings the message names, in order."""
        return tuple(p for p in self.parts if isinstance(p, Setting))

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Message({self.render()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and (self.parts, self.path) == (other.parts, other.path)

    def __hash__(self) -> int:
        return hash((self.parts, self.path))

    def __reduce__(self) -> tuple[Callable[..., Message], tuple[object, ...]]:
        return (_message, (self.parts, self.path))


def _message(parts: tuple[str | Setting, ...], path: str | None) -> Message:
    """A :class:`Message` from its fields (unpickling)."""
    return Message(*parts, path=path)


def message_of(err: BaseException) -> Message | None:
    """The :class:`Message` an error was raised with, or None for a plain text message."""
    first = err.args[0] if len(err.args) == 1 else None
    return first if isinstance(first, Message) else None
