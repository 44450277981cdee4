"""The kernel-name table: which library and path a GPU kernel's name means (reviewed data).

cases/data/kernel_names.json (its "about" says the rules) is pmqa's, found by pmqa.cases.data like
the envelopes; `--kernel-names FILE` files have the same schema and are matched before it. The
reader is strict: unknown keys, missing or empty fields and duplicate keys are errors naming the
file. pmqa.run.kernel_names classifies a call's launches with the entries read here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import List, Sequence

from .data import DataError, data_path
from .strict_json import duplicate_key_hook

SCHEMA = "pmqa-kernel-names/1"
MEANS = ("fused", "two-stage", "eager", "any")
_ENTRY_KEYS = ("pattern", "library", "means", "role", "source")


@dataclass(frozen=True)
class KernelEntry:
    pattern: str
    library: str
    means: str
    role: str
    source: str
    origin: str


def _fail(origin: str, where: str, problem: str):
    raise DataError(f"{origin}: {where}: {problem}")


def parse_kernel_names(text: str, origin: str) -> List[KernelEntry]:
    """The entries of a kernel-name file; strict (unknown keys, missing or empty fields are errors)."""
    no_dupes = duplicate_key_hook(DataError, lambda k: f"{origin}: key \"{k}\" appears twice in one object")
    try:
        doc = json.loads(text, object_pairs_hook=no_dupes)
    except ValueError as e:
        _fail(origin, "JSON", str(e))
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        _fail(origin, "schema", f"expected \"{SCHEMA}\"")
    for k in doc:
        if k not in ("schema", "about", "kernels"):
            _fail(origin, "top level", f"unknown key \"{k}\" (known: schema, about, kernels)")
    kernels = doc.get("kernels")
    if not isinstance(kernels, list) or not kernels:
        _fail(origin, "kernels", "expected a non-empty array")
    out = []
    for i, e in enumerate(kernels):
        where = f"kernels[{i}]"
        if not isinstance(e, dict):
            _fail(origin, where, "expected an object")
        for k in e:
            if k not in _ENTRY_KEYS:
                _fail(origin, where, f"unknown key \"{k}\" (known: {', '.join(_ENTRY_KEYS)})")
        for k in _ENTRY_KEYS:
            if not isinstance(e.get(k), str) or not e[k].strip():
                _fail(origin, f"{where}.{k}", "missing or empty")
        if e["means"] not in MEANS:
            _fail(origin, f"{where}.means", f"\"{e['means']}\" is not one of {', '.join(MEANS)}")
        out.append(KernelEntry(e["pattern"], e["library"], e["means"], e["role"], e["source"], origin))
    return out


def load_kernel_names(extra_files: Sequence[str] = ()) -> List[KernelEntry]:
    """The entries of --kernel-names files (in order), then the reviewed table's."""
    entries: List[KernelEntry] = []
    for path in list(extra_files) + [str(data_path("kernel_names.json"))]:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise DataError(f"{path}: cannot read the kernel-name file: {e.strerror or e}") from None
        entries.extend(parse_kernel_names(text, path))
    return entries
