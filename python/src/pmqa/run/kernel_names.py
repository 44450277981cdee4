"""Which path an op took, from the names of the GPU kernels it launched: the kernel-name table and
its classification are the interchange layer's (cases/include/pmqa/cases/kernel_names.hpp; the
reviewed table cases/data/kernel_names.json is compiled in). `--kernel-names FILE` adds entries
(same schema), matched before the table's: for a new library's kernels, after review.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from .._native import core

KernelEntry = core.KernelEntry
PathReport = core.PathReport
KernelNamesError = core.KernelNamesError  # a ValueError naming the file and the place
parse_kernel_names = core.parse_kernel_names  # (text, origin) -> [KernelEntry]


def load_kernel_names(extra_files: Sequence[str] = ()) -> list:
    """The entries of --kernel-names files (in order), then the reviewed table's."""
    return core.load_kernel_names([str(p) for p in extra_files])


def classify(names: Iterable[str], entries: Sequence[KernelEntry]) -> PathReport:
    """The path a call's kernel launches mean: two-stage over fused over eager, else none."""
    return core.classify_kernels(list(names), list(entries))


def judge(report: PathReport, expected: Optional[str]) -> Optional[str]:
    """Why the launches fail --expect-path (None when they pass, or when nothing is expected): the path
    gate of cases/run_gates.hpp, which pmqa verify re-applies to the file."""
    verdict = core.path_gate(expected or "", report.path, report.unknown, report.describe())
    return None if verdict.passed else verdict.message
