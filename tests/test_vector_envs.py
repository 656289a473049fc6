"""The vector envs: the Gymnasium ``VectorEnv`` (one learner seat against a batch policy), the
two-seat self-play interface, and the vector benchmark's entry point."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

import piquet_env
from piquet_env.observation import encoder_for
from piquet_env.testing.batch_speed import bench_vector, main, print_vector_report
from piquet_env.vector import (
    BatchActionError,
    BatchPolicy,
    OpponentError,
    PiquetVectorEnv,
    RandomPolicy,
    SelfPlayEnv,
    sample_legal,
)


class Recording:
    """A batch policy that checks what it is given and plays the first legal action."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        assert obs.dtype == np.float32 and mask.dtype == bool and len(obs) == len(mask)
        assert mask.any(axis=1).all()
        self.calls += 1
        return mask.argmax(axis=1)


def test_spaces_and_metadata():
    env = PiquetVectorEnv(num_envs=8, rules="classic+normand", seed=0)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (442,)
    assert env.observation_space.shape == (8, 442)
    assert env.single_action_space.n == 36
    assert env.action_space.shape == (8,)
    obs, infos = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert env.action_masks().shape == (8, 36)
    assert (infos["seat"] == env.seats).all()
    assert env.action_space.contains(sample_legal(env.action_masks(), np.random.default_rng(0)))


def test_learner_always_acts_and_returns_sum_to_results():
    opponent = Recording()
    assert isinstance(opponent, BatchPolicy)
    env = PiquetVectorEnv(num_envs=16, mode="deal", reward="deal_points", opponent=opponent, seed=3)
    obs, infos = env.reset(seed=3)
    rng = np.random.default_rng(3)
    returns = np.zeros(16)
    finished = 0
    for _ in range(400):
        batch = env.batch
        assert (batch.current_player == env.seats).all()  # the learner is to act everywhere
        enc = encoder_for(env.rules)
        for i in (0, 7):
            g = batch.to_game(i)
            assert np.array_equal(obs[i], enc.encode(g, int(env.seats[i])))
        seats = env.seats.copy()
        obs, rewards, terms, truncs, infos = env.step(sample_legal(env.action_masks(), rng))
        assert env.observation_space.contains(obs) and not truncs.any()
        returns += rewards
        if terms.any():
            assert infos["_final_obs"].tolist() == terms.tolist()
            for i in np.flatnonzero(terms):
                assert infos["final_info"]["_result"][i]
                assert returns[i] == infos["final_info"]["result"][i]
                assert infos["final_info"]["seat"][i] == seats[i]  # the seat of the game that ended
                assert infos["final_obs"][i].shape == (433,)
                returns[i] = 0
                finished += 1
    assert finished > 20 and opponent.calls > 0


def test_reset_is_deterministic_and_seats():
    a = PiquetVectorEnv(num_envs=6, seed=1, opponent=RandomPolicy(1))
    b = PiquetVectorEnv(num_envs=6, seed=1, opponent=RandomPolicy(1))
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    assert np.array_equal(oa, ob) and np.array_equal(a.seats, b.seats)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    for _ in range(30):
        ra = a.step(sample_legal(a.action_masks(), rng_a))
        rb = b.step(sample_legal(b.action_masks(), rng_b))
        assert np.array_equal(ra[0], rb[0]) and np.array_equal(ra[1], rb[1])
    fixed = PiquetVectorEnv(num_envs=4, seat=1, seed=0)
    fixed.reset(seed=0)
    assert (fixed.seats == 1).all()
    with pytest.raises(ValueError, match="seat"):
        PiquetVectorEnv(num_envs=2, seat=2)


def test_gymnasium_vector_wrappers_accept_it():
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(
        PiquetVectorEnv(num_envs=8, mode="deal", seed=2)
    )
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    episodes = 0
    for _ in range(200):
        *_, infos = env.step(sample_legal(env.unwrapped.action_masks(), rng))
        if "episode" in infos:
            episodes += int(infos["_episode"].sum())
    assert episodes > 0


def test_illegal_learner_action_raises_untouched():
    env = PiquetVectorEnv(num_envs=3, seed=0)
    env.reset(seed=0)
    mask = env.action_masks()
    actions = sample_legal(mask, np.random.default_rng(0))
    actions[1] = np.flatnonzero(~mask[1])[0]
    with pytest.raises(BatchActionError, match="game 1"):
        env.step(actions)
    assert np.array_equal(env.action_masks(), mask)


