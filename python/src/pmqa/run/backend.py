"""Tensor backends: where the runner puts a case's buffers before it calls an op.

A convention module (pmqa.run.conventions) builds an op's arguments only through a backend, so the
same argument building and output handling run on a GPU (``TorchBackend``, pmqa.run.torch_backend)
and in CI without torch (``NumpyBackend`` here). What each backend hands an op:

============  ==============================================  =========================================
argument      torch backend                                   numpy backend
============  ==============================================  =========================================
q             torch.float8_e4m3fn / torch.float8_e4m3fnuz     ``Fp8Tensor``: uint8 codes + format name
kv_cache      uint8 [num_blocks, block_size, 1, D+4], a       the same, an ``as_strided`` view of the
              strided view of the [num_blocks, block_stride]  [num_blocks, block_stride] bytes
              bytes on the device (stride(0) = block_stride)
int32/f32     contiguous tensors on the device                contiguous numpy arrays
============  ==============================================  =========================================

Both kinds of arrays support the basic slicing (``a[1:5, :7]``), ``a.shape``, ``a.sum(0)`` and
``a[...] = value`` the conventions use; everything else goes through the backend's methods.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

#: The bit pattern of a cell nobody wrote (a NaN): ``pmqa verify`` counts such a cell as unwritten.
SENTINEL_BITS = 0x7FF0CAFE

FP8_FORMATS = ("e4m3fn", "e4m3fnuz")


class BackendError(RuntimeError):
    """The backend cannot be used (torch missing, no such device): a usage error (exit 2)."""


@dataclass(frozen=True)
class Fp8Tensor:
    """The numpy backend's fp8 tensor: the raw E4M3 codes and the format they are in.

    torch carries the format in the dtype (torch.float8_e4m3fn or torch.float8_e4m3fnuz); numpy has
    no fp8 dtype, so the numpy backend hands a stand-in op this pair instead. An op must decode
    ``codes`` with ``format`` (spec §3) -- decoding with the other format is the classic bug.
    """

    codes: np.ndarray  # uint8, the case's q bytes
    format: str        # "e4m3fn" or "e4m3fnuz"

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self.codes.shape)

    @property
    def dtype_name(self) -> str:
        return "float8_" + self.format


@dataclass
class Timings:
    """What `Backend.time_calls` measured, per timed call, in milliseconds.

    wall_ms: device events (or the host clock) around the call. When the op's host-side launch
      takes longer than the GPU work queued before the start event, the launch time lands inside
      this interval: it moves with the host, so it is reported, never gated on.
    kernel_ms: the summed durations of every device activity the call launched (kernels, memsets,
      device copies; stage 1 and the head sum of a two-stage path alike), from the activity records
      of a profiled run of the same call. It does not move when the host is slow: what the speed
      gate judges. None where the backend has no device to record (torch on the cpu device).
    activities: how many device activities each timed call of the kernel pass recorded (0: the
      profiler saw nothing, so kernel_ms says nothing either).
    names: the activities of the last timed call, in launch order.
    how: one line saying how kernel_ms was measured.
    """

    wall_ms: List[float]
    kernel_ms: Optional[List[float]]
    activities: List[int]
    names: List[str]
    how: str


class Backend:
    """What a convention needs from a tensor library. Subclasses: NumpyBackend, TorchBackend."""

    name = "?"

    def describe(self) -> str:
        """One line for the output file's "device" metadata, e.g. "cuda:0 NVIDIA H200"."""
        raise NotImplementedError

    # ---- inputs
    def fp8(self, codes: np.ndarray, fmt: str) -> Any:
        """q as an fp8 tensor of format fmt (the bytes are not converted, only labelled)."""
        raise NotImplementedError

    def tensor(self, array: np.ndarray) -> Any:
        """A contiguous copy of an int32/float32 array on the device."""
        raise NotImplementedError

    def kv_view(self, kv: np.ndarray, block_size: int, head_dim: int) -> Any:
        """kv_cache bytes [num_blocks, block_stride] as uint8 [num_blocks, block_size, 1, D+4]
        with strides (block_stride, D+4, D+4, 1): a view of the whole allocation, padding kept."""
        raise NotImplementedError

    # ---- outputs
    def full_bits(self, shape: Sequence[int], bits: int) -> Any:
        """A float32 buffer with every cell holding the 32-bit pattern bits."""
        raise NotImplementedError

    def fill_bits(self, view: Any, bits: int) -> None:
        """Sets every cell of a float32 view to the 32-bit pattern bits."""
        raise NotImplementedError

    def fill(self, view: Any, value: float) -> None:
        view[...] = value

    def is_array(self, obj: Any) -> bool:
        raise NotImplementedError

    def dtype_name(self, array: Any) -> str:
        raise NotImplementedError

    def shape(self, array: Any) -> Tuple[int, ...]:
        return tuple(int(x) for x in array.shape)

    def to_numpy(self, array: Any) -> np.ndarray:
        """A C-contiguous float32 host copy, bits preserved (bfloat16 is widened exactly)."""
        raise NotImplementedError

    def placement_problem(self, array: Any) -> Optional[str]:
        """Why an op's returned array is not where the caller expects it (another device), or None."""
        return None

    # ---- device facts and timing
    def platform(self) -> str:
        """The envelope platform of the device: "cuda", "rocm", or "none" (the host: no library)."""
        return "none"

    def arch(self) -> str:
        """The device's target ("gfx942", "sm_90"); "" when there is none."""
        return ""

    def healthy(self) -> bool:
        """Whether the device still works (after an op failed: a device error poisons the context)."""
        return True

    def profile(self, call: Callable[[], Any]) -> Tuple[Any, List[str]]:
        """(call's result, the names of the GPU kernels it launched, in launch order)."""
        raise NotImplementedError

    def copy_bandwidth(self) -> float:
        """The device's copy bandwidth in bytes/s (read + write), measured now."""
        raise NotImplementedError

    def poison_free_memory(self, nbytes: int, bits: int) -> None:
        """Leaves nbytes of free device memory holding the 32-bit pattern bits, so that an op that
        allocates its output and leaves cells unwritten hands those cells back holding it (how the
        runner tells never-written cells from a race). Best effort: the allocator decides."""

    def num_sms(self) -> int:
        raise NotImplementedError

    def synchronize(self) -> None:
        pass

    def default_flush_bytes(self) -> int:
        raise NotImplementedError

    def time_calls(self, call: Callable[[], Any], before_each: Callable[[], None], warmup: int, iters: int,
                   flush_bytes: int) -> Timings:
        """Runs call warmup + iters times and times the last iters (Timings: wall and kernel time).

        before_each runs before every call outside the timed region (re-filling caller buffers), then
        a buffer of flush_bytes is written so the call starts with a cold last-level cache.
        """
        raise NotImplementedError


