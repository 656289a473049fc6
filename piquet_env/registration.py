"""The environment ids, registered with Gymnasium and PettingZoo by ``import piquet_env``.

Gymnasium documents registration on import for third-party packages (``gymnasium.make``'s
``"module:Env-v0"`` form imports a module for that; ``gymnasium.register_envs(piquet_env)`` keeps
linters from calling the import unused). Importing Gymnasium takes several times as long as the
engine itself, and the engine needs neither library, so :func:`install` registers at once with a
library that is already imported and, for one that is not, when its registration module is
imported later: a meta path finder waits for that one module name and, once the module has run,
registers the ids with it. Either import order gives the same registries.

- Gymnasium: :data:`GYMNASIUM_IDS` (:class:`piquet_env.adapters.gymnasium.PiquetGymEnv`; their
  vector entry point, what ``gymnasium.make_vec`` builds by default or with
  ``vectorization_mode="vector_entry_point"``, is the batched engine's
  :class:`piquet_env.vector.PiquetVectorEnv`).
- PettingZoo (1.27 and later, which have a registry): :data:`PETTINGZOO_IDS`.
- RLCard: :data:`RLCARD_IDS` (:class:`piquet_env.adapters.rlcard.PiquetRLCardEnv`), registered
  once ``rlcard.envs`` has run (RLCard imports its entry points when they are registered, so the
  adapter, and RLCard's ``Env`` it subclasses, are imported then).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

GYMNASIUM_IDS: dict[str, dict[str, Any]] = {"Piquet-v0": {}, "PiquetDeal-v0": {"mode": "deal"}}
"""Gymnasium ids and their default options (``gymnasium.make(id, **options)`` overrides them)."""
GYMNASIUM_ENTRY_POINT = "piquet_env.adapters.gymnasium:PiquetGymEnv"
GYMNASIUM_VECTOR_ENTRY_POINT = "piquet_env.vector.vector_env:PiquetVectorEnv"
PETTINGZOO_IDS = {"piquet-v0": "piquet_env.piquet_v0:env", "piquet-v1": "piquet_env.piquet_v1:env"}
"""PettingZoo AEC ids and their entry points (``pettingzoo.make("aec", id, **options)``)."""
RLCARD_IDS = {"piquet": "piquet_env.adapters.rlcard:PiquetRLCardEnv"}
"""RLCard ids and their entry points (``rlcard.make(id, config)``)."""
_GYMNASIUM_MODULE = "gymnasium.envs.registration"
_PETTINGZOO_MODULE = "pettingzoo.env_registry.registration"
_RLCARD_MODULE = "rlcard.envs"
_RLCARD_ADAPTER = "piquet_env.adapters.rlcard"


def register_gymnasium(module: ModuleType | None = None) -> None:
    """Register :data:`GYMNASIUM_IDS` with Gymnasium's registry (once; entry points are strings,
    so nothing of the adapter or the batched engine is imported until an environment is made)."""
    if module is None:
        import gymnasium.envs.registration as module
    for env_id, kwargs in GYMNASIUM_IDS.items():
        if env_id not in module.registry:
            module.register(
                id=env_id,
                entry_point=GYMNASIUM_ENTRY_POINT,
                vector_entry_point=GYMNASIUM_VECTOR_ENTRY_POINT,
                kwargs=dict(kwargs),
            )


def register_pettingzoo(module: ModuleType | None = None) -> None:
    """Register :data:`PETTINGZOO_IDS` with PettingZoo's AEC registry (once); nothing on a
    PettingZoo older than 1.27, which has no registry."""
    if module is None:
        try:
            import pettingzoo.env_registry.registration as module
        except ImportError:
            return
    for env_id, entry_point in PETTINGZOO_IDS.items():
        if env_id not in module.aec_registry:
            module.register("aec", env_id, entry_point=entry_point)


def register_rlcard(module: ModuleType | None = None) -> None:
    """Register :data:`RLCARD_IDS` with RLCard's registry (``module``: ``rlcard.envs``), once.

    RLCard imports an entry point when it is registered, so while the adapter itself is being
    imported (and its ``import rlcard`` is what ran ``rlcard.envs``) this waits: the adapter
    registers at its end."""
    adapter = sys.modules.get(_RLCARD_ADAPTER)
    if adapter is not None and not hasattr(adapter, "PiquetRLCardEnv"):
        return
    if module is None:
        import rlcard.envs as module
    for env_id, entry_point in RLCARD_IDS.items():
        if env_id not in module.registration.registry.env_specs:
            module.register(env_id=env_id, entry_point=entry_point)


_HOOKS: dict[str, Callable[[ModuleType], None]] = {}
"""Registration functions waiting for their library's registration module to be imported."""


class _AfterImport:
    """A meta path finder (``importlib.abc.MetaPathFinder``'s protocol; not subclassed, as that
    import costs more than this module) that finds nothing itself: for a module name in
    :data:`_HOOKS` it asks the other finders for the spec and makes that spec's loader call the
    hook once the module has run."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """The real spec of a hooked module, its loader set to register afterwards; else None."""
        hook = _HOOKS.pop(fullname, None)
        if hook is None:
            return None
        if not _HOOKS and self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_then_register(module: ModuleType) -> None:
            exec_module(module)
            hook(module)

        loader.exec_module = exec_then_register  # this spec's own loader object only
        return spec


_FINDER = _AfterImport()


def install() -> None:
    """Register with Gymnasium, PettingZoo and RLCard now if imported, else as soon as they are."""
    hooks = (
        (_GYMNASIUM_MODULE, register_gymnasium),
        (_PETTINGZOO_MODULE, register_pettingzoo),
        (_RLCARD_MODULE, register_rlcard),
    )
    for name, hook in hooks:
        module = sys.modules.get(name)
        if module is not None:
            hook(module)
        else:
            _HOOKS[name] = hook
    if _HOOKS and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
