"""How fast the built-in trainer trains when its collection fans out: env steps/s and where an
update's time goes (collecting the chunks, gathering their rows into the learner's store, the
update) in this process, in local worker processes, on a local Ray instance and on a simulated
cluster of one-CPU nodes, each beside a run collected here in the same process; then the
learner's own ceiling and the projection to many cores (docs/results/cluster.md).

``python -m piquet_training.studies.train_fanout_speed --updates 6``

Every run is the default config (``piquet train``) made shorter: ``updates`` updates from fresh
weights (no warm start), no evaluation, no checkpoint until the end. Per-update figures are
medians over the updates after the first (the first starts the workers).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from piquet_training.ppo.trainer import train
from piquet_training.settings.train import TrainConfig

MODES: dict[str, dict[str, Any]] = {
    "here": {},
    "2 processes": {"workers": 2},
    "Ray local, 1 worker": {"workers": 1, "ray": "local"},
    "Ray local, 2 workers": {"workers": 2, "ray": "local"},
    "simulated cluster, 3 nodes": {"workers": 3, "ray": "auto"},
    "GPU learner, 2 processes": {"workers": 2, "device": "cuda"},
    "GPU learner, all cores": {"workers": 0, "device": "cuda"},
}
"""Where the chunks are collected and the learner learns, as settings (``ray="auto"``: the
simulated cluster; ``workers=0``: one collector per core but one; ``device="cuda"``: the update
and the values pass on the GPU, the collectors on the CPU)."""

CPU_MODES = [name for name, where in MODES.items() if where.get("device") != "cuda"]
"""What ``--modes`` measures by default (``--gpu``: the GPU learner's, beside the CPU's)."""


def measure(updates: int, out: Path, **where: Any) -> dict[str, float]:
    """Train the shortened default run with ``where``'s settings; per-update medians (after the
    first) of env steps, env steps/s, collection and update seconds, and the gathering's mean."""
    cfg = TrainConfig(
        updates=updates,
        bc_games=0,
        eval_every=0,
        final_eval_deals=0,
        progress=False,
        tensorboard=False,
        checkpoint_every=1_000_000,
        out_dir=str(out),
        **where,
    )
    result = train(cfg, echo=False)
    with open(out / "train.csv", newline="") as f:
        rows = list(csv.DictReader(f))[1:]  # the first update starts the workers
    steps = [float(r["env_steps"]) for r in rows]
    per_update = [b - a for a, b in itertools.pairwise(steps)] or [result.env_steps / updates]
    total = [d / float(r["steps_per_s"]) for d, r in zip(per_update, rows[1:])]
    collect = [d / float(r["collect_steps_per_s"]) for d, r in zip(per_update, rows[1:])]
    return {
        "env_steps": statistics.median(per_update),
        "steps_per_s": statistics.median(d / t for d, t in zip(per_update, total)),
        "collect_s": statistics.median(collect),
        "update_s": statistics.median(t - c for t, c in zip(total, collect)),
        "gather_s": result.split["gather"] / max(1, result.updates),
    }


def _line(name: str, m: dict[str, float], ref: dict[str, float]) -> str:
    return (
        f"| {name} | {m['steps_per_s']:,.0f} | {ref['steps_per_s']:,.0f} | "
        f"{m['collect_s']:.2f} | {m['gather_s']:.2f} | {m['update_s']:.2f} |"
    )


def project(here: dict[str, float], fanned: dict[str, float], cores: int, steps: float) -> str:
    """The hours ``steps`` env steps take with ``cores`` one-core collectors: the in-process
    collection shared among them, plus what fanning out costs an update beyond that (measured
    on 2 workers: the gathering and Ray's round trip), plus the update; and with the update
    free (the most a faster learner, a GPU, can give)."""
    per_update = here["env_steps"]
    overhead = max(0.0, fanned["collect_s"] - here["collect_s"] / 2)
    collect = here["collect_s"] / cores + overhead
    cpu = steps / per_update * (collect + here["update_s"]) / 3600
    bound = steps / per_update * collect / 3600
    return (
        f"{steps:,.0f} env steps on {cores} collectors: about {cpu:.1f} h with this machine's "
        f"learner (the update {here['update_s']:.2f} s of each update's "
        f"{collect + here['update_s']:.2f} s); about {bound:.1f} h if the update cost nothing "
        f"(the most a faster learner, one GPU, can give: not measured here)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Measure each mode beside a run here; print the table and the projection."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--updates", type=int, default=6)
    ap.add_argument("--modes", nargs="*", default=CPU_MODES, choices=list(MODES))
    ap.add_argument(
        "--gpu",
        action="store_true",
        help="measure the GPU learner's modes (with the CPU's 2 processes beside them); "
        "needs a CUDA device",
    )
    ap.add_argument("--cores", type=int, default=64, help="collectors in the projection")
    args = ap.parse_args(argv)
    if args.gpu:
        import torch

        if not torch.cuda.is_available():
            print("--gpu: no CUDA device here (torch.cuda.is_available() is False)")
            return 2
        args.modes = ["2 processes", *(m for m in MODES if MODES[m].get("device") == "cuda")]
    rows, results = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, name in enumerate(args.modes):
            ref = measure(args.updates, Path(tmp) / f"ref{k}")
            where = dict(MODES[name])
            if where.get("workers") == 0:
                where["workers"] = max(1, (os.cpu_count() or 2) - 1)
            if where.get("ray") == "auto":
                m = _on_simulated_cluster(args.updates, Path(tmp) / f"run{k}", where)
            else:
                m = measure(args.updates, Path(tmp) / f"run{k}", **where)
            results[name] = (m, ref)
            rows.append(_line(name, m, ref))
            print(rows[-1], flush=True)
    print("\n| where | env steps/s | here, beside it | collect s | of it gather s | update s |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    refs = [r for _, r in results.values()]
    ref = {k: statistics.median(r[k] for r in refs) for k in refs[0]}
    print(
        f"\nthe learner's own ceiling here: {ref['env_steps'] / ref['update_s']:,.0f} env steps/s "
        f"(an update of {ref['env_steps']:,.0f} env steps in {ref['update_s']:.2f} s)"
    )
    for name in ("Ray local, 2 workers", "2 processes"):
        if name in results:
            print(f"projected from {name}: " + project(ref, results[name][0], args.cores, 1e9))
            break
    return 0


def _on_simulated_cluster(updates: int, out: Path, where: dict[str, Any]) -> dict[str, float]:
    """:func:`measure` on a cluster of ``workers`` one-CPU nodes started on this machine."""
    import ray
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    for _ in range(where["workers"] - 1):
        c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    try:
        return measure(updates, out, **where)
    finally:
        ray.shutdown()
        c.shutdown()


if __name__ == "__main__":
    sys.exit(main())
