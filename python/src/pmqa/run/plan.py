"""The cases a run works through, as its RunRecord: a fresh run's plan from the case files (--case,
--shard, names refused unread), or an interrupted run's record to finish (--resume)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import List, Optional, Tuple

from pmqa.cases.logits_file import sha256_file
from pmqa.cases.shard import assign_shards

from .case_files import case_header_and_work, name_problem, selected
from .record import RecordedCase, RecordError, RunRecord
from .text import clean_line, say


def plan_run(args: argparse.Namespace, files: List[Path], run_id: str, producer: str, convention: str,
             shard: Optional[Tuple[int, int]]) -> Tuple[RunRecord, List[RecordedCase]]:
    """A fresh run's record of the case files it takes, and the cases among them refused by name
    before the run (reported when it starts)."""
    out_dir = Path(args.out)
    _note_earlier_run(out_dir)
    cases: List[RecordedCase] = []
    refused: List[RecordedCase] = []
    for path in files:
        problem = name_problem(path.name)
        if problem:  # refused unread; its name is stored escaped (the record is JSON other tools read)
            cases.append(RecordedCase(clean_line(str(path)), clean_line(path.stem), result=clean_line(path.name),
                                      status="invalid", message=f"{clean_line(str(path))}: file: refused: {problem}"))
            refused.append(cases[-1])
            continue
        name, suite, work = case_header_and_work(path)
        if name is not None and not selected(name, path.stem, args.case):
            continue
        cases.append(RecordedCase(str(path), name or path.stem, suite=suite, result=path.name, work=work))
    shard_of = len(cases)
    if shard:
        # The split is over every case the run would take without --shard (refused ones too: each is
        # reported by exactly one shard), by name and work: the split pmqa gen --shard made of the suite.
        k, n = shard
        which = assign_shards([(c.name, c.work or 1) for c in cases], n)
        cases = [c for c, w in zip(cases, which) if w == k]
        taken = {id(c) for c in cases}
        refused = [c for c in refused if id(c) in taken]
    settings = {k: v for k, v in vars(args).items() if k not in ("resume", "run_id")}
    record = RunRecord(out_dir, run_id, producer, args.op, convention, settings, cases)
    if shard:
        record.shard, record.shard_of = f"{shard[0]}/{shard[1]}", shard_of
    ours = {c.result for c in cases}
    others = sorted(p.name for p in out_dir.glob("*.safetensors") if p.name not in ours)
    if others:
        say(f"pmqa-run: note: {len(others)} file(s) in --out are not this run's (e.g. {others[0]}): `pmqa verify "
            f"{out_dir}` will report them as stale")
    return record, refused


def _note_earlier_run(out_dir: Path) -> None:
    try:
        old = RunRecord.load(out_dir)
    except RecordError:
        return
    if not old.complete:
        done = sum(c.finished for c in old.cases)
        say(f"pmqa-run: note: --out held run {old.run_id}, which did not finish ({done} of {len(old.cases)} "
            f"case(s)); this run replaces its record (--resume would have finished it)")


def resume_plan(record: RunRecord, out_dir: Path) -> RunRecord:
    """The interrupted run's record, its finished cases kept where their files are unchanged; a case
    the system refused to store (not-written: a full disk, a quota, a read-only file system) runs again."""
    kept = again = 0
    for c in record.cases:
        if c.status == "not-written":
            say(f"pmqa-run: resume: {c.result}: run {record.run_id} could not store its result "
                f"({clean_line(c.message.split('; ')[0] if c.message else 'not written')}); the case runs again")
            again += 1
            continue
        if not c.finished:
            continue
        if c.written:
            path = out_dir / c.result
            try:
                same = path.is_file() and sha256_file(path) == c.sha256
            except OSError:
                same = False
            if not same:
                say(f"pmqa-run: resume: {c.result}: the file is gone or changed since run {record.run_id} "
                    f"wrote it; the case runs again")
                c.status, c.message, c.written, c.sha256 = "pending", "", False, ""
                again += 1
                continue
        kept += 1
    record.resumed.append(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    record.complete, record.stopped = False, ""
    pending = sum(not c.finished for c in record.cases)
    say(f"pmqa-run: resuming run {record.run_id}: {kept} finished case(s) kept, {pending} to run"
        f"{f' ({again} again)' if again else ''}")
    return record
