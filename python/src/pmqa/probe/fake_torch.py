"""The probe's minimal torch, used when torch is not installed (CI has numpy only).

It is a dispatch probe's torch, not a tensor library: tensors carry a shape, strides, a dtype and a
device and no data. What an engine's entry does with its buffers to pick a path (read shapes and
dtypes, reinterpret a cache as fp8, slice, reshape, fill a buffer with -inf, sum a per-head buffer)
works; anything that needs values (item(), tolist(), arithmetic on data) raises StubUsedError with
the feature's name, and the probe reports that the entry needs more than the stand-in offers. Names
the stand-in does not define are stubs (see stubs.py), so an engine module's top level imports.

Device identity (torch.cuda.get_device_properties, get_device_capability, torch.version.hip) comes
from identity.py, set before the engine is imported.
"""
from __future__ import annotations

import importlib.abc
import math
import sys
import types
from typing import Optional, Sequence

from . import stubs

FAKE_VERSION = "2.9.0"


class MissingFeature(stubs.StubUsedError, AttributeError):
    """An attribute the stand-in lacks: hasattr() answers False, a use fails naming it."""


def _limit(what: str, error=stubs.StubUsedError):
    raise error(f"the entry needs {what}, which the probe's torch stand-in does not provide "
                              "(it holds shapes, not data); install torch or extend pmqa/probe/fake_torch.py")


class dtype:
    def __init__(self, name: str, itemsize: int, floating: bool):
        self.name = name
        self.itemsize = itemsize
        self.is_floating_point = floating
        self.is_signed = name not in ("uint8", "bool")

    def __repr__(self):
        return f"torch.{self.name}"

    def to_real(self):  # for symmetry with code that asks torch.dtype for itself
        return self


_DTYPES = {
    "float32": (4, True), "float64": (8, True), "float16": (2, True), "bfloat16": (2, True),
    "float8_e4m3fn": (1, True), "float8_e4m3fnuz": (1, True), "float8_e5m2": (1, True),
    "float8_e5m2fnuz": (1, True), "float8_e8m0fnu": (1, True),
    "int64": (8, False), "int32": (4, False), "int16": (2, False), "int8": (1, False),
    "uint8": (1, False), "bool": (1, False),
}
DTYPES = {name: dtype(name, size, fl) for name, (size, fl) in _DTYPES.items()}
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
            "short": "int16"}


class device:
    def __init__(self, kind="cpu", index=None):
        if isinstance(kind, device):
            kind, index = kind.type, kind.index
        kind = str(kind)
        if ":" in kind:
            kind, idx = kind.split(":", 1)
            index = int(idx)
        self.type = kind
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return str(self) == str(device(other)) if isinstance(other, (str, device)) else NotImplemented

    def __hash__(self):
        return hash(str(self))


class Size(tuple):
    def numel(self):
        return math.prod(self)

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __repr__(self):
        return f"torch.Size({list(self)})"


def _contiguous_strides(shape: Sequence[int]) -> tuple:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(strides))


def _as_dtype(value) -> Optional[dtype]:
    if value is None or isinstance(value, dtype):
        return value
    _limit(f"dtype {value!r}")


def _shape_args(args) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


