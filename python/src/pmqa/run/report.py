"""What pmqa-run tells about its cases: the line printed as each case finishes, the summary at the
end, and the JUnit report (rewritten after every case, so a killed run leaves one)."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Sequence

from .case_run import CaseResult
from .junit import write_junit
from .record import RecordedCase, RunRecord
from .text import indented

NOT_REACHED = ("not run: pmqa-run has not reached this case: the run is still going, or was interrupted or killed "
               "before it (`pmqa-run --resume --out {out}` finishes the run)")


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


def summary_lines(record: RunRecord, args: argparse.Namespace, status: int, workers: Any, devices: List[str],
                  out_dir: Path) -> List[str]:
    """The run's last lines: its counts and exit status, the limits that refused cases, the worker
    processes it took (workers: the pool, None when none started), and how to finish a stopped run."""
    lines: List[str] = []
    cases = record.cases
    count = Counter(c.status for c in cases)
    not_run = count["pending"]
    not_written = count["not-written"]
    if not cases:
        lines.append(f"pmqa-run: error: no case matched --case {' '.join(args.case)}")
    how = "skipped" if args.skip_unsupported else "refused"
    shard = f"shard {record.shard}: {len(cases)} of {record.shard_of} case(s)" if record.shard \
        else f"{len(cases)} case(s)"
    lines.append(f"pmqa-run: {shard}: {count['ok']} written, {count['failed']} failed, "
                 f"{count['unsupported']} unsupported ({how}), {count['invalid']} invalid"
                 f"{f', {not_written} not written' if not_written else ''}"
                 f"{f', {not_run} not run' if not_run else ''} (exit {status})")
    limits = Counter(c.limit for c in cases if c.status == "unsupported")
    if limits:
        lines.append("pmqa-run: unsupported by limit: " +
                     ", ".join(f"{lid} {n}" for lid, n in sorted(limits.items(), key=lambda x: (-x[1], x[0]))))
    if not args.in_process and workers is not None and workers.started > max(1, len(devices)):
        lines.append(f"pmqa-run: {workers.started} worker processes ("
                     f"{f'{len(devices)} device(s), ' if devices else ''}a fresh one after each fault)")
    if record.stopped:
        kept = sum(c.written and (out_dir / c.result).is_file() for c in cases)
        lines.append(f"pmqa-run: the run stopped early ({record.stopped}): {kept} result file(s) kept in "
                     f"{out_dir}, {not_run} case(s) not run{f', {not_written} not written' if not_written else ''}; "
                     f"`pmqa-run --resume --out {out_dir}` finishes it")
    elif not_written:
        lines.append(f"pmqa-run: {not_written} result file(s) not written (the system refused them: not the op's "
                     f"failure); `pmqa-run --resume --out {out_dir}` runs those cases again")
    return lines


class _Entry:
    """A recorded case as JUnit shows it (pmqa.run.junit's result shape): a case not written (the
    system refused its file) is an error with its message, like one not run."""

    def __init__(self, c: RecordedCase, not_run: str):
        self.name, self.suite, self.path, self.seconds = c.name, c.suite, c.file, c.seconds
        self.status = c.status if c.finished else "not-run"
        self.message = c.message if c.finished or c.status == "not-written" else not_run


class _RunFault:
    """A fault of the run, not of one case (an answer out of turn after the last case): a JUnit error."""

    def __init__(self, message: str):
        self.name, self.suite, self.path, self.seconds = "pmqa-run worker answers", "pmqa-run", "", 0.0
        self.status, self.message = "invalid", message


def write_run_junit(args: argparse.Namespace, record: RunRecord, producer: str, convention: str,
                    out_dir: Path, faults: Sequence[str] = ()) -> None:
    """--junit FILE as the record stands (an OSError when it cannot be written): the cases not run
    are errors, saying why; so is each of the run's faults (a testcase "pmqa-run worker answers")."""
    if record.stopped:
        not_run = f"not run: the run stopped before this case: {record.stopped}"
    else:
        not_run = NOT_REACHED.format(out=out_dir)
    properties = [("run_id", record.run_id), ("producer", producer), ("op", args.op),
                  ("convention", convention), ("complete", str(record.complete).lower())]
    if record.stopped:
        properties.append(("stopped", record.stopped))
    entries = [_Entry(c, not_run) for c in record.cases] + [_RunFault(f) for f in faults]
    write_junit(args.junit, f"pmqa-run {convention}", entries, properties)
