"""The run record and the lock: what a pmqa-run did in its --out folder, kept in the folder.

OUT/pmqa-run.json (schema "pmqa-run-record/1") names the run (run_id, producer, op, convention,
the settings it ran with), lists every case it set out to run with its outcome ("pending" until the
case finishes; then "ok", "failed", "unsupported" or "invalid", the message, and for a written
result file its name and SHA-256), and says whether the run is complete, or why it stopped. It is
rewritten atomically as each case finishes, so a run killed at any point leaves a record that says
how far it got. `pmqa verify OUT` reads it: it judges the files this run wrote, calls every other
*.safetensors in OUT stale, and reports an incomplete run; `pmqa-run --resume --out OUT` finishes
the run from it. Its reader and writer are the C++ ones pmqa verify uses
(cases/include/pmqa/cases/run_record.hpp, through pmqa._core): one shape, one set of rules (a
result must be a plain file name in the folder, or the record is refused, by verify and --resume
alike); the dataclasses here are the record as the runner keeps it while cases finish.

OUT/pmqa-run.lock is held for the whole run: a second pmqa-run into the same folder is refused with
the holder's pid and run id instead of overwriting its results; `pmqa verify` asks whether it is held
without taking it, so it can say "still running". The lock is C++'s (cases/include/pmqa/cases/
run_lock.hpp): an open-file-description lock, which only closing the descriptor it was taken on
releases (a POSIX lock was dropped by any close of the file in the process: reading the folder's
earlier record after locking let a second run in). The kernel drops it when the process ends.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from .._native import core
from .text import clean_line

RECORD_NAME = core.RUN_RECORD_NAME
LOCK_NAME = core.RUN_LOCK_NAME
SCHEMA = core.RUN_RECORD_SCHEMA
FINISHED = ("ok", "failed", "unsupported", "invalid")

#: A run record that cannot be read, is not one, or breaks a rule (a ValueError; the C++ reader's message).
RecordError = core.RunRecordError


#: Another pmqa-run holds the folder's lock (the message says who).
OutputBusy = core.RunLockBusy


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}-{secrets.token_hex(4)}"


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class RecordedCase:
    file: str                    # the input case file (absolute path)
    name: str                    # the case's name (its file name without .safetensors when unreadable)
    suite: str = ""              # the case file's suite
    result: str = ""             # the result file's name in OUT (always the input's file name)
    status: str = "pending"      # "pending", then one of FINISHED
    message: str = ""
    written: bool = False        # a result file was written for it (ok, and some failures: guards, relaunch)
    sha256: str = ""             # of the result file as written
    seconds: float = 0.0
    shape: str = ""
    limit: str = ""
    bench_ms: str = ""
    floor_ratio: str = ""
    kernel_path: str = ""
    work: int = 0                # shard_work of the case's shape (what --shard and --devices balance by); 0: unknown
    device: str = ""             # --devices: the device whose worker ran it

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


@dataclass
class RunRecord:
    out_dir: Path
    run_id: str
    producer: str
    op: str
    convention: str
    settings: Dict[str, Any]
    cases: List[RecordedCase] = field(default_factory=list)
    started: str = field(default_factory=now)
    updated: str = ""
    complete: bool = False
    stopped: str = ""            # why the run stopped before its end ("" while running, or complete)
    resumed: List[str] = field(default_factory=list)  # when --resume went on with it
    shard: str = ""              # --shard K/N: the shard this run took ("" for all)
    shard_of: int = 0            # --shard: how many cases the whole split was over

    def __post_init__(self) -> None:
        # Text a command line or an op controls, made clean once: the record is JSON other tools read.
        # Paths were refused unless printable UTF-8 (pmqa.run.case_files), and messages are clean.
        self.producer, self.op, self.settings = clean_line(self.producer), clean_line(self.op), _clean_values(self.settings)

    @property
    def path(self) -> Path:
        return self.out_dir / RECORD_NAME

    def save(self) -> None:
        """Atomically; OSError when the folder takes no more writes (nothing is left half-written)."""
        self.updated = now()
        core.write_run_record(self)

    @classmethod
    def load(cls, out_dir: Path) -> "RunRecord":
        """The folder's record, read strictly (RecordError saying why it is missing or refused)."""
        fields = core.load_run_record(str(out_dir))
        cases = [RecordedCase(**c) for c in fields.pop("cases")]
        return cls(out_dir=Path(out_dir), cases=cases, **fields)


def _clean_values(value: Any) -> Any:
    """Strings anywhere in a JSON value made clean (identical for ordinary text)."""
    if isinstance(value, str):
        return clean_line(value)
    if isinstance(value, list):
        return [_clean_values(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean_values(v) for k, v in value.items()}
    return value


class OutputLock:
    """The folder's lock (OUT/pmqa-run.lock), held until release() or exit."""

    def __init__(self, out_dir: Path):
        self.path = out_dir / LOCK_NAME
        self.fd: Optional[int] = None

    def acquire(self, run_id: str, producer: str) -> None:
        """OutputBusy when another run holds it; OSError when the folder cannot be written (EROFS, ...)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            core.lock_run_folder(fd, run_id, producer)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


__all__ = ["FINISHED", "LOCK_NAME", "RECORD_NAME", "SCHEMA", "OutputBusy", "OutputLock", "RecordError",
           "RecordedCase", "RunRecord", "new_run_id", "now"]
