"""pmqa's reviewed data as the probe reads it: the expected-dispatch matrix and the arch table.

The C++ loaders (dispatch/: the builtin files are compiled in) read and validate both, strictly; the
probe gets their rows as the plain records below.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from .._native import core


class DataError(Exception):
    """A matrix or arch table that is missing or invalid; the message names the file and the place."""

@dataclass
class ArchInfo:
    target: str
    vendor: str
    fp8: str
    products: List[str]
    note: str


@dataclass
class ArchTable:
    source: str
    archs: Dict[str, ArchInfo]

    def find(self, target: str) -> Optional[ArchInfo]:
        return self.archs.get(target)

    def label(self, arch: str) -> str:
        info = self.find(arch.split(":")[0])
        if info is None:
            return f"{arch} (not in the arch table)"
        return f"{arch} ({'/'.join(info.products)})"


@dataclass
class Row:
    """A row of "rows" (kind "policy") or of "engine_rows" (kind "engine")."""

    kind: str
    index: int
    arch: str
    kernels_present: bool
    block_size: int
    next_n: int
    heads: int = 64
    kernels_enabled: bool = True
    entry_kwargs: Dict[str, object] = field(default_factory=dict)
    path: Optional[str] = None
    fp8: Optional[str] = None
    layout: Optional[str] = None
    error: Optional[str] = None
    reason: str = ""
    reason_contains: str = ""
    note: str = ""
    engine: str = ""
    entry: str = ""
    replaces_policy_row: bool = False

    @property
    def id(self) -> str:
        return ("P" if self.kind == "policy" else "E") + str(self.index)

    def context(self) -> tuple:
        return (self.arch, self.kernels_present, self.block_size, self.next_n, self.heads)


@dataclass
class Matrix:
    source: str
    rows: List[Row]
    engine_rows: List[Row]


def load_arch_table(path: Optional[Path] = None) -> ArchTable:
    try:
        doc = core.arch_table(None if path is None else str(path))
    except ValueError as exc:
        raise DataError(str(exc)) from None
    return ArchTable(doc["source"], {a["target"]: ArchInfo(**a) for a in doc["archs"]})


def load_matrix(path: Optional[Path] = None) -> Matrix:
    try:
        doc = core.arch_matrix(None if path is None else str(path))
    except ValueError as exc:
        raise DataError(str(exc)) from None
    return Matrix(doc["source"], [Row(kind="policy", **r) for r in doc["rows"]],
                  [Row(kind="engine", **r) for r in doc["engine_rows"]])
