"""The PettingZoo AEC environment: API conformance, options, seeding, infos, rendering, docs."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers

from piquet_env import piquet_v0
from piquet_env.cards import card_str, cards_of, parse_mask
from piquet_env.game import IllegalActionError
from piquet_env.observation import encoder_for
from piquet_env.piquet_v0 import env, plain_env, raw_env
from piquet_env.rules import STANDARD

env_module = piquet_v0
ELDER = "AS KS QS JS TS 9S 8S 7S AH KH QH JH"
YOUNGER = "AD KD QD JD AC KC QC JC 7H 8H 9H TH"
TALON = "7D 8D 9D TD 7C 8C 9C TC"
DEAL = {"elder": ELDER, "younger": YOUNGER, "talon": TALON}


def random_action(obs: dict, rng: random.Random) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.randrange(len(legal))])


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"rules": "classic", "variants": ["normand"], "reward": "deal_points"},
        {"rules": "standard+orbis+saison", "mode": "deal", "reward_scale": 0.01},
    ],
)
def test_pettingzoo_api_test(kwargs):
    api_test(env(**kwargs), num_cycles=1000)


def test_pettingzoo_seed_test():
    seed_test(env, num_cycles=300)
    seed_test(lambda **kw: env(rules="classic+normand", **kw), num_cycles=300)


def test_pettingzoo_render_test():
    """PettingZoo's render_test runs every mode in the metadata, rgb_array included."""
    pytest.importorskip("matplotlib", reason="rgb_array needs the render extra (matplotlib)")
    render_test(raw_env, custom_tests={"ansi": lambda text: "deal 1 of 6" in text})


def test_imports_metadata_and_wrappers():
    from piquet_env import env as package_env
    from piquet_env import raw_env as package_raw_env

    assert package_raw_env is raw_env
    assert package_env is env
    from piquet_env import piquet_v0

    assert piquet_v0.env is env and piquet_v0.raw_env is raw_env
    meta = raw_env.metadata
    assert meta["name"] == "piquet_v0" and meta["is_parallelizable"] is False
    assert meta["render_modes"] == ["human", "ansi", "rgb_array"]
    e = env()
    assert isinstance(e, wrappers.OrderEnforcingWrapper)
    assert isinstance(e.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(e.env.env, wrappers.TerminateIllegalWrapper)
    assert isinstance(e.unwrapped, raw_env)
    with pytest.raises(AttributeError, match="before reset"):
        _ = e.agent_selection
    if not hasattr(pettingzoo, "make"):
        pytest.skip(f"PettingZoo {pettingzoo.__version__} has no registry (1.27 and later)")
    made = pettingzoo.make("aec", "piquet-v0", rules="classic")
    made.reset(seed=1)
    assert made.unwrapped.rules.name == "classic"


@pytest.mark.skipif(not hasattr(pettingzoo, "make"), reason="PettingZoo < 1.27: no registry")
def test_fresh_package_import():
    code = (
        "from piquet_env import env, raw_env\n"
        "e = env(); e.reset(seed=0); print(e.agent_selection)\n"
        "import pettingzoo; from piquet_env import piquet_v0\n"
        "m = pettingzoo.make('aec', 'piquet-v0', rules='classic'); m.reset(seed=0)\n"
        "assert piquet_v0.env is env and m.unwrapped.rules.name == 'classic'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-500:]


def test_spaces():
    e = env()
    e.reset(seed=0)
    space = e.observation_space("player_0")
    assert space["observation"].dtype == np.float32 and space["observation"].shape == (433,)
    assert space["action_mask"].dtype == np.int8 and space["action_mask"].shape == (35,)
    assert e.action_space("player_1").n == 35
    assert e.state().shape == e.unwrapped.state_space.shape == (1060,)
    joker = env(variants=["normand"])
    joker.reset(seed=0)
    assert joker.action_space("player_0").n == 36
    assert joker.observation_space("player_0")["observation"].shape == (442,)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rules": "chess"}, "unknown rules preset"),
        ({"variants": ["blitz"]}, "unknown variant"),
        ({"mode": "hand"}, "mode must be one of"),
        ({"episode": "hand"}, "episode must be one of"),  # the former name, an alias
        ({"mode": "deal", "episode": "partie"}, "disagree"),
        ({"reward": "points"}, "reward must be one of"),
        ({"reward_scale": 0}, "reward_scale"),
        ({"reward_scale": -1.0}, "reward_scale"),
        ({"reward_scale": float("nan")}, "reward_scale"),
        ({"reward_scale": "big"}, "reward_scale"),
        ({"render_mode": "rgb"}, "render_mode"),
        ({"render_view": "god"}, "render_view"),
        ({"variants": 5}, "variants must be a variant name or a list"),
        ({"variants": [5]}, "variants must be a variant name or a list"),
        ({"variants": {"orbis": 1}}, "variants must be a variant name or a list"),
        ({"observation_format": "flat"}, "observation_format must be one of"),
        ({"info_names": "yes"}, "info_names must be"),
    ],
)
def test_bad_options_raise_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        raw_env(**kwargs)


