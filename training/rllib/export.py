"""Weights in and out of RLlib: the ``PolicyAgent`` export and the run checkpoints.

RLlib keeps each module's weights on its learners; :func:`module_state` reads ``main`` (or a
snapshot) back as the state dict of the project's :class:`~piquet_agents.policy.ActorCritic`, which
the RLModule holds as ``model`` (:mod:`piquet_training.rllib.module`), so nothing is converted.
:func:`export_policy` writes it with :func:`piquet_agents.checkpoint.save_policy`: the file loads
with :meth:`piquet_agents.policy.PolicyAgent.load` and plays in ``piquet eval``, ``ladder`` and
``play``.
:func:`save_run_checkpoint` / :func:`restore_run_checkpoint` keep ``main``, its Adam state, the
league and the counters in one piquet checkpoint (safetensors; nothing is pickled).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from piquet_agents import checkpoint as ck
from piquet_agents.network import ActorCritic
from piquet_training.rllib.algo import RLlibConfig
from piquet_training.rllib.league import (
    MAIN,
    SelfPlayCallback,
    module_key,
    set_weights,
    snapshot_ids,
)
from piquet_training.settings.backends import RLLIB

CHECKPOINT_KIND = RLLIB
"""``meta["trainer"]`` of checkpoints written here (:mod:`piquet_training.settings.backends` reads
it)."""


def module_state(algorithm: Any, module_id: str) -> dict[str, torch.Tensor]:
    """The learner's weights of ``module_id`` as a torch state dict of the inner ActorCritic
    (keys ``trunk.0.weight``, ``policy_head.bias``, ...)."""
    module_id = module_key(algorithm, module_id)
    state = algorithm.learner_group.get_state(components=f"learner/rl_module/{module_id}")
    weights = state["learner"]["rl_module"][module_id]
    return {
        k[len("model.") :]: torch.as_tensor(np.asarray(v))
        for k, v in weights.items()
        if k.startswith("model.")
    }


def set_module_state(algorithm: Any, module_id: str, weights: dict[str, torch.Tensor]) -> None:
    """Load an ActorCritic state dict into ``module_id`` on the learners and env runners."""
    state = {f"model.{k}": v.detach().cpu().numpy() for k, v in weights.items()}
    set_weights(algorithm, module_id, state)


def network(cfg: RLlibConfig, weights: dict[str, torch.Tensor]) -> ActorCritic:
    """An :class:`~piquet_agents.policy.ActorCritic` of the run's architecture holding
    ``weights``."""
    rules = cfg.rules_obj
    from piquet_env.observation import encoder_for

    enc = encoder_for(rules)
    state_size = enc.state_size if cfg.critic == "state" else 0
    model = ActorCritic(enc.size, enc.n_actions, cfg.hidden, cfg.activation, state_size)
    model.load_state_dict(weights)
    return model.eval()


def export_policy(
    algorithm: Any, path: str | Path, cfg: RLlibConfig, module_id: str = MAIN
) -> Path:
    """Write module ``module_id`` of ``algorithm`` as a ``PolicyAgent`` checkpoint at ``path``
    (loadable with :meth:`piquet_agents.policy.PolicyAgent.load`); return the path."""
    model = network(cfg, module_state(algorithm, module_id))
    return ck.save_policy(path, model, cfg.rules_obj, {"trainer": CHECKPOINT_KIND, **cfg.to_dict()})


def start_weights(init_from: str) -> dict[str, Any]:
    """The network's weights in the checkpoint ``init_from`` (its ``model`` section: the actor,
    ``trunk.*`` and ``policy_head.*``, and the critic; empty for ``""``: fresh weights)."""
    if not init_from:
        return {}
    return dict(ck.read_checkpoint(init_from).section("model"))


def set_start(algorithm: Any, init_from: str) -> None:
    """Give ``main`` the network of the checkpoint ``init_from`` (:func:`start_weights`), on the
    learner and every env runner, as the built-in trainer starts from one: the actor, and the
    critic where the checkpoint's is of the same kind and size (the exploiter's critic is set
    from its start, :func:`~piquet_training.rllib.exploit.exploit_rllib_config`), else the
    critic keeps its own weights. Nothing for ``""``. :class:`~piquet_agents.checkpoint.
    CheckpointError` for an actor of other widths."""
    start = start_weights(init_from)
    if not start:
        return
    weights = module_state(algorithm, MAIN)
    actor = {k: v for k, v in start.items() if k.startswith(("trunk.", "policy_head."))}
    for k, v in actor.items():
        if k not in weights or weights[k].shape != v.shape:
            mine = tuple(weights[k].shape) if k in weights else "none"
            raise ck.CheckpointError(
                f"{init_from}: {k} has shape {tuple(v.shape)}, the run's {mine}: give the run "
                "the same hidden widths"
            )
    critic = {k: v for k, v in start.items() if k not in actor}
    same = critic.keys() == weights.keys() - actor.keys() and all(
        weights[k].shape == v.shape for k, v in critic.items()
    )
    set_module_state(algorithm, MAIN, {**weights, **actor, **(critic if same else {})})


def _jsonable(value: Any) -> Any:
    """``value`` with tuples as lists and numpy scalars as Python numbers (for JSON metadata)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _renamed(name: str, old: str, new: str) -> str:
    """An optimizer's name (RLlib's ``<module id>_<optimizer>``) with its module id changed."""
    return new + name[len(old) :] if name.startswith(old) else name


