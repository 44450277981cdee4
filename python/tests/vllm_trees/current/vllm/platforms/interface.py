"""What every platform answers; ROCm's answers are in rocm.py."""
import enum
from typing import NamedTuple

import torch

from vllm.logger import init_logger

logger = init_logger(__name__)


class PlatformEnum(enum.Enum):
    CUDA = enum.auto()
    ROCM = enum.auto()
    CPU = enum.auto()
    UNSPECIFIED = enum.auto()


class DeviceCapability(NamedTuple):
    major: int
    minor: int

    def to_int(self) -> int:
        return self.major * 10 + self.minor


class Platform:
    _enum: PlatformEnum
    device_name: str
    device_type: str

    def is_rocm(self) -> bool:
        return self._enum == PlatformEnum.ROCM

    def is_cuda(self) -> bool:
        return self._enum == PlatformEnum.CUDA

    def is_cuda_alike(self) -> bool:
        return self._enum in (PlatformEnum.CUDA, PlatformEnum.ROCM)

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        return None

    @classmethod
    def has_device_capability(cls, capability: int, device_id: int = 0) -> bool:
        current = cls.get_device_capability(device_id)
        return current is not None and current.to_int() >= capability

    @classmethod
    def is_fp8_fnuz(cls) -> bool:
        return False

    @classmethod
    def fp8_dtype(cls) -> torch.dtype:
        return torch.float8_e4m3fn


class UnspecifiedPlatform(Platform):
    _enum = PlatformEnum.UNSPECIFIED
    device_type = ""