def test_bad_reset_options_raise_and_unknown_keys_are_ignored():
    e = env()
    e.reset(seed=0, options={"options": 1, "colour": "blue"})  # PettingZoo's api_test passes one
    for options in (1, "deal", [DEAL]):
        with pytest.raises(ValueError, match="reset options must be a dict or None"):
            e.reset(seed=0, options=options)
    with pytest.raises(ValueError, match="lacks"):
        e.reset(options={"deal": {"elder": ELDER}})
    with pytest.raises(ValueError, match="twice|both"):
        e.reset(options={"deal": {"elder": ELDER, "younger": ELDER, "talon": TALON}})
    with pytest.raises(ValueError, match="first_elder"):
        e.reset(options={"deal": {**DEAL, "first_elder": "player_7"}})
    with pytest.raises(ValueError, match="malformed card"):
        e.reset(options={"deal": {**DEAL, "talon": "7D 8D 9D TD 7C 8C 9C XX"}})


def test_reset_with_seed_is_deterministic():
    def trajectory(seed: int) -> list:
        e = env()
        e.reset(seed=seed)
        rng = random.Random(0)
        out = []
        for agent in e.agent_iter(400):
            obs, reward, term, trunc, _ = e.last()
            out.append((agent, obs["observation"].tobytes(), reward))
            e.step(None if term or trunc else random_action(obs, rng))
        return out

    assert trajectory(5) == trajectory(5)
    assert trajectory(5) != trajectory(6)
    e = env()
    e.reset(seed=9)
    first = e.unwrapped.game.hands[:]
    e.reset()
    assert e.unwrapped.game.hands != first  # unseeded resets continue the generator
    e.reset(seed=9)
    assert e.unwrapped.game.hands == first


def test_reset_from_given_cards_and_seats():
    e = env()
    e.reset(options={"deal": {**DEAL, "first_elder": "player_1"}})
    assert e.agent_selection == "player_1"
    enc = encoder_for(STANDARD)
    obs, *_ = e.last()
    hand = np.flatnonzero(obs["observation"][enc.field("hand")]).tolist()
    assert hand == cards_of(parse_mask(ELDER))
    assert obs["observation"][enc.field("elder")].tolist() == [1.0]
    assert e.observe("player_0")["observation"][enc.field("elder")].tolist() == [0.0]
    assert not e.observe("player_0")["action_mask"].any()
    # the same through the 3-tuple form and an integer first_elder
    e.reset(options={"deals": [(ELDER, YOUNGER, TALON)], "first_elder": 0})
    assert e.agent_selection == "player_0"


def test_elder_follows_the_cut_and_alternates():
    enc = encoder_for(STANDARD)
    for seed in range(4):
        e = env()
        e.reset(seed=seed)
        rng = random.Random(seed)
        elders = []
        for agent in e.agent_iter():
            obs, _, term, trunc, _info = e.last()
            if term or trunc:
                e.step(None)
                continue
            game = e.unwrapped.game
            if not elders or elders[-1][0] != game.deal_number:
                me = int(agent[-1])
                is_elder = obs["observation"][enc.field("elder")][0] == 1.0
                elders.append((game.deal_number, me if is_elder else 1 - me))
                assert (me == game.elder) == is_elder
            e.step(random_action(obs, rng))
        seats = [p for _, p in elders]
        assert len(seats) == 6
        assert all(a != b for a, b in itertools.pairwise(seats))


