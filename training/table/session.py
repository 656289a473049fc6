"""``piquet play``: a person plays a whole partie in the terminal against any agent.

The person sits as player 0 (the cut decides who is elder first); the opponent is any agent spec
(``random``, ``heuristic``, ``mcts:N``, a checkpoint path, see
:func:`piquet_agents.registry.make_agent`). Before each of the person's decisions the table shows
only what that player knows: his hand (sorted by suit, high to low), his discards, the talon cards
he saw, the opponent's cards he has been shown, the trick so far, the tricks won and the running
scores. Choices are numbered; cards are typed by name (``qh``, ``10s``, ``10♠``) or number, the
exchange as a list of cards (``discard 7c 8d 9h``). A card that is the only legal play is played
for him (and said so); each deal's end waits for Enter so that its score stays on the screen.

:class:`Session` runs the loop and is also used with two agents (``--player SPEC``) to watch a game,
narrated for an onlooker who sees both hands, at a pace (``delay`` seconds between moves, or Enter
after each trick with ``step``). Lines are wrapped at spaces to fit the terminal (80 columns at
most). Every game can be saved as a JSON record (:mod:`piquet_env.game.record`), also when the
game ends by Ctrl-C, SIGTERM or SIGHUP (:mod:`piquet_table.signals`).
"""

from __future__ import annotations

import operator
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext, suppress

from piquet_agents.loop import IllegalAgentActionError
from piquet_env import combinations as combos
from piquet_env.actions import declare_action, done_action, pass_action
from piquet_env.agent import Agent, Turn
from piquet_env.cards import JOKER, SUIT_MASKS, SUIT_NAMES, cards_of, parse_card, sort_key
from piquet_env.game import Game, Phase, opponent_known, talon_known
from piquet_env.rules import Rules
from piquet_table.input import (
    InputError,
    parse_decision,
    parse_discards,
    parse_play,
    read_line,
)
from piquet_table.narrate import Narrator
from piquet_table.signals import SignalGuard, Stopped
from piquet_table.text import Cast, Style, fit, fit_help, printable, role, terminal_width

HELP = """\
Commands, at any prompt:
  help, ?       this help
  table, t      show the table and the choices again
  tricks        the tricks of this deal so far
  quit, q       leave the partie (Ctrl-D too); with --save the game so far is saved
Exchange:       the cards to discard, by name or number: `discard 7c 8d 9h`,
                `7c 8d 9h` or `1 4 7`; `none` to keep your hand when you may
                exchange nothing
Declarations:   declare (d, 1) or pass (p, 2) for each of point, sequence and set
Play:           a card by name (qh, 10s, 10♠, ac) or its number in the list;
                a card that is your only legal play is played for you
Card names:     rank 7 8 9 10 (or t) j q k a, then suit c d h s (or ♣ ♦ ♥ ♠);
                the joker is jk"""
"""What ``help`` prints (:func:`help_lines` drops the suit symbols for ``--ascii``)."""


def help_lines(style: Style, width: int = 80) -> list[str]:
    """The lines of :data:`HELP`, without suit symbols in plain ASCII, wrapped to ``width``
    columns with each entry's lines under its text (:func:`~piquet_table.text.fit_help`)."""
    text = HELP
    if style.ascii:
        text = text.replace(" 10♠,", "").replace(" (or ♣ ♦ ♥ ♠)", "")
    return fit_help(text, width)


HUMAN = "human"
"""The name the person plays under in records."""

THINK_AFTER = 0.5
"""Seconds an agent may think before a status line says so."""


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