class NumpyBackend(Backend):
    """Host numpy arrays: for numpy stand-in ops (the CI tests) and for trying a runner pipeline out."""

    name = "numpy"

    def __init__(self, num_sms: int = 8, fake_device: Optional[str] = None):
        self._num_sms = num_sms
        self.fake_device = fake_device  # pmqa-run --devices on this backend: the id its worker was given

    def describe(self) -> str:
        if self.fake_device is not None:
            return f"numpy {np.__version__} (host, fake device {self.fake_device})"
        return f"numpy {np.__version__} (host)"

    def fp8(self, codes: np.ndarray, fmt: str) -> Fp8Tensor:
        if fmt not in FP8_FORMATS:
            raise ValueError(f"unknown fp8 format {fmt!r}")
        c = np.array(codes, dtype=np.uint8, order="C", copy=True)
        c.setflags(write=False)
        return Fp8Tensor(c, fmt)

    def tensor(self, array: np.ndarray) -> np.ndarray:
        a = np.array(array, order="C", copy=True)
        a.setflags(write=False)  # an op that writes its inputs is a bug; numpy makes it loud
        return a

    def kv_view(self, kv: np.ndarray, block_size: int, head_dim: int) -> np.ndarray:
        raw = np.array(kv, dtype=np.uint8, order="C", copy=True)
        num_blocks, stride = raw.shape
        row = head_dim + 4
        view = np.lib.stride_tricks.as_strided(raw, shape=(num_blocks, block_size, 1, row),
                                               strides=(stride, row, row, 1), writeable=False)
        return view

    def full_bits(self, shape: Sequence[int], bits: int) -> np.ndarray:
        return np.full(tuple(shape), bits, dtype=np.uint32).view(np.float32)

    def fill_bits(self, view: np.ndarray, bits: int) -> None:
        view.view(np.uint32)[...] = bits

    def is_array(self, obj: Any) -> bool:
        return isinstance(obj, np.ndarray)

    def dtype_name(self, array: Any) -> str:
        if isinstance(array, Fp8Tensor):
            return array.dtype_name
        return str(np.asarray(array).dtype)

    def to_numpy(self, array: Any) -> np.ndarray:
        a = np.asarray(array)
        if a.dtype != np.float32:
            raise TypeError(f"dtype {a.dtype}, expected float32")
        return np.array(a, dtype=np.float32, order="C", copy=True)

    def num_sms(self) -> int:
        return self._num_sms

    def poison_free_memory(self, nbytes: int, bits: int) -> None:
        _FREE_MEMORY["bits"] = bits

    def profile(self, call):
        """The kernels numpy stand-ins launch (record_kernel()) while call runs."""
        with _recording() as acts:
            result = call()
        return result, [name for name, _ in acts]

    def copy_bandwidth(self) -> float:
        """The numpy device's rate (NUMPY_DEVICE_GBPS): its kernels and its floor on one device."""
        return NUMPY_DEVICE_GBPS * 1e9

    def default_flush_bytes(self) -> int:
        return 8 << 20

    def time_calls(self, call, before_each, warmup, iters, flush_bytes):
        """One pass: the host's clock around each call (wall) and the numpy device's durations of the
        launches the call reported (kernel), summed."""
        flush = np.empty(max(flush_bytes, 1), dtype=np.uint8)
        wall: List[float] = []
        kern: List[float] = []
        counts: List[int] = []
        names: List[str] = []
        for i in range(warmup + iters):
            before_each()
            flush.fill(i & 0xFF)
            with _recording() as acts:
                t0 = time.perf_counter()
                call()
                t1 = time.perf_counter()
            if i >= warmup:
                wall.append((t1 - t0) * 1e3)
                kern.append(sum(ms for _, ms in acts))
                counts.append(len(acts))
                names = [name for name, _ in acts]
        return Timings(wall, kern, counts, names,
                       f"numpy backend: the stand-in's launches on its device model ({NUMPY_LAUNCH_US:g} us + the "
                       f"bytes each moves at {NUMPY_DEVICE_GBPS:g} GB/s), summed per call")


