"""Helpers for engine tests: set up a deal from card strings and drive it by card names."""

from __future__ import annotations

from piquet_env.actions import parse_action
from piquet_env.cards import parse_card
from piquet_env.game import Game, Phase


def deal(rules, elder: str, younger: str, talon: str, **kwargs) -> Game:
    """A single-deal game (player 0 is elder) from the given cards."""
    kwargs.setdefault("mode", "deal")
    kwargs.setdefault("first_elder", 0)
    return Game(rules, deals=[(elder, younger, talon)], **kwargs)


def act(game: Game, *names: str) -> None:
    """Apply actions by name ('QH', 'done', 'declare', 'pass') for whoever is to act."""
    for name in names:
        game.apply(parse_action(name, game.rules))


def exchange(game: Game, elder_discards: str, younger_discards: str) -> None:
    """Both exchanges: discard the named cards then 'done' unless the exchange ended by itself."""
    for discards in (elder_discards, younger_discards):
        player = game.current_player
        for name in discards.split():
            game.apply(parse_card(name))
        if game.phase == Phase.EXCHANGE and game.current_player == player:
            act(game, "done")


def declare_all(game: Game) -> None:
    """Every player declares whenever he may (DECLARE is legal)."""
    declare = game.rules.n_cards + 1
    while game.phase == Phase.DECLARE:
        legal = game.legal_actions()
        game.apply(declare if declare in legal else legal[0])


def play_tricks(game: Game, *tricks: str) -> None:
    """Play tricks given as 'LEAD FOLLOW' card names."""
    for t in tricks:
        act(game, *t.split())


def lead_highest(game: Game) -> None:
    """Play out the tricks: each player plays his highest legal card."""
    while game.phase == Phase.PLAY:
        game.apply(max(game.legal_actions()))
