"""ROCm: the device's gfx arch, read once when this module is imported, and the flags derived from it.

amdsmi is asked first because it answers without initialising HIP (a worker may still change
CUDA_VISIBLE_DEVICES after importing this); torch's device properties are the fallback.
"""
import os
from functools import wraps

import torch

import vllm.envs as envs  # noqa: F401  (switches other ROCm helpers read)
from vllm.logger import init_logger

from .interface import DeviceCapability, Platform, PlatformEnum

logger = init_logger(__name__)

try:
    # One import for every amdsmi name the platform uses, as vLLM's file does: if amdsmi lacks any of
    # them, none is bound and the arch comes from torch.
    from amdsmi import (
        AmdSmiException,
        AmdSmiMemoryType,
        amdsmi_get_gpu_asic_info,
        amdsmi_get_gpu_memory_total,
        amdsmi_get_processor_handles,
        amdsmi_init,
        amdsmi_shut_down,
        amdsmi_topo_get_numa_node_number,
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


@_in_amdsmi_session
def _total_memory_from_amdsmi(device_id: int) -> int:
    return amdsmi_get_gpu_memory_total(amdsmi_get_processor_handles()[device_id], AmdSmiMemoryType.VRAM)


@_in_amdsmi_session
def _numa_node_from_amdsmi(device_id: int) -> int:
    try:
        return amdsmi_topo_get_numa_node_number(amdsmi_get_processor_handles()[device_id])
    except AmdSmiException as exc:
        logger.warning("no NUMA node for GPU %d: %s", device_id, exc)
        return -1


def _resolve_gcn_arch() -> str:
    try:
        return _arch_from_amdsmi()
    except Exception as exc:
        logger.debug("amdsmi could not name the GPU arch: %s", exc)
    # Initialises HIP: only when amdsmi cannot answer.
    return torch.cuda.get_device_properties("cuda").gcnArchName


# Resolved once; plain bools from here on.
_GCN_ARCH = _resolve_gcn_arch()

# One flag per arch vLLM names, each a substring test on the arch string, so that feature flags
# ("gfx942:sramecc+:xnack-") never change them.
_ON_GFX90A = "gfx90a" in _GCN_ARCH
_ON_GFX942 = "gfx942" in _GCN_ARCH
_ON_GFX950 = "gfx950" in _GCN_ARCH
_ON_GFX1250 = "gfx1250" in _GCN_ARCH
_ON_GFX9 = _ON_GFX90A or _ON_GFX942 or _ON_GFX950
_ON_MI3XX = _ON_GFX942 or _ON_GFX950
_ON_GFX1X = any(t in _GCN_ARCH for t in ("gfx11", "gfx12"))
_ON_RDNA4 = any(t in _GCN_ARCH for t in ("gfx1200", "gfx1201"))
# gfx1250 is a gfx12 part with CDNA-class matrix units: CDNA, not RDNA.
_ON_CDNA = "gfx9" in _GCN_ARCH or _ON_GFX1250
_ON_RDNA = _ON_GFX1X and not _ON_CDNA


def on_gfx90a() -> bool:
    return _ON_GFX90A


def on_gfx942() -> bool:
    return _ON_GFX942


def on_gfx950() -> bool:
    return _ON_GFX950


def on_gfx1250() -> bool:
    return _ON_GFX1250


def on_gfx9() -> bool:
    return _ON_GFX9


def on_mi3xx() -> bool:
    return _ON_MI3XX


def on_gfx1x() -> bool:
    return _ON_GFX1X and not _ON_CDNA


def on_rdna4() -> bool:
    return _ON_RDNA4


def on_cdna() -> bool:
    return _ON_CDNA


def on_rdna() -> bool:
    return _ON_RDNA


def get_cdna_version() -> int:
    """The CDNA generation, from the arches vLLM names one by one. Anything unnamed is 0, the
    pre-production MI300 parts gfx940/gfx941 included, so AITER counts as unsupported there."""
    if on_gfx90a():
        return 2
    if on_gfx942():
        return 3
    if on_gfx950():
        return 4
    if on_gfx1250():
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
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return _total_memory_from_amdsmi(device_id)

    @classmethod
    def numa_node_of(cls, device_id: int = 0) -> int:
        return _numa_node_from_amdsmi(device_id)

    @classmethod
    def supports_fp8(cls) -> bool:
        return on_cdna() or on_rdna4()

    @classmethod
    def is_fp8_fnuz(cls) -> bool:
        # MI300-series (gfx94x) uses the FNUZ encoding; everything newer is OCP.
        return "gfx94" in _GCN_ARCH

    @classmethod
    def fp8_dtype(cls) -> torch.dtype:
        return torch.float8_e4m3fnuz if cls.is_fp8_fnuz() else torch.float8_e4m3fn
