"""``piquet train --backend rllib``: PPO self-play on Ray RLlib, locally or on a Ray cluster.

    piquet train --backend rllib --num-env-runners 2 --iterations 50 --out runs/rllib
    piquet train --backend rllib --ray auto --num-env-runners 16   # on an existing cluster
    piquet train --backend rllib --set train_batch_size=8000 --set rules=classic+normand
    piquet train --backend rllib --resume runs/rllib --iterations 100  # continue a run

The same flags work as ``python -m piquet_cli.train_rllib ...`` (and, deprecated, as
``python -m piquet_training.rllib.cli``). ``--set KEY=VALUE`` (and ``--config FILE.toml``) set any
field of :class:`piquet_training.rllib.algo.RLlibConfig`. The run
writes ``OUT/policy.safetensors``, which ``piquet eval``, ``ladder`` and ``play`` take as an agent
spec, and ``OUT/checkpoints/latest.safetensors``, which ``--resume`` continues.

``piquet train``'s parser registers these flags with :func:`add_rllib_arguments` and hands
``--backend rllib`` runs to :func:`run_rllib`; both backends' settings are read by one
:func:`piquet_cli.common.build_settings`.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

from piquet_cli.common import CLIError, add_settings_arguments, build_settings, cli_error
from piquet_training.rllib.algo import RLlibConfig
from piquet_training.settings.backends import RLLIB
from piquet_training.settings.schema import ConfigError, to_toml

_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "--num-env-runners": (
        "num_env_runners",
        {
            "type": int,
            "metavar": "N",
            "help": "env-runner actors sampling in parallel (rllib backend; default 1)",
        },
    ),
    "--num-envs-per-env-runner": (
        "num_envs_per_env_runner",
        {
            "type": int,
            "metavar": "M",
            "help": "games stepped together by each env runner (default 256)",
        },
    ),
    "--ray": (
        "address",
        {
            "metavar": "ADDRESS",
            "help": "where Ray runs: local (default: a Ray instance started here), auto or "
            "ray://HOST:PORT (a running cluster), as piquet eval's --ray",
        },
    ),
    "--address": (
        "address",
        {"metavar": "ADDRESS", "help": "deprecated: --ray ADDRESS"},
    ),
    "--num-cpus": (
        "num_cpus",
        {"type": int, "metavar": "N", "help": "CPUs of the local Ray instance (default: all)"},
    ),
    "--iterations": (
        "updates",
        {
            "type": int,
            "metavar": "N",
            "help": "RLlib training iterations (the setting updates; default "
            f"{RLlibConfig.DEFAULTS['updates']})",
        },
    ),
    "--out": ("out_dir", {"metavar": "DIR", "help": "output directory (default runs/rllib)"}),
    "--eval-games": (
        "final_eval_deals",
        {
            "type": int,
            "metavar": "N",
            "help": "the final evaluation's duplicate pairs against each of eval_opponents, as "
            "piquet train's (the setting final_eval_deals; default 300; 0: none)",
        },
    ),
}


def add_rllib_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the RLlib backend's flags to ``parser`` (flags it already has are left alone)."""
    group = parser.add_argument_group("rllib backend (--backend rllib)")
    for flag, (dest, kwargs) in _FLAGS.items():
        if flag not in parser._option_string_actions:
            group.add_argument(flag, dest=_dest(flag, dest), default=None, **kwargs)


def _dest(flag: str, setting: str) -> str:
    """The namespace attribute of an RLlib flag (``--address`` its own, to say it is
    deprecated)."""
    return "rllib_address_flag" if flag == "--address" else f"rllib_{setting.lstrip('_')}"


def rllib_flags_given(args: argparse.Namespace) -> list[str]:
    """The RLlib-only flags set in ``args`` (for a trainer that ignores them to reject them)."""
    return [
        flag
        for flag, (dest, _) in _FLAGS.items()
        if getattr(args, _dest(flag, dest), None) is not None
    ]


def build_config(args: argparse.Namespace) -> RLlibConfig:
    """The run's settings (:func:`piquet_cli.common.build_settings`), the RLlib flags last
    (``--ray local`` is no address: a Ray instance started here; ``--address`` is ``--ray``'s
    deprecated name, said on stderr)."""
    old = getattr(args, "rllib_address_flag", None)
    if old is not None:
        if getattr(args, "rllib_address", None) is not None:
            raise CLIError("give --ray ADDRESS alone (--address is its deprecated name)")
        print("piquet train: --address is deprecated: use --ray ADDRESS", file=sys.stderr)
        args.rllib_address = old
    flags = {}
    for flag, (dest, _) in _FLAGS.items():
        value = getattr(args, _dest(flag, dest), None)
        if value is not None and flag != "--address":
            flags[dest] = None if (flag == "--ray" and value == "local") else value
    return build_settings(RLlibConfig, args, RLLIB, flags=flags)


def run_rllib(args: argparse.Namespace) -> int:
    """Run ``piquet train --backend rllib`` with parsed ``args``; return the exit status. A user
    error (a setting, a checkpoint, a run folder, a cluster that cannot be joined) is a
    :class:`~piquet_cli.common.CLIError`."""
    from piquet_agents.checkpoint import CheckpointError

    try:
        cfg = build_config(args)
    except (ConfigError, CheckpointError) as exc:
        raise cli_error(exc) from None
    if getattr(args, "show_config", False):
        print(to_toml(cfg), end="")
        return 0
    if importlib.util.find_spec("ray") is None:
        raise CLIError("the rllib backend needs Ray RLlib: pip install -e '.[rllib]'")
    from piquet_training.rllib.run import train

    try:
        result = train(
            cfg,
            resume=getattr(args, "resume", None),
            overwrite=bool(getattr(args, "overwrite", False)),
        )
    except ConnectionError as exc:
        raise CLIError(
            f"cannot join the Ray cluster at {cfg.address!r} ({exc}). Is it up "
            f"(ray status)? A cluster with token authentication also needs RAY_AUTH_MODE=token "
            f"and its token (RAY_AUTH_TOKEN, or ~/.ray/auth_token) here."
        ) from None
    print(
        f"{result.iterations} iterations, {result.env_steps:,} env steps; throughput with "
        f"{cfg.num_env_runners} env runner(s) x {cfg.num_envs_per_env_runner} env(s): "
        f"{result.steps_per_s:,.0f} env steps/s ({result.steady_steps_per_s:,.0f} after the "
        f"first iteration); "
        + (
            "both seats learning, on the batched engine"
            if cfg.vector_env and cfg.self_play == "both"
            else "opponent: the learner, inside the batched env"
            if cfg.vector_env
            else f"league: {len(result.snapshots)} snapshot(s)"
        )
        + f"; policy: {result.policy_path}"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The standalone parser of ``python -m piquet_cli.train_rllib``."""
    p = argparse.ArgumentParser(
        prog="python -m piquet_cli.train_rllib",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_settings_arguments(
        p,
        config_metavar="FILE.toml",
        config_help="TOML file of RLlibConfig fields",
        example="learning_rate=1e-4",
    )
    add_rllib_arguments(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m piquet_cli.train_rllib``."""
    from piquet_cli.common import run_command

    return run_command("train", run_rllib, build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
