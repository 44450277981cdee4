"""Triton as an engine's module sees it at import time, with kernel launches recorded.

`@triton.jit` (bare or with options) turns a function into a kernel object; `kernel[grid](...)`
records a launch (the kernel's name and its keyword arguments) instead of compiling anything.
Host-side helpers (cdiv, next_power_of_2) are real; `triton.language` is a stub module apart from
constexpr, because kernel bodies never run here.
"""
from __future__ import annotations

import types
from typing import Callable, List

from . import stubs


LAUNCHES: List[dict] = []  # every stand-in kernel's launches; the probe's child reads and clears it


class Kernel:
    def __init__(self, fn: Callable, options: dict, launches: List[dict]):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__module__ = getattr(fn, "__module__", None)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.options = options
        self._launches = launches

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self._launches.append({"kernel": self.__name__, "module": self.__module__,
                                   "grid": repr(grid) if not callable(grid) else "callable",
                                   "scalars": {k: v for k, v in kwargs.items()
                                               if isinstance(v, (bool, int, float, str))}})
            return None
        return launch

    def run(self, *args, **kwargs):
        return self[kwargs.pop("grid", None)](*args, **kwargs)

    def __call__(self, *args, **kwargs):
        raise stubs.StubUsedError(f"Triton kernel {self.__name__} called directly (a device function runs only "
                                  "inside another kernel)")


class constexpr:
    def __init__(self, value=None):
        self.value = value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"


def modules(launches: List[dict] = LAUNCHES):
    """(triton, triton.language) stand-ins whose kernels record into `launches`."""

    def jit(fn=None, **options):
        if fn is None:
            return lambda f: Kernel(f, options, launches)
        return Kernel(fn, options, launches)

    def passthrough_factory(*args, **kwargs):
        return lambda f: f

    def cdiv(a, b):
        return -(-a // b)

    def next_power_of_2(n):
        n = int(n)
        return 1 if n <= 1 else 1 << (n - 1).bit_length()

    class Config:
        def __init__(self, kwargs=None, num_warps=4, num_stages=2, **extra):
            self.kwargs, self.num_warps, self.num_stages = kwargs or {}, num_warps, num_stages

    language = stubs.provided_module("triton.language", {"constexpr": constexpr}, package=True)
    triton = stubs.provided_module("triton", {
        "__version__": "3.4.0", "jit": jit, "autotune": passthrough_factory, "heuristics": passthrough_factory,
        "Config": Config, "cdiv": cdiv, "next_power_of_2": next_power_of_2, "language": language,
        "PMQA_PROBE_STAND_IN": True,
    }, package=True)
    return triton, language


def is_kernel(obj) -> bool:
    """A kernel object of the stand-in or of a real Triton (JITFunction and its wrappers)."""
    if isinstance(obj, Kernel):
        return True
    cls = type(obj)
    return any(c.__name__ in ("JITFunction", "Autotuner", "Heuristics") for c in cls.__mro__) and not isinstance(
        obj, types.FunctionType)
