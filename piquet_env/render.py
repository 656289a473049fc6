"""Text rendering of a game: a readable table with Unicode suits, from one player's view or all.

:func:`render_text` shows the partie and deal scores, both players' hands (the viewer's in full, the
opponent's as the cards the viewer knows plus a count of hidden ones; both in full for a spectator),
grouped by suit as ``piquet play`` shows them, the talon, the declarations so far, the current and
the last trick, and whose turn it is. :mod:`piquet_env.image` draws the same table as an image.

>>> from piquet_env.game import Game
>>> print(render_text(Game(seed=3), player=None).splitlines()[0])
Piquet (standard) · deal 1 of 6 · exchange · to act: player_0 (elder)
"""

from __future__ import annotations

from piquet_env.cards import JOKER, card_symbol, cards_of, sort_key
from piquet_env.combinations import CATEGORY_NAMES, describe
from piquet_env.game import PHASE_NAMES, SCORE_FIELD_NAMES, Game, Phase
from piquet_env.game.knowledge import opponent_known, talon_known


def agent_name(player: int) -> str:
    """The PettingZoo agent name of engine player 0 or 1."""
    return f"player_{player}"


def cards_text(mask: int) -> str:
    """Cards of a bitmask as held in hand, as ``piquet play`` shows them: grouped by suit (clubs,
    diamonds, hearts, spades; the joker first), high first, two spaces between suits, Unicode suits
    (``'10♥ 9♥  A♠ K♠'``); ``'-'`` when empty.

    >>> from piquet_env.cards import parse_mask
    >>> cards_text(parse_mask("AS KS TH 9H"))
    '10♥ 9♥  A♠ K♠'
    """
    groups: dict[int, list[str]] = {}
    for c in sorted(cards_of(mask), key=sort_key):
        groups.setdefault(-1 if c == JOKER else c >> 3, []).append(card_symbol(c))
    return "  ".join(" ".join(g) for g in groups.values()) or "-"


def _seat(game: Game, p: int) -> str:
    return "elder" if game.elder == p else "younger"


def render_text(game: Game, player: int | None = None) -> str:
    """A multi-line table of ``game`` as ``player`` (0 or 1) sees it, or everything when ``player``
    is ``None`` (spectator view)."""
    _check_view(player)
    lines = table_header(game, player)
    lines.append("")
    for p in (0, 1):
        label = f"{agent_name(p)} hand:"
        if player is None or player == p:
            text = cards_text(game.hands[p])
            if game.discards[p]:
                text += f"   discarded: {cards_text(game.discards[p])}"
        else:
            known = opponent_known(game, player)
            hidden = game.hands[p].bit_count() - known.bit_count()
            text = (cards_text(known) + " " if known else "") + f"+ {hidden} unseen"
            if game.discards[p]:
                text += f"   discarded: {game.discards[p].bit_count()} cards"
        lines.append(f"{label:<19}{text}")
    if game.talon or game.phase == Phase.EXCHANGE:
        if player is None:
            talon = " ".join(card_symbol(c) for c in game.talon) or "-"
            lines.append(f"{'talon (top first):':<19} {talon}")
        else:
            seen = talon_known(game, player)
            known = f"  (seen: {cards_text(seen)})" if seen else ""
            lines.append(f"{'talon:':<19}{len(game.talon)} cards{known}")
    decl = _declarations(game) + _scored(game)
    if decl:
        lines.append("")
        lines.extend(decl)
    lines.extend(trick_lines(game))
    return "\n".join(lines)


def _check_view(player: int | None) -> None:
    if player not in (None, 0, 1) or isinstance(player, bool):
        raise ValueError(f"player must be 0, 1 or None (spectator), got {player!r}")


def table_header(game: Game, player: int | None = None) -> list[str]:
    """The title line (rules, deal, phase, who acts or the result) and the score table (partie,
    deal and tricks of both players), as :func:`render_text` starts."""
    _check_view(player)
    phase = game.phase
    head = (
        f"Piquet ({game.rules.name}) · deal {min(game.deal_number + 1, game.planned_deals)} of "
        f"{game.planned_deals} · {PHASE_NAMES[phase]}"
    )
    if phase == Phase.DECLARE:
        head += f" ({CATEGORY_NAMES[game.category]})"
    if game.is_over:
        r = game.result
        head += f" · result: {agent_name(0)} {r[0]:+d}, {agent_name(1)} {r[1]:+d}"
    else:
        cp = game.current_player
        head += f" · to act: {agent_name(cp)} ({_seat(game, cp)})"
    lines = [head]
    view = "spectator view" if player is None else f"view of {agent_name(player)}"
    lines.append(f"{'':<22}{'partie':>7}{'deal':>6}{'tricks':>8}   ({view})")
    for p in (0, 1):
        deal = sum(game.scores[p])
        lines.append(
            f"{agent_name(p) + ' (' + _seat(game, p) + ')':<22}{game.totals[p]:>7}"
            f"{deal:>6}{game.tricks_won[p]:>8}"
        )
    return lines


def table_details(game: Game) -> list[str]:
    """The declarations so far and each player's points this deal by source (public to both)."""
    return _declarations(game) + _scored(game)


def trick_lines(game: Game) -> list[str]:
    """The card led to the current trick and the last trick, if any."""
    lines = []
    if game.trick:
        lines.append(
            f"{'trick:':<19}{agent_name(1 - game.current_player)} led {card_symbol(game.trick[0])}"
        )
    if game.last_trick is not None:
        leader, lead, follow, winner = game.last_trick
        lines.append(
            f"{'last trick:':<19}{card_symbol(lead)} ({agent_name(leader)}) "
            f"{card_symbol(follow)} ({agent_name(1 - leader)}), won by "
            f"{agent_name(winner)}"
        )
    return lines


def _scored(game: Game) -> list[str]:
    """One line per player who has scored this deal: his points by source."""
    out = []
    for p in (0, 1):
        parts = [f"{name} {pts}" for name, pts in zip(SCORE_FIELD_NAMES, game.scores[p]) if pts]
        if parts:
            out.append(f"{agent_name(p) + ':':<19}" + ", ".join(parts))
    return out


def _declarations(game: Game) -> list[str]:
    """One line per category decided so far (or under way): what each player declared or passed."""
    out = []
    for cat, name in enumerate(CATEGORY_NAMES):
        parts = []
        for p in (game.elder, 1 - game.elder):
            if not game.decided[cat][p]:
                continue
            c = game.declared[cat][p]
            parts.append(f"{agent_name(p)} {describe(c) if c is not None else 'passed'}")
        if parts:
            out.append(f"{name + ':':<19}" + "; ".join(parts))
    return out
