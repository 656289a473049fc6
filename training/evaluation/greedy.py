"""The evaluations a training run makes of its policy: the greedy policy against the run's
evaluation opponents over duplicate deals (:func:`evaluate_policy`)."""

from __future__ import annotations

import os
from typing import Any

from piquet_agents.network import ActorCritic
from piquet_agents.policy import PolicyAgent
from piquet_env.rules import make_rules
from piquet_training.evaluation.duplicate import evaluate
from piquet_training.settings.train import PPOSettings
from piquet_training.threads import one_torch_thread


def evaluate_policy(
    model: ActorCritic | str, cfg: PPOSettings, n_pairs: int, seed: int, workers: int = 1
) -> list[dict[str, Any]]:
    """Duplicate-deal matches of the greedy policy against ``cfg.eval_opponents`` (agent specs,
    by default random and heuristic) in ``cfg.eval_mode``, reporting the mean point difference
    per deal with its 95% interval (``n_pairs`` pairs of games; a partie pair plays 6 deals
    twice). ``model`` may be a saved policy's path, which ``workers`` processes then load."""
    rules = make_rules(cfg.rules)
    if isinstance(model, ActorCritic):
        snapshot = model.frozen_copy("cpu")
        agent: PolicyAgent | str = PolicyAgent(snapshot, rules, greedy=True, name="policy")
        workers = 1
    else:
        agent = model
    rows = []
    # Worker processes start a fresh torch: give each its share of the run's threads (batch-1
    # inference gains nothing from more, and oversubscribed cores make it many times slower).
    # In this process, one thread: batch-1 inference on two was 12x slower on busy cores.
    saved = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(max(1, cfg.torch_threads // workers))
    try:
        with one_torch_thread():
            for opponent in [o.strip() for o in cfg.eval_opponents.split(",") if o.strip()]:
                rep = evaluate(
                    agent, opponent, rules, n_pairs, mode=cfg.eval_mode, seed=seed, workers=workers
                )
                pts = rep.points
                rows.append(
                    {
                        "opponent": opponent,
                        "n_pairs": n_pairs,
                        "n_deals": rep.n_deals,
                        "mean_diff": pts.mean,
                        "ci_low": pts.low,
                        "ci_high": pts.high,
                        "win_rate": rep.win_rate,
                        "significant": pts.excludes(0.0),
                        "summary": rep.summary().replace(rep.agent_a, "policy"),
                        "worker_memory": rep.worker_memory,
                    }
                )
    finally:
        if saved is None:
            del os.environ["OMP_NUM_THREADS"]
        else:
            os.environ["OMP_NUM_THREADS"] = saved
    return rows
