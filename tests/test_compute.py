"""Device and precision: ``precision`` resolves as documented, bfloat16 autocast changes only the
arithmetic of the forward passes, and a bf16 update moves the weights as a float32 one does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from piquet_agents.network import ActorCritic
from piquet_env.observation import encoder_for
from piquet_env.rules import make_rules
from piquet_training.ppo.collector import Collection
from piquet_training.ppo.compute import autocast, bf16_is_native, resolve_precision
from piquet_training.ppo.pool import OpponentPool
from piquet_training.ppo.update import PPOStep, gae, ppo_update
from piquet_training.ppo.vector_collector import VectorCollector
from piquet_training.settings.train import TrainConfig

CPU = torch.device("cpu")
RULES = make_rules("standard")
ENC = encoder_for(RULES)


def test_precision_resolves_as_documented() -> None:
    assert resolve_precision("fp32", CPU) == "fp32"
    assert resolve_precision("bf16", CPU) == "bf16"
    assert resolve_precision("auto", CPU) == ("bf16" if bf16_is_native(CPU) else "fp32")
    with pytest.raises(ValueError, match="precision must be one of"):
        resolve_precision("fp16", CPU)
    with pytest.raises(ValueError, match="once resolved"):
        autocast(CPU, "auto")


def test_autocast_changes_the_products_only_inside() -> None:
    a, b = torch.ones(2, 3), torch.ones(3, 4)
    with autocast(CPU, "bf16"):
        assert (a @ b).dtype == torch.bfloat16
    with autocast(CPU, "fp32"):
        assert (a @ b).dtype == torch.float32
    assert (a @ b).dtype == torch.float32


def _rollout(seed: int):
    torch.manual_seed(seed)
    model = ActorCritic(ENC.size, ENC.n_actions, (64, 64), "tanh", ENC.state_size).eval()
    vc = VectorCollector(
        Collection(RULES, "deal", 16, record_states=True),
        np.random.default_rng(seed),
        precision="bf16",
    )
    return model, vc, vc.collect(16, OpponentPool(model, {"self": 1.0}))


def test_bf16_values_and_log_probabilities_are_close_to_float32() -> None:
    model, _, out = _rollout(0)
    wide_obs, wide_states = out.wide()  # in trajectory order, as the other columns
    obs, masks = torch.from_numpy(wide_obs), torch.from_numpy(out.masks)
    states, actions = torch.from_numpy(wide_states), torch.from_numpy(out.actions)
    with torch.no_grad():
        logp32, _, v32 = model.evaluate_actions(obs, masks, actions, states)
        with autocast(CPU, "bf16"):
            logp16, _, _ = model.evaluate_actions(obs, masks, actions, states)
    # the behaviour policy acted in bf16: its log-probabilities are recorded as it computed them
    recorded = torch.from_numpy(out.logprobs)
    # the same bf16 arithmetic in a batch of another size may round differently: two of bf16's
    # steps (2**-7 relative) at the largest log-probability, not float32's agreement
    ulps = 2 * 2**-7 * logp32.abs().max().clamp(min=1.0)
    assert (recorded - logp16.float()).abs().max() <= ulps
    assert not torch.allclose(recorded, logp32, atol=1e-6)
    assert (logp16.float() - logp32).abs().max() < 0.05
    # the collector's value pass ran in bf16, close to the float32 critic
    assert np.allclose(out.values, v32.numpy(), atol=0.05)
    assert not np.array_equal(out.values, v32.numpy())  # and it really was bf16


def test_a_bf16_update_moves_the_weights_as_float32_does() -> None:
    model, _, out = _rollout(1)
    adv, ret = gae(out.rewards, out.values, out.dones, 1.0, 0.8)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    moved = {}
    for precision in ("fp32", "bf16"):
        model.load_state_dict(start)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-5)
        stats = ppo_update(
            model,
            opt,
            out,
            adv,
            ret,
            PPOStep.of(TrainConfig()),
            np.random.default_rng(0),
            precision,
        )
        assert all(np.isfinite(v) for v in stats.values())
        assert all(p.dtype == torch.float32 for p in model.parameters())
        moved[precision] = torch.cat([(model.state_dict()[k] - start[k]).flatten() for k in start])
    cosine = torch.nn.functional.cosine_similarity(moved["fp32"], moved["bf16"], dim=0)
    assert cosine > 0.9
    assert not torch.equal(moved["fp32"], moved["bf16"])


def test_idle_threads_spin_briefly_unless_the_user_chose() -> None:
    """``piquet`` shortens the OpenMP threads' spinning before any command loads torch (the
    default spin made two-thread training 14x slower on busy cores), unless the user set the spin
    or the wait policy; importing the training package sets nothing."""
    import os
    import subprocess
    import sys

    code = (
        "import os, piquet_training\n"
        "before = os.environ.get('GOMP_SPINCOUNT')\n"
        "from piquet_cli import main\n"
        "main(['--version'])\n"
        "print(before, os.environ.get('GOMP_SPINCOUNT'))"
    )
    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    for preset, expected in (
        ({}, "None 1000"),
        ({"GOMP_SPINCOUNT": "5"}, "5 5"),
        ({"OMP_WAIT_POLICY": "ACTIVE"}, "None None"),
    ):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**base, **preset},
            capture_output=True,
            text=True,
            check=True,
        )
        assert out.stdout.strip().splitlines()[-1] == expected, preset


def test_evaluation_runs_on_one_thread_and_restores_the_run_s(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Batch-1 inference runs on one thread (two were 12x slower on busy cores); worker
    processes get their share of ``torch_threads``; both settings are restored after."""
    import os

    import piquet_training.evaluation.greedy as greedy
    from piquet_agents.checkpoint import save_policy
    from piquet_training.evaluation.greedy import evaluate_policy

    seen: list[tuple[int, str | None]] = []
    real = greedy.evaluate

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")))
        return real(*args, **{**kwargs, "workers": 1})  # spare the test the worker processes

    monkeypatch.setattr(greedy, "evaluate", spy)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        model = ActorCritic(ENC.size, ENC.n_actions, (16,), "tanh")
        cfg = TrainConfig(torch_threads=4, eval_opponents="random", eval_mode="deal")
        rows = evaluate_policy(model, cfg, 1, seed=0, workers=2)
        assert len(rows) == 1
        path = tmp_path / "policy.safetensors"
        save_policy(path, model, RULES, cfg.to_dict())
        evaluate_policy(str(path), cfg, 1, seed=0, workers=2)
        # In-process (a network) one worker takes all four; two worker processes two each.
        assert seen == [(1, "4"), (1, "2")]
        assert torch.get_num_threads() == 2 and "OMP_NUM_THREADS" not in os.environ
    finally:
        torch.set_num_threads(before)


