"""What the browser is shown: the table as one seat knows it, or as an onlooker sees it.

:func:`seat_view` is the only way the state of a game reaches a person's browser. It reads the
seat's own hand and discards, public counts and plays, declared and scored combinations, and the
opponent's and the talon's cards only through :mod:`piquet_env.game.knowledge`
(:func:`~piquet_env.game.knowledge.opponent_known`, :func:`~piquet_env.game.knowledge.talon_known`),
so two games that differ only in where the seat's hidden cards lie give the same view (the tests
permute them). :func:`spectator_view` shows everything, for watching two agents and for replays.

A deal's end is shown before the next deal is dealt: :func:`deal_end_view` draws the table from the
game just before the deal's last card (the engine deals the next deal as that card falls) and the
events of that move. Every view is a JSON-ready dict; cards are the engine's codes (``"QH"``,
``"TS"``, ``"JK"``), hands are grouped by suit, high to low, as ``piquet play`` shows them.

>>> from piquet_env.game import Game
>>> v = seat_view(Game(seed=3), 0, ("human", "random"))
>>> v["phase"], len(v["players"][0]["hand"]) > 0, v["players"][1]["hand"]
('exchange', True, None)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from piquet_env import combinations as combos
from piquet_env.actions import declare_action
from piquet_env.cards import JOKER, card_str, cards_of, sort_key
from piquet_env.game import PHASE_NAMES, Game, Phase, opponent_known, talon_known
from piquet_env.game.scoring import DealScore
from piquet_table.narrate import Narrator
from piquet_table.session import play_prompt
from piquet_table.text import SCORE_ROWS, Cast, Style


@dataclass(frozen=True)
class PageStyle(Style):
    """The terminal's :class:`~piquet_table.text.Style` for a page: Unicode suits, no colour codes,
    headings as their bare title (the page draws its own), no rules."""

    def heading(self, title: str) -> str:
        """The title alone."""
        return title

    def rule(self) -> str:
        """Nothing: the page separates sections itself."""
        return ""


def codes(cards: int | Iterable[int]) -> list[str]:
    """Card codes in the order a hand is held (by suit, high to low).

    >>> from piquet_env.cards import parse_mask
    >>> codes(parse_mask("7c ac ts qh"))
    ['AC', '7C', 'QH', 'TS']
    """
    ids = cards_of(cards) if isinstance(cards, int) else list(cards)
    return [card_str(c) for c in sorted(ids, key=sort_key)]


def suit_groups(mask: int) -> list[list[str]]:
    """A hand grouped by suit (the joker alone first), each group high to low.

    >>> from piquet_env.cards import parse_mask
    >>> suit_groups(parse_mask("7c ac ts qh jk"))
    [['JK'], ['AC', '7C'], ['QH'], ['TS']]
    """
    groups: dict[int, list[str]] = {}
    for c in sorted(cards_of(mask), key=sort_key):
        groups.setdefault(-1 if c == JOKER else c >> 3, []).append(card_str(c))
    return list(groups.values())


def breakdown(scores: Sequence[DealScore | dict]) -> list[dict]:
    """A deal's score breakdown as rows ``{"label", "points": [p0, p1]}``: every field either player
    scored, in reckoning order, then ``"deal total"``."""
    rows = [s.to_dict() if isinstance(s, DealScore) else dict(s) for s in scores]
    out = [
        {"label": label, "points": [rows[0][key], rows[1][key]]}
        for key, label in SCORE_ROWS
        if rows[0].get(key) or rows[1].get(key)
    ]
    out.append({"label": "deal total", "points": [rows[0]["total"], rows[1]["total"]]})
    return out


def score_sheet(game: Game, extra: dict | None = None) -> list[dict]:
    """One row per finished deal of ``game`` (``deal`` 1-based, ``elder``, ``scores``, ``totals``
    after it); ``extra`` is the ``deal_end`` event of the deal under way, which just ended."""
    done = [(ds[0].total, ds[1].total) for ds in game.deal_scores]
    running = [game.totals[p] - sum(d[p] for d in done) for p in (0, 1)]
    if extra is not None:
        done.append((extra["scores"][0]["total"], extra["scores"][1]["total"]))
    # The deal under way (or, once over, the last one played) has game.elder; elders alternate.
    current = game.deal_number - 1 if game.is_over else game.deal_number
    first = game.deal_number - len(game.deal_scores)
    rows = []
    for i, scored in enumerate(done, first):
        elder = game.elder if (current - i) % 2 == 0 else 1 - game.elder
        running = [running[0] + scored[0], running[1] + scored[1]]
        rows.append({"deal": i + 1, "elder": elder, "scores": list(scored), "totals": running})
    return rows


def _declarations(game: Game) -> list[dict]:
    """What was declared and scored in each category of the deal so far (all public)."""
    if game.phase == Phase.EXCHANGE:
        return []
    out = []
    fields = ("point", "sequence", "set")
    for cat, name in enumerate(combos.CATEGORY_NAMES):
        players = []
        for p in (0, 1):
            combo = game.declared[cat][p]
            players.append(
                {
                    "decided": game.decided[cat][p],
                    "declared": combos.describe(combo) if combo is not None else None,
                    "cards": codes(combo.cards) if combo is not None else [],
                    "scored": game.deal_score(p).to_dict()[fields[cat]],
                }
            )
        out.append({"category": name, "players": players})
    return out


def _trick(game: Game) -> dict:
    """The trick under way: who led and the card(s) on the table."""
    return {"leader": game.leader, "cards": [card_str(c) for c in game.trick], "winner": None}


def _last_trick(game: Game) -> dict | None:
    if game.last_trick is None:
        return None
    leader, lead, follow, winner = game.last_trick
    return {"leader": leader, "cards": [card_str(lead), card_str(follow)], "winner": winner}


def _common(game: Game, names: Sequence[str]) -> dict:
    """The public part of every view."""
    over = game.is_over
    return {
        "names": list(names),
        "rules": game.rules.name,
        "mode": game.mode,
        "phase": PHASE_NAMES[game.phase],
        "deal": len(game.deal_scores) if over else game.deal_number + 1,
        "deals": game.planned_deals,
        "elder": game.elder,
        "to_act": game.current_player,
        "totals": list(game.totals),
        "deal_points": [game.deal_score(0).total, game.deal_score(1).total],
        "tricks": list(game.tricks_won),
        "trick": _last_trick(game) if over and game.last_trick else _trick(game),
        "last_trick": _last_trick(game),
        "talon_count": len(game.talon),
        "taken": list(game.taken),
        "exchanged": list(game.exchanged),
        "declarations": _declarations(game),
        "sheet": score_sheet(game),
        "deal_over": False,
        "breakdown": breakdown(game.deal_scores[-1]) if over and game.deal_scores else None,
        "result": list(game.result) if over else None,
    }


def _choice(game: Game, seat: int) -> dict | None:
    """What the seat may do now, if it is to act."""
    if game.current_player != seat:
        return None
    hand = game.hands[seat]
    if game.phase == Phase.EXCHANGE:
        lo, hi = game.exchange_limits(seat)
        return {"kind": "exchange", "min": lo, "max": hi, "cards": codes(hand)}
    if game.phase == Phase.DECLARE:
        combo = game.best[seat][game.category]
        assert combo is not None  # with nothing to declare the engine passes by itself
        return {
            "kind": "declare",
            "category": combos.CATEGORY_NAMES[game.category],
            "combo": combos.describe(combo),
            "cards": codes(combo.cards),
            "can_declare": declare_action(game.rules) in game.legal_actions(),
        }
    return {"kind": "play", "cards": codes(game.legal_actions()), "prompt": play_prompt(game, seat)}


def seat_view(game: Game, seat: int, names: Sequence[str]) -> dict:
    """The table as player ``seat`` knows it: his hand and discards, the opponent's card count and
    the cards of his he was shown, the talon's count and the talon cards he saw, and everything
    public; ``choice`` says what he may do if he is to act."""
    o = 1 - seat
    view = _common(game, names)
    view["seat"] = seat
    view["players"] = [None, None]
    view["players"][seat] = {
        "cards": game.hands[seat].bit_count(),
        "hand": suit_groups(game.hands[seat]),
        "known": [],
        "discards": codes(game.discards[seat]),
    }
    view["players"][o] = {
        "cards": game.hands[o].bit_count(),
        "hand": None,
        "known": codes(opponent_known(game, seat)),
        "discards": None,
    }
    view["talon"] = None
    view["talon_seen"] = codes(talon_known(game, seat))
    view["choice"] = _choice(game, seat)
    return view


def spectator_view(game: Game, names: Sequence[str]) -> dict:
    """The table as an onlooker of two agents (or a replay) sees it: both hands, both discards and
    the talon, top first."""
    view = _common(game, names)
    view["seat"] = None
    view["players"] = [
        {
            "cards": game.hands[p].bit_count(),
            "hand": suit_groups(game.hands[p]),
            "known": [],
            "discards": codes(game.discards[p]),
        }
        for p in (0, 1)
    ]
    view["talon"] = [card_str(c) for c in game.talon]
    view["talon_seen"] = []
    view["choice"] = None
    return view


def deal_end_view(
    before: Game, events: Sequence[dict], seat: int | None, names: Sequence[str]
) -> dict:
    """The table when a deal's last card has fallen, before the next deal is dealt: the view of
    ``before`` (the game just before that card) with the last trick, the deal's tricks, points and
    breakdown and the totals of the ``trick`` and ``deal_end`` events in ``events``; hands are
    empty. ``choice`` is ``{"kind": "next"}`` for the seat."""
    view = spectator_view(before, names) if seat is None else seat_view(before, seat, names)
    trick = next(e for e in events if e["type"] == "trick")
    end = next(e for e in events if e["type"] == "deal_end")
    winner = trick["winner"]
    last = {"leader": trick["leader"], "cards": [trick["lead"], trick["follow"]], "winner": winner}
    tricks = list(before.tricks_won)
    tricks[winner] += 1
    for player in view["players"]:
        player["cards"] = 0
        if player["hand"] is not None:
            player["hand"] = []
        player["known"] = []
    view.update(
        to_act=-1,
        deal_over=True,
        trick=last,
        last_trick=last,
        tricks=tricks,
        deal_points=[end["scores"][0]["total"], end["scores"][1]["total"]],
        totals=list(end["totals"]),
        breakdown=breakdown(end["scores"]),
        sheet=score_sheet(before, end),
        choice=None if seat is None else {"kind": "next"},
    )
    return view


def add_settlement(view: dict, game: Game, cast: Cast) -> dict:
    """``view`` with ``settlement`` once ``game`` is over: the lines that settle the partie (or say
    who won the deal), in the narration's words."""
    if game.is_over:
        result = next(e for e in reversed(game.events) if e["type"] == "result")
        narrator = Narrator(game.rules, cast, PageStyle(), tables=False)
        view["settlement"] = narrator.narrate(None, game, [result])[2:]  # after the heading
    return view