def test_self_play_both_seats_and_critic_state():
    env = SelfPlayEnv(
        num_envs=8, rules="standard+saison", seed=5, critic_state=True, reward="deal_points"
    )
    t = env.reset(seed=5)
    enc = encoder_for(env.batch.rules)
    rng = np.random.default_rng(5)
    totals = np.zeros((8, 2))
    ended = 0
    for step in range(1500):
        if step % 97 == 0:
            for i in (0, 5):
                g = env.batch.to_game(i)
                assert np.array_equal(t.state[i], enc.state(g))
                assert np.array_equal(t.obs[i], enc.encode(g, int(t.seat[i])))
        t = env.step(sample_legal(t.mask, rng))
        totals += t.rewards
        assert (t.rewards.sum(axis=1) == 0).all()
        for k, i in enumerate(t.ended_games.tolist()):
            assert totals[i].tolist() == t.results[k].tolist()
            totals[i] = 0
            ended += 1
    assert ended > 0


def test_benchmark_runs_and_prints(capsys):
    res = bench_vector(
        "standard", sizes=(64,), threads=(1, 2), seconds=0.2, memory_games=500, processes=(2,)
    )
    assert [r["threads"] for r in res["rows"]] == [1, 2, "2 proc"]
    assert all(r["steps_per_s"] > 0 for r in res["rows"])
    print_vector_report(res)
    text = capsys.readouterr().out
    assert "agent-steps/s" in text and "env()" in text and "500 parallel games" in text
    assert main(["--sizes", "32", "--threads", "1", "--seconds", "0.1", "--memory-games", "0"]) == 0


