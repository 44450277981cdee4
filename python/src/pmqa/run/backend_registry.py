"""The backends --backend names, and make_backend, which builds the one asked for.

The backends themselves (pmqa.run.backend, pmqa.run.torch_backend) do not know this list: it imports
them, never the other way round. torch is imported only when the torch backend is made.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

from .backend import Backend, BackendError, NumpyBackend


def _numpy(device: Optional[str], num_sms: Optional[int]) -> Backend:
    fake = device[len("fake:"):] if device and device.startswith("fake:") else None
    if device not in (None, "cpu") and not (fake and fake.isascii() and fake.isdigit()):
        raise BackendError(f"--device {device}: the numpy backend runs on the host only (use --backend torch)")
    return NumpyBackend(num_sms if num_sms is not None else 8, fake_device=fake)


def _torch(device: Optional[str], num_sms: Optional[int]) -> Backend:
    from .torch_backend import TorchBackend  # imports torch
    return TorchBackend(device or "cuda", num_sms)


#: --backend's choices, in the order its help lists them (the first is the default).
BACKENDS: Dict[str, Callable[[Optional[str], Optional[int]], Backend]] = {"torch": _torch, "numpy": _numpy}


def make_backend(name: str, device: Optional[str], num_sms: Optional[int]) -> Backend:
    """The backend --backend/--device ask for."""
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}")
    return BACKENDS[name](device, num_sms)
