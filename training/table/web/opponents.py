"""The agents a page may choose from: a fixed list, checked once when the server starts.

The browser never names a path or an arbitrary spec: it sends the ``id`` of one of the
:class:`Choice` objects :func:`opponent_choices` made, and only those build agents. The list holds
the server's own ``--opponent`` (first: the page's default), the built-in agents that work under
the server's rules (``random``, ``heuristic``, two searches, the shipped policy ``baseline``, greedy
and sampling (``baseline:sample``), and the
search guided by it) and each policy checkpoint in the server's allowed folder, addressed by its
name there (``checkpoint:NAME``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from piquet_agents.registry import make_agent
from piquet_env.rules import Rules
from piquet_table.text import printable

BUILTIN = (
    ("random", "Random"),
    ("heuristic", "Heuristic"),
    ("mcts:100", "Search, 100 playouts"),
    ("mcts:400", "Search, 400 playouts"),
    ("baseline", "Shipped policy"),
    ("baseline:sample", "Shipped policy, sampling"),
    ("mcts:50:policy=baseline", "Guided search, 50 playouts"),
)
"""Built-in choices, ``(spec, label)``, offered where they build under the server's rules."""

MAX_CHECKPOINTS = 50
"""Most checkpoints of the allowed folder offered (the first, by name)."""

SEARCHING = ("mcts",)
"""Spec prefixes of agents that think for a while (the page says so while they do)."""


@dataclass(frozen=True)
class Choice:
    """An agent a page may pick: ``id`` (what the browser sends), ``label`` (what it shows),
    ``spec`` (what :func:`~piquet_agents.registry.make_agent` builds; a path stays here)."""

    id: str
    label: str
    spec: str

    @property
    def searches(self) -> bool:
        """Whether the agent searches (and so takes noticeable time per move)."""
        return self.spec.lower().split(":")[0] in SEARCHING

    def public(self) -> dict[str, object]:
        """What the page is told about it."""
        return {"id": self.id, "label": self.label, "searches": self.searches}


def checkpoint_paths(folder: Path) -> list[Path]:
    """The checkpoint files (``*.safetensors``) and run directories directly in ``folder``,
    by name, at most :data:`MAX_CHECKPOINTS`; symbolic links are left out, so nothing outside the
    folder is offered."""
    found = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.is_symlink():
            continue
        checkpoint = entry.is_file() and entry.suffix == ".safetensors"
        if checkpoint or (entry.is_dir() and any((entry / n).is_file() for n in _RUN_FILES)):
            found.append(entry)
    return found[:MAX_CHECKPOINTS]


_RUN_FILES = ("policy.safetensors", "latest.safetensors")


def _builds(spec: str, rules: Rules) -> str | None:
    """``None`` if ``spec`` builds an agent for ``rules``, else why not."""
    try:
        make_agent(spec, rules, seed=0)
    except (ValueError, ImportError, OSError) as err:
        return str(err)
    return None


def opponent_choices(
    rules: Rules, default: str, checkpoints: Path | None = None
) -> tuple[dict[str, Choice], list[str]]:
    """The choices for ``rules``, the server's ``default`` spec first, and the lines that say
    which candidates were left out and why. ``ValueError`` if ``default`` itself does not build.
    """
    reason = _builds(default, rules)
    if reason is not None:
        raise ValueError(reason)
    builtin = dict(BUILTIN)
    first = Choice(default, builtin.get(default, f"{printable(default)} (the server's)"), default)
    if os.path.exists(default) and default not in builtin:
        first = Choice("server", f"{printable(Path(default).name)} (the server's)", default)
    choices = {first.id: first}
    skipped = []
    for spec, label in BUILTIN:
        if spec in choices:
            continue
        why = _builds(spec, rules)
        if why is None:
            choices[spec] = Choice(spec, label, spec)
        else:
            skipped.append(f"{spec}: {why}")
    for path in checkpoint_paths(checkpoints) if checkpoints is not None else []:
        why = _builds(str(path), rules)
        shown = printable(path.name)  # a file's name may hold escape sequences
        if why is None:
            cid = f"checkpoint:{path.name}"
            choices[cid] = Choice(cid, f"Policy {shown}", str(path))
        else:
            skipped.append(printable(f"{shown}: {why}", 300))
    return choices, skipped
