"""One case through an op: the envelope check, the call, the checks on what came back, the output file.

`CaseRunner.run(path)` does everything a case needs and returns a `CaseResult`; printing, counting
and the exit status are the caller's (pmqa.run.runner). The output file is on disk, written through a
temporary file and renamed into place, before run() returns. A file the system refuses to store
(a full disk, a quota, a read-only file system) leaves the case "not-written", not failed: the op is
not to blame, and `pmqa-run --resume` runs it again.

An op may fork. A child of the op that returns (or raises) into the runner's code instead of exiting
would go on as a second runner: write the case's file, answer for the worker, take the next case.
It never does: right after every call of the op (and of its metadata function), a process that is
not the one that built the CaseRunner says so on its stderr and ends (os._exit).
"""

from __future__ import annotations

import errno
import inspect
import json
import os
import statistics
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from pmqa.cases import CaseFile, CaseFileError, LogitsFile, read_case_file, sha256_file, write_case_file
from pmqa.cases import write_logits_file
from pmqa.cases.atomic_file import CANNOT_WRITE_HERE
from pmqa.cases.envelope import traits_of
from pmqa.cases.logits_file import RESERVED_LOGITS_KEYS

from .._native import core

from .backend import SENTINEL_BITS
from .conventions import OpOutputError
from .conventions.base import recorded_tolerance
from .inputs_check import changed_inputs, snapshot
from .kernel_names import classify, judge
from .text import clean

# Metadata this runner (re)writes: stale values from the input file are dropped (a gate an earlier run
# recorded must not travel into this run's file). The gates' keys are cases/run_gates.hpp's.
RUNNER_KEYS = ("bench_ms", "bench_min_ms", "bench_iters", "bench_warmup", "bench_flush_bytes", "kernel_ms",
               "kernel_min_ms", "kernel_activities", "kernel_unseen_calls", "kernel_timing", "floor_ratio_wall",
               "floor_basis", "tolerance", "convention", "device", "runner", "logits_from", "logits_dtype",
               "out_row_stride", "num_sms", "context_lens_passed", "relaunches", "op_kwargs", "nan", "platform",
               "envelope", "kernels", "kernels_seen", "kernels_unknown", "path", "expected_path", "floor_bytes",
               "floor_ms", "floor_ratio", "copy_gbps", "floor_gate", "floor_max_ratio", "floor_min_mb", "run_id")

# Two patterns the runner leaves in free memory before the first launch and the relaunch: cells of
# an op-owned output still holding them were never written by the op.
POISON_FIRST = 0x7FF0DEAD
POISON_AGAIN = 0x7FF0BEEF


@dataclass
class CaseResult:
    path: str
    name: str
    status: str                 # "ok", "failed", "unsupported", "invalid", "not-written" (the system refused the file)
    message: str = ""
    shape: str = ""
    limit: str = ""             # unsupported: the id of the limit the case breaks
    out_path: str = ""
    bench_ms: str = ""          # --bench: the median wall time (events around the call)
    kernel_ms: str = ""         # --bench: the median kernel time (the call's device activities summed)
    floor_ratio: str = ""       # --max-floor-ratio: the median kernel time over the byte floor
    floor_gated: bool = False   # whether the ratio was judged (the floor is at least --floor-min-mb)
    kernel_path: str = ""       # --expect-path: the path the kernels launched mean
    kernels: str = ""           # --expect-path: the kernels, named with what they mean
    seconds: float = 0.0
    restart: bool = False       # the worker that ran it must not run another (a device error)
    suite: str = ""             # the case file's suite (JUnit's classname)
    written: bool = False       # out_path was written (ok, and failures that keep the file: guards, relaunch)
    sha256: str = ""            # of the file written
    stop: str = ""              # why the run cannot go on (--out takes no more writes); "" to go on


class CaseFailed(Exception):
    pass


class CaseNotWritten(Exception):
    """The op's result was computed, and the system refused to store it (its message says why)."""


# errno values of a refused write, in words that name the cause (the system's own words follow).
WRITE_FAULTS = {
    errno.ENOSPC: "the file system is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted",
    errno.EFBIG: "the file is larger than the file system (or RLIMIT_FSIZE) allows",
    errno.EIO: "an I/O error of the disk",
    errno.ENOENT: "the folder is gone",
}


