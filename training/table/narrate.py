"""Say what happened in a game, as sentences for one reader: the engine's events made readable.

:class:`Narrator` turns the events a game logged during one move (see
:mod:`piquet_env.game.record`) into lines such as "random declares Point of five, 48 pips",
"Trick 3: you K♥, random 7♥ → you win", and the deal's score breakdown. It tells a player only
what he may know (his own discards and takes, the opponent's exchange as a count); a reader with
``viewer=None`` (a replay) sees everything, both players' discards and takes included.

Both ``piquet play`` and ``piquet replay`` call :meth:`Narrator.narrate` once per move with the game
as it was just before the move and as it is after it.
"""

from __future__ import annotations

from collections.abc import Sequence

from piquet_env import combinations as combos
from piquet_env.cards import parse_card, parse_mask
from piquet_env.game import Game, Phase
from piquet_env.rules import Rules
from piquet_table.text import (
    Cast,
    Style,
    role,
    score_sheet,
    score_table,
    settlement_lines,
)

CATEGORY_WORDS = ("the point", "sequences", "sets")
"""How a player names each declaration category when scoring it."""


class Narrator:
    """Turns the events of each move into lines for one reader.

    ``cast`` names the players and says who is reading (``viewer``; ``None`` sees both hands);
    ``style`` draws the cards. With ``tables=False`` a deal's end and the partie's end are told
    without the score table and the score sheet (for a reader that draws them itself, such as the
    web table); the sentences are the same.
    """

    def __init__(self, rules: Rules, cast: Cast, style: Style, *, tables: bool = True) -> None:
        self.rules = rules
        self.cast = cast
        self.style = style
        self.tables = tables
        self.tricks = [0, 0]
        """Tricks each player has won in the current deal (from the trick events narrated)."""
        self.sheet: list[tuple[int, int, tuple[int, int], tuple[int, int]]] = []
        """One row per deal narrated to its end: (deal, elder, deal scores, totals after)."""
        self.elder = 0
        """Elder of the deal being narrated."""

    def narrate(self, before: Game | None, after: Game, events: Sequence[dict]) -> list[str]:
        """Lines for ``events``, the events ``after`` logged since it was ``before`` (``None`` for
        the events of a new game's construction). One move, or one player's whole exchange."""
        lines: list[str] = []
        if before is not None and before.phase == Phase.EXCHANGE:
            lines += self._exchanges(before, after)
        step = before.decl_step if before is not None and before.phase == Phase.DECLARE else 0
        n = self.rules.n_cards
        for e in events:
            kind = e["type"]
            if kind == "action" and e["action"] > n:  # declare or pass
                lines += self._decision(e, step, after)
                step += 1
            elif kind == "deal":
                step = 0
                self.tricks = [0, 0]
                lines += self._deal(e, after)
            elif kind != "action":
                handler = getattr(self, "_" + kind, None)
                if handler is not None:  # a newer log may hold events this reader does not know
                    lines += handler(e, after)
        return lines

    # ------------------------------------------------------------------ one handler per event

    def _partie(self, e: dict, game: Game) -> list[str]:
        c = self.cast
        deals = f"{game.planned_deals} deals" if e["mode"] == "partie" else "one deal"
        return [
            f"Piquet, {self.rules.name} rules, {deals}: {c.who(0, False)} against "
            f"{c.who(1, False)}."
        ]

    def _cut(self, e: dict, game: Game) -> list[str]:
        c, s = self.cast, self.style
        cards = [parse_card(x) for x in e["cards"]]
        y = 1 - e["elder"]
        return [
            f"Cut for deal: {c.who(0, False)} {s.card(cards[0])}, {c.who(1, False)} "
            f"{s.card(cards[1])}. The lower card deals: {c.who(y, False)} "
            f"{'are' if y == c.viewer else 'is'} younger hand first."
        ]

    def _deal(self, e: dict, game: Game) -> list[str]:
        c, s = self.cast, self.style
        elder = self.elder = e["elder"]
        title = (
            f"Deal {e['deal'] + 1} of {game.planned_deals} {s.dot} elder: "
            f"{c.who(elder, False)} {s.dot} younger (dealer): {c.who(1 - elder, False)}"
        )
        out = ["", s.heading(title)]
        if c.viewer is None:
            hands = (e["elder_hand"], e["younger_hand"])
            for p, text in ((elder, hands[0]), (1 - elder, hands[1])):
                out.append(
                    f"  {c.names[p] + ' (' + role(elder, p) + ')':<22}{s.hand(parse_mask(text))}"
                )
            out.append(
                f"  {'talon (top first)':<22}"
                + " ".join(s.card(parse_card(x)) for x in e["talon"].split())
            )
        return out

    def _exchanges(self, before: Game, after: Game) -> list[str]:
        """Summaries of the exchanges completed during the move."""
        e = before.elder
        done = []
        if before.current_player == e and (
            after.phase != Phase.EXCHANGE or after.current_player != e
        ):
            done.append(e)
        if after.phase != Phase.EXCHANGE:
            done.append(1 - e)
        out = []
        c, s = self.cast, self.style
        for p in done:
            discarded = after.discards[p]
            took = after.hands[p] & ~before.hands[p]
            k = took.bit_count()
            if c.viewer is not None and p != c.viewer:
                what = f"{k} card{'s' if k != 1 else ''}" if k else "no cards"
                out.append(f"{c.verb(p, 'exchange')} {what} ({role(e, p)} hand).")
                continue
            if not k:
                out.append(f"{c.verb(p, 'exchange')} no cards ({role(e, p)} hand).")
            else:
                out.append(
                    f"{c.verb(p, 'discard')} {s.cards(discarded)} and "
                    f"{'take' if p == c.viewer else 'takes'} {s.cards(took)}."
                )
            seen = after.seen_talon[p]
            if p == e and seen:
                share = "your" if p == c.viewer else "elder's"
                out.append(
                    f"{c.verb(p, 'look')} at the rest of {share} share of the talon: "
                    f"{s.cards(seen)}."
                )
        return out

    def _decision(self, e: dict, step: int, game: Game) -> list[str]:
        c, s = self.cast, self.style
        p, cat = e["player"], step >> 1
        name = combos.CATEGORY_NAMES[cat]
        out = []
        if e["action"] == self.rules.n_cards + 1:  # declare
            combo = game.declared[cat][p]
            out.append(f"{c.verb(p, 'declare')} {combos.describe(combo)} ({s.cards(combo.cards)}).")
        else:
            why = ""
            if e.get("auto") and (c.viewer is None or p == c.viewer):
                none = game.best[p][cat] is None
                why = " (nothing to declare)" if none else " (elder's is better)"
            out.append(f"{c.verb(p, 'pass', 'passes')} on {name}{why}.")
        if step & 1:  # the category is decided: say so unless a score event follows
            ours = (game.declared[cat][game.elder], game.declared[cat][game.younger])
            if ours == (None, None):
                out.append(
                    f"Nobody declares {'a ' if cat < 2 else ''}{name}"
                    f"{'s' if cat == 2 else ''}: nobody scores."
                )
            elif combos.compare(*ours) == 0:
                out.append(f"Equal {name}s: nobody scores.")
        return out

    def _score(self, e: dict, game: Game) -> list[str]:
        c, s = self.cast, self.style
        p, what, pts = e["player"], e["category"], e["points"]
        if what in combos.CATEGORY_NAMES:
            cat = combos.CATEGORY_NAMES.index(what)
            won = combos.scoring(cat, game.hands[p])
            detail = ""
            if cat > 0:
                detail = ": " + ", ".join(f"{combos.describe(x)} ({s.cards(x.cards)})" for x in won)
            return [f"{c.verb(p, 'score')} {pts} for {CATEGORY_WORDS[cat]}{detail}."]
        if what == "carte blanche":
            return [
                f"{c.verb(p, 'have', 'has')} carte blanche (no king, queen or jack): "
                f"{pts} points. The hand is shown: {s.cards(game.dealt[p])}."
            ]
        return [s.bold(f"{what.capitalize()}! {c.verb(p, 'score')} {pts}.")]

    def _trick(self, e: dict, game: Game) -> list[str]:
        c, s = self.cast, self.style
        leader, winner = e["leader"], e["winner"]
        self.tricks[winner] += 1
        last = " (last)" if e["number"] == self.rules.hand_size else ""
        return [
            f"Trick {e['number']}{last}: {c.who(leader, False)} "
            f"{s.card(parse_card(e['lead']))}, {c.who(1 - leader, False)} "
            f"{s.card(parse_card(e['follow']))} {s.arrow} "
            f"{c.verb(winner, 'win', capital=False)} {s.dot} "
            f"tricks {c.who(0, False)} {self.tricks[0]}, {c.who(1, False)} {self.tricks[1]}"
        ]

    def _deal_end(self, e: dict, game: Game) -> list[str]:
        c, s = self.cast, self.style
        scored = (e["scores"][0]["total"], e["scores"][1]["total"])
        self.sheet.append((e["deal"], self.elder, scored, (e["totals"][0], e["totals"][1])))
        out = []
        for p in (0, 1):
            if e["scores"][p].get("capot"):
                instead = (
                    "the 10 for the cards"
                    if self.rules.trick_scoring == "classic"
                    else "the points for winning tricks"
                )
                out.append(
                    s.bold(
                        f"Capot! {c.verb(p, 'win')} every trick: {e['scores'][p]['capot']} "
                        f"for the capot, in place of {instead}."
                    )
                )
        out += [
            f"End of deal {e['deal'] + 1}. Tricks won: {c.who(0, False)} {self.tricks[0]}, "
            f"{c.who(1, False)} {self.tricks[1]}."
        ]
        if self.tables:
            out += score_table(e["scores"], c, self.style)
        t = e["totals"]
        out.append(f"Totals: {c.who(0, False)} {t[0]}, {c.who(1, False)} {t[1]}.")
        return out

    def _tie_break(self, e: dict, game: Game) -> list[str]:
        return [
            "The totals are equal: each player deals once more "
            f"(the partie now has {e['deals']} deals)."
        ]

    def _result(self, e: dict, game: Game) -> list[str]:
        if game.mode == "partie":
            sheet = score_sheet(self.sheet, self.cast, self.style) if self.tables else []
            return [
                "",
                self.style.heading("The partie is over"),
                *sheet,
                *settlement_lines(e["totals"], e["result"], self.rules, self.cast),
            ]
        out = ["", self.style.heading("The deal is over")]
        r = e["result"]
        if r[0] == r[1]:
            return [*out, "The deal is drawn: both players scored the same."]
        w = 0 if r[0] > r[1] else 1
        return [*out, f"{self.cast.verb(w, 'win')} the deal by {r[w]} points."]
