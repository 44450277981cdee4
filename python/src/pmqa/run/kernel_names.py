"""Which path an op took, from the names of the GPU kernels it launched.

The names map to (library, path) through reviewed data, cases/data/kernel_names.json (its
"about" says the rules; pmqa.cases.kernel_names reads it): AITER's Gluon and Triton fused kernels,
its stage 1, DeepGEMM's kernel and its metadata kernel, the ATen and BLAS kernels of a framework's eager op and the two-stage head sum,
pmqa's own kernels. `--kernel-names FILE` adds entries (same schema), matched before the table's:
for a new library's kernels, after review.

    path  = two-stage  if any kernel means two-stage
            fused      else, if any kernel means fused
            eager      else, if any kernel means eager
            none       else (the op launched nothing that computes logits)
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

# The table and its reader are the interchange layer's (pmqa.cases.kernel_names); re-exported for the runner.
from ..cases.kernel_names import MEANS, SCHEMA, KernelEntry, load_kernel_names, parse_kernel_names  # noqa: F401

PATHS = ("fused", "two-stage", "eager")


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