def write_fault_words(err: int, problem: str) -> str:
    """A refused write's cause in words: 'the file system is full (ENOSPC: No space left on device)'."""
    name = errno.errorcode.get(err, f"errno {err}")
    cause = WRITE_FAULTS.get(err)
    return f"{cause} ({name}: {os.strerror(err)})" if cause else f"{problem} ({name})"


def end_forked_child(owner: int, raised: Optional[BaseException] = None) -> None:
    """Ends this process when it is not owner, the process that runs the cases: a child the op forked
    that returned (or raised) into the runner's code. It says so (on its stderr: the op's output) and
    exits without running any more of the runner (no file, no answer, no next case, no atexit
    handler of the runner's): status 0 when the op returned in it, SystemExit's code for a sys.exit,
    1 for another exception."""
    if os.getpid() == owner:
        return
    if raised is None:
        how, status = "returned", 0
    elif isinstance(raised, SystemExit):
        code = raised.code
        how, status = "called sys.exit", code if isinstance(code, int) else (0 if code is None else 1)
    else:
        how, status = f"raised {type(raised).__name__}", 1
    try:
        os.write(2, (f"pmqa-run: process {os.getpid()}, a child the op forked in process {owner}, {how} into "
                     f"pmqa-run's code instead of exiting; it exits here (os._exit({status})) and never speaks for "
                     f"the runner\n").encode("utf-8", "replace"))
    except OSError:
        pass
    os._exit(status & 0xFF)


def shape_text(cf: CaseFile) -> str:
    return (f"B{cf.batch} N{cf.next_n} H{cf.heads} D{cf.head_dim} bs{cf.block_size} "
            f"{'fn' if cf.fp8_format == 'e4m3fn' else 'fnuz'} {cf.kv_layout}"
            f"{' lens2d' if cf.context_lens_2d else ''}")


def relaunch_difference(first: np.ndarray, again: np.ndarray, cf: CaseFile, contract: str) -> Optional[str]:
    """Bitwise comparison of two launches' logits over the cells the contract checks.

    The first launch ran after the runner left POISON_FIRST in free memory, the relaunch after
    POISON_AGAIN: cells that hold those patterns were never written by the op (an op-owned output
    handed back memory as it found it), which is not a race and is said so.
    """
    a, b = first.view(np.uint32), again.view(np.uint32)
    checked = np.ones(a.shape, dtype=bool)
    if contract == "valid-only":
        cols = np.arange(cf.max_model_len)[None, :]
        checked &= cols < cf.valid_keys()[:, None]
    differ = (a != b) & checked
    count = int(differ.sum())
    if count == 0:
        return None
    unwritten = differ & (a == POISON_FIRST) & (b == POISON_AGAIN)
    r, j = (int(i) for i in np.argwhere(differ)[0])
    if int(unwritten.sum()) == count:
        e = cf.valid_keys()
        rows = np.nonzero(unwritten.any(axis=1))[0]
        first_unwritten = int(np.argmax(unwritten[r]))
        return (f"relaunches differ in {count} cell(s) the contract checks, all never written by the op: they hold "
                f"the memory's previous contents (the runner's poison), in {rows.size} row(s); first at row {r} "
                f"(E_r = {int(e[r])}), which the op wrote only up to column {first_unwritten}")
    return (f"relaunches differ in {count} cell(s) the contract checks ({int(unwritten.sum())} of them never written); "
            f"first at row {r}, column {j}: {first[r, j]!r} then {again[r, j]!r} (a race?)")


