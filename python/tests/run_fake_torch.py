"""A tiny numpy-backed stand-in for the part of torch that eager_torch_op uses.

CI has no torch, so this lets the eager op's logic -- gathers, masks, chunking, the -inf and NaN
handling -- run against the spec's stand-in anyway. It checks the op's *logic* only: torch's own
semantics (fp8 decode, device kernels) are checked by test_pmqa_run_torch.py where torch exists.
Only what eager_torch calls is here, with torch's meaning; anything else raises AttributeError.
"""

from __future__ import annotations

import types
from collections import namedtuple

import numpy as np

import run_standins


class dtype:
    def __init__(self, name, np_dtype, fp8=None):
        self.name, self.np, self.fp8 = name, np.dtype(np_dtype), fp8
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return f"torch.{self.name}"


uint8 = dtype("uint8", np.uint8)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
float32 = dtype("float32", np.float32)
bool_ = dtype("bool", np.bool_)
float8_e4m3fn = dtype("float8_e4m3fn", np.uint8, fp8="e4m3fn")
float8_e4m3fnuz = dtype("float8_e4m3fnuz", np.uint8, fp8="e4m3fnuz")
bfloat16 = dtype("bfloat16", np.uint16)  # a name only: nothing here computes in bfloat16
__version__ = "0.0-fake"
_BY_NP = {np.dtype(np.uint8): uint8, np.dtype(np.int32): int32, np.dtype(np.int64): int64,
          np.dtype(np.float32): float32, np.dtype(np.bool_): bool_}


class device:
    def __init__(self, spec="cpu"):
        self.type = str(spec).split(":")[0]
        self.index = None

    def __eq__(self, other):
        return isinstance(other, device) and other.type == self.type

    def __repr__(self):
        return self.type


_CPU = device("cpu")
Values = namedtuple("Values", "values indices")


def _np(x):
    return x.a if isinstance(x, Tensor) else x


def _wrap(a, dt=None):
    a = np.asarray(a)
    if dt is None:
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        if a.dtype not in _BY_NP:
            raise TypeError(f"fake torch: no dtype for {a.dtype}")
        dt = _BY_NP[a.dtype]
    return Tensor(a, dt)


