"""Expert iteration against a fixed target on a rule set small enough to enumerate: the
exploiter's search is the teacher, its network the pupil, and each round is valued on every deal.

The learned exploiter stalls at about half of a learned target's exact exploitability on ``mini``
(docs: Results, exact), though its network holds the whole best response when shown it, and its
search (``mcts:N:policy=EXPLOITER:belief=reach:against=TARGET``) improves it only one decision at
a time, each choice valued by the exploiter's own play after it. A round here: the search, guided
by the current network, plays every deal in both seats against the target; each of its decisions
(the observation, the legal moves and the move it chose) joins the labels of the rounds before
(aggregated, as DAgger does; an observation labelled again keeps only the latest round's labels,
the better-guided teacher's); the network is fitted to all of them from its current weights; the
next round's search is guided by the fitted network. So each round's search starts from a better
policy, which is policy iteration with the search as the improvement step and the network as its
memory. The search's own points, and the fitted network's greedy points, are exact expectations
over the deals (:func:`~piquet_training.studies.every_deal.play_every_deal`: every deal, both
seats): no sampling of deals, only the search's own draws.

Nothing here reads the exact game tree or the best response: the method uses what the full game
also has (the target's policy, for the search's belief and its playouts); ``--exact`` (the exact
best response's value, ``piquet exploit TARGET --rules mini --exact``) only turns each figure into
a fraction of the truth.

Command (the results page's): ``python -m piquet_training.studies.expert_iteration TARGET
EXPLOITER --rules mini --rounds 3 --leaves 20 --exact BR_SEAT --out DIR``:
``DIR/round-K.safetensors`` each round's fitted network (a policy checkpoint, an agent spec),
``DIR/rounds.jsonl`` a line a round.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from piquet_agents.guided_search import FLAT_PRIOR
from piquet_env.agent import Turn
from piquet_env.rules import Rules, make_rules
from piquet_training.studies.every_deal import every_deal, play_every_deal

__all__ = ["Labels", "Round", "expert_iteration", "fit", "main", "search_labels", "search_spec"]

BATCH = 256
"""Labels a gradient step of the fit."""


def search_spec(policy: str | Path, target: str, leaves: int, floor: float = FLAT_PRIOR) -> str:
    """The exploiter's search guided by ``policy``, its worlds weighed by ``target``'s reach,
    the moves its policy gives at least ``floor`` weighed (0: every legal move)."""
    return f"mcts:{leaves}:policy={policy}:belief=reach:floor={floor:g}:against={target}"


@dataclass
class Labels:
    """The teacher's decisions: each the observation, the legal moves and the move it chose."""

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray

    def __add__(self, other: Labels) -> Labels:
        """Both sets of labels, but for the observations ``other`` labels too: those keep only
        ``other``'s labels (the later teacher's, guided by a better network; all of them, so a
        teacher that chose differently in two deals of one observation is fitted as a mixture)."""
        relabelled = set(map(bytes, _rows(other.obs)))
        kept = np.array([bytes(r) not in relabelled for r in _rows(self.obs)], dtype=bool)
        return Labels(
            np.concatenate([self.obs[kept], other.obs]),
            np.concatenate([self.mask[kept], other.mask]),
            np.concatenate([self.action[kept], other.action]),
        )

    def __len__(self) -> int:
        return len(self.action)


def _rows(a: np.ndarray) -> np.ndarray:
    """Each row of ``a`` as one opaque value (hashable through ``bytes``)."""
    a = np.ascontiguousarray(a)
    return a.view(np.dtype((np.void, a.shape[1] * a.itemsize))).ravel()


def search_labels(agent: str, target: str, rules: Rules, seed: int) -> tuple[list[float], Labels]:
    """``agent``'s points over ``target`` on every deal (both seats, as
    :func:`~piquet_training.studies.every_deal.play_every_deal` plays them) and its decisions."""
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []

    def record(turn: Turn, action: int) -> None:
        obs.append(turn.observation)
        masks.append(turn.action_mask)
        actions.append(action)

    points = play_every_deal(agent, target, rules, seed, on_move=record)
    labels = Labels(np.stack(obs), np.stack(masks).astype(np.int8), np.asarray(actions))
    return points, labels


