"""``piquet train``: self-play training of a policy, from the embedded default or a config.

    piquet train                                   # the default run (15-25 min on 2 idle cores)
    piquet train --config my.toml --set seed=3 --set updates=400
    piquet train --config wide                     # a shipped recipe (--list-configs lists them)
    piquet train --rules classic --variant normand --seed 3 --set out_dir=runs/classic
    piquet train --resume runs/piquet              # continue a stopped run
    piquet train --overwrite                       # start again in a folder holding a run
    piquet train --show-config                     # print the effective config as TOML
    piquet train --device cuda                     # the networks on a GPU (games stay on CPU)

``--backend`` selects the trainer from :data:`BACKENDS`: ``torch`` (the default, the built-in PPO
of :mod:`piquet_training.ppo.trainer`) or ``rllib`` (Ray RLlib, :mod:`piquet_cli.train_rllib`),
each adding its own flags. Both read settings the same way
(:mod:`piquet_training.settings.train`: TOML, ``--set``, ``--rules``/``--variant``/``--seed``, the
same names for the same hyperparameters, every value checked before any work starts) and print
them the same way with ``--show-config``.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable

from piquet_cli.common import (
    CLIError,
    add_rules_arguments,
    add_settings_arguments,
    build_settings,
    check_output_path,
    cli_error,
)
from piquet_cli.train_rllib import add_rllib_arguments, run_rllib
from piquet_training.settings.backends import TORCH
from piquet_training.settings.recipes import recipe_names
from piquet_training.settings.schema import (
    ConfigError,
    to_toml,
)
from piquet_training.settings.train import TrainConfig


def build_config(args: argparse.Namespace) -> TrainConfig:
    """The built-in trainer's settings (:func:`piquet_cli.common.build_settings`), on
    ``--device`` if given."""
    cfg = build_settings(TrainConfig, args, TORCH)
    if getattr(args, "device", None):
        cfg = dataclasses.replace(cfg, device=args.device)
    check_output_path(cfg.out_dir, "out_dir", directory=True)
    return cfg


def _shared_settings(args: argparse.Namespace) -> list[str]:
    """``--rules``, ``--variant`` and ``--seed`` as the ``KEY=VALUE`` settings they stand for
    (applied before ``--set``, which can still override them)."""
    out = []
    if args.rules is not None or args.variant:
        if args.resume:
            raise CLIError("--rules and --variant cannot change the rules of a resumed run")
        out.append("rules=" + "+".join([args.rules or "standard", *args.variant]))
    if args.seed is not None:
        if args.resume:
            raise CLIError("--seed cannot change the seed of a resumed run")
        out.append(f"seed={args.seed}")
    return out


def _where(args: argparse.Namespace) -> None:
    """``--workers`` and ``--ray``, where the run's games are collected, as each backend names
    them: the built-in trainer's settings ``workers`` and ``ray`` (given before ``--set``, which
    can still override them), RLlib's env runners and address."""
    if args.backend == "torch":
        where = [f"workers={args.workers}"] if args.workers is not None else []
        where += [f"ray={args.ray}"] if args.ray is not None else []
        args.set = [*where, *args.set]
        return
    if args.workers is not None and getattr(args, "rllib_num_env_runners", None) is None:
        args.rllib_num_env_runners = args.workers
    args.rllib_address = args.ray


def add_torch_arguments(parser: argparse.ArgumentParser) -> None:
    """The built-in trainer's own flags (``--device``)."""
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda", "auto"),
        default=None,
        help="where the networks train (the setting device; default cpu)",
    )


def run_torch(args: argparse.Namespace) -> int:
    """Run ``piquet train`` on the built-in trainer with parsed ``args``; return the exit
    status. The folder is the trainer's to check (a run there already: a user error)."""
    try:
        cfg = build_config(args)
    except ConfigError as exc:
        raise cli_error(exc) from None
    if args.show_config:
        print(to_toml(cfg), end="")
        return 0
    from piquet_training.ppo.compute import DeviceError
    from piquet_training.ppo.trainer import train

    try:
        result = train(cfg, resume=args.resume, overwrite=args.overwrite)
    except DeviceError as exc:  # raised by setup before anything is written
        raise cli_error(exc) from None
    own = f", {result.memory.text(peak=False)} at the end" if result.memory else ""
    worker = result.worker_memory
    print(
        f"memory: peak resident set {result.peak_rss_mib:,.0f} MiB{own}"
        + (f"; the largest evaluation worker: {worker.text()}" if worker else "")
        + f"; throughput: {result.steps_per_s:,.0f} env steps/s; outputs in {result.out_dir}"
    )
    return 0


Backend = tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
BACKENDS: dict[str, Backend] = {
    "torch": (add_torch_arguments, run_torch),
    "rllib": (add_rllib_arguments, run_rllib),
}
"""``piquet train --backend``'s trainers: each one's flags (added to the parser) and its run."""


def _run(args: argparse.Namespace) -> int:
    if args.list_configs:
        from piquet_training.settings.recipes import listing

        print(listing() + "\n\nuse one with: piquet train --config NAME")
        return 0
    args.set = [*_shared_settings(args), *args.set]  # the same flags, the same settings
    _where(args)
    for backend in BACKENDS:
        stray = [
            flag
            for dest, (owner, flag) in args.backend_flags.items()
            if owner == backend != args.backend and getattr(args, dest, None) is not None
        ]
        if stray:
            raise CLIError(f"{', '.join(stray)} only apply to --backend {backend}")
    return BACKENDS[args.backend][1](args)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``piquet train``."""
    p = sub.add_parser(
        "train",
        help="train a policy by self-play (PPO) and evaluate it",
        description=__doc__,
    )
    add_settings_arguments(
        p,
        config_metavar="FILE.toml|NAME",
        config_help="TOML file of config fields, or the name of a shipped recipe "
        f"({', '.join(recipe_names())}: --list-configs)",
        example="updates=10",
    )
    p.add_argument("--list-configs", action="store_true", help="list the shipped recipes and exit")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="start afresh in out_dir even if it holds a run (its files are replaced)",
    )
    add_rules_arguments(p, default=None)
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="the run's seed (the setting seed; default: the config's, 0 for the default run)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="collectors playing each update's games at once: N local processes, or N Ray "
        "tasks with --ray (the setting workers; default 1, this process); the rllib backend's "
        "env runners",
    )
    p.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="collect on Ray: local (a Ray instance started here), auto or ray://HOST:PORT (a "
        "running cluster); the learner stays here and the run is the same, bit for bit",
    )
    p.add_argument(
        "--backend",
        choices=tuple(BACKENDS),
        default="torch",
        help="training backend: torch (built in) or rllib (needs Ray RLlib)",
    )
    owners: dict[str, tuple[str, str]] = {}
    for name, (add_arguments, _) in BACKENDS.items():
        before = set(p._option_string_actions.values())
        add_arguments(p)
        for action in set(p._option_string_actions.values()) - before:
            owners[action.dest] = (name, action.option_strings[0])
    p.set_defaults(func=_run, backend_flags=owners)
