"""The errors of ``piquet_v1`` called out of turn, as ``docs/environment.md`` states them: the
bare ``raw_env()`` raises its own ``RuntimeError``/``ValueError``, while ``env()``'s PettingZoo
wrappers answer first with ``AssertionError``/``AttributeError`` (issue 50: the page claimed the
former for both)."""

from __future__ import annotations

import numpy as np
import pytest

from piquet_env import piquet_v1
from piquet_env.game import IllegalActionError

CALLS = {
    "step": lambda e: e.step(0),
    "observe": lambda e: e.observe("player_0"),
    "last": lambda e: e.last(),
    "state": lambda e: e.state(),
    "render": lambda e: e.render(),
}


@pytest.mark.parametrize("call", CALLS)
def test_raw_env_before_reset_raises_runtime_error(call: str) -> None:
    with pytest.raises(RuntimeError, match=rf"^{call}\(\) called before reset\(\)"):
        CALLS[call](piquet_v1.raw_env(render_mode="ansi"))


@pytest.mark.parametrize(
    "call, error, message",
    [
        ("step", AssertionError, "reset() needs to be called before step."),
        ("observe", AssertionError, "reset() needs to be called before observe."),
        ("state", AssertionError, "reset() needs to be called before state."),
        ("render", AssertionError, "reset() needs to be called before render."),
        ("last", AttributeError, "agent_selection cannot be accessed before reset"),
    ],
)
def test_env_before_reset_answers_through_the_wrappers(call, error, message) -> None:
    with pytest.raises(error) as info:
        CALLS[call](piquet_v1.env(render_mode="ansi"))
    assert str(info.value) == message


def test_bad_actions_and_options() -> None:
    raw = piquet_v1.raw_env()
    raw.reset(seed=0)
    with pytest.raises(ValueError, match="action must be an integer action id, got float 1.5"):
        raw.step(1.5)
    with pytest.raises(IllegalActionError):
        raw.step(99_999)
    wrapped = piquet_v1.env()
    wrapped.reset(seed=0)
    with pytest.raises(AssertionError, match="action is not in action space"):
        wrapped.step(1.5)
    with pytest.raises(AssertionError, match="action is not in action space"):
        wrapped.step(99_999)
    for e in (piquet_v1.raw_env(), piquet_v1.env()):
        with pytest.raises(ValueError, match="reset options must be a dict or None, got list"):
            e.reset(seed=0, options=[1])


def test_env_ends_the_game_on_an_illegal_action_in_range() -> None:
    """The wrapped env's illegal move: the game ends, the offender gets -1, the other 0."""
    e = piquet_v1.env()
    e.reset(seed=0)
    who = e.agent_selection
    illegal = int(np.flatnonzero(e.infos[who]["action_mask"] == 0)[0])
    e.step(illegal)
    other = next(a for a in e.possible_agents if a != who)
    assert e.rewards == {who: -1.0, other: 0} and all(e.terminations.values())
