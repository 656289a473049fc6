"""The table as an image: ``render_mode="rgb_array"`` of the environments and the video recorders.

:func:`render_image` draws what :func:`piquet_env.render.render_text` writes, from the same view:
the title and score table, both hands as cards grouped by suit (an opponent's unseen cards as
backs), the talon, the card led to the trick and the last trick, and the declarations and points
of the deal. It returns a ``uint8`` array of shape ``(height, width, 3)`` (:data:`SIZE`), as
Gymnasium's ``RecordVideo`` and PettingZoo's ``save_observation``/video tools take.

Drawing uses matplotlib's Agg canvas (no window, no pyplot state), from the ``render`` extra
(``pip install -e ".[render]"``; the ``train`` extra has it too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from piquet_env.cards import JOKER, card_symbol, cards_of, sort_key
from piquet_env.game import Game, Phase
from piquet_env.game.knowledge import opponent_known, talon_known
from piquet_env.render import agent_name, table_details, table_header, trick_lines

SIZE = (540, 960)
"""Height and width of the image in pixels."""
_DPI = 100
_RED_SUITS = (1, 2)  # diamonds, hearts
_FELT = "#1f5f3a"
_CARD_W, _CARD_H = 0.042, 0.105  # in figure fractions


def _matplotlib() -> tuple[Any, Any]:
    """matplotlib's Figure and Agg canvas classes, or an ImportError naming the extra."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            'render_mode="rgb_array" draws with matplotlib, which is not installed: '
            'pip install -e ".[render]"'
        ) from e
    return Figure, FigureCanvasAgg


def render_image(game: Game, player: int | None = None) -> np.ndarray:
    """The table of ``game`` as ``player`` (0, 1, or ``None`` for a spectator) sees it, as a
    ``uint8`` ``(height, width, 3)`` RGB array."""
    figure_cls, canvas_cls = _matplotlib()
    height, width = SIZE
    fig = figure_cls(figsize=(width / _DPI, height / _DPI), dpi=_DPI, facecolor=_FELT)
    canvas = canvas_cls(fig)
    header = table_header(game, player)
    fig.text(0.015, 0.955, header[0], color="white", fontsize=12, weight="bold", va="center")
    for i, line in enumerate(header[1:]):
        fig.text(0.015, 0.905 - 0.04 * i, line, color="white", family="monospace", fontsize=10)
    bottom = 0 if player is None else player  # the viewer's hand at the bottom
    _hand_row(fig, game, 1 - bottom, player, y=0.60)
    _hand_row(fig, game, bottom, player, y=0.05)
    _talon_row(fig, game, player, y=0.33)
    _trick(fig, game)
    details = table_details(game) + trick_lines(game)[1:]
    for i, line in enumerate(details[:6]):
        fig.text(0.43, 0.44 - 0.042 * i, line, color="white", family="monospace", fontsize=8.5)
    canvas.draw()
    return np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[:, :, :3])


def _card(fig: Any, x: float, y: float, card: int | None) -> None:
    """One card at figure position (x, y) (lower left): face up, or a back for ``None``."""
    from matplotlib.patches import FancyBboxPatch

    face = card is not None
    patch = FancyBboxPatch(
        (x, y),
        _CARD_W,
        _CARD_H,
        boxstyle="round,pad=0.002,rounding_size=0.006",
        transform=fig.transFigure,
        facecolor="white" if face else "#284a8c",
        edgecolor="#222222",
        linewidth=1.0,
    )
    fig.add_artist(patch)
    if face:
        red = card != JOKER and card >> 3 in _RED_SUITS
        fig.text(
            x + _CARD_W / 2,
            y + _CARD_H / 2,
            card_symbol(card),
            color="#c8102e" if red else "black",
            fontsize=13,
            weight="bold",
            ha="center",
            va="center",
        )


def _cards(fig: Any, x: float, y: float, cards: list[int | None]) -> float:
    """Cards in a row from x, a gap between suits; returns the x after the last card."""
    last_suit = None
    for c in cards:
        suit = None if c is None else (-1 if c == JOKER else c >> 3)
        if last_suit is not None and suit != last_suit:
            x += _CARD_W * 0.35
        _card(fig, x, y, c)
        x += _CARD_W + 0.004
        last_suit = suit
    return x


def _held(mask: int) -> list[int | None]:
    """The cards of a mask in the order a hand is held (by suit, high first)."""
    return list(sorted(cards_of(mask), key=sort_key))


def _hand_row(fig: Any, game: Game, p: int, viewer: int | None, y: float) -> None:
    """Player ``p``'s hand as ``viewer`` sees it, with a label and his discards' count."""
    label = f"{agent_name(p)} ({'elder' if game.elder == p else 'younger'})"
    fig.text(0.015, y + _CARD_H + 0.02, label, color="white", fontsize=10)
    if viewer is None or viewer == p:
        cards = _held(game.hands[p])
    else:
        known = opponent_known(game, viewer)
        hidden = game.hands[p].bit_count() - known.bit_count()
        cards = _held(known) + [None] * hidden
    x = _cards(fig, 0.015, y, cards)
    if game.discards[p]:
        n = game.discards[p].bit_count()
        fig.text(x + 0.01, y + _CARD_H / 2, f"discarded: {n}", color="white", va="center")


def _talon_row(fig: Any, game: Game, viewer: int | None, y: float) -> None:
    """The talon: face up for a spectator, else backs (with the cards the viewer saw noted)."""
    if not game.talon and game.phase != Phase.EXCHANGE:
        return
    fig.text(0.015, y + _CARD_H + 0.02, f"talon ({len(game.talon)})", color="white", fontsize=10)
    if viewer is None:
        cards: list[int | None] = list(game.talon)
    else:
        seen = talon_known(game, viewer)
        cards = [c if seen >> c & 1 else None for c in game.talon]
    x = 0.015
    for c in cards:
        _card(fig, x, y, c)
        x += _CARD_W + 0.004


def _trick(fig: Any, game: Game) -> None:
    """The card led to the current trick, else the last trick's two cards, in the middle."""
    x, y = 0.78, 0.60
    if game.trick:
        fig.text(x, y + _CARD_H + 0.02, "trick", color="white", fontsize=10)
        _card(fig, x, y, game.trick[0])
    elif game.last_trick is not None:
        _leader, lead, follow, winner = game.last_trick
        fig.text(
            x, y + _CARD_H + 0.02, f"last trick: {agent_name(winner)}", color="white", fontsize=10
        )
        _card(fig, x, y, lead)
        _card(fig, x + _CARD_W + 0.01, y, follow)
