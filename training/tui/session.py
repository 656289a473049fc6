"""``piquet play``: a person plays a whole partie in the terminal against any agent.

The person sits as player 0 (the cut decides who is elder first); the opponent is any agent spec
(``random``, ``heuristic``, ``mcts:N``, a checkpoint path, see
:func:`piquet_agents.registry.make_agent`). Before each of the person's decisions the table shows
only what that player knows: his hand (sorted by suit, high to low), his discards, the talon cards
he saw, the opponent's cards he has been shown, the trick so far, the tricks won and the running
scores. Choices are numbered; cards are typed by name (``qh``, ``10s``) or number, the exchange as
a list of cards (``discard 7c 8d 9h``).

:class:`Session` runs the loop and is also used with two agents (``--player SPEC``) to watch a game,
narrated for an onlooker who sees both hands. Every game can be saved as a JSON record
(:mod:`piquet_training.tui.replay`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from piquet_agents.base import Agent
from piquet_agents.play import play_turn
from piquet_training.tui.input import (
    InputError,
    parse_decision,
    parse_discards,
    parse_play,
    read_line,
)
from piquet_training.tui.narrate import Narrator
from piquet_training.tui.text import Cast, Style, role

from piquet_env import combinations as combos
from piquet_env.actions import declare_action, done_action, pass_action
from piquet_env.cards import JOKER, SUIT_MASKS, SUIT_NAMES, cards_of, parse_card, sort_key
from piquet_env.game import Game, Phase, opponent_known, talon_known
from piquet_env.rules import Rules

HELP = """\
Commands, at any prompt:
  help, ?       this help
  table, t      show the table again
  tricks        the tricks of this deal so far
  quit, q       leave the partie (Ctrl-D too; Ctrl-C interrupts)
Exchange:       the cards to discard, by name or number: `discard 7c 8d 9h`, `7c 8d 9h` or `1 4 7`;
                `none` to keep your hand when you may exchange nothing
Declarations:   declare (d, 1) or pass (p, 2) for each of point, sequence and set
Play:           a card by name (qh, 10s, ac) or its number in the list
Card names:     rank 7 8 9 10 (or t) j q k a, then suit c d h s; the joker is jk"""

HUMAN = "human"
"""The name the person plays under in records."""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


class QuitGame(Exception):
    """The person asked to leave the partie."""


def make_opponent(spec: str, rules: Rules, seed: int | None) -> Agent:
    """The agent for an agent spec (see :func:`piquet_agents.registry.make_agent`), reset with
    ``seed``.

    Raises ``ValueError`` naming the spec if it cannot be built (unknown name, unreadable
    checkpoint, checkpoint for other rules).
    """
    from piquet_agents.registry import make_agent

    try:
        agent = make_agent(spec, rules, seed=seed)
    except ValueError:
        raise
    except Exception as err:  # a checkpoint that fails to load: say which and why
        raise ValueError(f"cannot load agent {spec!r}: {type(err).__name__}: {err}") from err
    agent.reset(seed)
    return agent


class _Human:
    """Seat placeholder for the person (his actions are read from the terminal, not asked for)."""

    name = HUMAN

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reseed."""

    def act(self, turn: object) -> int:
        """Never called: the session reads the person's choice itself."""
        raise RuntimeError("the human seat is played from the terminal")


