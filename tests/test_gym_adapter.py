"""The single-agent Gymnasium adapter: env_checker, seats, masks, rewards, and a short MaskablePPO
run that learns to beat a random opponent."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from piquet_env.adapters import PiquetGymEnv
from piquet_env.agent import Turn
from piquet_env.observation import encoder_for
from piquet_env.rules import STANDARD


class FirstLegal:
    """A deterministic opponent that records the turns it was asked to play."""

    name = "first-legal"

    def __init__(self) -> None:
        self.turns: list[int] = []

    def reset(self, seed: int | None = None) -> None:
        self.turns.clear()

    def act(self, turn: Turn) -> int:
        assert turn.game.current_player == turn.player
        self.turns.append(turn.player)
        return turn.legal_actions[0]


def run_episode(env: PiquetGymEnv, seed: int, pick=lambda legal: int(legal[-1])) -> tuple:
    obs, info = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        assert np.flatnonzero(mask).tolist() == env.aec.game.legal_actions()
        assert env.aec.game.current_player == env.learner
        assert env.observation_space.contains(obs)
        obs, reward, done, truncated, info = env.step(pick(np.flatnonzero(mask)))
        assert not truncated and info["seat"] == f"player_{env.learner}"
        total += reward
        steps += 1
    assert not env.action_masks().any()
    return total, steps, info


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "deal"},
        {"mode": "partie", "seat": "player_1", "reward": "deal_points"},
        {"rules": "classic", "variants": ["normand"], "mode": "deal", "seat": 0},
    ],
)
def test_passes_gymnasium_env_checker(kwargs):
    check_env(PiquetGymEnv(**kwargs), skip_render_check=True)


def test_registered_ids_and_render():
    env = gymnasium.make("PiquetDeal-v0", render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "deal 1 of 1" in text and "view of player_" in text
    partie = gymnasium.make("Piquet-v0", rules="classic")
    partie.reset(seed=0)
    assert partie.unwrapped.rules.name == "classic"


@pytest.mark.parametrize("reward", ["result", "deal_points"])
def test_rewards_sum_to_the_learners_result(reward):
    for seed in range(6):
        env = PiquetGymEnv(mode="partie", reward=reward, reward_scale=0.5)
        total, steps, _ = run_episode(env, seed)
        result = env.aec.game.result
        assert total == pytest.approx(0.5 * result[env.learner])
        assert steps > 6 * 5


def test_seats_and_opponent_turns():
    enc = encoder_for(STANDARD)
    seats = set()
    for seed in range(12):
        env = PiquetGymEnv(mode="deal", opponent=FirstLegal())
        obs, _ = env.reset(seed=seed)
        seats.add(env.learner)
        assert obs[enc.field("to_act")][0] == 1.0
        elder = obs[enc.field("elder")][0] == 1.0
        assert elder == (env.aec.game.elder == env.learner)
        run_episode(env, seed)
        assert set(env.opponent.turns) == {1 - env.learner}
    assert seats == {0, 1}
    fixed = PiquetGymEnv(mode="deal", seat="player_1")
    for seed in range(4):
        fixed.reset(seed=seed)
        assert fixed.learner == 1


def test_reset_is_deterministic_and_options_pass_through():
    a, b = PiquetGymEnv(mode="deal"), PiquetGymEnv(mode="deal")
    assert run_episode(a, 3)[:2] == run_episode(b, 3)[:2]
    deal = {
        "elder": "AS KS QS JS TS 9S 8S 7S AH KH QH JH",
        "younger": "AD KD QD JD AC KC QC JC 7H 8H 9H TH",
        "talon": "7D 8D 9D TD 7C 8C 9C TC",
        "first_elder": "player_0",
    }
    env = PiquetGymEnv(mode="deal", seat="player_0")
    obs, _ = env.reset(seed=0, options={"deal": deal})
    assert int(obs[encoder_for(STANDARD).field("hand")].sum()) == 12
    assert env.aec.game.hands[0] == sum(1 << c for c in range(24, 32)) | (0xF0 << 16)


def test_illegal_action_ends_the_episode_and_bad_options_raise():
    env = PiquetGymEnv(mode="deal", seat="player_0")
    env.reset(seed=1)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(ValueError, match="seat"):
        PiquetGymEnv(seat="north")
    with pytest.raises(TypeError, match="opponent"):
        PiquetGymEnv(opponent=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mode must be one of"):
        PiquetGymEnv(mode="hand")
    assert PiquetGymEnv(episode="deal").aec.mode == "deal"  # the former name, an alias
    assert PiquetGymEnv().opponent.name == "random"
    with pytest.raises(TypeError, match="make_agent"):
        PiquetGymEnv(opponent="random")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"render_mode": "rgb"}, "render_mode must be None or one of"),
        ({"illegal_reward": float("nan")}, "illegal_reward must be a finite number"),
        ({"illegal_reward": float("inf")}, "illegal_reward must be a finite number"),
        ({"illegal_reward": "low"}, "illegal_reward must be a number"),
        ({"variants": 5}, "variants must be a variant name or a list"),
        ({"render_view": "god"}, "render_view must be one of"),
    ],
)
def test_bad_constructor_options_name_the_option(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PiquetGymEnv(**kwargs)


@pytest.mark.parametrize("action", [None, 1.5, "3", True, [3], np.array([3]), np.array([[3]])])
def test_step_rejects_what_is_not_one_action_id(action):
    env = PiquetGymEnv(mode="deal", seat="player_0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be"):
        env.step(action)


def test_step_takes_numpy_integers_and_reset_options_must_be_a_dict():
    env = PiquetGymEnv(mode="deal", seat="player_0")
    env.reset(seed=0)
    legal = np.flatnonzero(env.action_masks())
    env.step(np.int64(legal[0]))
    env.step(np.array(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(ValueError, match="reset options must be a dict or None"):
        env.reset(seed=0, options=["deal"])
    with pytest.raises(RuntimeError, match="before reset"):
        PiquetGymEnv().step(0)


def test_info_carries_the_action_mask_and_the_learners_view_is_rendered():
    env = PiquetGymEnv(mode="deal", seat="player_1", render_mode="ansi")
    _, info = env.reset(seed=2)
    np.testing.assert_array_equal(info["action_mask"], env.action_masks().astype(np.int8))
    frames = set()
    for _ in range(10):
        text = env.render()
        assert "(view of player_1)" in text
        frames.add(text)
        mask = env.action_masks()
        _, _, terminated, _, info = env.step(int(np.flatnonzero(mask)[0]))
        if terminated:
            break
    assert len(frames) > 1


def test_rgb_array_render():
    pytest.importorskip("matplotlib", reason="rgb_array needs the render extra (matplotlib)")
    env = PiquetGymEnv(mode="deal", seat="player_0", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape == (540, 960, 3)


@pytest.mark.slow
def test_maskable_ppo_learns_to_beat_a_random_opponent():
    """A few thousand MaskablePPO steps in deal mode against the random agent; the greedy policy's
    mean deal point difference over 200 fresh deals must be positive beyond 3 standard errors.
    Random play against random play has expectation exactly 0 (the seat is drawn at random and the
    game is zero-sum), so this is a significant win over the random baseline."""
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    train_env = PiquetGymEnv(mode="deal", reward_scale=0.05)
    model = MaskablePPO(
        "MlpPolicy",
        train_env,
        n_steps=512,
        batch_size=128,
        n_epochs=4,
        learning_rate=1e-3,
        gamma=1.0,
        seed=0,
        verbose=0,
        policy_kwargs={"net_arch": [64, 64]},
    )
    model.learn(6144)
    env = PiquetGymEnv(mode="deal")
    results = []
    for i in range(200):
        obs, _ = env.reset(seed=10_000 + i)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, reward, done, _, _ = env.step(int(action))
            total += reward
        results.append(total)
    mean = float(np.mean(results))
    stderr = float(np.std(results, ddof=1) / np.sqrt(len(results)))
    assert mean > 3 * stderr, f"mean {mean:.2f} ± {stderr:.2f} points per deal"
