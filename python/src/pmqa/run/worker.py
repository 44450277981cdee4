"""Where cases run: a worker process (the default), so a case that hangs, hits a device error or
kills its process is reported for that case and the run goes on in a fresh one.

The worker builds everything that touches the device (the backend, the op, its envelope) and runs
one case at a time, when the parent asks; it writes the case's output file (atomically) before it
answers, so the parent starts the next case only once the last one is on disk. Before every op call
it sends a heartbeat: `--timeout-s` is the longest the parent waits between two of them (or for the
answer); `--startup-timeout-s` bounds its start-up (importing torch and the op), which it reports
stage by stage so a hang there is named. Workers are spawned, never forked (a forked CUDA context
is unusable).

What the op cannot do to the runner:
- outlive it, or leave children behind: the worker leads its own process group, dies with the
  runner (PR_SET_PDEATHSIG on Linux), and a keeper process in its group (itself told of the
  worker's death the same way) ends the whole group when the worker ends, so an op's children go
  too, even after a kill -9 of the runner. The runner ends the group after a timeout, a crash and
  at its own exit.
- hide its death: a worker that dies is noticed by its exit status, not by the end of the pipe
  (which a forked child of the op may hold open);
- write the runner's output: the worker's stdout and stderr (file descriptors 1 and 2, so C
  libraries too) go into a pipe the runner prints line by line, indented under "op>", escaped;
- move the runner's files: every path the worker is given is absolute, and the worker goes back
  to its starting folder after each case;
- answer for a case it was not given, or twice: the parent gives each case a token of its own, and
  every message of the worker carries the worker's pid and the token of the case in hand. A child
  the op forked never speaks on the worker's pipe (it ends as soon as it comes back into the
  worker's code: pmqa.run.case_run.end_forked_child, and the worker's sender checks its pid), and a
  message from another pid, for another case (an earlier one: a duplicate or late answer) or for
  none fails the case in hand, the worker is replaced and the run exits non-zero; one that arrives
  after the last case (read when the worker is stopped) fails the run and its JUnit.

A worker killed by SIGKILL is reported with what speaks for "out of memory" (pmqa.run.memory): its
peak RSS (the kernel's rusage: the runner reaps the worker itself, os.wait4), the memory it had, the
case file's size, and whether the cgroup counted an OOM kill.

Ctrl-C at the terminal reaches pmqa-run only: a worker is spawned with SIGINT blocked and, once it
leads a process group of its own, drops any that came before and takes SIGINT as usual.

A start-up that takes long is shown while it lasts: a line naming the stage (importing the op's
module, ...), the op and `--startup-timeout-s`, after WAIT_NOTE_S seconds and again every
WAIT_REPEAT_S (PMQA_RUN_WAIT_NOTE_S sets the first, and the repeat to 6 times it).

`--in-process` runs the cases in pmqa-run's own process: no timeout, the op's output mixed with
the runner's, and a crash ends the run.
"""

from __future__ import annotations

import collections
import ctypes
import multiprocessing as mp
import os
import queue
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from .case_run import CaseResult, end_forked_child
from .memory import oom_kills, oom_words
from .text import clean_line, say

# Exceptions after which the device (and so the worker's context) cannot be trusted.
DEVICE_ERROR = re.compile(r"CUDA error|HIP error|hipError|cudaError|illegal memory access|device-side assert|"
                          r"AcceleratorError|unspecified launch failure|an illegal instruction", re.I)

STARTUP_TIMEOUT_S = 900  # importing torch and an op, and compiling, can take minutes
POLL_S = 0.1             # how often a waiting parent checks that the worker is still alive
PR_SET_PDEATHSIG = 1
LINUX = sys.platform.startswith("linux")


def _wait_note_s() -> float:
    try:
        value = float(os.environ.get("PMQA_RUN_WAIT_NOTE_S", ""))
    except ValueError:
        return 10.0
    return value if value > 0 else 10.0