def _takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether fn accepts the keyword argument name (by name or through **kwargs)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or extension function without a signature
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class CaseRunner:
    """Runs cases through one op under one convention and envelope (the settings of a pmqa-run)."""

    def __init__(self, settings, convention, envelope, backend, op, options, kernel_names=None,
                 heartbeat: Callable[[], None] = lambda: None):
        self.s = settings            # the parsed command line (argparse.Namespace)
        self.convention = convention
        self.envelope = envelope
        self.backend = backend
        self.op = op
        self.options = options
        self.kernel_names = kernel_names  # --expect-path: the kernel-name table (pmqa.run.kernel_names)
        self.heartbeat = heartbeat   # called before every op call (a worker's per-call timeout)
        self.out_dir = Path(settings.out)
        self.owner = os.getpid()     # the process that runs the cases (a forked child of the op never does)
        self._bandwidth: Optional[float] = None
        self._op_takes_fp8_format = _takes_keyword(op, "fp8_format")

    def header(self) -> dict:
        """What the run's first line says (picklable: a worker sends it to pmqa-run)."""
        return {"backend": self.backend.describe(), "convention": self.envelope.convention,
                "platform": self.envelope.platform, "limits": len(self.envelope.limits)}

    # ---- one case
    def run(self, path: Path, cf: Optional[CaseFile] = None) -> CaseResult:
        t0 = time.monotonic()
        if cf is None:
            try:
                cf = read_case_file(path)
            except CaseFileError as e:
                return CaseResult(str(path), path.stem, "invalid", clean(str(e)), seconds=time.monotonic() - t0)
        name = cf.name or path.stem
        result = CaseResult(str(path), name, "ok", shape=shape_text(cf), suite=cf.suite)
        traits = traits_of(cf, self.convention.chunk_q(cf, self.options), self.backend.arch())
        refusal = self.envelope.refusal(traits)
        if refusal is not None:
            result.status, result.limit, result.message = "unsupported", refusal[0], refusal[1]
        else:
            try:
                self._run_case(cf, path, result)
            except CaseFailed as e:
                result.status, result.message = "failed", clean(str(e))
            except CaseNotWritten as e:
                result.status, result.message = "not-written", clean(str(e))
        result.seconds = time.monotonic() - t0
        return result

    def _run_case(self, cf: CaseFile, path: Path, result: CaseResult) -> None:
        s = self.s
        try:
            try:
                inv = self.convention.build(cf, self.backend, self.options)
            except BaseException as e:
                end_forked_child(self.owner, raised=e)  # the metadata function may fork, too
                raise
            end_forked_child(self.owner)
        except Exception as e:  # noqa: BLE001 - e.g. the metadata function raised
            raise CaseFailed(f"building the {self.convention.name} arguments raised {self.exc(e)}") from None
        if cf.fp8_format in getattr(self.backend, "fp8_as_codes", {}) and self._op_takes_fp8_format:
            inv.kwargs.setdefault("fp8_format", cf.fp8_format)  # q is uint8 codes here: say how they decode
        owns_output = getattr(self.convention, "owns_output", False)
        out_bytes = 4 * cf.rows * max(cf.max_model_len, 1)
        before = snapshot(inv.inputs)  # before the poison: copying a strided device input may allocate
        if owns_output and s.bench:
            self.backend.poison_free_memory(out_bytes, POISON_FIRST)
        kernels = None
        try:
            if s.expect_path:
                returned, names = self.backend.profile(lambda: self.call(inv))
                kernels = classify(names, self.kernel_names)
            else:
                returned = self.call(inv)
        except Exception as e:  # noqa: BLE001
            raise CaseFailed(f"the op raised {self.exc(e)}") from None
        changed = changed_inputs(before, inv.inputs)
        if changed:
            raise CaseFailed(changed)
        logits, dtype = self.collect(inv, returned)
        problems: List[str] = []
        if kernels is not None:
            verdict = judge(kernels, s.expect_path)
            if verdict:
                problems.append(verdict)
        guard = inv.guard_problem()
        if guard:
            problems.append(guard)
        # The one judging value recorded for pmqa verify (the runner's flags over the convention's).
        judged = self.convention.judging(kernels.path if kernels else None, dtype,
                                         {"contract": s.contract, "tolerance": s.tolerance, "nan": s.nan})
        contract = judged["contract"]
        extra = {k: v for k, v in cf.extra.items() if k not in RUNNER_KEYS}
        timings = None
        if s.bench:
            last: List[Any] = [None]

            def timed():
                last[0] = self.call_op(inv)

            def before_each():
                self.heartbeat()
                inv.reset()

            flush = s.flush_mib << 20 if s.flush_mib is not None else self.backend.default_flush_bytes()
            try:
                timings = self.backend.time_calls(timed, before_each, s.warmup, s.iters, flush)
                times = timings.wall_ms
                self.backend.synchronize()
                again_result = last[0]
                if owns_output:  # one more launch, after the second poison, for the determinism check
                    inv.reset()
                    self.backend.poison_free_memory(out_bytes, POISON_AGAIN)
                    again_result = self.call(inv)
            except Exception as e:  # noqa: BLE001
                raise CaseFailed(f"the op raised on a relaunch (--bench) {self.exc(e)}") from None
            changed = changed_inputs(before, inv.inputs)
            if changed:
                raise CaseFailed(changed + " (on a relaunch, --bench)")
            again, _ = self.collect(inv, again_result)
            diff = relaunch_difference(logits, again, cf, contract)
            if diff:
                problems.append(diff)
            launches = s.warmup + s.iters + (1 if owns_output else 0)
            extra.update({"bench_ms": f"{statistics.median(times):.6g}", "bench_min_ms": f"{min(times):.6g}",
                          "bench_iters": str(s.iters), "bench_warmup": str(s.warmup),
                          "bench_flush_bytes": str(flush),
                          "relaunches": f"{launches}, {'differ' if diff else 'identical'}"})
            if timings.kernel_ms is not None:
                extra.update({"kernel_ms": f"{statistics.median(timings.kernel_ms):.6g}",
                              "kernel_min_ms": f"{min(timings.kernel_ms):.6g}",
                              "kernel_activities": f"{statistics.median(timings.activities):g}",
                              "kernel_timing": timings.how})
        if s.max_floor_ratio is not None:
            problems.extend(self.floor_gate(cf, contract, timings, extra))
        if kernels is not None:  # what the path gate judged, for every later reader to judge again
            extra.update({"kernels": kernels.metadata(), "path": kernels.path, "expected_path": s.expect_path,
                          "kernels_unknown": json.dumps(kernels.unknown), "kernels_seen": kernels.describe()})
            result.kernel_path = kernels.path
            result.kernels = kernels.describe()
        if getattr(s, "run_id", None):
            extra["run_id"] = s.run_id
        extra.update({"convention": self.convention.name, "device": self.backend.describe(), "runner": "pmqa-run",
                      "tolerance": judged["tolerance"], "logits_dtype": dtype, "nan": judged["nan"],
                      "platform": self.envelope.platform,
                      "envelope": ", ".join(os.path.basename(o) for o in self.envelope.origins)})
        if self.options.op_kwargs:
            extra["op_kwargs"] = ", ".join(f"{k}={v!r}" for k, v in self.options.op_kwargs.items())
        extra.update(inv.notes)
        producer = s.producer or s.op
        out_path = self.out_dir / path.name
        try:
            if s.logits_only:
                result.sha256 = write_logits_file(out_path, LogitsFile(
                    logits=logits, name=cf.name or path.stem, input_file=path.name, input_sha256=sha256_file(path),
                    batch=cf.batch, next_n=cf.next_n, max_model_len=cf.max_model_len, contract=contract,
                    producer=producer, extra={k: v for k, v in extra.items() if k not in RESERVED_LOGITS_KEYS}))
            else:
                result.sha256 = write_case_file(out_path, replace(cf, logits=logits, producer=producer,
                                                                  contract=contract, extra=extra))
        except CaseFileError as e:
            why = e.problem[len("cannot write: "):] if e.problem.startswith("cannot write: ") else e.problem
            err = getattr(e, "os_errno", None)
            result.stop = self.write_refused(err, why)
            if err is None:  # the writer refused what it was given (not the system): the op's output
                raise CaseFailed(f"cannot write {out_path}: {why}" + (f" ({result.stop})" if result.stop else "")) \
                    from None
            when = {errno.ENOSPC: " once there is room", errno.EDQUOT: " once there is room",
                    errno.EROFS: " once the file system takes writes"}.get(err, "")
            raise CaseNotWritten(
                f"not written: {out_path}: {write_fault_words(err, why)}; the op ran, and its result could not be "
                f"stored (not the op's failure); `pmqa-run --resume --out {self.out_dir}` runs the case again"
                f"{when}") from None
        result.out_path = str(out_path)
        result.written = True
        result.bench_ms = extra.get("bench_ms", "")
        result.kernel_ms = extra.get("kernel_ms", "")
        result.floor_ratio = extra.get("floor_ratio", "")
        result.floor_gated = extra.get("floor_gate", "").startswith("at most")
        if problems:
            raise CaseFailed("; ".join(problems) + f" (file written: {out_path})")

    # ---- pieces
    def write_refused(self, err: Optional[int], problem: str) -> str:
        """Why the run cannot go on after a refused write ("" when the fault is the file's, not the folder's)."""
        if err in CANNOT_WRITE_HERE:
            return f"--out {self.out_dir} takes no more writes: {problem}"
        if err == errno.ENOENT and not self.out_dir.is_dir():
            return f"--out {self.out_dir} is gone (removed during the run?)"
        return ""

    def call(self, inv) -> Any:
        self.heartbeat()
        result = self.call_op(inv)
        self.backend.synchronize()
        return result

    def call_op(self, inv) -> Any:
        """The op on inv's arguments; a child it forked that comes back here ends (end_forked_child)."""
        try:
            result = self.op(*inv.args, **inv.kwargs)
        except BaseException as e:
            end_forked_child(self.owner, raised=e)
            raise
        end_forked_child(self.owner)
        return result

    def bandwidth(self) -> float:
        """The device's copy bandwidth, bytes/s: --copy-gbps, else measured once in this process."""
        if self._bandwidth is None and getattr(self.s, "copy_gbps", None):
            self._bandwidth = self.s.copy_gbps * 1e9
        if self._bandwidth is None:
            self.heartbeat()
            self._bandwidth = self.backend.copy_bandwidth()
        return self._bandwidth

    def floor_gate(self, cf: CaseFile, contract: str, timings, extra) -> List[str]:
        """--max-floor-ratio: records the gate's inputs (R, --floor-min-mb, the copy bandwidth; the times
        are in extra already), then judges them with the function pmqa verify re-judges the file with
        (cases/run_gates.hpp: the floor from the case, the kernel time over it, "not gated" under
        --floor-min-mb, an unseen kernel time failing) and records what it derived. A backend without
        a device clock (torch on the cpu) records no kernel time: the wall time is judged, and says so."""
        s = self.s
        extra.update({"floor_max_ratio": repr(float(s.max_floor_ratio)), "floor_min_mb": repr(float(s.floor_min_mb)),
                      "copy_gbps": f"{self.bandwidth() / 1e9:.5g}",
                      "floor_basis": ("wall time: " if timings.kernel_ms is None else "kernel time: ") + timings.how})
        if timings.kernel_ms is not None:  # timed calls the profiler saw nothing of: their kernel time is unknown
            extra["kernel_unseen_calls"] = f"{sum(1 for n in timings.activities if n == 0)} of {len(timings.activities)}"
        verdict, derived, _ = core.speed_gate(cf, contract, extra)
        extra.update(derived)
        return [verdict.message] if not verdict.passed else []

    def collect(self, inv, result) -> Tuple[np.ndarray, str]:
        try:
            arr = inv.collect(result)
            dtype = self.backend.dtype_name(arr)
            return self.backend.to_numpy(arr), dtype
        except (OpOutputError, TypeError) as e:
            raise CaseFailed(f"the op's output is unusable: {e}") from None

    def exc(self, e: BaseException) -> str:
        """An exception the op raised, in words safe to print and to store (pmqa.run.text.clean)."""
        return clean(self._exc(e))

    def _exc(self, e: BaseException) -> str:
        try:
            text = f"{type(e).__name__}: {e}"
        except Exception as inner:  # noqa: BLE001 - an exception whose str() raises is still reported
            text = f"{type(e).__name__} (its message could not be read: {type(inner).__name__})"
        if self.s.verbose:
            text += "\n" + "".join(traceback.format_exception(type(e), e, e.__traceback__))
        else:
            tb = traceback.extract_tb(e.__traceback__)
            if tb:
                frame = tb[-1]
                text += f" (at {os.path.basename(frame.filename)}:{frame.lineno}; -v for the traceback)"
        return text


__all__ = ["CaseResult", "CaseRunner", "CaseFailed", "CaseNotWritten", "end_forked_child", "relaunch_difference",
           "recorded_tolerance", "shape_text", "write_fault_words", "RUNNER_KEYS", "POISON_FIRST", "POISON_AGAIN",
           "SENTINEL_BITS"]
