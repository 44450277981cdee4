"""ROCm: the device's gfx arch, read once when this module is imported, and the flags derived from it.

amdsmi is asked first because it answers without initialising HIP (a worker may still change
CUDA_VISIBLE_DEVICES after importing this); torch's device properties are the fallback.
"""
import os
from functools import cache, wraps

import torch

import vllm.envs as envs  # noqa: F401  (switches other ROCm helpers read)
from vllm.logger import init_logger

from .interface import DeviceCapability, Platform, PlatformEnum

logger = init_logger(__name__)

try:
    from amdsmi import (
        AmdSmiException,  # noqa: F401  (what amdsmi raises; other helpers catch it)
        amdsmi_get_gpu_asic_info,
        amdsmi_get_processor_handles,
        amdsmi_init,
        amdsmi_shut_down,
    )
except ImportError as exc:
    logger.warning("amdsmi is not importable (%r); the GPU arch comes from torch", exc)


def _in_amdsmi_session(fn):
    @wraps(fn)
    def wrapper(*args, **kwargs):
        amdsmi_init()
        try:
            return fn(*args, **kwargs)
        finally:
            amdsmi_shut_down()

    return wrapper


@_in_amdsmi_session
def _arch_from_amdsmi() -> str:
    handles = amdsmi_get_processor_handles()
    if handles:
        target = amdsmi_get_gpu_asic_info(handles[0]).get("target_graphics_version", "")
        if target:
            return target
    raise RuntimeError("amdsmi reported no gfx target")


def _resolve_gcn_arch() -> str:
    try:
        return _arch_from_amdsmi()
    except Exception as exc:
        logger.debug("amdsmi could not name the GPU arch: %s", exc)
    # Initialises HIP: only when amdsmi cannot answer.
    return torch.cuda.get_device_properties("cuda").gcnArchName


# Resolved once; plain bools from here on.
_GCN_ARCH = _resolve_gcn_arch()

_ON_GFX9 = any(t in _GCN_ARCH for t in ("gfx90a", "gfx942", "gfx950"))
_ON_GFX942 = "gfx942" in _GCN_ARCH
_ON_GFX950 = "gfx950" in _GCN_ARCH
_ON_MI3XX = _ON_GFX942 or _ON_GFX950
_ON_GFX1X = any(t in _GCN_ARCH for t in ("gfx11", "gfx12"))
_ON_RDNA4 = any(t in _GCN_ARCH for t in ("gfx1200", "gfx1201"))


def on_gfx9() -> bool:
    return _ON_GFX9


def on_gfx942() -> bool:
    return _ON_GFX942


def on_gfx950() -> bool:
    return _ON_GFX950


def on_mi3xx() -> bool:
    return _ON_MI3XX


def on_gfx1x() -> bool:
    return _ON_GFX1X


def on_rdna4() -> bool:
    return _ON_RDNA4


@cache
def get_cdna_version() -> int:
    """The CDNA generation of the device, 0 for anything else."""
    if _ON_GFX950:
        return 4
    if "gfx94" in _GCN_ARCH:
        return 3
    if "gfx90a" in _GCN_ARCH:
        return 2
    if "gfx1250" in _GCN_ARCH:
        # MI450: CDNA-class matrix units in a gfx12 part, numbered after gfx950.
        return 5
    return 0


def _capability(gcn_arch: str) -> tuple[int, int] | None:
    target = gcn_arch.split(":")[0]
    if not target.startswith("gfx"):
        return None
    digits = target[3:]
    if len(digits) == 3:
        return int(digits[0]), int(digits[1], 16)
    if len(digits) == 4:
        return int(digits[:2]), int(digits[2], 16)
    raise ValueError(f"cannot derive a capability from GPU arch {gcn_arch!r}")


class RocmPlatform(Platform):
    _enum = PlatformEnum.ROCM
    device_name: str = "rocm"
    device_type: str = "cuda"
    dispatch_key: str = "CUDA"
    device_control_env_var: str = "CUDA_VISIBLE_DEVICES"

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        cap = _capability(_GCN_ARCH)
        if cap is None:
            major, minor = torch.cuda.get_device_capability(device_id)
            return DeviceCapability(major, minor)
        return DeviceCapability(*cap)

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return os.environ.get("PMQA_STANDIN_GPU_NAME", "AMD Instinct")

    @classmethod
    def supports_fp8(cls) -> bool:
        return any(t in _GCN_ARCH for t in ("gfx94", "gfx95", "gfx12"))

    @classmethod
    def is_fp8_fnuz(cls) -> bool:
        # MI300-series (gfx94x) uses the FNUZ encoding; everything newer is OCP.
        return "gfx94" in _GCN_ARCH

    @classmethod
    def fp8_dtype(cls) -> torch.dtype:
        return torch.float8_e4m3fnuz if cls.is_fp8_fnuz() else torch.float8_e4m3fn
