"""Which path an op took, from the names of the GPU kernels it launched.

The names map to (library, path) through reviewed data, fixtures/data/kernel_names.json (its
"about" says the rules): AITER's Gluon and Triton fused kernels, its stage 1, DeepGEMM's kernel and
its metadata kernel, the ATen and BLAS kernels of a framework's eager op and the two-stage head sum,
pmqa's own kernels. `--kernel-names FILE` adds entries (same schema), matched before the table's:
for a new library's kernels, after review.

    path  = two-stage  if any kernel means two-stage
            fused      else, if any kernel means fused
            eager      else, if any kernel means eager
            none       else (the op launched nothing that computes logits)
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from pmqa.cases.strict_json import duplicate_key_hook

from .._data import DataError, data_path

SCHEMA = "pmqa-kernel-names/1"
MEANS = ("fused", "two-stage", "eager", "any")
PATHS = ("fused", "two-stage", "eager")
_ENTRY_KEYS = ("pattern", "library", "means", "role", "source")


@dataclass(frozen=True)
class KernelEntry:
    pattern: str
    library: str
    means: str
    role: str
    source: str
    origin: str


@dataclass
class PathReport:
    path: str                                  # fused, two-stage, eager or none
    kernels: List[Tuple[str, int]]             # (name, launches), in first-launch order
    known: Dict[str, KernelEntry]              # name -> the entry it matched
    unknown: List[str]                         # names no entry matches

    def describe(self, limit: int = 6) -> str:
        """'_deepgemm_fp8_paged_mqa_logits_stage1 (aiter two-stage) x1, ...'"""
        parts = []
        for name, count in self.kernels[:limit]:
            e = self.known.get(name)
            short = name if len(name) <= 90 else name[:87] + "..."
            parts.append(f"{short} ({e.library} {e.means}) x{count}" if e else f"{short} (unknown) x{count}")
        if len(self.kernels) > limit:
            parts.append(f"and {len(self.kernels) - limit} more")
        return ", ".join(parts) if parts else "no kernel"

    def metadata(self) -> str:
        """For the output file: 'name x count; ...' (full names)."""
        return "; ".join(f"{name} x{count}" for name, count in self.kernels)


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


def match(name: str, entries: Sequence[KernelEntry]) -> Optional[KernelEntry]:
    for e in entries:
        if fnmatch.fnmatchcase(name, e.pattern):
            return e
    return None


def classify(names: Iterable[str], entries: Sequence[KernelEntry]) -> PathReport:
    """The path a call's kernel launches mean (module docstring)."""
    counts: Counter = Counter()
    order: List[str] = []
    for n in names:
        if n not in counts:
            order.append(n)
        counts[n] += 1
    known: Dict[str, KernelEntry] = {}
    unknown: List[str] = []
    for n in order:
        e = match(n, entries)
        if e is None:
            unknown.append(n)
        else:
            known[n] = e
    means = {e.means for e in known.values()}
    path = next((p for p in ("two-stage", "fused", "eager") if p in means), "none")
    return PathReport(path, [(n, counts[n]) for n in order], known, unknown)


def judge(report: PathReport, expected: Optional[str]) -> Optional[str]:
    """Why the launches fail --expect-path (None when they pass, or when nothing is expected)."""
    if report.unknown:
        shown = ", ".join(report.unknown[:4]) + (f" and {len(report.unknown) - 4} more" if len(report.unknown) > 4 else "")
        return (f"the op launched kernel(s) the kernel-name table does not know: {shown} (kernels seen: "
                f"{report.describe()}); review them and add them with --kernel-names FILE")
    if expected is not None and report.path != expected:
        return (f"expected the {expected} path, the op took the {report.path} path: it launched "
                f"{report.describe()}")
    return None
