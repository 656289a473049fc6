"""A resumed run's files are checked before any training starts (issue 50, item 8): a tampered
``train.csv``/``eval.csv`` or a ``tb`` that is a file is one line naming the file, exit status 2,
and the run folder is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_cli import main
from piquet_env.observation import encoder_for
from piquet_env.rules import STANDARD
from piquet_training.ppo.resume import check_resume_files
from piquet_training.run_folder import RunFolderError
from piquet_training.run_log import read_run_log
from tests.train_helpers import TINY, train_cli

EVAL_HEADER = "update,env_steps,minutes,kind,opponent,n_pairs,mean_diff,ci_low,ci_high,win_rate"


def _write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("train.csv", b"update,env_steps\n1,\xff\xfe\n", "train.csv: not UTF-8 text"),
        ("eval.csv", b"update,env_steps\xe9\n", "eval.csv: not UTF-8 text"),
        (
            "eval.csv",
            "update,env_steps,minutes,kind,n_pairs,mean_diff,ci_low,ci_high\n",
            "eval.csv: no opponent column",
        ),
        ("train.csv", "update,env_steps,loss\n1,10\n", "line 2 has 2 fields, the header 3"),
        ("train.csv", "update,env_steps\n1,ten\n", 'line 2: env_steps is "ten", not a whole'),
        ("train.csv", "update,env_steps\n-1,10\n", 'line 2: update is "-1", not a whole'),
        ("train.csv", "update,env_steps\n1," + "9" * 140_000 + "\n", "train.csv: not a CSV file"),
        ("events.csv", "update,env_steps\n", "events.csv: no event column"),
        (
            "eval.csv",
            EVAL_HEADER + "\n1,10,0.1,periodic,random,2,nan,0,1,0.5\n",
            'line 2: mean_diff is "nan", not a finite number',
        ),
        (
            "eval.csv",
            EVAL_HEADER + "\n1,10,0.1,periodic,random,2,1e999,0,1,0.5\n",
            "not a finite number",
        ),
        (  # issue 57, point 3: counts as the run writes them, in digits
            "eval.csv",
            EVAL_HEADER + "\n1,1.234e3,0.1,periodic,random,2,1,0,1,0.5\n",
            'line 2: env_steps is "1.234e3", not a whole number',
        ),
        (
            "eval.csv",
            EVAL_HEADER + "\n1,10,0.1,periodic,random,5.0,1,0,1,0.5\n",
            'line 2: n_pairs is "5.0", not a whole number',
        ),
    ],
)
def test_a_tampered_log_is_named(tmp_path: Path, name: str, content, message: str) -> None:
    _write(tmp_path, name, content)
    with pytest.raises(RunFolderError, match="cannot resume: ") as info:
        check_resume_files(tmp_path, tensorboard=False)
    assert str(tmp_path / name) in str(info.value) and message in str(info.value)
    assert "\n" not in str(info.value)


def test_well_formed_logs_pass_and_read_back(tmp_path: Path) -> None:
    """Two rows by hand: the header first, then the rows as written; an empty file, no rows;
    an optional figure left empty (an older run's) is allowed."""
    _write(tmp_path, "eval.csv", EVAL_HEADER + "\n0,0,0,start,random,2,1.5,-0.5,3.5,\n")
    _write(tmp_path, "train.csv", "")
    check_resume_files(tmp_path, tensorboard=True)  # no tb folder yet: fine
    rows = read_run_log(tmp_path / "eval.csv")
    assert rows[1] == ["0", "0", "0", "start", "random", "2", "1.5", "-0.5", "3.5", ""]
    assert read_run_log(tmp_path / "train.csv") == []


def test_tb_a_file_is_named_only_where_tensorboard_writes(tmp_path: Path) -> None:
    _write(tmp_path, "tb", "in the way")
    check_resume_files(tmp_path, tensorboard=False)
    with pytest.raises(RunFolderError, match=r"tb: is not a folder.*tensorboard=False"):
        check_resume_files(tmp_path, tensorboard=True)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A tiny finished run of ``piquet train`` (two updates)."""
    out = tmp_path_factory.mktemp("resume") / "run"
    assert train_cli(out, TINY, "final_eval_deals=0") == 0
    return out


@pytest.mark.parametrize(
    "tamper, message",
    [
        ("train.csv not utf-8", "train.csv: not UTF-8 text"),
        ("eval.csv without opponent", "eval.csv: no opponent column"),
        ("tb a file", "tb: is not a folder"),
    ],
)
def test_train_resume_refuses_tampered_files_before_training(
    finished_run: Path, tmp_path: Path, tamper: str, message: str, capsys
) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    if tamper == "train.csv not utf-8":
        _write(run, "train.csv", (run / "train.csv").read_bytes() + b"\xff\n")
    elif tamper == "eval.csv without opponent":
        text = (run / "eval.csv").read_text().replace("opponent", "adversary", 1)
        _write(run, "eval.csv", text)
    else:
        _write(run, "tb", "not a folder")
    before = (run / ck.LATEST_FILE).read_bytes()
    capsys.readouterr()
    argv = ["train", "--resume", str(run), "--set", "updates=3", "--set", "tensorboard=true"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("piquet train: ")
    assert message in err and err.count("\n") == 1, err
    assert (run / ck.LATEST_FILE).read_bytes() == before  # nothing trained, nothing saved


def test_exploit_resume_refuses_a_tampered_run_before_training(tmp_path: Path, capsys) -> None:
    """The exploiter's run (``OUT/exploiter``) is checked the same way: its ``tb`` a file, its
    ``eval.csv`` not UTF-8."""
    enc = encoder_for(STANDARD)
    torch.manual_seed(5)
    model = ActorCritic(enc.size, enc.n_actions, (16,), "tanh", enc.state_size)
    tiny = ck.save_policy(tmp_path / "tiny.safetensors", model, STANDARD)
    out = tmp_path / "x"
    argv = ["exploit", "random", "--start", str(tiny), "--eval-deals", "4", "--out", str(out)]
    argv += ["--periodic-deals", "2", "--reference", "none", "--steps", "300"]
    argv += ["--set=games_per_update=8", "--set=num_envs=8", "--set=num_minibatches=2"]
    assert main([*argv, "--set=tensorboard=false"]) == 0
    run = out / "exploiter"
    before = (run / ck.LATEST_FILE).read_bytes()
    _write(run, "tb", "not a folder")
    capsys.readouterr()
    assert main([*argv, "--steps", "600", "--resume", "--set=tensorboard=true"]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"piquet exploit: {run / 'tb'}: is not a folder, where TensorBoard's event "
        "files go: remove it, or run with --set tensorboard=false\n"
    )
    (run / "tb").unlink()
    _write(run, "eval.csv", (run / "eval.csv").read_bytes() + b"\x80\n")
    assert main([*argv, "--steps", "600", "--resume"]) == 2
    assert capsys.readouterr().err == (
        f"piquet exploit: cannot resume: {run / 'eval.csv'}: not UTF-8 text\n"
    )
    assert (run / ck.LATEST_FILE).read_bytes() == before  # nothing trained, nothing saved


def test_the_run_folder_speaks_in_values(tmp_path: Path) -> None:
    """:class:`RunFolder`'s refusals name the folder and what is in it, not a command's flags
    (the command adds them); a resume of a folder with no run, an output that is a folder and a
    folder that is a file are refused the same way."""
    from piquet_training.run_folder import RunFolder

    run = RunFolder(tmp_path / "run", holds=("policy.safetensors", "checkpoints/x"))
    run.check_fresh()  # nothing there yet
    with pytest.raises(RunFolderError, match="holds no run to continue"):
        run.check_resumable()
    run.create()
    (run.path / "policy.safetensors").write_text("a run")
    with pytest.raises(RunFolderError) as info:
        run.check_fresh()
    assert info.value.held == ("policy.safetensors",) and info.value.path == str(run.path)
    assert "--" not in str(info.value)
    run.check_fresh(overwrite=True)
    run.check_resumable()
    (run.path / "out.csv").mkdir()
    with pytest.raises(RunFolderError, match="out.csv: is a folder, where the run writes a file"):
        run.check_writable(["out.csv", "other.csv"])
    (tmp_path / "file").write_text("")
    with pytest.raises(RunFolderError, match="exists and is not a folder"):
        RunFolder(tmp_path / "file").check_fresh()
