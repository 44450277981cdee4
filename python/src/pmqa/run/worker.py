"""Where cases run: a worker process (the default), so a case that hangs, hits a device error or
kills its process is reported for that case and the run goes on in a fresh one.

The worker builds everything that touches the device (the backend, the op, its envelope) and runs
one case at a time, when the parent asks; it writes the case's output file (atomically, through a
temporary file renamed into place) before it answers, so the parent starts the next case only once
the last one is on disk. Before every op call it sends a heartbeat: `--timeout-s` is the longest the
parent waits between two of them (or for the answer), after which it kills the worker (a hang). A
worker that dies (SIGABRT, SIGSEGV, os._exit) is reported for the case it was running; a case whose
op raised a device error (CUDA/HIP errors poison the context) is answered, then its worker is
replaced. Workers are spawned, never forked (a forked CUDA context is unusable).

`--in-process` runs the cases in pmqa-run's own process: no timeout, and a crash ends the run.
"""

from __future__ import annotations

import multiprocessing as mp
import re
import signal
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from .case_run import CaseResult

# Exceptions after which the device (and so the worker's context) cannot be trusted.
DEVICE_ERROR = re.compile(r"CUDA error|HIP error|hipError|cudaError|illegal memory access|device-side assert|"
                          r"AcceleratorError|unspecified launch failure|an illegal instruction", re.I)

STARTUP_TIMEOUT_S = 900  # importing torch and an op, and compiling, can take minutes


class SetupError(Exception):
    """The op, backend or envelope cannot be set up (a usage error: exit 2)."""


def device_error(result: CaseResult) -> bool:
    return result.status == "failed" and bool(DEVICE_ERROR.search(result.message))


class InProcess:
    """Cases in this process (--in-process)."""

    def __init__(self, args, build: Callable[..., Any]):
        self.runner = build(args)
        self.header = self.runner.header()

    def run(self, path: Path) -> CaseResult:
        return self.runner.run(path)

    def close(self) -> None:
        pass


def _worker_main(conn, args, build) -> None:
    """The worker process: set up, say ready, then run the cases the parent sends."""
    try:
        runner = build(args, heartbeat=lambda: conn.send(("call",)))
    except SetupError as e:
        conn.send(("fatal", str(e)))
        return
    except BaseException as e:  # noqa: BLE001 - anything else is reported, not lost
        conn.send(("fatal", f"setting up the worker raised {type(e).__name__}: {e}\n{traceback.format_exc()}"))
        return
    conn.send(("ready", runner.header()))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "stop":
            return
        result = runner.run(Path(msg[1]))
        result.restart = device_error(result) or not runner.backend.healthy()
        conn.send(("result", asdict(result)))


def _describe_exit(code: Optional[int]) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class WorkerPool:
    """One worker process at a time, replaced after a fault."""

    def __init__(self, args, build: Callable[..., Any], timeout_s: float):
        self.args = args
        self.build = build
        self.timeout_s = timeout_s if timeout_s and timeout_s > 0 else None
        self.ctx = mp.get_context("spawn")
        self.proc = None
        self.conn = None
        self.started = 0
        self.header: Dict[str, Any] = {}
        self._start()

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker_main, args=(child, self.args, self.build), daemon=True,
                                name="pmqa-run-worker")
        proc.start()
        child.close()
        self.proc, self.conn = proc, parent
        self.started += 1
        if not parent.poll(STARTUP_TIMEOUT_S):
            self._kill()
            raise SetupError(f"the worker did not start within {STARTUP_TIMEOUT_S} s")
        try:
            msg = parent.recv()
        except EOFError:
            proc.join(5)
            code = proc.exitcode
            self._kill()
            raise SetupError(f"the worker died while setting up ({_describe_exit(code)})") from None
        if msg[0] == "fatal":
            self._kill()
            raise SetupError(msg[1])
        self.header = msg[1]

    def _kill(self) -> None:
        if self.proc is None:
            return
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def _fault(self, path: Path, t0: float, message: str) -> CaseResult:
        return CaseResult(str(path), path.stem, "failed", message, seconds=time.monotonic() - t0)

    def run(self, path: Path) -> CaseResult:
        if self.proc is None:
            self._start()  # a SetupError here ends the run (the caller reports it)
        t0 = time.monotonic()
        self.conn.send(("case", str(path)))
        while True:
            if not self.conn.poll(self.timeout_s):
                pid = self.proc.pid
                self._kill()
                return self._fault(path, t0, f"timed out: no op call finished and no answer within --timeout-s "
                                             f"{self.timeout_s:g} s (a hang?); worker {pid} was killed, a fresh one "
                                             f"takes the next case")
            try:
                msg = self.conn.recv()
            except (EOFError, ConnectionError, OSError):
                self.proc.join(10)
                code, pid = self.proc.exitcode, self.proc.pid
                self._kill()
                return self._fault(path, t0, f"the worker process {pid} died while running the case "
                                             f"({_describe_exit(code)}); a fresh one takes the next case")
            if msg[0] == "call":
                continue
            result = CaseResult(**msg[1])
            if result.restart:
                self._kill()
                result.message += " (the device may be unusable after this: a fresh worker takes the next case)"
            return result

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send(("stop",))
            except (OSError, ValueError):
                pass
        if self.proc is not None:
            self.proc.join(10)
        self._kill()

