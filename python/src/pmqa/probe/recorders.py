"""Kernel libraries and the engine's own path functions replaced by recorders.

A recorder notes which entry ran with which arguments (tensors as shape and dtype, scalars and
keywords as given), checks the caller's output buffer has the shape its path needs, and returns what
the real function returns (nothing for a buffer-writing kernel, a [B*next_n, max_model_len] fp32
tensor otherwise), so the engine's code after the call runs as it would.
"""
from __future__ import annotations

import importlib.abc
import sys
from typing import Dict, List, Optional

from . import stubs
from .adapters import Entry, Library


def dtype_name(dt) -> str:
    return str(dt).replace("torch.", "")


def is_tensor(value) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type)


def summary(value):
    if is_tensor(value):
        return {"tensor": [int(s) for s in value.shape], "dtype": dtype_name(value.dtype)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)) and len(value) <= 8:
        return [summary(v) for v in value]
    return f"<{type(value).__name__}>"


class CallLog:
    def __init__(self):
        self.calls: List[dict] = []
        self.launches: List[dict] = []
        self.imports: List[str] = []
        self.workspace: List[dict] = []

    def reset(self):
        self.calls.clear()
        self.launches.clear()
        self.imports.clear()
        self.workspace.clear()


def _expected_out(entry: Entry, q, max_model_len) -> Optional[tuple]:
    if not is_tensor(q) or len(q.shape) != 4 or not isinstance(max_model_len, int):
        return None
    b, n, h, _ = (int(s) for s in q.shape)
    return (h, b * n, max_model_len) if entry.out_shape == "heads_rows" else (b * n, max_model_len)


def make_recorder(entry: Entry, log: CallLog, module: str = ""):
    def recorder(*args, **kwargs):
        call = {"entry": entry.name, "function": entry.function, "kind": entry.kind, "module": module,
                "args": [summary(a) for a in args], "kwargs": {k: summary(v) for k, v in kwargs.items()},
                "problems": []}
        log.calls.append(call)
        q = args[0] if args else kwargs.get("q", kwargs.get("q_fp8"))
        max_model_len = args[entry.len_arg] if len(args) > entry.len_arg else kwargs.get("max_model_len")
        expected = _expected_out(entry, q, max_model_len)
        if entry.out_arg is not None:
            out = args[entry.out_arg] if len(args) > entry.out_arg else None
            if not is_tensor(out):
                call["problems"].append(f"{entry.function} got no output buffer at argument {entry.out_arg}")
            else:
                if expected is not None and tuple(int(s) for s in out.shape) != expected:
                    call["problems"].append(f"{entry.function} got an output buffer of shape {list(out.shape)}, "
                                            f"its path needs {list(expected)}")
                if dtype_name(out.dtype) != "float32":
                    call["problems"].append(f"{entry.function} got an output buffer of dtype {dtype_name(out.dtype)}")
        if entry.returns:
            torch = sys.modules["torch"]
            shape = expected if expected is not None else (1, 1)
            return torch.empty(shape, dtype=torch.float32, device=getattr(q, "device", "cpu"))
        return None

    recorder.__name__ = entry.function
    recorder.__qualname__ = entry.function
    recorder.pmqa_probe_recorder = entry.name
    return recorder


class RecordingKernel:
    """Wraps a real Triton kernel object of the engine's module: launches are recorded, not run."""

    def __init__(self, kernel, log: CallLog):
        self._kernel = kernel
        self._log = log
        self.__name__ = getattr(getattr(kernel, "fn", kernel), "__name__", "kernel")

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self._log.launches.append({"kernel": self.__name__, "grid": repr(grid),
                                       "scalars": {k: v for k, v in kwargs.items()
                                                   if isinstance(v, (bool, int, float, str))}})
        return launch

    def __getattr__(self, name):
        return getattr(self._kernel, name)


class LibraryFinder(importlib.abc.MetaPathFinder):
    """Serves a kernel library as recorder modules: each module of `library.modules` holds the
    library's entries; packages above them are stubs. Shadows an installed copy of the library."""

    def __init__(self, library: Library, log: CallLog):
        self.library = library
        self.log = log
        self.leaves = set(library.modules)
        self.packages = {".".join(m.split(".")[:i]) for m in library.modules for i in range(1, m.count(".") + 1)}

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.leaves:
            return stubs.module_spec(fullname, _LeafLoader(self, fullname), is_package=False)
        if fullname in self.packages:
            return stubs.module_spec(fullname, stubs._StubLoader({"PMQA_PROBE_RECORDER": True}))
        if fullname.startswith(self.library.top + "."):
            return None  # a module of the library the adapter does not serve: ImportError, as an old version
        return None


class _LeafLoader(importlib.abc.Loader):
    def __init__(self, finder: LibraryFinder, name: str):
        self.finder, self.name = finder, name

    def create_module(self, spec):
        attributes: Dict[str, object] = {e.function: make_recorder(e, self.finder.log, spec.name)
                                         for e in self.finder.library.entries}
        attributes["PMQA_PROBE_RECORDER"] = True
        return stubs.provided_module(spec.name, attributes)

    def exec_module(self, module):
        self.finder.log.imports.append(self.name)
