"""One pmqa-run into one --out folder: its lock and record, the loop over its cases (in a worker,
in this process, or spread over --devices), stopping early, signals, and the exit status."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import List, Optional

from pmqa._native import core
from pmqa.cases.atomic_file import CANNOT_WRITE_HERE, describe_os_error

from .case_run import CaseResult
from .devices import device_args, resolve_devices
from .op_setup import build_case_runner
from .option_checks import check_options, check_paths
from .options import EXIT_INVALID, EXIT_OK, EXIT_OP_FAILED, UsageError
from .plan import plan_run, resume_plan
from .record import OutputBusy, OutputLock, RecordedCase, RunRecord, new_run_id
from .text import clean_line, indented, say, say_error
from .worker import DeviceWorkers, InProcess, SetupError, WorkerPool


class Interrupted(Exception):
    """SIGINT, SIGTERM or SIGHUP arrived: the run stops, writing its record and JUnit first."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _signal_reason(signum: int) -> str:
    if signum == signal.SIGINT:
        return "pmqa-run was interrupted (SIGINT)"
    return f"pmqa-run was stopped by {signal.Signals(signum).name}"


class Runner:
    """One pmqa-run into one --out folder: its lock, its record, its cases, its JUnit."""

    def __init__(self, args: argparse.Namespace, record: Optional[RunRecord] = None):
        self.args = args
        self.status = EXIT_OK
        self.cases = None
        self.lock: Optional[OutputLock] = None
        self._interrupted = False
        self._finishing = False            # after the cases: a signal is noted (_late_signal), never raised
        self._late_signal = 0
        self.faults: List[str] = []        # run-level faults (answers out of turn after the last case): JUnit errors
        self.refused: List[RecordedCase] = []  # refused by name before the run: reported when it starts
        self.convention, shard = check_options(args)
        self.devices = resolve_devices(args) if getattr(args, "devices", None) else []
        files = check_paths(args, find_cases=not record)
        self.out_dir = Path(args.out)
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--out {args.out}: cannot create the directory: {e.strerror or e}") from None
        self.producer = args.producer or args.op
        run_id = record.run_id if record else new_run_id()
        self.lock = OutputLock(self.out_dir)
        try:
            self.lock.acquire(run_id, self.producer)
        except OutputBusy as e:
            raise UsageError(f"--out {args.out} is in use by another pmqa-run ({e}): two runs into one folder would "
                             f"overwrite each other's results; wait for it to end, or give another --out") from None
        except OSError as e:
            raise UsageError(f"--out {args.out}: cannot write there: {describe_os_error(e)}; no case was run, 0 "
                             f"results kept") from None
        try:
            args.run_id = run_id
            if record:
                self.record = resume_plan(record, self.out_dir)
            else:
                self.record, self.refused = plan_run(args, files, run_id, self.producer, self.convention.name, shard)
            try:
                self.record.save()
            except OSError as e:
                raise UsageError(f"--out {args.out}: cannot write the run record {self.record.path.name}: "
                                 f"{describe_os_error(e)}; no case was run, "
                                 f"{sum(c.written for c in self.record.cases if c.finished)} result(s) kept") from None
            self.write_junit()
        except BaseException:
            self.lock.release()
            raise

    def worst(self, status: int) -> None:
        self.status = max(self.status, status)

    def _on_signal(self, signum, frame) -> None:
        if self._interrupted:
            return  # finishing the record and the JUnit after the first one
        if self._finishing:
            self._late_signal = self._late_signal or signum  # the record and the JUnit are written whole first
            return
        self._interrupted = True
        raise Interrupted(signum)

    def run(self) -> int:
        """The cases, then the record, JUnit and summary. SIGINT, SIGTERM and SIGHUP stop the cases (their
        workers are ended, the cases not finished stay pending); after the last case a signal waits for
        the record and the JUnit to be written whole, and is then said (the exit status stands)."""
        handlers = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                if signal.getsignal(sig) is not signal.SIG_IGN:  # ignored by who started it (nohup, a background job)
                    handlers[sig] = signal.signal(sig, self._on_signal)
        try:
            try:
                if self.start_cases():
                    if self.devices:
                        self.run_on_devices()
                    else:
                        for entry in self.record.cases:
                            if self.record.stopped:
                                break
                            if not entry.finished:
                                self.run_entry(entry)
                self._finishing = True
            except Interrupted as e:
                self._finishing = True
                self.stop(_signal_reason(e.signum), 128 + e.signum)
            except KeyboardInterrupt:  # off the main thread, where SIGINT stays Python's
                self._interrupted = self._finishing = True
                self.stop(_signal_reason(signal.SIGINT), 128 + signal.SIGINT)
            finally:
                self._finishing = True
                if self.cases is not None:
                    if self._interrupted:
                        self.cases.abort()
                    else:
                        self.cases.close()
            self.note_anomalies()
            self.finish()
            if self._late_signal:
                say_error(f"pmqa-run: {signal.Signals(self._late_signal).name} arrived after the last case, while "
                          f"the run wrote its record and JUnit: both are whole; the exit status is the run's "
                          f"({self.status})")
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            self.lock.release()
        return self.status

    def note_anomalies(self) -> None:
        """Answers out of turn (a worker's message for another case, a second or late answer, one from a
        process the op forked): each failed its case already; one after the last case fails the run."""
        anomalies = list(getattr(self.cases, "anomalies", []) or []) if self.cases is not None else []
        if not anomalies:
            return
        for case, what in anomalies:
            if not case:
                self.faults.append(what)
        self.worst(EXIT_OP_FAILED)
        say_error(f"pmqa-run: error: {len(anomalies)} answer(s) out of turn from the worker ({len(self.faults)} after "
                  f"its last case): the run fails, whatever its cases did (an op that forks must end its child with "
                  f"os._exit or exec)")
        for what in self.faults:
            say_error(indented(f"pmqa-run: error: {what}"))

    def start_cases(self) -> bool:
        a = self.args
        where = "in this process" if a.in_process else \
            f"in a worker process (--timeout-s {a.timeout_s:g} per call)"
        pending = sum(not c.finished for c in self.record.cases)
        say(f"pmqa-run: {a.op} as {self.convention.name}, run {self.record.run_id}: {pending} case file(s) -> "
            f"{self.out_dir}{' (logits only)' if a.logits_only else ''}; {where}")
        for c in self.refused:
            say(f"ERROR    {c.message}")
        if pending == 0:
            return True
        if self.devices:
            say(f"pmqa-run: {len(self.devices)} device(s) ({', '.join(self.devices)}), one worker each; the "
                f"largest cases first")
            self.cases = DeviceWorkers(lambda d: device_args(a, d), build_case_runner, self.devices, a.timeout_s,
                                       a.startup_timeout_s)
            return True
        try:
            self.cases = (InProcess(a, build_case_runner) if a.in_process
                          else WorkerPool(a, build_case_runner, a.timeout_s, a.startup_timeout_s))
        except SetupError as e:
            say_error(f"pmqa-run: error: {e}")
            self.stop(f"no worker could be started: {clean_line(str(e).splitlines()[0] if str(e) else '')}")
            return False
        h = self.cases.header
        say(f"pmqa-run: on {h['backend']}; envelope {h['convention']} on {h['platform']} ({h['limits']} limit(s))")
        return True

    def stop(self, reason: str, status: int = EXIT_INVALID) -> None:
        """The run cannot go on: the cases not run are listed as such, with this reason."""
        if not self.record.stopped:
            self.record.stopped = reason
            say_error(f"pmqa-run: error: stopping: {reason}")
        self.worst(status)

    def drop_previous_result(self, entry: RecordedCase) -> bool:
        """Removes the previous run's result for this case (never left to pass for this run's); False
        when --out takes no more writes (the run is stopped)."""
        try:
            (self.out_dir / entry.result).unlink()
        except FileNotFoundError:
            pass
        except OSError as e:
            if e.errno in CANNOT_WRITE_HERE:
                self.stop(f"--out {self.out_dir} takes no more writes: {describe_os_error(e)}")
                return False
        return True

    def finish_case(self, entry: RecordedCase, result: CaseResult) -> bool:
        """Records a case's result, saves the run record and rewrites the JUnit (up to date after every
        case: a killed run keeps what it did); False when the run must stop taking cases."""
        self.record_result(entry, result)
        go_on = True
        if result.stop:
            self.stop(result.stop)
            go_on = False
        try:
            self.record.save()
        except OSError as e:
            self.stop(f"cannot write the run record in --out: {describe_os_error(e)}")
            go_on = False
        self.write_junit()
        return go_on

    def run_entry(self, entry: RecordedCase) -> None:
        if not self.drop_previous_result(entry):
            return
        try:
            result = self.cases.run(Path(entry.file))
        except SetupError as e:
            self.stop(f"no worker could be started: {clean_line(str(e).splitlines()[0] if str(e) else '')}")
            return
        self.finish_case(entry, result)

    def run_on_devices(self) -> None:
        """--devices: the pending cases, the largest first, to whichever device's worker is free; each
        result recorded here (this thread alone prints, keeps the record and writes the JUnit) as it
        comes. A worker that dies fails its case only (its device goes on with a fresh worker); a device
        whose worker cannot start gives its cases to the others."""
        pending = [c for c in self.record.cases if not c.finished]
        if not pending or self.cases is None:
            return
        if not all(self.drop_previous_result(entry) for entry in pending):
            return
        order = sorted(pending, key=lambda c: (-(c.work or 1), c.name.encode("utf-8", "surrogateescape"), c.result))
        lost: List[str] = []
        for kind, device, entry, payload in self.cases.run_all(order):
            if kind == "ready":
                say(f"pmqa-run: device {device}: on {payload['backend']}; envelope {payload['convention']} on "
                    f"{payload['platform']} ({payload['limits']} limit(s))")
            elif kind == "lost":
                first = clean_line(payload.splitlines()[0] if payload else "")
                lost.append(device)
                say_error(f"pmqa-run: error: device {device}: no worker could be started: {first}"
                          + ("; its cases go to the other devices" if len(lost) < len(self.devices) else ""))
            elif kind == "result":
                entry.device = device
                if not self.finish_case(entry, payload):
                    self.cases.stop_taking()
        if not self.record.stopped and any(c.status == "pending" for c in self.record.cases):
            if len(set(lost)) == len(self.devices):
                self.stop(f"no worker could be started on any of --devices {', '.join(self.devices)}")
            else:
                self.stop(f"no worker could be started on device(s) {', '.join(lost) or '?'}, and no other device "
                          f"was left to run the remaining cases")

    def record_result(self, entry: RecordedCase, r: CaseResult) -> None:
        entry.status, entry.message, entry.seconds = r.status, r.message, round(r.seconds, 6)
        entry.name, entry.suite = r.name, r.suite or entry.suite
        entry.written, entry.sha256 = r.written, r.sha256
        entry.shape, entry.limit, entry.bench_ms = r.shape, r.limit, r.bench_ms
        entry.floor_ratio, entry.kernel_path = r.floor_ratio, r.kernel_path
        say(core.case_line(r, entry.device, self.cases.header, self.args.skip_unsupported))

    def case_status(self, c: RecordedCase) -> int:
        if c.status == "ok" or (c.status == "unsupported" and self.args.skip_unsupported):
            return EXIT_OK
        return EXIT_OP_FAILED if c.status == "failed" else EXIT_INVALID

    def finish(self) -> None:
        cases = self.record.cases
        self.record.complete = all(c.finished for c in cases)
        for c in cases:
            self.worst(self.case_status(c))
        if not cases:
            self.worst(EXIT_INVALID)
        try:
            self.record.save()
        except OSError as e:
            self.worst(EXIT_INVALID)
            say_error(f"pmqa-run: error: cannot write the run record in --out: {describe_os_error(e)}")
        # The case lines, the summary and the JUnit are C++'s (cases/include/pmqa/cases/run_report.hpp).
        started = 0 if self.args.in_process or self.cases is None else self.cases.started
        for line in core.run_summary_lines(self.record, self.args.case or [], self.args.skip_unsupported, self.status,
                                           started, len(self.devices)):
            say(line)
        self.write_junit()

    def write_junit(self) -> None:
        if not self.args.junit:
            return
        try:
            core.write_run_junit(self.args.junit, self.record, self.faults)
        except OSError as err:
            self.worst(EXIT_INVALID)
            say_error(f"pmqa-run: error: --junit {self.args.junit}: cannot write it: {describe_os_error(err)}")
            self.args.junit = None