WAIT_NOTE_S = _wait_note_s()      # a start-up stage this long is shown (then every WAIT_REPEAT_S)
WAIT_REPEAT_S = 6 * WAIT_NOTE_S

# What a worker sends: (kind, its pid, the token of the case in hand or None, payload).
SETUP_KINDS = ("stage", "fatal", "ready")
CASE_KINDS = ("call", "result")

# The keeper: a tiny process in the worker's group that ends the group when the worker ends (its
# parent-death signal), so an op's children never outlive the worker.
KEEPER = """
import ctypes, os, signal, sys
worker = int(sys.argv[1])
def end_group(*_):
    os.killpg(0, signal.SIGKILL)
signal.signal(signal.SIGTERM, end_group)
signal.signal(signal.SIGINT, signal.SIG_IGN)
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
if os.getppid() != worker:
    end_group()
while True:
    signal.pause()
"""


class SetupError(Exception):
    """The op, backend or envelope cannot be set up, or the worker cannot start (exit 2)."""


def device_error(result: CaseResult) -> bool:
    return result.status == "failed" and bool(DEVICE_ERROR.search(result.message))


class InProcess:
    """Cases in this process (--in-process)."""

    def __init__(self, args, build: Callable[..., Any]):
        self.runner = build(args)
        self.header = self.runner.header()
        self.started = 1
        self.home = os.getcwd()
        self.anomalies: List[Tuple[str, str]] = []  # none here: a forked child of the op ends (end_forked_child)

    def run(self, path: Path) -> CaseResult:
        try:
            return self.runner.run(path)
        finally:
            _go_home(self.home)

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


def _go_home(home: str) -> None:
    try:
        if os.getcwd() != home:
            os.chdir(home)
    except OSError:
        os.chdir(home)