def test_infos_carry_phase_legal_names_and_deal_scores():
    e = env(mode="partie")
    e.reset(seed=3)
    rng = random.Random(3)
    deal_ends = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            assert info["phase"] == "over"
            e.step(None)
            continue
        game = e.unwrapped.game
        assert info["to_act"] is True
        assert info["phase"] == ("exchange", "declarations", "play")[game.phase]
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        assert legal == game.legal_actions()
        assert info["legal_actions"] == [game.action_name(a) for a in legal]
        other = "player_1" if agent == "player_0" else "player_0"
        assert e.infos[other]["legal_actions"] == [] and e.infos[other]["to_act"] is False
        n = len(game.deal_scores)
        e.step(random_action(obs, rng))
        if len(game.deal_scores) > n:
            deal_ends += 1
            ds = game.deal_scores[-1]
            for a in ("player_0", "player_1"):
                score = e.infos[a]["deal_score"]
                assert score["deal"] == n
                assert score["player_0"] == ds[0].to_dict()
                assert score["player_1"] == ds[1].to_dict()
    assert deal_ends == 6


def test_illegal_action_ends_the_game_under_the_wrapper(caplog):
    e = env()
    e.reset(options={"deal": {**DEAL, "first_elder": "player_0"}})
    e.step(parse_mask("AD").bit_length() - 1)  # AD is younger's card, not elder's
    assert "Illegal move" in caplog.text
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": -1.0, "player_1": 0.0}
    raw = raw_env()
    raw.reset(options={"deal": {**DEAL, "first_elder": "player_0"}})
    with pytest.raises(IllegalActionError):
        raw.step(parse_mask("AD").bit_length() - 1)
    with pytest.raises(AssertionError):
        env_out = env()
        env_out.reset(seed=0)
        env_out.step(99)


def test_fast_wrappers_behave_like_pettingzoos():
    """env() (wrappers with direct attribute reads) and plain_env() (PettingZoo's classes as
    shipped) produce identical episodes, illegal moves included."""
    for illegal_at in (None, 40):
        runs = []
        for make in (env, plain_env):
            e = make(reward="deal_points")
            e.reset(seed=4)
            rng = random.Random(4)
            log = []
            for i, agent in enumerate(e.agent_iter()):
                obs, reward, term, trunc, info = e.last()
                log.append(
                    (
                        agent,
                        obs["observation"].tobytes(),
                        obs["action_mask"].tobytes(),
                        reward,
                        term,
                        trunc,
                        info,
                    )
                )
                if term or trunc:
                    action = None
                elif i == illegal_at:
                    action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
                else:
                    action = random_action(obs, rng)
                e.step(action)
            runs.append(log)
        assert runs[0] == runs[1]


def test_rendering_views():
    e = env(render_mode="ansi")
    e.reset(options={"deal": {**DEAL, "first_elder": "player_0"}})
    text = e.render()
    assert "A♠" in text and "player_0 (elder)" in text
    assert "+ 12 unseen" in text  # younger's hand hidden from elder
    assert "A♦" not in text
    # grouped by suit as `piquet play` shows a hand: two spaces between suits, high first
    assert "player_0 hand:     A♥ K♥ Q♥ J♥  A♠ K♠ Q♠ J♠ 10♠ 9♠ 8♠ 7♠" in text
    spectator = env(render_mode="ansi", render_view="spectator")
    spectator.reset(options={"deal": {**DEAL, "first_elder": "player_0"}})
    both = spectator.render()
    assert "A♠" in both and "A♦" in both and "talon (top first)" in both
    # play on: declarations and the current trick appear
    rng = random.Random(0)
    for _agent in spectator.agent_iter():
        obs, _, _term, _trunc, _ = spectator.last()
        if spectator.unwrapped.game.trick:
            break
        spectator.step(random_action(obs, rng))
    text = spectator.render()
    assert "point:" in text and "trick:" in text and " led " in text
    quiet = raw_env()
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert quiet.render() is None


@pytest.mark.parametrize("view, seat", [("player", 0), ("player_0", 0), ("player_1", 1)])
def test_player_view_keeps_one_seat_across_frames(view, seat):
    """Frames of a player view never switch between the hands: "player" is player_0's seat."""
    e = raw_env(render_mode="ansi", render_view=view)
    e.reset(options={"deal": {**DEAL, "first_elder": "player_0"}})
    rng = random.Random(1)
    movers = set()
    for _ in range(40):
        text = e.render()
        assert f"(view of player_{seat})" in text
        lines = text.split("\n")
        assert "unseen" in lines[5 + 1 - seat] and "unseen" not in lines[5 + seat]
        movers.add(e.agent_selection)
        e.step(rng.choice(e._legal))
    assert movers == {"player_0", "player_1"}  # both seats acted while the view stayed put


