"""The torch backend: a case's buffers as torch tensors on a device (cuda, cuda:N or cpu).

Imported only when --backend torch is chosen, so the rest of pmqa-run works with numpy alone.
"""

from __future__ import annotations

import os
import time
from typing import Any, Optional, Sequence

import numpy as np

from .. import _fp8_torch
from .backend import FP8_FORMATS, Backend, BackendError, Timings

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised on machines without torch
    raise BackendError("--backend torch: torch is not installed for this python "
                       f"({e}); real ops need torch, numpy stand-ins run with --backend numpy") from None


class TorchBackend(Backend):
    name = "torch"

    def __init__(self, device: str = "cuda", num_sms: Optional[int] = None):
        try:
            dev = torch.device(device)
        except (RuntimeError, ValueError) as e:
            raise BackendError(f"--device {device}: {e}") from None
        if dev.type == "cuda":
            if not torch.cuda.is_available():
                raise BackendError(f"--device {device}: torch {torch.__version__} sees no CUDA/ROCm device "
                                   "(torch.cuda.is_available() is False)")
            if dev.index is None:
                dev = torch.device("cuda", torch.cuda.current_device())
            if dev.index >= torch.cuda.device_count():
                raise BackendError(f"--device {device}: only {torch.cuda.device_count()} device(s) present")
            torch.cuda.set_device(dev)
        elif dev.type != "cpu":
            raise BackendError(f"--device {device}: expected cuda, cuda:N or cpu")
        self.device = dev
        self.is_cuda = dev.type == "cuda"
        self._num_sms = num_sms
        self._fp8 = {fmt: _fp8_torch.torch_dtype(torch, fmt) for fmt in FP8_FORMATS}
        #: the formats this torch has no dtype for, handed as uint8 codes (with the note why)
        self.fp8_as_codes = {fmt: _fp8_torch.codes_note(torch, fmt) for fmt, d in self._fp8.items() if d is None}

    def describe(self) -> str:
        codes = ""
        if self.fp8_as_codes:
            codes = (f"; q of {' and '.join(sorted(self.fp8_as_codes))} as uint8 codes (this torch has no such fp8 "
                     "dtype: torch >= 2.1 has float8_e4m3fn, >= 2.2 float8_e4m3fnuz; an op that declares fp8_format= "
                     "is told the format)")
        if self.is_cuda:
            props = torch.cuda.get_device_properties(self.device)
            arch = getattr(props, "gcnArchName", "") or f"sm_{props.major}{props.minor}"
            return f"{self.device} {props.name} ({arch}), torch {torch.__version__}{codes}"
        return f"cpu, torch {torch.__version__}{codes}"

    # ---- inputs
    def fp8(self, codes: np.ndarray, fmt: str):
        dtype = self._fp8.get(fmt)
        raw = self.tensor(np.asarray(codes, dtype=np.uint8))
        if dtype is None:
            return raw  # the codes themselves (fp8_as_codes says why; the runner passes fp8_format= to an op that takes it)
        return raw.view(dtype)  # same element size: a relabelling, the bytes stay as they are

    def tensor(self, array: np.ndarray):
        # a copy: on the cpu device .to() would otherwise hand the op the case file's own memory
        return torch.from_numpy(np.array(array, order="C", copy=True)).to(self.device)

    def kv_view(self, kv: np.ndarray, block_size: int, head_dim: int):
        raw = self.tensor(np.asarray(kv, dtype=np.uint8))
        num_blocks, stride = (int(x) for x in kv.shape)
        row = head_dim + 4
        return raw.as_strided((num_blocks, block_size, 1, row), (stride, row, row, 1))

    # ---- outputs
    def full_bits(self, shape: Sequence[int], bits: int):
        as_int = bits - (1 << 32) if bits >= (1 << 31) else bits
        return torch.full(tuple(shape), as_int, dtype=torch.int32, device=self.device).view(torch.float32)

    def fill_bits(self, view, bits: int) -> None:
        as_int = bits - (1 << 32) if bits >= (1 << 31) else bits
        view.view(torch.int32).fill_(as_int)

    def fill(self, view, value: float) -> None:
        view.fill_(value)

    def is_array(self, obj: Any) -> bool:
        return isinstance(obj, torch.Tensor)

    def dtype_name(self, array: Any) -> str:
        return str(array.dtype).replace("torch.", "")

    def to_numpy(self, array) -> np.ndarray:
        t = array.detach()
        if t.dtype == torch.bfloat16:
            t = t.to(torch.float32)  # exact: every bfloat16 is a float32
        if t.dtype != torch.float32:
            raise TypeError(f"dtype {self.dtype_name(array)}, expected float32 (or bfloat16)")
        return np.array(t.cpu().numpy(), dtype=np.float32, order="C", copy=True)

    def placement_problem(self, array) -> Optional[str]:
        if array.device != self.device:
            return f"it is on {array.device}, the inputs were on {self.device}"
        return None

    # ---- device facts and timing
    def platform(self) -> str:
        if not self.is_cuda:
            return "none"
        return "rocm" if getattr(torch.version, "hip", None) else "cuda"

    def arch(self) -> str:
        if not self.is_cuda:
            return ""
        props = torch.cuda.get_device_properties(self.device)
        name = getattr(props, "gcnArchName", "") or ""
        return name.split(":")[0] if name else f"sm_{props.major}{props.minor}"

    def poison_free_memory(self, nbytes: int, bits: int) -> None:
        # The caching allocator keeps the freed block: the op's next allocation of this size
        # range is usually carved from it.
        as_int = bits - (1 << 32) if bits >= (1 << 31) else bits
        block = torch.full((max(nbytes, 4) // 4,), as_int, dtype=torch.int32, device=self.device)
        del block

    def healthy(self) -> bool:
        if not self.is_cuda:
            return True
        try:
            torch.cuda.synchronize(self.device)
            torch.zeros(1, device=self.device).add_(1).item()
        except Exception:  # noqa: BLE001 - any failure means the context is gone
            return False
        return True

    def profile(self, call):
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CUDA] if self.is_cuda else [ProfilerActivity.CPU]
        with profile(activities=activities) as prof:
            result = call()
            self.synchronize()
        return result, [name for name, _ in self._device_activities(prof)]

    def _device_activities(self, prof):
        """(name, microseconds) of each device activity a profile recorded (kernels, memsets, device
        copies), in the order they started; none on the cpu device."""
        if not self.is_cuda:
            return []
        out = []
        for e in sorted(prof.events(), key=lambda e: e.time_range.start):
            kind = getattr(e, "device_type", None)
            if kind is not None and str(kind).endswith("CUDA"):
                out.append((e.name, float(e.time_range.elapsed_us())))
        return out

    def copy_bandwidth(self) -> float:
        if not self.is_cuda:
            a = torch.ones(16 << 20, dtype=torch.uint8)
            b = torch.empty_like(a)
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                b.copy_(a)
                times.append(time.perf_counter() - t0)
            return 2.0 * a.numel() / sorted(times)[len(times) // 2]
        free, _ = torch.cuda.mem_get_info(self.device)
        nbytes = int(min(1 << 30, free // 4)) & ~4095
        a = torch.empty(nbytes, dtype=torch.uint8, device=self.device).fill_(1)
        b = torch.empty_like(a)
        times = []
        for i in range(13):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            b.copy_(a)
            end.record()
            end.synchronize()
            if i >= 3:
                times.append(start.elapsed_time(end) * 1e-3)
        del a, b
        return 2.0 * nbytes / sorted(times)[len(times) // 2]

    def num_sms(self) -> int:
        if self._num_sms is not None:
            return self._num_sms
        if self.is_cuda:
            return int(torch.cuda.get_device_properties(self.device).multi_processor_count)
        return os.cpu_count() or 1

    def synchronize(self) -> None:
        if self.is_cuda:
            torch.cuda.synchronize(self.device)

    def default_flush_bytes(self) -> int:
        if self.is_cuda:
            l2 = int(getattr(torch.cuda.get_device_properties(self.device), "L2_cache_size", 0) or 0)
            return max(2 * l2, 256 << 20)
        return 256 << 20

    def time_calls(self, call, before_each, warmup, iters, flush_bytes):
        """Two passes over the same calls. Wall: a start and an end event around each call, the L2
        flushed before it (the flush is GPU work queued before the start event; an op whose host
        launch outlasts it puts that launch inside the interval). Kernel: each call alone under
        torch's profiler, after the flush and a synchronize, its device activities' durations
        summed (every kernel, memset and copy it launched; host time between them is not counted)."""
        flush = torch.empty(max(flush_bytes // 4, 1), dtype=torch.int32, device=self.device)
        if not self.is_cuda:
            times = []
            for i in range(warmup + iters):
                before_each()
                flush.fill_(i)
                t0 = time.perf_counter()
                call()
                t1 = time.perf_counter()
                if i >= warmup:
                    times.append((t1 - t0) * 1e3)
            return Timings(times, None, [], [], "cpu device: no device activity to record; wall time only")
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
        for i in range(warmup + iters):
            before_each()
            flush.fill_(i)  # writes more than the L2 holds: the call starts cold
            if i < warmup:
                call()
                continue
            start, end = pairs[i - warmup]
            start.record()
            call()
            end.record()
        torch.cuda.synchronize(self.device)
        wall = [s.elapsed_time(e) for s, e in pairs]

        from torch.profiler import ProfilerActivity, profile

        kern, counts, names = [], [], []
        for i in range(iters):
            before_each()
            flush.fill_(warmup + iters + i)
            torch.cuda.synchronize(self.device)  # the flush and the refill are done before the profile starts
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                call()
                torch.cuda.synchronize(self.device)
            acts = self._device_activities(prof)
            kern.append(sum(us for _, us in acts) * 1e-3)
            counts.append(len(acts))
            names = [name for name, _ in acts]
        return Timings(wall, kern, counts, names,
                       f"torch {torch.__version__} profiler: each call's device activities (kernels, memsets, copies) "
                       "summed")