# The numpy backend's model of a device allocator's free memory (see uninitialised()).
_FREE_MEMORY = {"bits": None, "calls": 0}

# The numpy backend's device: a model of a memory-bound GPU. Its kernels run no code of their own
# (a stand-in computes its numbers on the host, which the wall time sees); each launch a stand-in
# reports (record_kernel) lasts NUMPY_LAUNCH_US plus the bytes it says it moves at
# NUMPY_DEVICE_GBPS, and the byte floor uses the same rate (NumpyBackend.copy_bandwidth). So a
# call's kernel time follows exactly what it launched -- a two-stage stand-in's H-fold buffer
# costs it H-fold, as on a GPU -- and nothing the host does moves it, which the host's clock (busy
# with the other processes of a shared CI machine) could never give.
NUMPY_DEVICE_GBPS = 100.0
NUMPY_LAUNCH_US = 4.0
# While the backend profiles or times a call: (name, milliseconds) of each launch.
_ACTIVITIES: List[List[Tuple[str, float]]] = []


@contextmanager
def _recording() -> Iterator[List[Tuple[str, float]]]:
    _ACTIVITIES.append([])
    try:
        yield _ACTIVITIES[-1]
    finally:
        _ACTIVITIES.pop()


def numpy_kernel_ms(nbytes: int) -> float:
    """How long the numpy device runs a kernel that moves nbytes (reads + writes)."""
    return NUMPY_LAUNCH_US * 1e-3 + nbytes / (NUMPY_DEVICE_GBPS * 1e9) * 1e3


def record_kernel(name: str, nbytes: int = 0) -> None:
    """For numpy stand-ins of GPU ops: a kernel of this name was launched that moves nbytes (reads +
    writes; 0 for a launch whose work the stand-in does not model). While the numpy backend profiles
    a call (--expect-path) the name is what torch's profiler would see; while it times one (--bench)
    the launch lasts numpy_kernel_ms(nbytes) on its device. Ignored otherwise."""
    if nbytes < 0:
        raise ValueError(f"record_kernel({name!r}): nbytes {nbytes} < 0")
    if _ACTIVITIES:
        _ACTIVITIES[-1].append((name, numpy_kernel_ms(int(nbytes))))


def uninitialised(shape: Sequence[int], dtype=np.float32) -> np.ndarray:
    """For numpy stand-ins of ops that allocate their output without initialising it (torch.empty):
    an array holding what the free memory held -- the runner's poison pattern when it left one
    (NumpyBackend.poison_free_memory), otherwise garbage that differs from call to call, as real
    uninitialised memory does. Each call takes the memory once: a second call gets garbage."""
    out = np.empty(tuple(shape), dtype=dtype)
    bits = _FREE_MEMORY["bits"]
    _FREE_MEMORY["bits"] = None
    if bits is None:
        _FREE_MEMORY["calls"] += 1
        out.view(np.uint8)[...] = (np.arange(out.nbytes, dtype=np.uint64) * 2654435761 + _FREE_MEMORY["calls"] * 97
                                   ).astype(np.uint8).reshape(out.view(np.uint8).shape)
    else:
        out.view(np.uint32)[...] = bits
    return out
