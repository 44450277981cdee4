"""The GPU an engine believes it runs on, simulated at the lowest layers it reads.

AMD: amdsmi (what vLLM's platform file asks first, without initialising HIP) reports the target
("gfx942": its asic info carries no feature flags) with one processor handle; torch's device
properties report the full gcnArchName ("gfx942:sramecc+:xnack-"), major/minor as HIP derives them,
and torch.version.hip is set. NVIDIA: torch's device capability (major, minor) and device name.
The same identity answers the probe's torch stand-in and, patched in, a real torch.
"""
from __future__ import annotations

import re
import types
from dataclasses import dataclass, field
from typing import Tuple

from . import stubs


@dataclass
class Identity:
    arch: str                 # as the matrix names it: "gfx942:sramecc+:xnack-", "sm_90"
    vendor: str               # "amd" or "nvidia"
    target: str               # "gfx942", "sm_90"
    capability: Tuple[int, int]
    name: str
    compute_units: int = 304
    flags: Tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        if self.vendor == "amd":
            return (f"amdsmi target_graphics_version '{self.target}', torch gcnArchName '{self.arch}', "
                    f"capability {self.capability[0]}.{self.capability[1]}")
        return f"torch device capability {self.capability[0]}.{self.capability[1]} ({self.name})"


def hip_capability(target: str) -> Tuple[int, int]:
    """major/minor the way HIP derives them from the target: gfx942 -> (9, 4), gfx90a -> (9, 0),
    gfx1201 -> (12, 0), gfx1250 -> (12, 5)."""
    m = re.fullmatch(r"gfx([0-9]+)([0-9a-f]?)", target)
    if not m:
        raise ValueError(f"not a gfx target: {target!r}")
    digits = m.group(1) + m.group(2)
    if len(digits) == 3:
        return int(digits[0]), int(digits[1], 16)
    if len(digits) == 4:
        return int(digits[:2]), int(digits[2], 16)
    raise ValueError(f"gfx target with an unexpected number of digits: {target!r}")


def identity_for(arch: str, product: str = "") -> Identity:
    target, _, rest = arch.partition(":")
    flags = tuple(rest.split(":")) if rest else ()
    if target.startswith("gfx"):
        return Identity(arch, "amd", target, hip_capability(target), product or f"AMD GPU ({target})",
                        304 if target.startswith("gfx94") else 256, flags)
    m = re.fullmatch(r"sm_([0-9]+)([0-9])", target)
    if m:
        return Identity(arch, "nvidia", target, (int(m.group(1)), int(m.group(2))),
                        product or f"NVIDIA GPU ({target})", 132, flags)
    raise ValueError(f"cannot simulate a GPU for arch {arch!r}")


class AmdSmiException(Exception):
    pass


class AmdSmiMemoryType:
    """The memory kinds amdsmi_get_gpu_memory_total is asked about (values as amdsmi numbers them)."""
    VRAM = 0
    VIS_VRAM = 1
    GTT = 2


# What the simulated GPU reports as its memory: the platform file asks for it when sizing, never to
# decide a kernel path, so one plausible figure serves every arch.
_VRAM_BYTES = 192 * (1 << 30)


def amdsmi_module(identity: Identity) -> types.ModuleType:
    """amdsmi with one processor whose asic info names the target."""
    handle = object()

    def handles():
        return [handle]

    def asic_info(h):
        return {"market_name": identity.name, "vendor_id": "0x1002", "vendor_name": "Advanced Micro Devices Inc.",
                "device_id": "0x0000", "rev_id": "0x00", "asic_serial": "0x0",
                "target_graphics_version": identity.target, "num_compute_units": identity.compute_units}

    attributes = {
        "AmdSmiException": AmdSmiException,
        "amdsmi_init": lambda *a, **k: None,
        "amdsmi_shut_down": lambda *a, **k: None,
        "amdsmi_get_processor_handles": handles,
        "amdsmi_get_gpu_asic_info": asic_info,
        "amdsmi_get_gpu_device_uuid": lambda h: "00000000-0000-0000-0000-000000000000",
        "amdsmi_get_gpu_board_info": lambda h: {"product_name": identity.name},
        "amdsmi_topo_get_link_type": lambda a, b: {"hops": 1, "type": 2},
        # vLLM's platform file imports these with the rest in one `from amdsmi import (...)`; provided
        # rather than stubbed so that the stub report keeps to names the engine really lacks.
        "AmdSmiMemoryType": AmdSmiMemoryType,
        "amdsmi_get_gpu_memory_total": lambda h, kind=AmdSmiMemoryType.VRAM: _VRAM_BYTES,
        "amdsmi_topo_get_numa_node_number": lambda h: 0,
    }
    return stubs.provided_module("amdsmi", attributes)


def patch_real_torch(torch, identity: Identity) -> None:
    """Makes an installed torch on a machine without that GPU answer as the simulated one."""
    from .fake_torch import _Props

    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.set_device = lambda d: None
    cuda.synchronize = lambda d=None: None
    cuda._is_compiled = lambda: True
    cuda.get_device_properties = lambda d=None: _Props(identity)
    cuda.get_device_capability = lambda d=None: tuple(identity.capability)
    cuda.get_device_name = lambda d=None: identity.name
    torch.version.hip = "6.4.0" if identity.vendor == "amd" else None
    if identity.vendor == "nvidia":
        torch.version.cuda = torch.version.cuda or "12.8"
    _keep_buffers_on_the_host(torch)


def _keep_buffers_on_the_host(torch) -> None:
    """Entries that allocate with device="cuda" get host tensors: the machine has no GPU."""
    def host(kwargs):
        dev = kwargs.get("device")
        if dev is not None and str(dev).startswith("cuda"):
            kwargs["device"] = "cpu"
        return kwargs

    for name in ("empty", "zeros", "ones", "full", "arange", "empty_like", "zeros_like", "full_like", "tensor"):
        original = getattr(torch, name, None)
        if original is None or getattr(original, "_pmqa_host", False):
            continue

        def wrapper(*args, _original=original, **kwargs):
            return _original(*args, **host(kwargs))

        wrapper._pmqa_host = True
        setattr(torch, name, wrapper)