class Session:
    """One partie in the terminal: the person at ``human`` (or nobody, to watch two agents).

    ``agents`` holds an agent per seat; the person's seat holds ``None``. ``read`` is called with a
    prompt and returns a line (``read_line`` by default; ``EOFError``/``KeyboardInterrupt`` end the
    game), ``write`` prints one line.
    """

    def __init__(
        self,
        game: Game,
        agents: list[Agent | None],
        style: Style,
        read: Callable[[str], str] = read_line,
        write: Callable[[str], None] = print,
    ) -> None:
        humans = [p for p in (0, 1) if agents[p] is None]
        if len(humans) > 1:
            raise ValueError("at most one seat can be the person's")
        self.game = game
        self.human: int | None = humans[0] if humans else None
        self.seats = [a if a is not None else _Human() for a in agents]
        names = [a.name for a in self.seats]
        if names[0] == names[1]:
            names = [f"{names[0]} ({p})" for p in (0, 1)]
        self.names = (names[0], names[1])
        self.cast = Cast(self.names, self.human)
        self.style = style
        self.narrator = Narrator(game.rules, self.cast, style)
        self.read = read
        self.write = write
        self._shown_at: tuple[int, Phase] | None = None

    # ------------------------------------------------------------------ the loop

    def run(self) -> int:
        """Play the partie to its end (or until the person leaves); return an exit status: 0, or
        130 after Ctrl-C."""
        try:
            self._say(self.narrator.narrate(None, self.game, self.game.events))
            while not self.game.is_over:
                if self.game.current_player == self.human:
                    self._human_turn()
                else:
                    before = self.game.clone()
                    play_turn(self.game, self.seats)
                    self._say(
                        self.narrator.narrate(
                            before, self.game, self.game.events[len(before.events) :]
                        )
                    )
        except QuitGame:
            self.write("You leave the partie.")
        except EOFError:
            self.write("")
            self.write("End of input: you leave the partie.")
        except KeyboardInterrupt:
            self.write("")
            self.write("Interrupted.")
            return 130
        return 0

    def _say(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def _human_turn(self) -> None:
        g, p = self.game, self.human
        assert p is not None
        where = (g.deal_number, g.phase)
        if g.phase != Phase.DECLARE or self._shown_at != where:
            self._say(self.table())
            self._shown_at = where
        before = g.clone()
        if g.phase == Phase.EXCHANGE:
            self._exchange(p)
        elif g.phase == Phase.DECLARE:
            self._declare(p)
        else:
            self._play(p)
        self._say(self.narrator.narrate(before, g, g.events[len(before.events) :]))

    def _ask(self, prompt: str, parse: Callable[[str], object]) -> object:
        """Read lines until ``parse`` accepts one, answering commands and re-prompting on errors."""
        while True:
            text = self.read(prompt).strip()
            word = text.lower()
            if not word:
                continue
            if word in ("help", "?", "h"):
                self.write(HELP)
            elif word in ("table", "t"):
                self._say(self.table())
            elif word == "tricks":
                self._say(self.trick_list())
            elif word in ("quit", "q", "exit"):
                raise QuitGame
            else:
                try:
                    return parse(text)
                except InputError as err:
                    self.write(f"  {'!' if self.style.ascii else '✗'} {err} (type help for help)")

    # ------------------------------------------------------------------ the three decisions

    def _exchange(self, p: int) -> None:
        g = self.game
        lo, hi = g.exchange_limits(p)
        hand = sorted(cards_of(g.hands[p]), key=sort_key)
        span = f"{lo} to {hi}" if lo < hi else str(lo)
        self.write(
            f"Exchange: discard {span} card{'' if hi == 1 else 's'}, then take as many "
            f"from the top of the talon ({_count(len(g.talon), 'card')})."
        )
        self._say(self._numbered(hand))
        cards = self._ask(
            "discard> ", lambda t: parse_discards(t, hand, lo, hi, g.rules, self.style.card)
        )
        for c in cards:  # type: ignore[union-attr]
            g.apply(c)
        if g.phase == Phase.EXCHANGE and g.current_player == p:
            g.apply(done_action(g.rules))  # fewer than the most: say done (the engine ends the max)

    def _declare(self, p: int) -> None:
        g = self.game
        cat = g.category
        name = combos.CATEGORY_NAMES[cat]
        mine = g.best[p][cat]
        self.write(
            f"{name.capitalize()}: 1) declare {combos.describe(mine)} "
            f"({self.style.cards(mine.cards)})   2) pass"
        )
        declare = self._ask("declare> ", parse_decision)
        g.apply(declare_action(g.rules) if declare else pass_action(g.rules))

    def _play(self, p: int) -> None:
        g = self.game
        legal = sorted(g.legal_actions(), key=sort_key)
        lead = g.trick[0] if g.trick else None
        if lead is None:
            head = "Your lead:"
        elif lead == JOKER:
            head = "The joker was led: play any card:"
        elif len(legal) < g.hands[p].bit_count() or g.hands[p] & SUIT_MASKS[lead >> 3]:
            head = f"Follow {SUIT_NAMES[lead >> 3]}:"
        else:
            head = f"You have no {SUIT_NAMES[lead >> 3]}: play any card:"
        self.write(head)
        self._say(self._numbered(legal))
        card = self._ask(
            "play> ", lambda t: parse_play(t, legal, g.rules, g.hands[p], lead, self.style.card)
        )
        g.apply(card)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ what the person sees

    def _numbered(self, cards: list[int]) -> list[str]:
        plain = Style(ascii=self.style.ascii)  # for the width: colour codes take no room
        width = 8 if self.style.ascii else 9
        items = [
            f"{k:>2}) {self.style.card(c)}" + " " * (width - len(f"{k:>2}) {plain.card(c)}"))
            for k, c in enumerate(cards, 1)
        ]
        return ["  " + "".join(items[i : i + 8]).rstrip() for i in range(0, len(items), 8)]

    def table(self) -> list[str]:
        """The table as the person sees it: only what he knows."""
        g, s, c = self.game, self.style, self.cast
        p = self.human if self.human is not None else g.current_player
        o = 1 - p
        title = (
            f"Deal {g.deal_number + 1} of {g.planned_deals} {s.dot} you are "
            f"{role(g.elder, p)} hand {s.dot} {g.phase.name.lower()}"
        )
        mine, theirs = g.deal_score(p).total, g.deal_score(o).total
        out = [
            "",
            s.heading(title),
            f"  {'Totals':<14}you {g.totals[p]} {s.dot} {c.names[o]} {g.totals[o]}"
            f"      this deal: you {mine} {s.dot} {c.names[o]} {theirs}",
        ]
        known = opponent_known(g, p)
        line = f"  {c.names[o][:13]:<14}{_count(g.hands[o].bit_count(), 'card')}"
        if g.phase == Phase.PLAY:
            line += f" {s.dot} {_count(g.tricks_won[o], 'trick')}"
        out.append(line)
        if known:
            out.append(f"  {'':<14}known in hand: {s.cards(known)}")
        if g.phase == Phase.EXCHANGE or g.talon:
            seen = talon_known(g, p)
            talon = _count(len(g.talon), "card") + (f" (you saw {s.cards(seen)})" if seen else "")
            out.append(f"  {'Talon':<14}{talon}")
        if g.discards[p]:
            out.append(f"  {'Your discards':<14}{s.cards(g.discards[p])}")
        if g.phase == Phase.PLAY:
            n = g.tricks_won[0] + g.tricks_won[1] + 1
            led = f"{c.who(g.leader, False)} led {s.card(g.trick[0])}" if g.trick else "your lead"
            out.append(f"  {'Trick ' + str(n):<14}{led}")
        tricks = f"   {s.dot} {_count(g.tricks_won[p], 'trick')}" if g.phase == Phase.PLAY else ""
        out.append(f"  {'Your hand':<14}{s.bold(s.hand(g.hands[p]))}{tricks}")
        out.append(s.rule())
        return out

    def trick_list(self) -> list[str]:
        """The tricks of the current deal so far, one line each."""
        g, s, c = self.game, self.style, self.cast
        start = max(i for i, e in enumerate(g.events) if e["type"] == "deal")
        lines = [
            f"  {e['number']:>2}. {c.who(e['leader'], False)} {s.card(parse_card(e['lead']))}, "
            f"{c.who(1 - e['leader'], False)} {s.card(parse_card(e['follow']))} {s.arrow} "
            f"{c.who(e['winner'], False)}"
            for e in g.events[start:]
            if e["type"] == "trick"
        ]
        return lines or ["  No trick played yet in this deal."]


def play(
    opponent: str,
    rules: Rules,
    seed: int | None = None,
    style: Style | None = None,
    save: str | Path | None = None,
    player: str | None = None,
    read: Callable[[str], str] = read_line,
    write: Callable[[str], None] = print,
) -> int:
    """Play a partie against the agent spec ``opponent`` (the person is player 0), or watch the
    agent spec ``player`` play it; save the JSON record to ``save`` if given. Returns the exit
    status."""
    from piquet_training.tui.replay import save_record

    master = random.Random(seed)
    game_seed, seed0, seed1 = (master.getrandbits(32) for _ in range(3))
    if seed is None:
        game_seed = seed0 = seed1 = None  # type: ignore[assignment]
    agents: list[Agent | None] = [None, make_opponent(opponent, rules, seed1)]
    if player is not None:
        agents[0] = make_opponent(player, rules, seed0)
    game = Game(rules, seed=game_seed)
    session = Session(game, agents, style or Style(), read=read, write=write)
    status = session.run()
    if save is not None:
        path = save_record(save, game, list(session.names), seed=seed)
        done = "" if game.is_over else " (unfinished)"
        write(f"Game record saved to {path}{done}.")
    return status