def _die_with(parent: int) -> None:
    """Lead a process group, die when the parent does, and start the keeper (Linux)."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    # Spawned with SIGINT blocked (WorkerPool._start): a Ctrl-C at the terminal that reached this
    # process while it was still in pmqa-run's group is dropped (SIG_IGN discards a pending signal);
    # from here on it is out of the terminal's foreground group and takes SIGINT as usual.
    if hasattr(signal, "pthread_sigmask"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if not LINUX:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
    subprocess.Popen([sys.executable, "-I", "-S", "-c", KEEPER, str(os.getpid())], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)


def _worker_main(conn, output, args, build, parent: int) -> None:
    """The worker process: set up, say ready, then run the cases the parent sends."""
    _die_with(parent)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(output.fileno(), 1)
    os.dup2(output.fileno(), 2)
    os.close(null)
    output.close()
    for stream in (sys.stdout, sys.stderr):  # an op's last words before a crash must not sit in a buffer
        try:
            stream.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):
            pass
    home = os.getcwd()
    me = os.getpid()
    token = [None]  # the token of the case in hand

    def send(kind: str, payload: Any = None) -> None:
        end_forked_child(me)  # a child the op forked never speaks on the worker's pipe
        conn.send((kind, me, token[0], payload))

    try:
        try:
            runner = build(args, heartbeat=lambda: send("call"), stage=lambda text: send("stage", text))
        finally:
            end_forked_child(me)  # the op's module may fork at import
    except SetupError as e:
        send("fatal", str(e))
        return
    except BaseException as e:  # noqa: BLE001 - anything else is reported, not lost
        send("fatal", f"setting up the worker raised {type(e).__name__}: {e}\n{traceback.format_exc()}")
        return
    _go_home(home)
    send("ready", runner.header())
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "stop":
            return
        token[0] = msg[2]
        try:
            result = runner.run(Path(msg[1]))
        finally:
            end_forked_child(me)
            _go_home(home)
        result.restart = device_error(result) or not runner.backend.healthy()
        send("result", asdict(result))
        token[0] = None


def _describe_exit(code: Optional[int]) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class _OutputRelay(threading.Thread):
    """Prints what the worker writes to its stdout and stderr, a line at a time, as "  op> LINE"
    ("  op[DEVICE]> LINE" for a worker of --devices)."""

    def __init__(self, fd: int, label: str = ""):
        super().__init__(name="pmqa-run-op-output", daemon=True)
        self.fd = fd
        self.prefix = f"  op[{label}]> " if label else "  op> "

    def run(self) -> None:
        pending = b""
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self._say(line)
        if pending:
            self._say(pending)
        os.close(self.fd)

    def _say(self, raw: bytes) -> None:
        say(self.prefix + clean_line(raw.decode("utf-8", "backslashreplace")))


class WorkerPool:
    """One worker process at a time, replaced after a fault."""

    def __init__(self, args, build: Callable[..., Any], timeout_s: float, startup_timeout_s: float = STARTUP_TIMEOUT_S,
                 label: str = ""):
        self.args = args
        self.label = label  # --devices: the device, in the op's output lines
        self.build = build
        self.timeout_s = timeout_s if timeout_s and timeout_s > 0 else None
        self.startup_timeout_s = startup_timeout_s if startup_timeout_s and startup_timeout_s > 0 else None
        self.ctx = mp.get_context("spawn")
        self.proc = None
        self.conn = None
        self.relay: Optional[_OutputRelay] = None
        self.started = 0
        self.header: Dict[str, Any] = {}
        self.peak_rss: Optional[int] = None  # of the last worker that ended, when this process reaped it
        self.given: Dict[str, str] = {}      # token -> the case file it was given with
        # Answers out of turn: (the case in hand, or "" after the last one; what was wrong), for the runner
        # (pmqa.run.runner), which fails the run on any.
        self.anomalies: List[Tuple[str, str]] = []
        self._start()

    # ---- waiting on the worker
    def _ended(self) -> bool:
        """Whether the worker has ended. It is reaped here (os.wait4) when it has, so that its peak RSS
        is known (multiprocessing's own wait would drop the kernel's rusage)."""
        proc = self.proc
        popen = getattr(proc, "_popen", None)
        if popen is not None and getattr(popen, "returncode", 0) is None and hasattr(os, "wait4"):
            try:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            except ChildProcessError:  # reaped already (multiprocessing's poll in another thread)
                pid = 0
            except OSError:
                pid = 0
            if pid:
                popen.returncode = os.waitstatus_to_exitcode(status)
                self.peak_rss = usage.ru_maxrss * 1024 if usage.ru_maxrss > 0 else None
        return proc.exitcode is not None

    def _await_end(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._ended() and time.monotonic() < deadline:
            time.sleep(0.02)

    def _next(self, timeout: Optional[float]):
        """The worker's next message; "dead" when it died without one; "timeout" after timeout seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
            try:
                if self.conn.poll(wait):
                    return self.conn.recv()
            except (EOFError, ConnectionError, OSError):
                self._await_end(5)
                return "dead"
            if self._ended():
                try:
                    if self.conn.poll(0):  # an answer sent just before it died still counts
                        return self.conn.recv()
                except (EOFError, ConnectionError, OSError):
                    pass
                return "dead"
            if deadline is not None and time.monotonic() >= deadline:
                return "timeout"

    def _out_of_turn(self, msg: Any, token: Optional[str]) -> str:
        """What is wrong with a message from the worker, in words; "" for one of the worker's own about
        the case in hand (token; None while it starts)."""
        if not (isinstance(msg, tuple) and len(msg) == 4 and msg[0] in SETUP_KINDS + CASE_KINDS):
            return f"a message pmqa-run cannot read ({clean_line(repr(msg)[:160])})"
        kind, pid, tok, _ = msg
        worker = self.proc.pid
        if pid != worker:
            return (f"a {kind!r} message from process {clean_line(repr(pid)[:40])}, not from the worker {worker} (a "
                    f"process the op forked?)")
        if tok == token and token:
            return "" if kind in CASE_KINDS else f"a {kind!r} message (which belongs to its start-up) during a case"
        if tok is None and token is None:
            return "" if kind in SETUP_KINDS else f"a {kind!r} message (which belongs to a case) while it started"
        if tok in self.given:
            return (f"a {kind!r} message for {self.given[tok]}, a case it had already answered for (a duplicate or "
                    f"late answer)")
        if tok is None:
            return f"a {kind!r} message for no case, while it had one in hand"
        return f"a {kind!r} message for no case it was given ({clean_line(repr(tok)[:60])})"

    def _wait_note(self, stage: str, since: float, t0: float) -> None:
        pid = self.proc.pid if self.proc is not None else "?"
        limit = (f"--startup-timeout-s {self.startup_timeout_s:g} s ends the wait" if self.startup_timeout_s
                 else "no --startup-timeout-s: it waits as long as it takes")
        say(f"pmqa-run: waiting for the worker process {pid}{f' of device {self.label}' if self.label else ''} to "
            f"start: {stage}, {time.monotonic() - since:.0f} s so far (--op {clean_line(str(self.args.op))}; "
            f"{time.monotonic() - t0:.0f} s since it was started; {limit})")

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        out_read, out_write = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=_worker_main, args=(child, out_write, self.args, self.build, os.getpid()),
                                daemon=True, name="pmqa-run-worker")
        # Spawned with SIGINT blocked (this thread's mask, which the child inherits): a Ctrl-C at the
        # terminal before the worker leads its own process group must not reach it (a traceback of its
        # imports). Here it stays pending until the mask is restored.
        mask = hasattr(signal, "pthread_sigmask")
        if mask:
            # multiprocessing starts its resource tracker at the first spawn and, having started it,
            # unblocks SIGINT in this thread whatever the mask was: start it first, so the mask holds.
            from multiprocessing import resource_tracker
            resource_tracker.ensure_running()
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if mask else None
        try:
            proc.start()
        finally:
            if mask:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        child.close()
        out_write.close()
        self.proc, self.conn = proc, parent
        self.relay = _OutputRelay(os.dup(out_read.fileno()), self.label)
        out_read.close()
        self.relay.start()
        self.started += 1
        try:
            self._await_ready()
        except BaseException:
            self._kill()
            raise

    def _await_ready(self) -> None:
        proc = self.proc
        stage = "starting the interpreter"
        t0 = since = time.monotonic()
        next_note = t0 + WAIT_NOTE_S
        while True:
            now = time.monotonic()
            left = None if self.startup_timeout_s is None else self.startup_timeout_s - (now - t0)
            wait = max(next_note - now, 0.0) if left is None else max(min(left, next_note - now), 0.0)
            msg = self._next(wait)
            if msg == "timeout":
                now = time.monotonic()
                if now >= next_note:  # said before the timeout below: a stage that times out was shown
                    self._wait_note(stage, since, t0)
                    next_note = now + WAIT_REPEAT_S
                if self.startup_timeout_s is not None and now - t0 >= self.startup_timeout_s:
                    pid = proc.pid
                    self._kill()
                    raise SetupError(f"the worker process {pid} did not start within --startup-timeout-s "
                                     f"{self.startup_timeout_s:g} s: it was {stage} (a hang at import or set-up?); it "
                                     f"was killed")
                continue
            if msg == "dead":
                code = proc.exitcode
                self._kill()
                raise SetupError(f"the worker died while {stage} ({_describe_exit(code)})")
            wrong = self._out_of_turn(msg, None)
            if wrong:
                pid = proc.pid
                self._kill()
                raise SetupError(f"the worker process {pid} cannot be trusted: while {stage} it sent {wrong}; it was "
                                 f"killed")
            if msg[0] == "stage":
                stage, since = msg[3], time.monotonic()
                next_note = since + WAIT_NOTE_S
                continue
            if msg[0] == "fatal":
                self._kill()
                raise SetupError(msg[3])
            self.header = msg[3]
            return

    def _kill(self) -> None:
        """Ends the worker's whole process group (the op's children too), then the worker itself."""
        if self.proc is None:
            return
        pid = self.proc.pid
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        if self.relay is not None:
            self.relay.join(2)  # the group is gone: the pipe ends and the relay prints what was left
        self.proc = self.conn = self.relay = None

    def _fault(self, path: Path, t0: float, message: str) -> CaseResult:
        return CaseResult(str(path), path.stem, "failed", message, seconds=time.monotonic() - t0)

    def run(self, path: Path) -> CaseResult:
        if self.proc is None:
            self._start()  # a SetupError here ends the run (the caller reports it)
        t0 = time.monotonic()
        token = f"{os.getpid()}-{self.started}-{len(self.given) + 1}-{secrets.token_hex(4)}"
        self.given[token] = f"case file {path}"
        kills_before = oom_kills()
        self.peak_rss = None
        self.conn.send(("case", str(path), token))
        while True:
            msg = self._next(self.timeout_s)
            if msg == "timeout":
                pid = self.proc.pid
                self._kill()
                return self._fault(path, t0, f"timed out: no op call finished and no answer within --timeout-s "
                                             f"{self.timeout_s:g} s (a hang?); worker {pid} and its process group "
                                             f"were killed, a fresh one takes the next case")
            if msg == "dead":
                code, pid = self.proc.exitcode, self.proc.pid
                self._kill()
                memory = ""
                if code == -signal.SIGKILL:
                    try:
                        size: Optional[int] = path.stat().st_size
                    except OSError:
                        size = None
                    memory = f": {oom_words(self.peak_rss, size, kills_before, oom_kills())}"
                return self._fault(path, t0, f"the worker process {pid} died while running the case "
                                             f"({_describe_exit(code)}){memory}; a fresh one takes the next case")
            wrong = self._out_of_turn(msg, token)
            if wrong:
                pid = self.proc.pid
                self._kill()
                self.anomalies.append((str(path), wrong))
                return self._fault(path, t0, f"the worker's answers cannot be trusted: worker {pid} sent {wrong}; it "
                                             f"and its process group were killed, a fresh one takes the next case (an "
                                             f"op that forks must end its child with os._exit or exec)")
            if msg[0] == "call":
                continue
            result = CaseResult(**msg[3])
            if result.restart:
                self._kill()
                result.message += " (the device may be unusable after this: a fresh worker takes the next case)"
            return result

    def _drain(self) -> None:
        """After the last case: anything the worker still sent is out of turn (a late or duplicate answer)."""
        while True:
            try:
                if self.conn is None or not self.conn.poll(0):
                    return
                msg = self.conn.recv()
            except (EOFError, ConnectionError, OSError):
                return
            if isinstance(msg, tuple) and len(msg) == 4 and msg[0] in SETUP_KINDS + CASE_KINDS:
                kind, pid, tok = msg[0], msg[1], msg[2]
                wrong = (f"a {kind!r} message" + (f" from process {clean_line(repr(pid)[:40])}" if pid != self.proc.pid
                                                  else "")
                         + (f" for {self.given[tok]}, a case it had already answered for (a duplicate or late answer)"
                            if tok in self.given else ""))
            else:
                wrong = self._out_of_turn(msg, None)
            self.anomalies.append(("", f"after its last case, the worker process {self.proc.pid} sent {wrong}"))

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send(("stop",))
            except (OSError, ValueError):
                pass
        if self.proc is not None:
            self.proc.join(10)
            self._drain()
        self._kill()

    def abort(self) -> None:
        """The run was interrupted: end the worker's group now, without waiting for the case."""
        self._kill()

    def kill_now(self) -> None:
        """From another thread than the one in run(): kill the worker's group; run() then sees it dead,
        cleans up and returns (abort() would pull the process from under it)."""
        proc = self.proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
        try:
            proc.kill()
        except (OSError, ValueError, AttributeError):
            pass


