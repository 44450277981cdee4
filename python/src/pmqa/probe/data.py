"""pmqa's reviewed data as the probe reads it: the expected-dispatch matrix and the arch table.

pmqa.cases.data finds and reads the files (package data first, then the source tree). The loaders check what the
probe relies on; the C++ loader (dispatch/src/matrix.cpp) is the strict validator of both files.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from ..cases.data import DataError, data_path as data_file  # noqa: F401  (data_file: the probe's name for it)
from ..cases.data import read_json as _load_json


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
    path = Path(path) if path else data_file("arch_table.json")
    doc = _load_json(path)
    try:
        archs = {a["target"]: ArchInfo(a["target"], a["vendor"], a["fp8"], list(a.get("products", [])), a.get("note", ""))
                 for a in doc["archs"]}
    except (KeyError, TypeError) as exc:
        raise DataError(f"{path}: not an arch table ({exc})") from exc
    return ArchTable(str(path), archs)


def _row(kind: str, index: int, j: dict, source: str) -> Row:
    where = f"{source}: {'engine row' if kind == 'engine' else 'row'} {index}"
    try:
        row = Row(kind=kind, index=index, arch=j["arch"], kernels_present=j["kernels"] == "present",
                  block_size=int(j["block_size"]), next_n=int(j["next_n"]), heads=int(j.get("heads", 64)),
                  kernels_enabled=bool(j.get("kernels_enabled", True)), entry_kwargs=dict(j.get("entry_kwargs", {})),
                  path=j.get("path"), fp8=j.get("fp8"), layout=j.get("layout"), error=j.get("error"),
                  reason=j.get("reason", ""), reason_contains=j.get("reason_contains", ""), note=j.get("note", ""),
                  engine=j.get("engine", ""), entry=j.get("entry", ""),
                  replaces_policy_row=bool(j.get("replaces_policy_row", False)))
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{where}: {exc!r}") from exc
    if j.get("kernels") not in ("present", "absent"):
        raise DataError(f"{where}: \"kernels\" must be present or absent")
    if kind == "engine" and (not row.engine or not row.reason or not row.path):
        raise DataError(f"{where}: an engine row needs \"engine\", \"path\" and \"reason\"")
    return row


def load_matrix(path: Optional[Path] = None) -> Matrix:
    path = Path(path) if path else data_file("arch_matrix.json")
    doc = _load_json(path)
    if doc.get("schema") != "pmqa-arch-matrix/1":
        raise DataError(f"{path}: schema is {doc.get('schema')!r}, this probe reads 'pmqa-arch-matrix/1'")
    rows = [_row("policy", i, j, str(path)) for i, j in enumerate(doc.get("rows", []))]
    engine_rows = [_row("engine", i, j, str(path)) for i, j in enumerate(doc.get("engine_rows", []))]
    if not rows:
        raise DataError(f"{path}: no rows")
    return Matrix(str(path), rows, engine_rows)
