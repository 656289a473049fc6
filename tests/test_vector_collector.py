"""The batched self-play collector: its rollouts replayed in ``Game`` give the same observations,
masks, critic states and rewards as :func:`piquet_env.rewards.reward_due` says."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from piquet_agents.network import ActorCritic
from piquet_env.game import Game
from piquet_env.observation import encoder_for
from piquet_env.rewards import reward_due
from piquet_env.rules import make_rules
from piquet_env.vector import BatchGame, game_seed, make_game
from piquet_training.ppo.collector import Collection
from piquet_training.ppo.pool import OpponentPool
from piquet_training.ppo.vector_collector import (
    VectorCollector,
    concat_rollouts,
)

RULES = make_rules("standard")
ENC = encoder_for(RULES)


def test_seat_permutation_matches_the_encoder():
    perm = ENC.seat_permutation
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(4):
        g = Game(RULES, seed=seed, mode="deal")
        while not g.is_over:
            if rng.random() < 0.3:
                assert np.array_equal(ENC.state(g, 0)[perm], ENC.state(g, 1))
                assert np.array_equal(ENC.state(g, 1)[perm], ENC.state(g, 0))
                checked += 1
            acts = g.legal_actions()
            g.apply(acts[int(rng.integers(len(acts)))])
    assert checked > 20


class _Recorder:
    """A BatchGame that remembers its reset seed and every action array it was given."""

    def __init__(self, batch: BatchGame) -> None:
        self.batch, self.seed, self.actions = batch, None, []

    def reset(self, seed):
        self.seed, self.actions = seed, []
        return self.batch.reset(seed)

    def step(self, actions):
        self.actions.append(np.array(actions))
        return self.batch.step(actions)

    def __getattr__(self, name):
        return getattr(self.batch, name)


def _collect(mode, reward, dense, settle, critic, weights, n=6, seed=1):
    torch.manual_seed(seed)
    state_size = ENC.state_size if critic else 0
    model = ActorCritic(ENC.size, ENC.n_actions, (32,), "tanh", state_size).eval()
    pool = OpponentPool(model, weights)
    pool.add_snapshot(0)
    collection = Collection(
        RULES,
        mode,
        n,
        reward=reward,
        reward_scale=0.5,
        settle_weight=settle,
        dense_reward=dense,
        record_states=critic,
    )
    vc = VectorCollector(collection, np.random.default_rng(seed))
    made = {}
    original = vc._batch

    def recording(k):
        made[k] = made.get(k) or _Recorder(original(k))
        return made[k]

    vc._batch = recording
    out = vc.collect(n, pool)
    return out, made[n], model


def _replay(rec, n, mode, reward, dense, settle, critic):
    """Per slot and seat: the observations, masks, seat-relative states and rewards (credited
    the way the collector documents) of every decision, replayed in ``Game``."""
    decisions = {}
    for i in range(n):
        g = make_game(RULES, int(game_seed(rec.seed, i, 0)), mode)
        rows = {0: [], 1: []}
        credited, pending = [0, 0], [0.0, 0.0]
        n_deals = 0
        for acts in rec.actions:
            a = int(acts[i])
            if a < 0:
                continue
            assert not g.is_over
            p = g.current_player
            rows[p].append(
                [
                    ENC.encode(g, p),
                    ENC.action_mask(g, p),
                    ENC.state(g, p) if critic else None,
                    a,
                    pending[p],
                ]
            )
            pending[p] = 0.0
            g.apply(a)
            deal_over = len(g.deal_scores) > n_deals
            n_deals += deal_over
            if not (deal_over or (dense and reward == "deal_points")):
                continue
            for q in (0, 1):
                pts, credited[q] = reward_due(
                    reward, g, q, deal_ended=deal_over, credited=credited[q], settle_weight=settle
                )
                if rows[q]:
                    rows[q][-1][4] += pts * 0.5
                else:
                    pending[q] += pts * 0.5
        assert g.is_over
        decisions[i] = rows
    return decisions


def _trajectories(out):
    ends = np.flatnonzero(out.dones)
    starts = np.r_[0, ends[:-1] + 1]
    return [np.arange(a, b + 1) for a, b in zip(starts, ends)]


@pytest.mark.parametrize(
    "mode,reward,dense,settle,critic",
    [
        ("partie", "deal_points", True, 0.25, True),
        ("partie", "deal_points", False, 1.0, False),
        ("deal", "result", True, 1.0, True),
        ("partie", "win", True, 1.0, False),
    ],
)
def test_rollouts_replay_in_game(mode, reward, dense, settle, critic):
    weights = {"self": 1.0, "snapshot": 1.0, "random": 1.0}
    n = 3 if mode == "partie" else 6
    out, rec, _ = _collect(mode, reward, dense, settle, critic, weights, n=n)
    replay = _replay(rec, n, mode, reward, dense, settle, critic)
    expected = [rows for i in sorted(replay) for p in (0, 1) if (rows := replay[i][p])]
    trajectories = _trajectories(out)
    # every recorded trajectory is one seat of one game; match them by their first observation
    assert out.games == n and n <= len(trajectories) <= 2 * n
    by_first = {exp[0][0].tobytes(): exp for exp in expected}
    obs, states = out.wide()  # in trajectory order (the rollout indexes its wide columns)
    for rows in trajectories:
        exp = by_first[obs[rows[0]].tobytes()]
        assert len(exp) == len(rows)
        for r, (obs_want, mask, state, action, rew) in zip(rows, exp):
            assert np.array_equal(obs[r], obs_want)
            assert np.array_equal(out.masks[r], mask)
            assert out.actions[r] == action
            assert out.rewards[r] == pytest.approx(rew, abs=1e-4)
            if critic:
                assert np.array_equal(states[r], state)
    assert out.env_steps == sum(int((a >= 0).sum()) for a in rec.actions)


def test_values_are_the_critics_and_points_are_labelled():
    weights = {"self": 1.0, "random": 1.0}
    out, _, model = _collect("deal", "deal_points", True, 1.0, True, weights, n=8, seed=3)
    obs, states = out.wide()
    with torch.no_grad():
        _, values = model(
            torch.from_numpy(obs), torch.from_numpy(out.masks), torch.from_numpy(states)
        )
    assert np.allclose(out.values, values.numpy(), atol=1e-5)
    assert set(out.points) <= {"self", "random"}
    assert sum(len(v) for v in out.points.values()) == len(_trajectories(out))
    assert out.deals == 8


@pytest.mark.parametrize("critic", [False, True])
def test_the_values_are_the_critics_of_the_rows_as_recorded(critic: bool) -> None:
    """The value pass reads the rows where they lie, in the order they were recorded, and the
    values through the rollout's order: never gathered for it, and the same whether the wide
    columns are indexed or copied into trajectory order."""
    torch.manual_seed(6)
    state_size = ENC.state_size if critic else 0
    model = ActorCritic(ENC.size, ENC.n_actions, (32,), "tanh", state_size).eval()
    pool = OpponentPool(model, {"self": 1.0, "random": 1.0})
    outs = []
    for index_rows in (True, False):
        col = VectorCollector(
            Collection(RULES, "deal", 8, record_states=critic),
            np.random.default_rng(6),
            index_rows=index_rows,
        )
        torch.manual_seed(7)  # the same games: the moves are sampled from torch's generator
        with torch.no_grad():
            outs.append(col.collect(8, pool))
    indexed, copied = outs
    assert indexed.order is not None and not np.array_equal(indexed.order, np.arange(len(indexed)))
    assert copied.order is None and np.array_equal(indexed.values, copied.values)
    raw = col.rows()  # the copying collector's rows, as recorded
    wide = raw["states"] if critic else raw["obs"]
    assert wide is not None
    with torch.no_grad():
        trunk = model.critic_trunk if critic else model.trunk
        recorded = model.value_head(trunk(torch.from_numpy(wide))).squeeze(-1).numpy()
    order = np.argsort(raw["keys"], kind="stable")
    assert np.array_equal(copied.values, recorded[order])  # one pass, as the collector's


def test_concat_keeps_trajectories():
    weights = {"self": 1.0}
    a, _, _ = _collect("deal", "deal_points", True, 1.0, False, weights, n=2, seed=4)
    b, _, _ = _collect("deal", "deal_points", True, 1.0, False, weights, n=3, seed=5)
    c = concat_rollouts([a, b])
    assert len(c) == len(a) + len(b) and c.dones.sum() == a.dones.sum() + b.dones.sum()
    assert c.env_steps == a.env_steps + b.env_steps and c.games == 5


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="mode"):
        VectorCollector(Collection(RULES, "rubber", 4), np.random.default_rng(0))
    with pytest.raises(ValueError, match="num_envs"):
        VectorCollector(Collection(RULES, "deal", 0), np.random.default_rng(0))


def test_snapshots_act_in_one_stack_rebuilt_when_the_pool_changes():
    torch.manual_seed(0)
    model = ActorCritic(ENC.size, ENC.n_actions, (32,), "tanh").eval()
    pool = OpponentPool(model, {"snapshot": 1.0})
    vc = VectorCollector(Collection(RULES, "deal", 4), np.random.default_rng(0))
    pool.add_snapshot(0)
    vc.collect(4, pool)
    first = vc._stack
    assert first is not None and vc._stack_of == pool.snapshots
    vc.collect(4, pool)
    assert vc._stack is first  # unchanged pool: the same stack
    pool.add_snapshot(1)
    out = vc.collect(4, pool)
    assert vc._stack is not first and len(vc._stack_of) == 2
    assert out.games == 4 and set(out.points) == {"snapshot"}


def _blind_rollout(seed: int):
    """A rollout of a learner whose policy ignores its observation (all weights zero: uniform
    over the legal actions), so the games depend on the seeds alone."""
    enc = encoder_for(RULES)
    torch.manual_seed(seed)
    model = ActorCritic(enc.size, enc.n_actions, (16,), "tanh").eval()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    vc = VectorCollector(
        Collection(RULES, "partie", 3, reward_scale=0.02), np.random.default_rng(seed)
    )
    return vc.collect(3, OpponentPool(model, {"self": 1.0, "random": 1.0}))


def test_the_observations_point_scale_changes_no_training_reward(monkeypatch):
    """Rewards come from the engine's integer points, never back out of the float observation
    (issue 27): another ``_POINT_SCALE`` changes the observations and not one reward."""
    import piquet_env.observation as observation

    before = _blind_rollout(7)
    try:
        monkeypatch.setattr(observation, "_POINT_SCALE", 37.0)
        encoder_for.cache_clear()
        after = _blind_rollout(7)
    finally:
        monkeypatch.undo()
        encoder_for.cache_clear()
    assert np.array_equal(before.actions, after.actions)  # the same games
    assert not np.array_equal(before.obs, after.obs)  # seen at another scale
    assert np.count_nonzero(before.rewards) > 10
    assert np.array_equal(before.rewards, after.rewards)


def test_indexed_and_copied_rows_train_alike(tmp_path, monkeypatch):
    """The rollout's wide columns read through its order (the default) or copied into trajectory
    order (as before): every minibatch's rows are the same, so a run ends with the same weights
    bit for bit."""
    from piquet_agents import checkpoint as ck
    from piquet_training.ppo import trainer
    from tests.train_helpers import TINY, train_cli

    settings = (*TINY, "final_eval_deals=0", "eval_every=0", "critic=state", "updates=3")
    assert train_cli(tmp_path / "indexed", settings) == 0

    class Copying(VectorCollector):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs, index_rows=False)

    monkeypatch.setattr(trainer, "VectorCollector", Copying)
    assert train_cli(tmp_path / "copied", settings) == 0
    a = ck.read_checkpoint(tmp_path / "indexed" / ck.LATEST_FILE).section("model")
    b = ck.read_checkpoint(tmp_path / "copied" / ck.LATEST_FILE).section("model")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_sampled_target_samples_in_batch(tmp_path):
    """``opponent=PATH:sample``: the target network acts in the batch, sampling from its
    probabilities (not its most probable action)."""

    from piquet_agents import checkpoint as ck
    from piquet_training.ppo.pool import resolve_opponent

    torch.manual_seed(0)
    net = ActorCritic(ENC.size, ENC.n_actions, (32,)).eval()
    ck.save_policy(tmp_path / "p.safetensors", net, RULES, {})
    greedy = resolve_opponent(str(tmp_path / "p.safetensors"), RULES)
    assert greedy.greedy and greedy.batched
    sampling = resolve_opponent(f"{tmp_path / 'p.safetensors'}:sample", RULES)
    assert not sampling.greedy and sampling.batched
    vc = VectorCollector(Collection(RULES, "deal", 64), np.random.default_rng(0))
    obs = np.random.default_rng(1).random((2000, ENC.size)).astype(np.float32)
    mask = np.ones((2000, ENC.n_actions), dtype=np.int8)
    sampled = vc._network_act(sampling, obs, mask)
    best = vc._network_act(dataclasses.replace(sampling, greedy=True), obs, mask)
    assert (sampled != best).any() and len(set(sampled.tolist())) > len(set(best.tolist()))


def test_training_opponents_are_agent_specs_batched_where_they_can_be(tmp_path):
    """Any agent spec is a training opponent (``opponents = "SPEC@WEIGHT,..."``): a policy and
    the random agent act in the batch, any other agent one game object per game, and every
    game is counted under its spec."""
    from piquet_agents import checkpoint as ck
    from piquet_training.ppo.pool import resolve_opponent

    net = ActorCritic(ENC.size, ENC.n_actions, (16,)).eval()
    ck.save_policy(tmp_path / "p.safetensors", net, RULES, {})
    specs = {
        "random": True,
        "heuristic:seed=3": False,
        "mcts:2": False,
        str(tmp_path / "p.safetensors"): True,
    }
    opponents = {spec: resolve_opponent(spec, RULES, seed=1) for spec in specs}
    assert {s: o.batched for s, o in opponents.items()} == specs
    learner = ActorCritic(ENC.size, ENC.n_actions, (16,)).eval()
    pool = OpponentPool(learner, dict.fromkeys(specs, 1.0), opponents=opponents)
    assert pool.kinds == list(specs)
    vc = VectorCollector(Collection(RULES, "deal", 16), np.random.default_rng(0))
    played: list[str] = []
    orig = vc._agent_games
    vc._agent_games = lambda n, p, kind: (played.append(kind), orig(n, p, kind))[1]
    roll = vc.collect(24, pool)
    assert sorted(set(played)) == ["heuristic:seed=3", "mcts:2"]  # one game object each
    assert set(roll.points) <= set(specs) and len(roll.points) >= 3
    assert roll.games == 24


def test_with_critic_states_the_observations_are_read_from_them_not_stored_twice() -> None:
    """A critic state seen from the acting seat begins with its observation: the collector
    stores the states alone and the rollout's observations are a view of their first columns."""
    rules = make_rules("standard")
    col = VectorCollector(
        Collection(rules, "deal", 8, record_states=True), np.random.default_rng(3)
    )
    pool = OpponentPool(
        ActorCritic(col.size, col.n_actions, (16,), state_size=col.state_size), {"self": 1.0}
    )
    roll = col.collect(8, pool)
    assert "obs" not in col._raw.columns and "states" in col._raw.columns
    obs, states = roll.wide()
    assert np.array_equal(obs, states[:, : col.size])
    assert np.shares_memory(roll.obs, roll.states)
    plain = VectorCollector(
        Collection(rules, "deal", 8, record_states=False), np.random.default_rng(3)
    )
    assert "obs" in plain._raw.columns