class DeviceWorkers:
    """--devices: one WorkerPool per device (its restarts, timeouts and process groups as ever), each
    driven by a thread of its own that takes the next case from a shared list (in the order given:
    the largest first) until none is left. run_all() hands each event to the caller's thread, which
    alone prints, keeps the record and writes the JUnit:

      ("ready", device, None, header)    the device's worker started
      ("result", device, entry, result)  a case finished (a worker that died fails only its case)
      ("lost", device, entry, message)   no worker could be started on the device: its case (entry,
                                         None at the start) goes back to the list for the others
    """

    def __init__(self, args_for: Callable[[str], Any], build: Callable[..., Any], devices, timeout_s: float,
                 startup_timeout_s: float = STARTUP_TIMEOUT_S):
        self.args_for = args_for
        self.build = build
        self.devices = list(devices)
        self.timeout_s = timeout_s
        self.startup_timeout_s = startup_timeout_s
        self.header: Dict[str, Any] = {}
        self._lock = threading.Lock()
        self._todo: "collections.deque" = collections.deque()
        self._events: "queue.Queue" = queue.Queue()
        self._stop = threading.Event()
        self._pools: Dict[str, WorkerPool] = {}
        self._threads: list = []
        self._aborted = False

    @property
    def started(self) -> int:
        with self._lock:
            return sum(p.started for p in self._pools.values())

    @property
    def anomalies(self) -> List[Tuple[str, str]]:
        """Every device's answers out of turn (WorkerPool.anomalies)."""
        with self._lock:
            return [a for p in self._pools.values() for a in p.anomalies]

    def stop_taking(self) -> None:
        """No device takes another case (those running finish)."""
        self._stop.set()

    def run_all(self, entries):
        """Runs entries (objects with .file) over the devices; yields the events above until every
        device's thread has ended."""
        self._todo.extend(entries)
        for device in self.devices:
            t = threading.Thread(target=self._serve, args=(device,), name=f"pmqa-run-device-{device}", daemon=True)
            self._threads.append(t)
            t.start()
        live = len(self._threads)
        while live:
            try:
                event = self._events.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if event[0] == "end":
                live -= 1
                continue
            if event[0] == "ready" and not self.header:
                self.header = event[3]
            yield event

    def _serve(self, device: str) -> None:
        pool = None
        try:
            try:
                pool = WorkerPool(self.args_for(device), self.build, self.timeout_s, self.startup_timeout_s,
                                  label=device)
            except SetupError as e:
                self._events.put(("lost", device, None, str(e)))
                return
            with self._lock:
                self._pools[device] = pool
            if self._aborted:
                return
            self._events.put(("ready", device, None, pool.header))
            while not self._stop.is_set():
                with self._lock:
                    if not self._todo:
                        break
                    entry = self._todo.popleft()
                try:
                    result = pool.run(Path(entry.file))
                except SetupError as e:  # the fresh worker after a fault did not start
                    with self._lock:
                        self._todo.appendleft(entry)
                    self._events.put(("lost", device, entry, str(e)))
                    return
                if self._aborted:
                    return  # interrupted: the case stays pending (its worker was killed under it)
                self._events.put(("result", device, entry, result))
        except BaseException as e:  # noqa: BLE001 - a bug here must not hang the run: the device is lost
            self._events.put(("lost", device, None, f"{type(e).__name__}: {e}"))
        finally:
            if self._aborted and pool is not None:
                pool.abort()  # this thread owns the pool: a worker that started after the abort ends too
            self._events.put(("end", device, None, None))

    def close(self) -> None:
        """Every case ran (or the run stopped taking them): the workers are told to stop, then ended."""
        self._stop.set()
        for t in self._threads:
            t.join()
        for pool in list(self._pools.values()):
            pool.close()

    def abort(self) -> None:
        """The run was interrupted: every worker's group ends now; the cases they ran stay pending."""
        self._aborted = True
        self._stop.set()
        with self._lock:
            pools = list(self._pools.values())
        for pool in pools:
            pool.kill_now()
        for t in self._threads:
            t.join(10)
