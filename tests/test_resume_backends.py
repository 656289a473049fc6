"""``piquet train --resume`` on a run of the other backend says so (issue 28, point 8:
``--backend rllib --resume DIR`` on a built-in run said ``unknown config key
'time_budget_minutes'``). Nothing here needs Ray: the check comes before it is imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_cli import main
from piquet_env.observation import encoder_for
from piquet_training.rllib.algo import RLlibConfig
from piquet_training.settings.backends import RLLIB, TORCH, check_resume, trainer_of
from tests.train_helpers import TINY, train_cli


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of the built-in trainer (one tiny update)."""
    out = tmp_path_factory.mktemp("runs") / "torch"
    assert train_cli(out, TINY, "updates=1", "final_eval_deals=1") == 0
    return out


@pytest.fixture(scope="module")
def rllib_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder as the RLlib backend writes it (``export.save_run_checkpoint`` and
    ``export_policy``'s metadata, without an RLlib algorithm to take the weights from)."""
    from piquet_training.rllib.export import CHECKPOINT_KIND

    out = tmp_path_factory.mktemp("runs") / "rllib"
    cfg = RLlibConfig()
    enc = encoder_for(cfg.rules_obj)
    model = ActorCritic(enc.size, enc.n_actions, cfg.hidden, cfg.activation)
    meta = ck.policy_meta(model, cfg.rules_obj, cfg.to_dict())
    meta.update(trainer=CHECKPOINT_KIND, snapshots=[], counters={"iteration": 1}, optimizer={})
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    ck.save_checkpoint(out / ck.LATEST_FILE, tensors, meta)
    config = {"trainer": CHECKPOINT_KIND, **cfg.to_dict()}
    ck.save_policy(out / ck.POLICY_FILE, model, cfg.rules_obj, config)
    return out


def _train(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["train", *argv])
    captured = capsys.readouterr()
    return rc, captured.err


def test_each_run_is_known_by_its_trainer(torch_run: Path, rllib_run: Path) -> None:
    for run, trainer in [(torch_run, TORCH), (rllib_run, RLLIB)]:
        for name in (ck.LATEST_FILE, ck.POLICY_FILE):
            assert trainer_of(ck.read_checkpoint(run / name).meta) == trainer
        check_resume(ck.read_checkpoint(run / ck.LATEST_FILE), trainer, run)  # its own: fine


@pytest.mark.parametrize("name", ["", ck.LATEST_FILE])
def test_rllib_resume_of_a_built_in_run_says_so(torch_run: Path, name: str, capsys) -> None:
    resume = str(torch_run / name) if name else str(torch_run)
    what = "a training checkpoint" if name else "a run"
    rc, err = _train(["--backend", "rllib", "--resume", resume], capsys)
    assert (rc, err) == (
        2,
        f"piquet train: {resume} is {what} of the built-in trainer, not of the RLlib trainer: "
        f"continue it with --backend torch and --resume {resume}\n",
    )


@pytest.mark.parametrize(
    ("run", "trainer"), [("torch_run", "the built-in trainer"), ("rllib_run", "the RLlib trainer")]
)
def test_a_policy_file_is_no_training_state(run: str, trainer: str, request, capsys) -> None:
    resume = str(request.getfixturevalue(run) / ck.POLICY_FILE)
    rc, err = _train(["--backend", "rllib", "--resume", resume], capsys)
    assert (rc, err) == (
        2,
        f"piquet train: {resume}: a policy of {trainer}, not a training state (--resume takes "
        "a run's folder or its checkpoints/latest.safetensors)\n",
    )


def test_rllib_resume_of_its_own_run_reads_its_config(rllib_run: Path, capsys) -> None:
    rc = main(["train", "--backend", "rllib", "--resume", str(rllib_run), "--show-config"])
    assert rc == 0 and f'out_dir = "{rllib_run}"' in capsys.readouterr().out


def test_the_check_for_the_built_in_trainer(rllib_run: Path) -> None:
    ckpt = ck.read_checkpoint(rllib_run / ck.LATEST_FILE)
    with pytest.raises(ck.CheckpointError) as info:
        check_resume(ckpt, TORCH, rllib_run)
    assert str(info.value) == (  # the library names its settings; piquet train, its flags
        f"{rllib_run} is a run of the RLlib trainer, not of the built-in trainer: continue it "
        f"with backend='rllib' and resume='{rllib_run}'"
    )
    with pytest.raises(ValueError, match="backend must be one of torch, rllib, got 'jax'"):
        check_resume(ckpt, "jax", rllib_run)


def test_built_in_resume_of_an_rllib_run_says_so(rllib_run: Path, capsys) -> None:
    rc, err = _train(["--resume", str(rllib_run), "--show-config"], capsys)
    assert (rc, err) == (
        2,
        f"piquet train: {rllib_run} is a run of the RLlib trainer, not of the built-in trainer: "
        f"continue it with --backend rllib and --resume {rllib_run}\n",
    )