def optimizer_state(algorithm: Any) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """``main``'s optimizer state on the learner: per-parameter tensors named
    ``optim.<optimizer>.<param index>.<key>`` and JSON metadata (module id, param groups),
    under the module id ``main`` whatever RLlib calls the module (:func:`~piquet_training.
    rllib.league.module_key`)."""
    state = algorithm.learner_group.get_state(components="learner/optimizer")
    tensors: dict[str, torch.Tensor] = {}
    meta: dict[str, Any] = {}
    main = module_key(algorithm, MAIN)
    for held, entry in state["learner"]["optimizer"].items():
        if entry["module_id"] != main:
            continue
        name = _renamed(held, main, MAIN)
        for idx, per_param in entry["state"]["state"].items():
            for key, value in per_param.items():
                tensors[f"optim.{name}.{idx}.{key}"] = torch.as_tensor(np.asarray(value))
        meta[name] = {"module_id": MAIN, "param_groups": _jsonable(entry["state"]["param_groups"])}
    return tensors, meta


def set_optimizer_state(algorithm: Any, ckpt: ck.Checkpoint) -> None:
    """Restore the optimizer state that :func:`optimizer_state` saved into ``ckpt`` (``main``'s
    under RLlib's id of the module)."""
    restored: dict[str, Any] = {}
    main = module_key(algorithm, MAIN)
    for name, entry in ckpt.meta.get("optimizer", {}).items():
        prefix = f"optim.{name}."
        per_param: dict[int, dict[str, np.ndarray]] = {}
        for key, value in ckpt.tensors.items():
            if key.startswith(prefix):
                idx, field = key[len(prefix) :].split(".", 1)
                per_param.setdefault(int(idx), {})[field] = value.numpy()
        groups = [
            dict(g, betas=tuple(g["betas"])) if "betas" in g else g for g in entry["param_groups"]
        ]
        module_id = module_key(algorithm, entry["module_id"])
        restored[_renamed(name, MAIN, main) if module_id == main else name] = {
            "module_id": module_id,
            "state": {"state": per_param, "param_groups": groups},
        }
    if restored:
        algorithm.learner_group.set_state({"learner": {"optimizer": restored}})


def save_run_checkpoint(
    algorithm: Any, path: str | Path, cfg: RLlibConfig, counters: dict[str, Any]
) -> Path:
    """Write ``main``, its optimizer state, every snapshot and ``counters`` to a piquet
    checkpoint at ``path``."""
    tensors = {f"model.{k}": v for k, v in module_state(algorithm, MAIN).items()}
    snaps = snapshot_ids(list(algorithm.config.policies))
    for sid in snaps:
        tensors.update({f"snapshot.{sid}.{k}": v for k, v in module_state(algorithm, sid).items()})
    model = network(
        cfg, {k[len("model.") :]: v for k, v in tensors.items() if k.startswith("model.")}
    )
    optim_tensors, optim_meta = optimizer_state(algorithm)
    tensors.update(optim_tensors)
    meta = ck.policy_meta(model, cfg.rules_obj, cfg.to_dict())
    meta.update(trainer=CHECKPOINT_KIND, snapshots=snaps, counters=counters, optimizer=optim_meta)
    return ck.save_checkpoint(path, tensors, meta)


def _league_callback(algorithm: Any) -> SelfPlayCallback:
    """The league's callback among ``algorithm``'s (RLlib keeps one, or a list)."""
    held = algorithm.callbacks
    league = [
        c for c in (held if isinstance(held, list) else [held]) if isinstance(c, SelfPlayCallback)
    ]
    if not league:
        raise ck.CheckpointError("the checkpoint holds the league's snapshots; this run has none")
    return league[0]


def restore_run_checkpoint(algorithm: Any, ckpt: ck.Checkpoint) -> dict[str, Any]:
    """Load ``main``, its optimizer state and the league of a checkpoint into a fresh
    ``algorithm``; return its counters."""
    set_module_state(algorithm, MAIN, ckpt.section("model"))
    for sid in ckpt.meta.get("snapshots", []):
        if sid not in algorithm.config.policies:
            league = [*snapshot_ids(list(algorithm.config.policies)), sid]
            _league_callback(algorithm).add_league_module(algorithm, sid, league)
        set_module_state(algorithm, sid, ckpt.section(f"snapshot.{sid}"))
    set_optimizer_state(algorithm, ckpt)
    return dict(ckpt.meta.get("counters", {}))
