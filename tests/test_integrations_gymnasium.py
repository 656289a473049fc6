"""Gymnasium's own machinery on the registered ids: ``gymnasium.make`` after ``import piquet_env``
alone, ``SyncVectorEnv``/``AsyncVectorEnv`` via ``gymnasium.make_vec``, and ``RecordVideo`` /
``RenderCollection`` on ``render_mode="rgb_array"`` frames."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import piquet_env


def masked_random_action(env, rng: np.random.Generator) -> int:
    mask = env.unwrapped.action_masks()
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs(mode):
    gymnasium.register_envs(piquet_env)
    envs = gymnasium.make_vec("PiquetDeal-v0", num_envs=2, vectorization_mode=mode)
    try:
        obs, infos = envs.reset(seed=[1, 2])
        assert obs.shape == (2, 433) and obs.dtype == np.float32
        rng = np.random.default_rng(0)
        finished = 0
        for _ in range(200):
            # after a terminal step the mask is empty: the next step only resets (NEXT_STEP
            # autoreset) and ignores the action
            legal = [np.flatnonzero(m) for m in infos["action_mask"]]
            actions = np.array([rng.choice(ids) if len(ids) else 0 for ids in legal])
            obs, _rewards, terminated, truncated, infos = envs.step(actions)
            finished += int(terminated.sum())
            assert not truncated.any()
            assert "illegal_action" not in infos
        assert finished >= 2  # deals end and the vector env resets them
    finally:
        envs.close()


def test_rgb_array_frames_and_render_collection():
    pytest.importorskip("matplotlib", reason="rgb_array needs the render extra (matplotlib)")
    env = gymnasium.wrappers.RenderCollection(
        gymnasium.make("PiquetDeal-v0", render_mode="rgb_array", seat="player_0")
    )
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step(masked_random_action(env, rng))
    frames = env.render()
    assert len(frames) == 4
    for frame in frames:
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert not np.array_equal(frames[0], frames[-1])  # the table changed
    assert frames[0].std() > 10  # not a blank canvas


def test_record_video(tmp_path):
    pytest.importorskip("matplotlib", reason="rgb_array needs the render extra (matplotlib)")
    pytest.importorskip(
        "moviepy", reason='RecordVideo needs moviepy: pip install -e ".[integrations]"'
    )
    env = gymnasium.wrappers.RecordVideo(
        gymnasium.make("PiquetDeal-v0", render_mode="rgb_array", seat="player_0"),
        video_folder=str(tmp_path),
        episode_trigger=lambda episode: True,
        disable_logger=True,
    )
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    terminated = False
    while not terminated:
        _, _, terminated, _, _ = env.step(masked_random_action(env, rng))
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000
