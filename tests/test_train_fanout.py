"""The built-in trainer's collection by numbered chunks (issue 54): the same run, bit for bit,
whether the chunks are collected in this process or in local worker processes, a collector killed
mid-update and a driver killed mid-run included; what a collector sends back is checked before
the learner uses it. The same on a three-node Ray cluster: tests/test_cluster.py."""

from __future__ import annotations

import csv
import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from piquet_training.evaluation.executor import ResultError
from piquet_training.ppo.chunks import (
    Chunk,
    ChunkRows,
    CollectorSpec,
    Weights,
    check_chunk_rows,
    collect_chunk,
    plan_chunks,
)
from piquet_training.seeds import chunk_seed
from piquet_training.settings.schema import ConfigError
from piquet_training.settings.train import TrainConfig
from tests.train_helpers import KILLER

safetensors = pytest.importorskip("safetensors.numpy")

TIMING = {"minutes", "seconds", "steps_per_s", "collect_steps_per_s", "rss_mib", "peak_rss_mib"}
"""``train.csv``'s columns that measure the machine, not the run."""

SMALL = dict(
    updates=3,
    bc_games=6,
    bc_epochs=1,
    num_envs=16,
    games_per_update=24,
    chunk_games=8,
    mode="deal",
    eval_every=2,
    eval_deals=2,
    eval_mode="deal",
    eval_opponents="random",
    eval_workers=1,
    final_eval_deals=2,
    progress=False,
    tensorboard=False,
    hidden=(16,),
    snapshot_every=1,
    random_weight=0.2,
    magnet="ema",
    magnet_coef=0.05,
    seed=3,
)
"""A three-update run with everything the fan-out must carry: a warm start, snapshots acting
from the second update, the random agent, an EMA magnet, periodic and final evaluations."""


def train_small(out: Path, **settings) -> Path:
    """Train :data:`SMALL` (with ``settings``) into ``out``; return the folder."""
    from piquet_training.ppo.trainer import train

    train(TrainConfig(**{**SMALL, "out_dir": str(out), **settings}), echo=False)
    return out


def run_record(out: Path) -> tuple[list[dict], dict, list[dict]]:
    """What a run computed: ``train.csv`` without its timing columns, the final weights, and
    ``eval.csv`` without its minutes."""
    with open(out / "train.csv", newline="") as f:
        rows = [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(f)]
    with open(out / "eval.csv", newline="") as f:
        evals = [
            {k: v for k, v in r.items() if k not in TIMING and "memory" not in k}
            for r in csv.DictReader(f)
        ]
    weights = safetensors.load_file(out / "policy.safetensors")
    return rows, weights, evals


def assert_same_run(a: Path, b: Path) -> None:
    rows_a, weights_a, evals_a = run_record(a)
    rows_b, weights_b, evals_b = run_record(b)
    assert rows_a == rows_b
    assert evals_a == evals_b
    assert weights_a.keys() == weights_b.keys()
    for key in weights_a:
        assert np.array_equal(weights_a[key], weights_b[key]), key


@pytest.fixture(scope="module")
def here(tmp_path_factory) -> Path:
    """The small run, collected in this process."""
    return train_small(tmp_path_factory.mktemp("fanout") / "here")


def test_chunks_are_numbered_and_seeded_by_the_run_the_update_and_their_number():
    chunks = plan_chunks(7, 3, 20, 8)
    assert [(c.index, c.first, c.games) for c in chunks] == [(0, 0, 8), (1, 8, 8), (2, 16, 4)]
    assert [c.seed for c in chunks] == [chunk_seed(7, update=3, chunk=k) for k in range(3)]
    assert len({c.seed for c in chunks} | {chunk_seed(7, update=4, chunk=0)}) == 4
    assert all(0 <= c.seed < 2**63 for c in chunks)
    with pytest.raises(ValueError, match="chunk_games"):
        plan_chunks(0, 0, 8, 0)


def test_two_worker_processes_train_the_run_of_this_process(here: Path, tmp_path: Path):
    assert_same_run(here, train_small(tmp_path / "pool", workers=2))
    assert "chunk_games = 8" in (tmp_path / "pool" / "config.toml").read_text()