class Tensor:
    """Shape, strides, dtype and device; no data."""

    def __init__(self, shape, dtype_: dtype, device_="cpu", strides=None, offset: int = 0):
        self._shape = Size(int(s) for s in shape)
        self.dtype = dtype_
        self.device = device(device_) if not isinstance(device_, device) else device_
        self._strides = tuple(strides) if strides is not None else _contiguous_strides(self._shape)
        self._offset = offset

    # --- shape and layout
    @property
    def shape(self) -> Size:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def size(self, d: Optional[int] = None):
        return self._shape if d is None else self._shape[d]

    def numel(self) -> int:
        return math.prod(self._shape)

    def stride(self, d: Optional[int] = None):
        return self._strides if d is None else self._strides[d]

    def storage_offset(self) -> int:
        return self._offset

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_contiguous(self) -> bool:
        expected = _contiguous_strides(self._shape)
        return all(n == 1 or s == e for n, s, e in zip(self._shape, self._strides, expected))

    def contiguous(self):
        return self if self.is_contiguous() else Tensor(self._shape, self.dtype, self.device)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def _resolve(self, shape) -> tuple:
        shape = list(shape)
        if shape.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        known = math.prod(s for s in shape if s != -1)
        if -1 in shape:
            if known == 0 or self.numel() % known:
                raise RuntimeError(f"shape {shape} is invalid for input of size {self.numel()}")
            shape[shape.index(-1)] = self.numel() // known
        if math.prod(shape) != self.numel():
            raise RuntimeError(f"shape {shape} is invalid for input of size {self.numel()}")
        return tuple(shape)

    def view(self, *args):
        if len(args) == 1 and isinstance(args[0], dtype):
            new = args[0]
            if not self._shape:
                _limit("view() of a 0-d tensor as another dtype")
            last = self._shape[-1] * self.dtype.itemsize
            if last % new.itemsize or (self._strides and self._strides[-1] != 1 and self._shape[-1] != 1):
                raise RuntimeError("view: the last dimension does not fit the new dtype")
            ratio_num, ratio_den = self.dtype.itemsize, new.itemsize
            shape = self._shape[:-1] + (last // new.itemsize,)
            strides = tuple(s * ratio_num // ratio_den for s in self._strides[:-1]) + (1,)
            return Tensor(shape, new, self.device, strides, self._offset * ratio_num // ratio_den)
        shape = self._resolve(_shape_args(args))
        if not self.is_contiguous():
            _limit("view() of a non-contiguous tensor (use reshape)")
        return Tensor(shape, self.dtype, self.device)

    def reshape(self, *args):
        return Tensor(self._resolve(_shape_args(args)), self.dtype, self.device)

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        n = self.ndim
        s, e = start_dim % max(n, 1), end_dim % max(n, 1)
        shape = self._shape[:s] + (math.prod(self._shape[s:e + 1]),) + self._shape[e + 1:]
        return Tensor(shape, self.dtype, self.device)

    def unsqueeze(self, d: int):
        d = d % (self.ndim + 1)
        shape = self._shape[:d] + (1,) + self._shape[d:]
        return Tensor(shape, self.dtype, self.device)

    def squeeze(self, d: Optional[int] = None):
        if d is None:
            shape = tuple(s for s in self._shape if s != 1)
        else:
            d = d % self.ndim
            shape = self._shape[:d] + self._shape[d + 1:] if self._shape[d] == 1 else self._shape
        return Tensor(shape, self.dtype, self.device)

    def transpose(self, a: int, b: int):
        shape, strides = list(self._shape), list(self._strides)
        shape[a], shape[b] = shape[b], shape[a]
        strides[a], strides[b] = strides[b], strides[a]
        return Tensor(shape, self.dtype, self.device, strides, self._offset)

    def permute(self, *dims):
        dims = _shape_args(dims)
        return Tensor([self._shape[d] for d in dims], self.dtype, self.device,
                      [self._strides[d] for d in dims], self._offset)

    def __getitem__(self, index):
        if not isinstance(index, tuple):
            index = (index,)
        if any(isinstance(i, (Tensor, list)) for i in index):
            _limit("indexing with a tensor or a list")
        if Ellipsis in index:
            at = index.index(Ellipsis)
            fill = self.ndim - (len(index) - 1 - sum(1 for i in index if i is None))
            index = index[:at] + (slice(None),) * fill + index[at + 1:]
        shape, strides, offset, dim = [], [], self._offset, 0
        for i in index:
            if i is None:
                shape.append(1)
                strides.append(0)
                continue
            n, st = self._shape[dim], self._strides[dim]
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                shape.append(max(0, (stop - start + (step - (1 if step > 0 else -1))) // step))
                strides.append(st * step)
                offset += start * st
            else:
                i = int(i)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
                offset += (i % n) * st
            dim += 1
        shape += self._shape[dim:]
        strides += self._strides[dim:]
        return Tensor(shape, self.dtype, self.device, strides, offset)

    def __setitem__(self, index, value):
        self[index]  # the index must be valid; the stand-in holds no values

    # --- what entries do to their buffers
    def fill_(self, value):
        return self

    def zero_(self):
        return self

    def copy_(self, other, non_blocking: bool = False):
        return self

    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        out_dtype = _as_dtype(dtype) or self.dtype
        if dim is None:
            return Tensor((), out_dtype, self.device)
        dims = {d % self.ndim for d in ((dim,) if isinstance(dim, int) else dim)}
        shape = [1 if i in dims else s for i, s in enumerate(self._shape) if keepdim or i not in dims]
        return Tensor(shape, out_dtype, self.device)

    def to(self, *args, **kwargs):
        target_dtype = kwargs.get("dtype")
        target_device = kwargs.get("device")
        for a in args:
            if isinstance(a, dtype):
                target_dtype = a
            elif isinstance(a, (str, device)):
                target_device = a
            elif isinstance(a, Tensor):
                target_dtype, target_device = a.dtype, a.device
        return Tensor(self._shape, target_dtype or self.dtype, target_device or self.device)

    def float(self):
        return self.to(DTYPES["float32"])

    def int(self):
        return self.to(DTYPES["int32"])

    def cuda(self, *args, **kwargs):
        return Tensor(self._shape, self.dtype, "cuda")

    def cpu(self):
        return Tensor(self._shape, self.dtype, "cpu")

    def clone(self):
        return Tensor(self._shape, self.dtype, self.device)

    def data_ptr(self) -> int:
        return 0x10000 + self._offset * self.dtype.itemsize

    def item(self):
        _limit("Tensor.item() (a value)")

    def tolist(self):
        _limit("Tensor.tolist() (values)")

    def __bool__(self):
        _limit("the truth value of a tensor")

    def __repr__(self):
        return f"<pmqa-probe fake tensor shape={list(self._shape)} dtype={self.dtype} device={self.device}>"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        _limit(f"Tensor.{name}", MissingFeature)


def _device_of(kwargs):
    return kwargs.get("device") or "cpu"


def _factory(shape_args, kwargs, default="float32"):
    dt = _as_dtype(kwargs.get("dtype")) or DTYPES[default]
    return Tensor(_shape_args(shape_args), dt, _device_of(kwargs))


def empty(*size, **kwargs):
    return _factory(size, kwargs)


def zeros(*size, **kwargs):
    return _factory(size, kwargs)


def ones(*size, **kwargs):
    return _factory(size, kwargs)


def full(size, fill_value, **kwargs):
    default = "float32" if isinstance(fill_value, float) else ("bool" if isinstance(fill_value, bool) else "int64")
    return _factory((size,), kwargs, default)


def _like(t, kwargs):
    return Tensor(t.shape, _as_dtype(kwargs.get("dtype")) or t.dtype, kwargs.get("device") or t.device)


def empty_like(t, **kwargs):
    return _like(t, kwargs)


def zeros_like(t, **kwargs):
    return _like(t, kwargs)


def full_like(t, fill_value, **kwargs):
    return _like(t, kwargs)


def arange(*args, **kwargs):
    if len(args) == 1:
        start, end, step = 0, args[0], 1
    else:
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else 1
    n = max(0, math.ceil((end - start) / step))
    return Tensor((n,), _as_dtype(kwargs.get("dtype")) or DTYPES["int64"], _device_of(kwargs))


class finfo:
    _LIMITS = {"float8_e4m3fn": 448.0, "float8_e4m3fnuz": 240.0, "float8_e5m2": 57344.0,
               "float8_e5m2fnuz": 57344.0, "float16": 65504.0, "bfloat16": 3.3895313892515355e38,
               "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}

    def __init__(self, dt):
        dt = _as_dtype(dt) or DTYPES["float32"]
        self.dtype = dt
        self.max = self._LIMITS.get(dt.name, 1.0)
        self.min = -self.max
        self.bits = dt.itemsize * 8


class _Mode:
    """torch.inference_mode / no_grad: a context manager and a decorator."""

    def __init__(self, *args, **kwargs):
        self._fn = args[0] if args and callable(args[0]) else None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn


def _compile(fn=None, **kwargs):
    return fn if fn is not None else (lambda f: f)


# --- torch.cuda and torch.version, answered from the simulated identity


class _Props:
    def __init__(self, identity):
        self.name = identity.name
        self.gcnArchName = identity.arch if identity.vendor == "amd" else ""
        self.major, self.minor = identity.capability
        self.multi_processor_count = identity.compute_units
        self.total_memory = 192 * (1 << 30)
        self.warp_size = 64 if identity.vendor == "amd" and identity.target.startswith("gfx9") else 32

    def __repr__(self):
        return f"_CudaDeviceProperties(name='{self.name}', gcnArchName='{self.gcnArchName}')"


def _cuda_module(identity_ref):
    def ident():
        ident_ = identity_ref()
        if ident_ is None:
            raise RuntimeError("the probe set no GPU identity")
        return ident_

    def get_device_properties(device=None):
        return _Props(ident())

    def get_device_capability(device=None):
        return tuple(ident().capability)

    attributes = {
        "is_available": lambda: True,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": lambda d: None,
        "synchronize": lambda d=None: None,
        "_is_compiled": lambda: True,
        "is_initialized": lambda: True,
        "get_device_properties": get_device_properties,
        "get_device_capability": get_device_capability,
        "get_device_name": lambda d=None: ident().name,
        "mem_get_info": lambda d=None: (96 * (1 << 30), 192 * (1 << 30)),
        "empty_cache": lambda: None,
    }
    return stubs.provided_module("torch.cuda", attributes, package=True)


class _TorchSubmoduleFinder(importlib.abc.MetaPathFinder):
    """Every torch.<x> the stand-in does not define is a stub module."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("torch.") and fullname not in sys.modules:
            return stubs.module_spec(fullname, stubs._StubLoader())
        return None


def install(identity_ref) -> types.ModuleType:
    """Makes `import torch` give the stand-in. identity_ref() returns the simulated identity."""
    torch = stubs.provided_module("torch", {}, package=True)
    torch.__version__ = FAKE_VERSION
    torch.PMQA_PROBE_STAND_IN = True
    for name, dt in DTYPES.items():
        setattr(torch, name, dt)
    for alias, name in _ALIASES.items():
        setattr(torch, alias, DTYPES[name])
    for name, value in {
        "dtype": dtype, "device": device, "Size": Size, "Tensor": Tensor, "empty": empty, "zeros": zeros,
        "ones": ones, "full": full, "empty_like": empty_like, "zeros_like": zeros_like, "full_like": full_like,
        "arange": arange, "finfo": finfo, "inference_mode": _Mode, "no_grad": _Mode, "compile": _compile,
        "manual_seed": lambda seed: None, "is_tensor": lambda x: isinstance(x, Tensor),
    }.items():
        setattr(torch, name, value)
    stubs.install_module("torch", torch, package=True)
    cuda = stubs.install_module("torch.cuda", _cuda_module(identity_ref), package=True)
    torch.cuda = cuda

    def version_attrs():
        ident = identity_ref()
        amd = ident is not None and ident.vendor == "amd"
        return {"__version__": FAKE_VERSION, "hip": "6.4.0" if amd else None, "cuda": None if amd else "12.8",
                "git_version": "pmqa-probe"}

    version = stubs.install_module("torch.version", stubs.provided_module("torch.version", version_attrs(),
                                                                          fallback_stubs=False))
    torch.version = version
    sys.meta_path.insert(0, _TorchSubmoduleFinder())
    return torch


def refresh_version(identity_ref) -> None:
    """torch.version.hip / .cuda follow the identity (set after install)."""
    version = sys.modules.get("torch.version")
    ident = identity_ref()
    if version is not None and ident is not None:
        version.hip = "6.4.0" if ident.vendor == "amd" else None
        version.cuda = None if ident.vendor == "amd" else "12.8"
