"""Where and in what precision the networks compute: the ``device`` and ``precision`` settings.

``precision="bf16"`` runs the batched collector's forward passes (acting and the critic's value
pass) and the PPO update's under ``torch.autocast`` in bfloat16: the weights, the optimizer and
the gradients they produce stay in float32, only the matrix products use bfloat16. On a CPU with
AVX512-BF16 (or AMX) this is the largest single speed-up of training (docs/results/training.md);
the log-probabilities stay far inside PPO's clip of 0.2 of float32's. The collector
records the log-probabilities of the policy that acted, in the precision it acted in;
evaluation and play (:class:`~piquet_agents.policy.PolicyAgent`) use float32.

``precision="auto"`` (the default) picks bfloat16 where the device computes it natively (such a
CPU, or a CUDA GPU that supports it) and float32 elsewhere, where emulated bfloat16 would be
slower. The resolved precision is printed in the run's header and its summary; a run (and its
resume) is reproducible bit for bit on the same machine and precision.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager

import torch

__all__ = ["PRECISIONS", "autocast", "bf16_is_native", "resolve_device", "resolve_precision"]

PRECISIONS = ("auto", "fp32", "bf16")
"""Values of the ``precision`` setting."""


class DeviceError(ValueError):
    """A ``device`` setting this machine cannot serve (the message names it)."""


def resolve_device(name: str) -> torch.device:
    """The torch device of setting ``device`` (``"auto"``: CUDA when available, else CPU); a
    device this machine lacks is a :class:`DeviceError` naming it."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise DeviceError(f"device {name!r}: torch finds no CUDA device on this machine")
    return device


def bf16_is_native(device: torch.device) -> bool:
    """Whether ``device`` multiplies bfloat16 matrices in hardware (AVX512-BF16 or AMX on a CPU,
    ``torch.cuda.is_bf16_supported`` on a GPU)."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type != "cpu":
        return False
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def resolve_precision(name: str, device: torch.device) -> str:
    """``"fp32"`` or ``"bf16"`` for setting ``precision`` on ``device`` (``"auto"``: bf16 where it
    is native, see :func:`bf16_is_native`)."""
    if name not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {name!r}")
    if name == "auto":
        return "bf16" if bf16_is_native(device) else "fp32"
    return name


def autocast(device: torch.device, precision: str) -> AbstractContextManager[object]:
    """The context to run forward passes in: ``torch.autocast`` to bfloat16 for ``"bf16"``,
    nothing for ``"fp32"``. Enter it around a forward pass and its loss only (never around
    ``backward`` or the optimizer step, whose in-place weight updates autocast's cast cache
    would not see).

    >>> with autocast(torch.device("cpu"), "bf16"):
    ...     (torch.ones(2, 3) @ torch.ones(3, 4)).dtype
    torch.bfloat16
    """
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    if precision == "fp32":
        return contextlib.nullcontext()
    raise ValueError(f"precision must be 'fp32' or 'bf16' once resolved, got {precision!r}")