def test_a_collector_killed_mid_update_is_replaced_and_the_run_is_the_same(tmp_path: Path):
    """A training opponent that kills its own worker process at its first move (once): the
    pool is rebuilt, the chunk collected again from its seed, and the run is the one collected
    here (where the marker exists already and nobody dies). The killer is a heuristic agent,
    which cannot act in batch: its games, played one game object each beside the batch, fan out
    too."""
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    settings = dict(opponents=f"py:{killer}:make@0.3", updates=2, magnet="", magnet_coef=0.0)
    there = train_small(tmp_path / "pool", workers=2, **settings)
    assert killer.with_suffix(".killed").exists()  # a collector did die, mid-update
    here = train_small(tmp_path / "here", **settings)
    assert_same_run(here, there)


def test_a_killed_driver_resumes_bit_for_bit_with_its_workers(here: Path, tmp_path: Path):
    """``piquet train --set workers=2`` killed (SIGKILL, its whole process group) after its first
    checkpoint past update 1, then resumed with ``--resume``: the run collected here, exactly."""
    out = tmp_path / "killed"
    args = [sys.executable, "-m", "piquet_cli", "train"]
    for key, value in {**SMALL, "out_dir": str(out), "workers": 2, "checkpoint_every": 1}.items():
        if isinstance(value, tuple):
            value = "[" + ",".join(map(str, value)) + "]"
        elif isinstance(value, bool):
            value = str(value).lower()
        args += ["--set", f"{key}={value}"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        args, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            rows = (
                (out / "train.csv").read_text().splitlines() if (out / "train.csv").exists() else []
            )
            if len(rows) >= 3:  # the header and two updates: update 2 is checkpointed
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert not (out / "policy.safetensors").exists()  # it died before the end
    resumed = subprocess.run(
        [*args, "--resume", str(out)], env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert_same_run(here, out)


# ------------------------------------------------------------------------------ the checks


@pytest.fixture(scope="module")
def collected() -> tuple[CollectorSpec, Chunk, ChunkRows]:
    """A chunk collected by a worker's entry point, with its spec."""
    from piquet_training.ppo import trainer

    cfg = TrainConfig(**{**SMALL, "bc_games": 0, "out_dir": "/nonexistent/never-written"})
    rules = trainer.make_rules(cfg.rules)
    from piquet_agents.network import ActorCritic
    from piquet_env.observation import encoder_for
    from piquet_training.ppo.collector import Collection
    from piquet_training.ppo.pool import OpponentPool

    enc = encoder_for(rules)
    model = ActorCritic(enc.size, enc.n_actions, cfg.hidden, cfg.activation, enc.state_size)
    weights, opponents = trainer.training_opponents(cfg, rules, trainer.torch.device("cpu"))
    pool = OpponentPool(model, weights, size=cfg.pool_size, opponents=opponents)
    spec = CollectorSpec.of(Collection.of(cfg, rules, cfg.mode), pool, weights, "fp32", cfg.seed)
    chunk = plan_chunks(cfg.seed, 0, 16, 8)[1]
    return spec, chunk, collect_chunk(spec, Weights.of(pool), chunk)


def _damaged(rows: ChunkRows, **changes) -> ChunkRows:
    out = dataclasses.replace(rows, rows=dict(rows.rows))
    for key, fn in changes.items():
        if key in ("index",):
            out = dataclasses.replace(out, index=fn)
        else:
            out.rows[key] = fn(out.rows[key].copy())
    return out


def _nan(a):
    a[0] = np.nan
    return a


def _outside(a):
    a[0] = 0  # game 0 belongs to chunk 0
    return a


def _flip(a):
    a[0] = 2
    return a


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(index=0), "came back for 1"),
        (dict(logprobs=lambda a: a.astype(np.float64)), "column logprobs is float64"),
        (dict(states=lambda a: a[:, :10]), "column states"),
        (dict(rewards=_nan), "not finite"),
        (dict(masks=_flip), "other than 0 and 1"),
        (dict(keys=_outside), "outside the chunk"),
        (dict(actions=lambda a: a[:-1]), "rows, not"),
    ],
)
def test_what_a_collector_sends_back_is_checked(change, message, collected):
    spec, chunk, rows = collected
    check_chunk_rows(spec, chunk, rows)  # as collected: fine
    with pytest.raises(ResultError, match=message):
        check_chunk_rows(spec, chunk, _damaged(rows, **change))


