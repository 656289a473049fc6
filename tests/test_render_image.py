"""The rgb_array image of the table: what a player's view draws, and what it must not."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="rgb_array needs the render extra (matplotlib)")

from piquet_env.game import Game
from piquet_env.game.knowledge import determinize
from piquet_env.image import SIZE, render_image
from piquet_env.rules import make_rules


def played(seed: int, moves: int, rules: str = "standard") -> Game:
    g = Game(make_rules(rules), seed=seed, record=False)
    rng = random.Random(seed)
    for _ in range(moves):
        if g.is_over:
            break
        g.apply(rng.choice(g.legal_actions()))
    return g


@pytest.mark.parametrize("moves", [0, 6, 20, 35])
def test_a_players_view_does_not_draw_what_he_cannot_see(moves):
    """Re-dealing the cards a player cannot see (determinize) leaves his picture unchanged,
    pixel for pixel, while the spectator's picture shows the difference."""
    g = played(seed=11, moves=moves)
    for player in (0, 1):
        other = determinize(g, player, random.Random(5))
        assert other.hands != g.hands or other.talon != g.talon or moves > 30
        np.testing.assert_array_equal(render_image(g, player), render_image(other, player))
    if g.hands != determinize(g, 0, random.Random(5)).hands:
        assert not np.array_equal(
            render_image(g, None), render_image(determinize(g, 0, random.Random(5)), None)
        )


def test_frames_are_rgb_uint8_and_change_with_the_game():
    g = played(seed=3, moves=0, rules="classic+normand")
    first = render_image(g, 0)
    assert first.shape == (*SIZE, 3) and first.dtype == np.uint8 and first.flags.c_contiguous
    later = render_image(played(seed=3, moves=25, rules="classic+normand"), 0)
    assert not np.array_equal(first, later)
    with pytest.raises(ValueError, match="player must be 0, 1 or None"):
        render_image(g, 2)