def test_raw_env_before_reset_raises_a_clear_error():
    e = raw_env()
    for call in (
        lambda: e.step(0),
        lambda: e.observe("player_0"),
        lambda: e.last(),
        lambda: e.state(),
        lambda: e.readable_info("player_0"),
    ):
        with pytest.raises(RuntimeError, match="before reset"):
            call()
    e.render_mode = "ansi"
    with pytest.raises(RuntimeError, match="before reset"):
        e.render()


@pytest.mark.parametrize("action", [None, 1.5, "3", True, np.array([3]), [3]])
def test_raw_env_rejects_non_integer_actions(action):
    e = raw_env()
    e.reset(seed=0)
    with pytest.raises(ValueError, match="action must be an integer action id"):
        e.step(action)


def test_raw_env_takes_numpy_integer_actions():
    e = raw_env()
    e.reset(seed=0)
    elder = e.game.current_player
    a = e._legal[0]
    e.step(np.int64(a))
    b = e._legal[0]
    e.step(np.array(b, dtype=np.int32))
    assert e.game.discards[elder] == (1 << a) | (1 << b)  # elder discarded both, as plain ints
    assert type(e.game.discards[elder]) is int


def test_human_render_prints(capsys):
    e = env(render_mode="human")
    e.reset(seed=0)
    assert e.render() is None
    assert "Piquet (standard)" in capsys.readouterr().out


def test_docstring_documents_every_observation_field():
    doc = env_module.__doc__
    for name, a, b, _ in encoder_for(STANDARD).fields:
        assert f"- {a}-{b - 1} `{name}`:" in doc, name
    assert "1060 values" in doc and "1084" in doc
    assert f"{encoder_for(STANDARD).size},)" in doc


def test_action_names_table_matches_the_engine():
    e = raw_env(rules="classic+normand")
    names = e._names
    assert names[0][32] == "discard JK" and names[1][5] == "play " + card_str(5)
    assert names[2][34] == "declare point" and names[4][35] == "pass set"


def test_benchmark_smoke(capsys):
    from piquet_env.testing.env_speed import bench_env, print_env_report

    result = bench_env("classic", ("normand",), seconds=0.3, seed=1, n_live=10)
    assert result["rules"] == "classic+normand"
    assert result["env"]["steps"] > 0 and result["env"]["steps_per_s"] > 0
    assert result["memory"]["n_envs"] == 10
    assert len(result["env"]["rounds"]) == 10
    assert result["pettingzoo_turns_per_s"] > 0  # PettingZoo's own benchmark ran and was parsed
    print_env_report(result)
    out = capsys.readouterr().out
    assert "agent-steps/s" in out and "10 live envs" in out and "performance_benchmark" in out


def test_getting_started_example_runs():
    """The docs' first AEC example (docs/getting-started.md, "A first environment loop") runs."""
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "getting-started.md"
    section = page.read_text(encoding="utf-8").split("## A first environment loop", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(code, str(page), "exec"), namespace)
    assert namespace["e"].unwrapped.game.is_over


def test_pickle_and_deepcopy_keep_the_whole_state():
    import copy
    import pickle

    e = env(rules="classic", reward="deal_points")
    e.reset(seed=1)
    rng = random.Random(1)
    for _ in range(40):
        obs, *_ = e.last()
        e.step(random_action(obs, rng))
    for other in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert other.unwrapped.game is not e.unwrapped.game
        assert other.agent_selection == e.agent_selection
        assert other.unwrapped.encoder is e.unwrapped.encoder  # the shared encoder
        a, b = other.last(), e.last()
        np.testing.assert_array_equal(a[0]["observation"], b[0]["observation"])
        assert a[1:] == b[1:]
        action = int(np.flatnonzero(a[0]["action_mask"])[0])
        other.step(action)
        e_copy = copy.deepcopy(e)
        e_copy.step(action)
        np.testing.assert_array_equal(
            other.last()[0]["observation"], e_copy.last()[0]["observation"]
        )