def test_an_illegal_action_and_a_wrong_game_count_are_refused(collected):
    spec, chunk, rows = collected
    masks = rows.rows["masks"]
    illegal = np.argmin(masks, axis=1)  # an action each row's mask forbids
    forbidden = masks[np.arange(len(masks)), illegal] == 0
    assert forbidden.any()
    bad = _damaged(rows, actions=lambda a: np.where(forbidden, illegal, a))
    with pytest.raises(ResultError, match="illegal"):
        check_chunk_rows(spec, chunk, bad)
    short = dataclasses.replace(
        rows, played=dataclasses.replace(rows.played, batched_games=rows.played.batched_games - 1)
    )
    with pytest.raises(ResultError, match="games, not 8"):
        check_chunk_rows(spec, chunk, short)
    with pytest.raises(ResultError, match="not ChunkRows"):
        check_chunk_rows(spec, chunk, {"rows": rows.rows})


def test_only_the_vector_collector_fans_out():
    with pytest.raises(ConfigError, match="collector = 'game'"):
        TrainConfig(collector="game", workers=2).validate()
    with pytest.raises(ConfigError, match="ray"):
        TrainConfig(ray="nonsense").validate()


def test_an_exploiter_collected_by_two_workers_is_the_one_collected_here(tmp_path: Path):
    """``piquet exploit --workers 2``: the built-in exploiter's training collects on the two
    workers its evaluations play on; its periodic edges, weights and final pairs are those of
    the run collected here."""
    from piquet_env.rules import make_rules
    from piquet_training.evaluation.executor import Fanout
    from piquet_training.exploit.exploiter import exploit
    from piquet_training.exploit.plan import plan_exploit

    base = TrainConfig(
        **{**SMALL, "magnet": "", "magnet_coef": 0.0, "num_minibatches": 2},
        out_dir="/nonexistent/replaced-by-the-plan",
    )

    def run(where: str, fanout: Fanout) -> Path:
        plan = plan_exploit(
            "random", make_rules("mini"), tmp_path / where, steps=600, eval_every=1,
            periodic_deals=2, base=base, reference="none", pairs=6, fanout=fanout, echo=False,
        )  # fmt: skip
        assert plan.cfg.workers == fanout.workers
        exploit(plan)
        return tmp_path / where

    here, there = run("here", Fanout()), run("pool", Fanout(2))
    assert (there / "pairs.csv").read_text() == (here / "pairs.csv").read_text()
    assert_same_run(here / "exploiter", there / "exploiter")


def test_the_flags_name_where_the_games_are_collected(capsys):
    """``piquet train --workers N --ray ADDRESS``: the built-in trainer's settings (``--set`` can
    still override them); the rllib backend's env runners and address."""
    from piquet_cli import main

    assert main(["train", "--workers", "3", "--ray", "auto", "--show-config"]) == 0
    shown = capsys.readouterr().out
    assert "\nworkers = 3\n" in shown and '\nray = "auto"\n' in shown
    main(["train", "--workers", "3", "--set", "workers=2", "--show-config"])
    assert "\nworkers = 2\n" in capsys.readouterr().out
    pytest.importorskip("ray.rllib", reason="the rllib extra")
    assert (
        main(["train", "--backend", "rllib", "--workers", "3", "--ray", "auto", "--show-config"])
        == 0
    )
    shown = capsys.readouterr().out
    assert "\nnum_env_runners = 3\n" in shown and '\naddress = "auto"\n' in shown
    assert main(["train", "--ray", "nonsense", "--show-config"]) == 2
    assert "ray must be" in capsys.readouterr().err


def test_exact_measurements_of_a_run_collected_by_two_workers_are_the_run_collected_heres(
    tmp_path: Path,
):
    """``exact_every`` on a tiny ``mini``: the learner's exact NashConv, measured on the driver
    as it trains, is the same whether its games were collected here or by two workers."""

    def exact(where: str, **settings) -> list[dict]:
        out = train_small(
            tmp_path / where, rules="mini[suits=2,ranks=2,hand_size=1]", updates=2,
            exact_every=1, eval_every=0, final_eval_deals=0, **settings,
        )  # fmt: skip
        with open(out / "exact.csv", newline="") as f:
            return [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(f)]

    here = exact("here")
    assert [r["update"] for r in here] == ["0", "0", "1", "1", "2", "2"]  # sampled and greedy
    assert exact("pool", workers=2) == here