def terminal_status(text: str | None) -> None:
    """Show ``text`` as a transient status line on standard output, or erase it (``None``)."""
    sys.stdout.write("\r\x1b[2K" if text is None else f"\r{text}")
    sys.stdout.flush()


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
    game), ``write`` prints one line. ``status`` shows (or, given ``None``, erases) a transient
    line such as "mcts:400 is thinking..." when an agent takes over ``think_after`` seconds.
    Watching two agents, ``delay`` seconds pass after every move that says something, and
    ``step`` waits for Enter after each trick. ``pause_deals`` (default: when a person plays, or
    with ``step``) waits for Enter at each deal's end. ``guard`` holds signals while a move is
    applied (see :class:`~piquet_table.signals.SignalGuard`).
    """

    def __init__(
        self,
        game: Game,
        agents: list[Agent | None],
        style: Style,
        read: Callable[[str], str] = read_line,
        write: Callable[[str], None] = print,
        *,
        status: Callable[[str | None], None] | None = None,
        think_after: float = THINK_AFTER,
        delay: float = 0.0,
        step: bool = False,
        pause_deals: bool | None = None,
        width: int | None = None,
        guard: SignalGuard | None = None,
    ) -> None:
        humans = [p for p in (0, 1) if agents[p] is None]
        if len(humans) > 1:
            raise ValueError("at most one seat can be the person's")
        if not delay >= 0:
            raise ValueError(f"delay must be 0 or more seconds, got {delay}")
        self.game = game
        self.human: int | None = humans[0] if humans else None
        self.seats = [a if a is not None else _Human() for a in agents]
        names = [printable(str(a.name)) or f"player {p}" for p, a in enumerate(self.seats)]
        if names[0] == names[1]:
            names = [f"{names[0]} ({p})" for p in (0, 1)]
        self.names = (names[0], names[1])
        self.cast = Cast(self.names, self.human)
        self.style = style
        self.narrator = Narrator(game.rules, self.cast, style)
        self.read = read
        self._write = write
        self.status = status
        self.think_after = think_after
        self.delay = delay
        self.step = step
        self.pause_deals = (self.human is not None or step) if pause_deals is None else pause_deals
        self.width = width or terminal_width()
        self.guard = guard
        self._shown_at: tuple[int, Phase] | None = None

    # ------------------------------------------------------------------ the loop

    def run(self) -> int:
        """Play the partie to its end (or until the person leaves); return an exit status: 0, or
        128 + the signal's number after Ctrl-C (130), SIGTERM (143) or SIGHUP (129)."""
        try:
            self._say(self.narrator.narrate(None, self.game, self.game.events))
            while not self.game.is_over:
                before = self.game.clone()
                if self.game.current_player == self.human:
                    self._human_turn()
                else:
                    self._agent_turn()
                said = self._narrate_move(before)
                if self.human is None and said and not self.game.is_over:
                    self._pace(before)
        except QuitGame:
            self.write("You leave the partie.")
        except EOFError:
            self.write("")
            self.write("End of input: you leave the partie.")
        except KeyboardInterrupt as err:
            reason = err.reason if isinstance(err, Stopped) else "Interrupted."
            self._quietly(["", reason])
            return err.exit_status if isinstance(err, Stopped) else 130
        return 0

    def write(self, line: str) -> None:
        """Write one line, wrapped at spaces to the session's width."""
        for part in fit(line, self.width):
            self._write(part)

    def _say(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def _quietly(self, lines: list[str]) -> None:
        """Write ``lines`` if the terminal is still there (after SIGHUP it may not be)."""
        with suppress(OSError):
            self._say(lines)

    def _critical(self):
        return self.guard.critical() if self.guard is not None else nullcontext()

    def _narrate_move(self, before: Game) -> bool:
        """Say what the last move did; at a deal's end, wait for Enter (if pausing) before the
        next deal is dealt. Returns whether anything was said."""
        new = self.game.events[len(before.events) :]
        k = next((i for i, e in enumerate(new) if e["type"] == "deal"), len(new))
        said = self.narrator.narrate(before, self.game, new[:k])
        self._say(said)
        if k < len(new):
            if self.pause_deals:
                self._pause("[Enter] next deal> ")
            self._say(self.narrator.narrate(None, self.game, new[k:]))
            return True
        return bool(said)

    def _pace(self, before: Game) -> None:
        """When watching: Enter after each trick with ``step``, else ``delay`` seconds."""
        trick = self.game.tricks_won != before.tricks_won and self.game.phase == Phase.PLAY
        if self.step and trick:
            self._pause("[Enter] next trick, q quit> ")
        elif self.delay:
            time.sleep(self.delay)

    def _pause(self, prompt: str) -> None:
        """Wait for Enter (``q`` leaves the partie, ``help`` helps)."""
        while True:
            word = self.read(prompt).strip().lower()
            if word in ("quit", "q", "exit"):
                raise QuitGame
            if word in ("help", "?", "h"):
                self.write("Press Enter to go on, or q to leave the partie.")
                continue
            return

    # ------------------------------------------------------------------ an agent's move

    def _agent_turn(self) -> None:
        g = self.game
        p = g.current_player
        agent = self.seats[p]
        with self._thinking(self.names[p]):
            action = agent.act(Turn(g, p))
        try:
            action = operator.index(action)
        except TypeError:
            action = None
        if action is None or not g.is_legal(action):
            raise IllegalAgentActionError(
                f"agent {self.names[p]!r} (player {p}) chose illegal action {action!r}"
            )
        with self._critical():
            g.apply(action)

    @contextmanager
    def _thinking(self, name: str) -> Iterator[None]:
        """Show "NAME is thinking..." if the block lasts over ``think_after`` seconds; erase it
        after."""
        if self.status is None:
            yield
            return
        lock = threading.Lock()
        state = {"done": False, "shown": False}
        text = f"{name} is thinking{'...' if self.style.ascii else '…'}"

        def show() -> None:
            with lock:
                if not state["done"]:
                    self.status(text)  # type: ignore[misc]
                    state["shown"] = True

        timer = threading.Timer(self.think_after, show)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            with lock:
                state["done"] = True
                if state["shown"]:
                    self.status(None)

    # ------------------------------------------------------------------ the person's move

    def _human_turn(self) -> None:
        g, p = self.game, self.human
        assert p is not None
        if g.phase == Phase.PLAY and len(g.legal_actions()) == 1:
            card = g.legal_actions()[0]
            self.write(f"Your only legal card is {self.style.card(card)}: it is played for you.")
            with self._critical():
                g.apply(card)
            return
        where = (g.deal_number, g.phase)
        if g.phase != Phase.DECLARE or self._shown_at != where:
            self._say(self.table())
            self._shown_at = where
        if g.phase == Phase.EXCHANGE:
            self._exchange(p)
        elif g.phase == Phase.DECLARE:
            self._declare(p)
        else:
            self._play(p)

    def _ask(
        self, prompt: str, parse: Callable[[str], object], choices: Callable[[], list[str]]
    ) -> object:
        """Read lines until ``parse`` accepts one, answering commands (``table`` redraws the table
        and ``choices``) and re-prompting on errors."""
        while True:
            text = self.read(prompt).strip()
            word = text.lower()
            if not word:
                continue
            if word in ("help", "?", "h"):
                self._say(help_lines(self.style, self.width))
            elif word in ("table", "t"):
                self._say(self.table())
                self._say(choices())
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

        def choices() -> list[str]:
            return [
                f"Exchange: discard {span} card{'' if hi == 1 else 's'}, then take as many "
                f"from the top of the talon ({_count(len(g.talon), 'card')}).",
                *self._numbered(hand),
            ]

        self._say(choices())
        cards = self._ask(
            "discard> ",
            lambda t: parse_discards(t, hand, lo, hi, g.rules, self.style.card),
            choices,
        )
        with self._critical():
            for c in cards:  # type: ignore[union-attr]
                g.apply(c)
            if g.phase == Phase.EXCHANGE and g.current_player == p:
                g.apply(done_action(g.rules))  # fewer than the most: say done

    def _declare(self, p: int) -> None:
        g = self.game
        cat = g.category
        name = combos.CATEGORY_NAMES[cat]
        mine = g.best[p][cat]

        def choices() -> list[str]:
            return [
                f"{name.capitalize()}: 1) declare {combos.describe(mine)} "
                f"({self.style.cards(mine.cards)})   2) pass"
            ]

        self._say(choices())
        declare = self._ask("declare> ", parse_decision, choices)
        with self._critical():
            g.apply(declare_action(g.rules) if declare else pass_action(g.rules))

    def _play(self, p: int) -> None:
        g = self.game
        legal = sorted(g.legal_actions(), key=sort_key)
        lead = g.trick[0] if g.trick else None
        head = play_prompt(g, p) + ":"

        def choices() -> list[str]:
            return [head, *self._numbered(legal)]

        self._say(choices())
        card = self._ask(
            "play> ",
            lambda t: parse_play(t, legal, g.rules, g.hands[p], lead, self.style.card),
            choices,
        )
        with self._critical():
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
        them = c.names[o] if len(c.names[o]) <= 13 else "Opponent"
        out = [
            "",
            s.heading(title),
            f"  {'Totals':<14}you {g.totals[p]} {s.dot} {c.names[o]} {g.totals[o]}",
            f"  {'This deal':<14}you {mine} {s.dot} {c.names[o]} {theirs}",
        ]
        known = opponent_known(g, p)
        line = f"  {them:<14}{_count(g.hands[o].bit_count(), 'card')}"
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


def play_prompt(game: Game, player: int) -> str:
    """What ``player``, to play a card now, is asked to do: ``'Your lead'``, ``'Follow
    hearts'``, ``'You have no spades: play any card'``, ``'The joker was led: play any card'``."""
    lead = game.trick[0] if game.trick else None
    if lead is None:
        return "Your lead"
    if lead == JOKER:
        return "The joker was led: play any card"
    if game.hands[player] & SUIT_MASKS[lead >> 3]:
        return f"Follow {SUIT_NAMES[lead >> 3]}"
    return f"You have no {SUIT_NAMES[lead >> 3]}: play any card"


def seat_seeds(seed: int) -> tuple[int, int, int]:
    """The seeds :func:`make_seats` draws from ``seed``: the game's, player 0's and player 1's
    (the game can be dealt before its agents are built)."""
    master = random.Random(seed)
    game_seed, seed0, seed1 = (master.getrandbits(32) for _ in range(3))
    return game_seed, seed0, seed1


def make_seats(
    opponent: str, rules: Rules, seed: int, player: str | None = None
) -> tuple[list[Agent | None], int]:
    """The seats of a game, all seeded from ``seed``: the person's (``None``, unless the agent
    spec ``player`` takes it) and the agent spec ``opponent``'s; and the game's own seed."""
    game_seed, seed0, seed1 = seat_seeds(seed)
    agents: list[Agent | None] = [None, make_opponent(opponent, rules, seed1)]
    if player is not None:
        agents[0] = make_opponent(player, rules, seed0)
    return agents, game_seed