def test_an_update_reads_its_step_and_a_whole_config_still_works_deprecated() -> None:
    """``ppo_update`` reads a PPOStep; handing it the run config (the older call) warns and
    moves the weights exactly as the step made of that config does."""
    model, _, out = _rollout(2)
    adv, ret = gae(out.rewards, out.values, out.dones, 1.0, 0.8)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    cfg = TrainConfig(ent_coef=0.01, num_minibatches=4)
    moved = []
    for how in ("step", "config"):
        model.load_state_dict(start)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-5)
        rng = np.random.default_rng(0)
        if how == "step":
            ppo_update(model, opt, out, adv, ret, PPOStep.of(cfg), rng)
        else:
            with pytest.warns(DeprecationWarning, match="PPOStep"):
                ppo_update(model, opt, out, adv, ret, cfg, rng)  # type: ignore[arg-type]
        moved.append({k: v.clone() for k, v in model.state_dict().items()})
    assert all(torch.equal(moved[0][k], moved[1][k]) for k in start)
    assert not all(torch.equal(moved[0][k], start[k]) for k in start)
    step = PPOStep.of(cfg, magnet_coef=0.3)
    assert (step.ent_coef, step.num_minibatches, step.magnet_coef) == (0.01, 4, 0.3)
    assert step.clip_coef == cfg.clip_coef and step.update_epochs == cfg.update_epochs


def test_the_steps_values_come_from_the_settings_alone() -> None:
    """``PPOStep`` declares no default (the settings' are the only ones), and ``PPOStep.of``
    refuses a name it does not know or a field the settings lack, rather than skip it."""
    import dataclasses

    assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(PPOStep))
    with pytest.raises(TypeError, match="no field ent_coeff"):
        PPOStep.of(TrainConfig(), ent_coeff=0.1)
    with pytest.raises(TypeError, match="have no clip_coef"):
        PPOStep.of(object(), **{f.name: 0 for f in dataclasses.fields(PPOStep)[1:]})
