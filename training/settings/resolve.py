"""Where a run's settings come from, in one order for both training backends and for a library
caller: the resumed run's own (its checkpoint's config, ``out_dir`` its folder) or the
defaults, then a recipe (``--config``: a file or a shipped recipe's name), then each ``--set
KEY=VALUE``, then a backend's own options; every value checked (:mod:`.schema`).

>>> from piquet_training.settings.train import TrainConfig
>>> cfg = resolve_settings(TrainConfig, "torch", config="mini", overrides=["seed=7"])
>>> cfg.rules, cfg.seed
('mini', 7)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from piquet_training.settings.schema import Settings, apply_overrides, load_toml, replace_checked

S = TypeVar("S", bound=Settings)


def resolve_settings(
    cls: type[S],
    backend: str,
    *,
    resume: str | Path | None = None,
    config: str | Path | None = None,
    overrides: Sequence[str] = (),
    flags: Mapping[str, Any] | None = None,
) -> S:
    """A run's settings of class ``cls`` (either backend's): the checkpoint's of the run that
    ``resume`` names (a run folder or a checkpoint file, written by ``backend``: a run of the
    other backend is refused) or the defaults, then ``config``, then ``overrides``, then
    ``flags``; validated."""
    if resume:
        from piquet_agents.checkpoint import LATEST_FILE, read_checkpoint  # torch: only here
        from piquet_training.settings.backends import check_resume

        path = Path(resume)
        ckpt = read_checkpoint(path / LATEST_FILE if path.is_dir() else path)
        check_resume(ckpt, backend, resume)  # not a run of the other backend
        saved = ckpt.meta.get("config", {})
        cfg = cls.from_dict(saved, source=f"{resume} (its config)")
        run_dir = path if path.is_dir() else path.parent.parent
        cfg = dataclasses.replace(cfg, out_dir=str(run_dir))
    else:
        cfg = cls()
    if config:
        from piquet_training.settings.recipes import resolve_config

        cfg = load_toml(resolve_config(str(config)), base=cfg)
    cfg = apply_overrides(cfg, overrides)
    if flags:
        cfg = replace_checked(cfg, dict(flags), source="flags")
    return cfg.validate()
