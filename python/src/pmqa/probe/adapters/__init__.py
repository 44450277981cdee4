"""What the probe knows about an engine, one small module per engine (vllm.py first).

An adapter names the engine's entry point and its module, the layers through which the GPU's
identity reaches the engine, the kernel libraries the entry may call and which of their entries
(and of the engine's own functions) mean which path, how a matrix row becomes the engine's
configuration (environment switches, entry keywords) and the call's arguments. A new engine is one
adapter plus its rows in fixtures/arch_matrix.json ("engine_rows" with "engine": its name).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple


@dataclass(frozen=True)
class Entry:
    """A function whose call means a path: a kernel library's entry or one of the engine's own."""

    name: str                      # the adapter's name for it, used in engine rows' "entry"
    function: str                  # attribute name (in the library module / the engine's entry module)
    path: str                      # "fused", "two-stage" or "reference-fallback"
    kind: str = "library"          # "library" or "engine"
    layout: str = "normal"         # the KV layout it reads unless layout_kwarg says otherwise
    layout_kwarg: Optional[str] = None   # keyword whose truth means SHUFFLE (AITER's Preshuffle)
    block_kwarg: Optional[str] = None    # keyword that must equal the cache's block_size (KVBlockSize)
    out_arg: Optional[int] = None  # position of the caller-owned output buffer, if it writes one
    out_shape: str = "rows"        # "rows": [B*next_n, max_model_len]; "heads_rows": [H, B*next_n, max_model_len]
    returns: bool = False          # returns a new [B*next_n, max_model_len] fp32 tensor
    len_arg: int = 6               # position of max_model_len
    required: bool = True          # an engine function the adapter expects in every version


@dataclass(frozen=True)
class Library:
    name: str                      # "AITER"
    vendor: str                    # whose GPUs it serves ("amd"): a matrix row's "kernels" is this library
    top: str                       # top-level package, hidden when the library is absent: "aiter"
    modules: Tuple[str, ...]       # modules holding the entries (all served: versions differ in which one they try)
    entries: Tuple[Entry, ...]


@dataclass
class Adapter:
    name: str
    title: str
    vendors: Tuple[str, ...]                 # GPU vendors whose rows the entry expresses
    not_expressed: Dict[str, str]            # vendor -> why its rows are skipped
    entry_module: str
    entry: str
    arch_reaches_engine: str                 # one line for the report and the README
    package: str                             # the engine's top-level package ("vllm")
    real_modules: Tuple[str, ...]            # --source: modules run from the tree (the rest is stubbed)
    preimport: Tuple[str, ...]               # imported before each call, so the entry's lazy imports are ready
    provided_modules: Dict[str, Callable]    # --source: name -> factory(name) -> module
    third_party_stubs: Tuple[str, ...]       # --source: stubbed when this interpreter lacks them
    third_party_aliases: Dict[str, str]      # --source: stand-ins for absent third-party modules
    libraries: Tuple[Library, ...]
    engine_entries: Tuple[Entry, ...]        # the engine's own functions that mean a path
    kernels: Dict[str, str]                  # Triton kernel name -> entry name, for launches without a wrapper
    default_entry: Dict[str, str]            # path -> entry that serves it when a row names none
    entry_kwargs: Tuple[str, ...]            # keywords engine rows may set
    environment: Callable[[bool, bool], Dict[str, str]]       # (present, enabled) -> env switches
    entry_globals: Dict[str, Callable] = field(default_factory=dict)  # name -> factory(log) placed in the entry module
    fp8_dtype: Callable = None               # (modules) -> the engine's fp8 dtype, as its callers quantise q
    inputs: Callable = None                  # (torch, fp8_dtype, row) -> (args, kwargs, shape the entry returns)
    torch_needs: Tuple[str, ...] = ()        # torch attributes the engine's files use: a torch without them is
                                             # too old for the engine, and the probe runs its stand-in instead

    def all_entries(self) -> List[Entry]:
        out = [e for lib in self.libraries for e in lib.entries]
        return out + list(self.engine_entries)

    def entry_named(self, name: str) -> Optional[Entry]:
        for e in self.all_entries():
            if e.name == name:
                return e
        return None


ENGINES = ("vllm",)


def load(name: str) -> Adapter:
    if name not in ENGINES:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}").ADAPTER
