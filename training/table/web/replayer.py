"""A saved game as frames for the page's replay viewer: the terminal replay's steps, with tables.

:func:`replay_frames` cuts a record exactly as ``piquet replay`` does
(:func:`piquet_table.replay.replay_steps`: the opening, each deal's start, each trick, each deal's
end) and gives each step the table as it then stands, both hands shown
(:func:`~piquet_table.web.view.spectator_view`), beside the step's narration. The page steps
through them forward and back, and by deal, without asking the server again.
"""

from __future__ import annotations

from piquet_env.game.record import replay
from piquet_table.replay import player_names, replay_steps
from piquet_table.text import Cast
from piquet_table.web.view import PageStyle, add_settlement, deal_end_view, spectator_view


def replay_frames(doc: dict, title: str) -> dict:
    """The frames of record ``doc`` (already checked by
    :func:`~piquet_env.game.record.check_record`): ``{"title", "names", "rules", "finished",
    "frames": [{"deal", "kind", "lines", "view"}...], "starts": [index of each deal's start
    frame]}``. :class:`~piquet_env.game.record.RecordError` if the log does not replay."""
    final = replay(doc)
    names = player_names(doc)
    cast = Cast(names)
    steps = replay_steps(doc, PageStyle(), tables=False)
    last_end = max((i for i, s in enumerate(steps) if s.kind == "end"), default=-1)
    frames = []
    for i, step in enumerate(steps):
        if step.kind == "end" and i == last_end and final.is_over:
            view = add_settlement(spectator_view(final, names), final, cast)
        elif step.kind == "end":
            view = deal_end_view(step.state, step.events, None, names)
        else:
            view = spectator_view(step.state, names)
        lines = [line.strip() for line in step.lines]
        frames.append({"deal": step.deal, "kind": step.kind, "lines": lines, "view": view})
    starts = [i for i, f in enumerate(frames) if f["kind"] == "start"]
    return {
        "title": title,
        "names": list(names),
        "rules": final.rules.name,
        "finished": final.is_over,
        "frames": frames,
        "starts": starts,
    }
