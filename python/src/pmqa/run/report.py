"""What pmqa-run tells about its cases: the line printed as each case finishes, the summary at the
end, and the JUnit report (rewritten after every case, so a killed run leaves one). The summary and
the JUnit are the C++ record's (cases/include/pmqa/cases/run_report.hpp, through pmqa._core)."""

from __future__ import annotations

import argparse
from typing import Any, Dict, List, Sequence

from .._native import core
from .case_run import CaseResult
from .record import RunRecord
from .text import indented


def case_line(r: CaseResult, device: str, header: Dict[str, Any], skip_unsupported: bool) -> str:
    """The line printed when a case finishes (on device, "" without --devices); header: the workers'
    (backend, convention, platform)."""
    label = f"case {r.name} ({r.path})" + (f" on device {device}" if device else "")
    if r.status == "ok":
        bench = f"{r.bench_ms:>9} ms" if r.bench_ms else ""
        if r.kernel_ms:
            bench = f"{r.kernel_ms:>9} ms kernels, {r.bench_ms} ms wall"
        ratio = f"  x{r.floor_ratio} floor{'' if r.floor_gated else ' (not gated)'}" if r.floor_ratio else ""
        path = f"  path {r.kernel_path}" if r.kernel_path else ""
        on = f"  [{device}]" if device else ""
        return f"ok       {r.name:<26} {r.shape:<34} {bench}{ratio}{path}{on}  {r.out_path}"
    if r.status == "unsupported":
        if skip_unsupported:
            return (f"SKIP     {r.name:<26} {r.shape:<34} unsupported by {header['convention']} on "
                    f"{header['platform']}: {r.message}")
        return f"UNSUPPORTED {label}: {header['convention']} on {header['platform']}: {r.message}"
    if r.status == "failed":
        ratio = f" [x{r.floor_ratio} floor]" if r.floor_ratio else ""
        return indented(f"FAIL     {label}{ratio}: {r.message}")
    if r.status == "not-written":
        return indented(f"ERROR    {label}: {r.message}")
    return indented(f"ERROR    {r.message}")


def summary_lines(record: RunRecord, args: argparse.Namespace, status: int, workers: Any, devices: List[str]
                  ) -> List[str]:
    """The run's last lines: its counts and exit status, the limits that refused cases, the worker
    processes it took (workers: the pool, None when none started), and how to finish a stopped run
    (cases/include/pmqa/cases/run_report.hpp says them)."""
    started = 0 if args.in_process or workers is None else workers.started
    return core.run_summary_lines(record, args.case or [], args.skip_unsupported, status, started, len(devices))


def write_run_junit(path: str, record: RunRecord, faults: Sequence[str] = ()) -> None:
    """--junit FILE as the record stands (an OSError when it cannot be written): the cases not run
    are errors, saying why; so is each of the run's faults (cases/.../run_report.hpp writes it)."""
    core.write_run_junit(path, record, list(faults))