def test_a_torch_policy_is_an_opponent():
    torch = pytest.importorskip("torch")
    net = torch.nn.Linear(433, 35)

    def policy(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = net(torch.from_numpy(obs))
            logits[~torch.from_numpy(mask)] = -torch.inf
            return logits.argmax(dim=1).numpy()

    env = PiquetVectorEnv(num_envs=16, mode="deal", opponent=policy, seed=1)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(60):
        *_, terms, _, _ = env.step(sample_legal(env.action_masks(), rng))
        ended += int(terms.sum())
    assert ended > 0


# ---------------------------------------------------------------------- Gymnasium's layouts


def first_legal(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A deterministic batch policy: the lowest legal action of every row."""
    return mask.argmax(axis=1)


def test_final_info_has_gymnasiums_layout():
    env = PiquetVectorEnv(num_envs=8, mode="deal", seed=4)
    listed = gymnasium.wrappers.vector.DictInfoToList(env)
    listed.reset(seed=4)
    rng = np.random.default_rng(4)
    ended = 0
    for _ in range(300):
        seats = env.seats.copy()
        *_, terms, _, infos = env.step(sample_legal(env.action_masks(), rng))
        if not terms.any():
            assert "final_info" not in infos and "final_obs" not in infos
            continue
        # what Gymnasium's own SyncVectorEnv (same-step) builds from each ended env's info
        expected: dict = {}
        for i in np.flatnonzero(terms).tolist():
            final = {"result": int(infos["final_info"]["result"][i]), "seat": int(seats[i])}
            expected = env._add_info(
                expected, {"final_obs": infos["final_obs"][i], "final_info": final}, i
            )
        ours = {k: infos[k] for k in ("final_obs", "_final_obs", "final_info", "_final_info")}
        assert data_equivalence(ours, expected, exact=True)
        assert isinstance(infos["final_info"], dict)
        assert infos["final_info"]["_result"].tolist() == terms.tolist()
        ended += int(terms.sum())
    assert ended > 10
    # Gymnasium's DictInfoToList turns it into one dict per env
    *_, terms, _, per_env = listed.step(sample_legal(env.action_masks(), rng))
    while not terms.any():
        *_, terms, _, per_env = listed.step(sample_legal(env.action_masks(), rng))
    i = int(np.flatnonzero(terms)[0])
    assert set(per_env[i]["final_info"]) == {"result", "seat"}


def trajectories(env: PiquetVectorEnv, steps: int) -> list[list[tuple]]:
    """Per slot, (result, return, final observation) of every episode that ended, under any
    autoreset mode (``DISABLED``: each ended game is reset through ``reset_mask``)."""
    mode = env.metadata["autoreset_mode"]
    env.reset(seed=11)
    out: list[list[tuple]] = [[] for _ in range(env.num_envs)]
    returns = np.zeros(env.num_envs)
    for _ in range(steps):
        obs, rewards, terms, _, infos = env.step(first_legal(None, env.action_masks()))
        returns += rewards
        for i in np.flatnonzero(terms).tolist():
            if mode == AutoresetMode.SAME_STEP:
                result, final = infos["final_info"]["result"][i], infos["final_obs"][i]
            else:
                assert infos["_result"][i] and not env.action_masks()[i].any()
                result, final = infos["result"][i], obs[i]
            out[i].append((int(result), float(returns[i]), final.tobytes()))
            returns[i] = 0
        if mode == AutoresetMode.DISABLED and terms.any():
            with pytest.raises(RuntimeError, match="reset_mask"):
                env.step(first_legal(None, env.action_masks()))
            obs, infos = env.reset(options={"reset_mask": terms})
            assert env.action_masks()[terms].any(axis=1).all()
    return out


def test_the_three_autoreset_modes_play_the_same_games():
    runs = {}
    for mode in ("SameStep", "NextStep", AutoresetMode.DISABLED):
        env = PiquetVectorEnv(
            num_envs=6, mode="deal", seat=0, opponent=first_legal, autoreset_mode=mode
        )
        assert env.metadata["autoreset_mode"] == AutoresetMode(mode)
        runs[env.metadata["autoreset_mode"]] = trajectories(env, 400)
    same = runs[AutoresetMode.SAME_STEP]
    assert sum(map(len, same)) > 20
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED):
        # every slot's episodes, results, returns and final observations agree, episode by
        # episode, as far as the slower mode got (NEXT_STEP spends a step on each new deal)
        for a, b in zip(same, runs[mode]):
            assert 0.8 * len(a) <= len(b) <= len(a) and b == a[: len(b)]
    with pytest.raises(ValueError, match="autoreset_mode must be an AutoresetMode"):
        PiquetVectorEnv(num_envs=2, autoreset_mode="same_step")


def test_next_step_ignores_the_action_after_an_ending():
    env = PiquetVectorEnv(num_envs=3, mode="deal", seat=1, autoreset_mode="NextStep", seed=2)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    terms = np.zeros(3, dtype=bool)
    while not terms.any():
        obs, _, terms, _, infos = env.step(sample_legal(env.action_masks(), rng))
    done = np.flatnonzero(terms)
    assert not infos["action_mask"][done].any() and "final_obs" not in infos
    actions = sample_legal(env.action_masks(), rng)
    actions[done] = 12345  # ignored: the step deals that game afresh
    obs, rewards, terms2, _, _ = env.step(actions)
    assert not terms2[done].any() and (rewards[done] == 0).all()
    assert env.action_masks()[done].any(axis=1).all()
    for i in done.tolist():
        assert np.array_equal(obs[i], encoder_for(env.rules).encode(env.batch.to_game(i), 1))


def test_gymnasium_observation_wrappers_take_the_modes_they_support():
    for mode, wrapper in (
        ("NextStep", gymnasium.wrappers.vector.NormalizeObservation),
        ("Disabled", lambda e: gymnasium.wrappers.vector.TransformObservation(e, lambda o: o * 2)),
        ("NextStep", lambda e: gymnasium.wrappers.vector.TransformObservation(e, lambda o: o * 2)),
    ):
        base = PiquetVectorEnv(num_envs=4, mode="deal", seed=1, autoreset_mode=mode)
        env = wrapper(base)
        obs, _ = env.reset(seed=1)
        rng = np.random.default_rng(1)
        for _ in range(60):
            obs, _, terms, _, _ = env.step(sample_legal(base.action_masks(), rng))
            assert obs.shape == (4, 433)
            if mode == "Disabled" and terms.any():
                env.reset(options={"reset_mask": terms})
    # and Gymnasium itself refuses them on the same-step mode, which the env declares (an
    # AssertionError before Gymnasium 1.4, a ValueError since)
    with pytest.raises((AssertionError, ValueError)):
        gymnasium.wrappers.vector.NormalizeObservation(PiquetVectorEnv(num_envs=2))


def test_record_episode_statistics_next_step():
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(
        PiquetVectorEnv(num_envs=4, mode="deal", autoreset_mode="NextStep", seed=3)
    )
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(300):
        *_, infos = env.step(sample_legal(env.unwrapped.action_masks(), rng))
        if "episode" in infos:
            done = infos["_episode"]
            assert (infos["episode"]["r"][done] == infos["result"][done]).all()
    assert len(env.return_queue) > 5


def test_make_vec_builds_the_batched_engine():
    gymnasium.register_envs(piquet_env)
    for kwargs in ({"vectorization_mode": "vector_entry_point"}, {}):
        env = gymnasium.make_vec("PiquetDeal-v0", num_envs=5, seat="player_1", **kwargs)
        assert isinstance(env, PiquetVectorEnv) and env.num_envs == 5
        assert env.batch.mode == "deal" and env.seat_option == 1
        assert env.spec.id == "PiquetDeal-v0"
        obs, _ = env.reset(seed=0)
        assert obs.shape == (5, 433)
        env.close()
    full = gymnasium.make_vec(
        "Piquet-v0", num_envs=2, vectorization_mode="vector_entry_point", autoreset_mode="NextStep"
    )
    assert full.batch.mode == "partie"
    assert full.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP


def test_reset_takes_one_seed_per_game():
    env = PiquetVectorEnv(num_envs=4, mode="deal", seat=0, opponent=first_legal)
    obs, _ = env.reset(seed=[0, 1, 2, 2])
    assert env.batch.batch_seed is None
    assert np.array_equal(obs[2], obs[3])  # the same seed deals the same cards
    for i, seed in enumerate([0, 1, 2, 2]):
        one = PiquetVectorEnv(num_envs=1, mode="deal", seat=0, opponent=first_legal)
        alone, _ = one.reset(seed=seed)
        assert np.array_equal(obs[i], alone[0])  # slot i plays what slot 0 of seed[i] plays
        assert env.batch.game_seed(i) == one.batch.game_seed(0)
    again, _ = env.reset(seed=np.array([0, 1, 2, 2]))
    assert np.array_equal(again, obs)
    fresh, _ = env.reset(seed=[None, 1, None, 2])
    assert np.array_equal(fresh[1], obs[1]) and np.array_equal(fresh[3], obs[3])
    with pytest.raises(ValueError, match=r"seed must be one seed or 4 seeds .*got 3"):
        env.reset(seed=[0, 1, 2])
    with pytest.raises(ValueError, match=r"seed\[1\] must be an int, got 1\.5"):
        env.reset(seed=[0, 1.5, 2, 3])
    with pytest.raises(ValueError, match="takes no seed with options"):
        env.reset(seed=0, options={"reset_mask": np.ones(4, dtype=bool)})
    with pytest.raises(ValueError, match=r"reset_mask'\] must be a bool array of shape \(4,\)"):
        env.reset(options={"reset_mask": [1, 0, 0, 0]})


def test_seeded_reset_reseeds_the_default_opponent():
    env = PiquetVectorEnv(num_envs=6, seed=0)
    runs = []
    for _ in range(2):
        env.reset(seed=9)
        rng = np.random.default_rng(0)
        obs = [env.step(sample_legal(env.action_masks(), rng))[0] for _ in range(40)]
        runs.append(np.stack(obs))
    assert np.array_equal(runs[0], runs[1])


# ---------------------------------------------------------------------- all or nothing


class Failing:
    """A batch policy that fails in one of several ways, or plays the first legal action."""

    def __init__(self, how: str | None) -> None:
        self.how = how

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> object:
        first = mask.argmax(axis=1)
        if self.how == "raise":
            raise KeyError("no model loaded")
        return {
            None: first,
            "none": None,
            "shape": first[:-1] if len(first) > 1 else np.append(first, 0),
            "2d": first[:, None],
            "float": first.astype(np.float64),
            "illegal": np.where(np.arange(len(first)) == 0, (~mask).argmax(axis=1), first),
            "negative": np.full(len(first), -1),
        }[self.how]


HOW = {
    "raise": r"the opponent raised KeyError: 'no model loaded' in reset\(\)",
    "none": "the opponent returned None",
    "shape": r"actions of shape \(\d+,\) .* expected \(\d+,\)",
    "2d": r"actions of shape \(\d+, 1\)",
    "float": "actions of dtype float64",
    "illegal": r"1 illegal action\(s\) .*game \d+: action \d+ \(legal: \d+=",
    "negative": r"illegal action\(s\)",
}


@pytest.mark.parametrize("how", sorted(HOW))
def test_a_failing_opponent_leaves_the_env_refusing_until_reset(how):
    opponent = Failing(how)
    env = PiquetVectorEnv(num_envs=8, mode="deal", seat=0, opponent=opponent, seed=0)
    before = env.batch.state.hands.copy()
    with pytest.raises(OpponentError, match=HOW[how]) as err:
        env.reset(seed=0)
    if how == "raise":
        assert isinstance(err.value.__cause__, KeyError)
    # nothing of the bad answer was played: the games wait for the opponent, as dealt
    assert (env.batch.state.n_actions_taken == 0).all()
    assert not np.array_equal(env.batch.state.hands, before)
    opponent.how = None  # a working opponent now
    actions = np.zeros(8, dtype=np.int64)
    for call in (lambda: env.step(actions), env.action_masks):
        with pytest.raises(RuntimeError, match=r"refused: reset\(\) failed \(OpponentError: the"):
            call()
    with pytest.raises(RuntimeError, match="refused"):
        env.reset(options={"reset_mask": np.ones(8, dtype=bool)})
    obs, _ = env.reset(seed=0)  # a full reset repairs it
    assert (env.batch.current_player == 0).all()
    env.step(first_legal(obs, env.action_masks()))


@pytest.mark.parametrize("how", ["raise", "illegal"])
def test_an_opponent_failing_in_step(how):
    opponent = Failing(None)
    env = PiquetVectorEnv(num_envs=8, mode="deal", seat=0, opponent=opponent, seed=1)
    obs, _ = env.reset(seed=1)
    opponent.how = how
    with pytest.raises(OpponentError, match=r"in step\(\)"):  # once the opponent is to move
        for _ in range(50):
            obs, *_ = env.step(first_legal(obs, env.action_masks()))
    taken = env.batch.state.n_actions_taken.copy()
    opponent.how = None
    with pytest.raises(RuntimeError, match=r"step\(\) refused: step\(\) failed while the opp"):
        env.step(np.zeros(8, dtype=np.int64))
    assert np.array_equal(env.batch.state.n_actions_taken, taken)  # nothing was played
    env.reset(seed=1)
    env.step(first_legal(obs, env.action_masks()))


def test_step_before_reset_and_bad_learner_actions_change_nothing():
    env = PiquetVectorEnv(num_envs=3, seed=0)
    with pytest.raises(RuntimeError, match=r"step\(\) refused: reset\(\) has not been called"):
        env.step(np.zeros(3, dtype=np.int64))
    env.reset(seed=0)
    mask = env.action_masks()
    for bad in (np.zeros(2, dtype=np.int64), np.zeros(3), np.full(3, 99)):
        with pytest.raises(BatchActionError):
            env.step(bad)
    assert np.array_equal(env.action_masks(), mask)  # still usable, untouched
    env.step(first_legal(None, mask))


def test_an_agent_is_refused_as_the_opponent_with_the_way_to_pass_it():
    with pytest.raises(TypeError, match=r"agent spec.*make_agent\('heuristic', rules\)"):
        PiquetVectorEnv(num_envs=2, opponent="heuristic")

    class AnAgent:
        def act(self, turn): ...

        def reset(self, seed=None): ...

    with pytest.raises(TypeError, match=r"AnAgent \(an Agent\).*make\('Piquet-v0'"):
        PiquetVectorEnv(num_envs=2, opponent=AnAgent())
    with pytest.raises(ValueError, match="render_mode must be None"):
        PiquetVectorEnv(num_envs=2, render_mode="human")


def test_mode_is_the_one_name_and_episode_its_alias():
    """``mode`` across engine, env, batched engine and config; ``episode=`` still accepted."""
    from piquet_env.piquet_v0 import raw_env
    from piquet_env.vector import BatchGame

    for make in (
        lambda **kw: BatchGame(n=2, seed=0, **kw),
        lambda **kw: PiquetVectorEnv(num_envs=2, seed=0, **kw).batch,
        lambda **kw: SelfPlayEnv(num_envs=2, seed=0, **kw).batch,
        lambda **kw: raw_env(**kw),
    ):
        assert make(mode="deal").mode == "deal" and make(episode="deal").mode == "deal"
        assert make().mode == "partie" and make(episode="deal").episode == "deal"
        with pytest.raises(ValueError, match="disagree"):
            make(mode="deal", episode="partie")