def fit(model: Any, labels: Labels, *, epochs: int, lr: float = 1e-3, seed: int = 0) -> float:
    """Fit ``model``'s policy to ``labels`` (cross-entropy over the legal moves, ``epochs``
    passes in batches of :data:`BATCH`, Adam from its current weights); return the share of
    labels its greedy move then takes."""
    import torch

    torch.manual_seed(seed)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x = torch.from_numpy(labels.obs).float()
    m = torch.from_numpy(labels.mask)
    y = torch.from_numpy(labels.action).long()
    for _ in range(epochs):
        perm = torch.randperm(len(y))
        for lo in range(0, len(y), BATCH):
            idx = perm[lo : lo + BATCH]
            loss = torch.nn.functional.cross_entropy(model.logits(x[idx], m[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        return float((model.logits(x, m).argmax(-1) == y).float().mean())


@dataclass
class Round:
    """One round: the search's points per deal over the target (guided by the network fitted in
    the round before), the labels fitted so far, the fit's accuracy on them, and the fitted
    network's greedy points per deal; each a fraction of ``exact`` when given."""

    round: int
    search: float
    labels: int
    fit_accuracy: float
    network: float
    policy: str
    minutes: float
    search_fraction: float | None = None
    network_fraction: float | None = None


def expert_iteration(
    target: str,
    exploiter: str,
    rules: Rules,
    out_dir: Path,
    *,
    rounds: int = 3,
    leaves: int = 20,
    epochs: int = 20,
    floor: float = FLAT_PRIOR,
    exact: float | None = None,
    seed: int = 0,
    log: Callable[[str], None] = print,
) -> list[Round]:
    """``rounds`` rounds of expert iteration from the network of ``exploiter`` against
    ``target`` (see the module docstring); each round's network in ``out_dir``."""
    from piquet_agents.checkpoint import load_policy, save_policy

    out_dir.mkdir(parents=True, exist_ok=True)
    model, _ = load_policy(exploiter, rules=rules)
    guide = str(exploiter)
    start = sum(play_every_deal(guide, target, rules, seed)) / len(every_deal(rules))
    log(json.dumps({"round": 0, "network": start, "policy": guide}))
    done: list[Round] = []
    seen: Labels | None = None
    for k in range(1, rounds + 1):
        t0 = time.perf_counter()
        spec = search_spec(guide, target, leaves, floor)
        points, labels = search_labels(spec, target, rules, seed + k)
        seen = labels if seen is None else seen + labels
        accuracy = fit(model, seen, epochs=epochs, seed=seed + k)
        guide = str(save_policy(out_dir / f"round-{k}.safetensors", model, rules))
        value = sum(play_every_deal(guide, target, rules, seed)) / len(points)
        row = Round(
            k, sum(points) / len(points), len(seen), accuracy, value, guide,
            round((time.perf_counter() - t0) / 60, 2),
        )  # fmt: skip
        if exact:
            row.search_fraction, row.network_fraction = row.search / exact, value / exact
        done.append(row)
        line = json.dumps(asdict(row))
        log(line)
        with (out_dir / "rounds.jsonl").open("a") as f:
            f.write(line + "\n")
    return done


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m piquet_training.studies.expert_iteration")
    ap.add_argument("target", help="the target's agent spec")
    ap.add_argument("exploiter", help="the learned exploiter's policy checkpoint (round 0)")
    ap.add_argument("--rules", default="mini")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--leaves", type=int, default=20, help="the search's leaves a decision")
    ap.add_argument("--epochs", type=int, default=20, help="passes over the labels a round")
    ap.add_argument(
        "--floor", type=float, default=FLAT_PRIOR,
        help="the prior a move needs to be searched (0: every legal move; a fitted network is "
        "sharp, and the search's default then weighs its two likeliest moves only)",
    )  # fmt: skip
    ap.add_argument("--exact", type=float, default=None, help="the exact best response's value")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    expert_iteration(
        args.target, args.exploiter, make_rules(args.rules), args.out, rounds=args.rounds,
        leaves=args.leaves, epochs=args.epochs, floor=args.floor, exact=args.exact,
        seed=args.seed,
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