class Tensor:
    def __init__(self, a, dt):
        self.a, self.dtype = a, dt
        self.device = _CPU

    @property
    def shape(self):
        return tuple(int(x) for x in self.a.shape)

    def dim(self):
        return self.a.ndim

    def numel(self):
        return int(self.a.size)

    # ---- what pmqa.run.torch_backend uses
    def as_strided(self, size, stride):
        item = self.a.itemsize
        return Tensor(np.lib.stride_tricks.as_strided(self.a, shape=tuple(size), strides=tuple(s * item for s in stride)),
                      self.dtype)

    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)

    def fill_(self, value):
        self.a[...] = value
        return self

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a

    # ---- conversions
    def to(self, *args, dtype=None, device=None):
        for x in args:
            if isinstance(x, globals()["dtype"]):
                dtype = x
        if dtype is None or dtype is self.dtype:
            return self
        if self.dtype.fp8:
            if dtype is not float32:
                raise TypeError("fake torch: fp8 converts to float32 only here")
            return Tensor(run_standins.decode(self.a, self.dtype.fp8), float32)
        if dtype.fp8:
            raise TypeError("fake torch: no conversion to fp8")
        return Tensor(self.a.astype(dtype.np), dtype)

    def view(self, *args):
        if len(args) == 1 and isinstance(args[0], dtype):
            dt = args[0]
            if dt.itemsize != self.dtype.itemsize and not self.a.flags.c_contiguous:
                raise RuntimeError("fake torch: view(dtype) of another size needs a contiguous tensor")
            return Tensor(self.a.view(dt.np), dt)
        shape = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
        v = self.a.view()
        v.shape = shape  # raises when the new shape would need a copy, as torch's view does
        return Tensor(v, self.dtype)

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        return Tensor(self.a.reshape(shape), self.dtype)

    def contiguous(self):
        return Tensor(np.ascontiguousarray(self.a), self.dtype)

    def transpose(self, i, j):
        return Tensor(np.swapaxes(self.a, i, j), self.dtype)

    # ---- reductions
    def max(self, dim=None):
        if dim is None:
            return Tensor(np.asarray(self.a.max()), self.dtype)
        return Values(Tensor(self.a.max(axis=dim), self.dtype), None)

    def sum(self, dim):
        with np.errstate(all="ignore"):
            return Tensor(self.a.sum(axis=dim, dtype=self.a.dtype), self.dtype)

    def clamp(self, min=None, max=None):
        a = self.a
        if min is not None:
            a = np.maximum(a, min)
        if max is not None:
            a = np.minimum(a, max)
        return Tensor(a.astype(self.a.dtype), self.dtype)

    def any(self):
        return Tensor(np.asarray(self.a.any()), bool_)

    def item(self):
        return self.a.item()

    def __bool__(self):
        return bool(self.a)

    def __int__(self):
        return int(self.a)

    def __iter__(self):
        for i in range(self.a.shape[0]):
            yield Tensor(self.a[i], self.dtype)

    # ---- indexing
    @staticmethod
    def _index(idx):
        if isinstance(idx, tuple):
            return tuple(_np(i) for i in idx)
        return _np(idx)

    def __getitem__(self, idx):
        return Tensor(self.a[self._index(idx)], self.dtype)

    def __setitem__(self, idx, value):
        self.a[self._index(idx)] = _np(value)

    # ---- arithmetic (numpy's promotion; every use here mixes one dtype with python scalars)
    def _op(self, other, fn):
        with np.errstate(all="ignore"):
            r = fn(self.a, _np(other))
        if isinstance(r, np.ndarray) and r.dtype != np.bool_ and r.dtype != self.a.dtype and not isinstance(other, Tensor):
            r = r.astype(self.a.dtype)  # python scalars do not promote a tensor's dtype in torch
        return _wrap(r)

    def __add__(self, o): return self._op(o, np.add)
    def __radd__(self, o): return self._op(o, lambda a, b: np.add(b, a))
    def __sub__(self, o): return self._op(o, np.subtract)
    def __rsub__(self, o): return self._op(o, lambda a, b: np.subtract(b, a))
    def __mul__(self, o): return self._op(o, np.multiply)
    def __rmul__(self, o): return self._op(o, lambda a, b: np.multiply(b, a))
    def __floordiv__(self, o): return self._op(o, np.floor_divide)
    def __lt__(self, o): return self._op(o, np.less)
    def __le__(self, o): return self._op(o, np.less_equal)
    def __gt__(self, o): return self._op(o, np.greater)
    def __ge__(self, o): return self._op(o, np.greater_equal)
    def __and__(self, o): return self._op(o, np.logical_and)
    def __or__(self, o): return self._op(o, np.logical_or)


def from_numpy(a):
    return Tensor(a, _BY_NP[a.dtype])


def empty(n, dtype=None, device=None):
    return Tensor(np.empty(n, dtype=dtype.np), dtype)


cuda = types.SimpleNamespace(is_available=lambda: False)


def tensor_from(a, dt=None):
    return Tensor(np.asarray(a), dt or _BY_NP[np.asarray(a).dtype])


def full(shape, value, dtype=None, device=None):
    return Tensor(np.full(shape, value, dtype=dtype.np), dtype)


def zeros(shape, dtype=None, device=None):
    return Tensor(np.zeros(shape, dtype=dtype.np), dtype)


def arange(start, end=None, device=None, dtype=None):
    dt = dtype or int64
    a = np.arange(start, dtype=dt.np) if end is None else np.arange(start, end, dtype=dt.np)
    return Tensor(a, dt)


def where(cond, a, b):
    r = np.where(_np(cond), _np(a), _np(b))
    dt = a.dtype if isinstance(a, Tensor) else b.dtype
    return Tensor(r.astype(dt.np), dt)


def nonzero(t):
    return Tensor(np.argwhere(t.a).astype(np.int64), int64)


def matmul(a, b):
    with np.errstate(all="ignore"):
        return Tensor(np.matmul(a.a, b.a), a.dtype)


backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)))


def as_module():
    """This file as a module object to put in sys.modules["torch"] while eager_torch is imported."""
    import sys
    return sys.modules[__name__]
