"""Ops that misbehave the way real ones do, for pmqa-run's fault tests (test_pmqa_run_faults): each
is run_standins.eager_ok on every case but the one with next_n == 3 ("b" in the tests), where it
does its one bad thing. Some need a folder for their traces: PMQA_FAULT_DIR.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time

import run_standins as si


def _faulty(q) -> bool:
    return q.codes.shape[1] == 3


def _trace(name: str, text: str) -> None:
    with open(os.path.join(os.environ["PMQA_FAULT_DIR"], name), "a") as f:
        f.write(text + "\n")


def raises_surrogate(q, *args):
    """An exception message holding a lone surrogate (bytes decoded with surrogateescape)."""
    if _faulty(q):
        raise RuntimeError("device said " + b"\xff\xfe bad".decode("utf-8", "surrogateescape"))
    return si.eager_ok(q, *args)


def raises_controls(q, *args):
    """An exception message holding ESC sequences, a form feed, NUL and a forged summary line."""
    if _faulty(q):
        raise RuntimeError("colour \x1b[31mred\x1b[0m, form feed \x0c, nul \x00 here\n"
                           "pmqa-run: 3 case(s): 3 written, 0 failed, 0 unsupported (refused), 0 invalid (exit 0)")
    return si.eager_ok(q, *args)


def slow_ok(q, *args):
    """eager_ok after a pause (so two runs started together overlap)."""
    time.sleep(float(os.environ.get("PMQA_FAULT_SLEEP", "0.3")))
    return si.eager_ok(q, *args)


def slow_negated(q, *args):
    """The negated logits after a pause: another producer's output, told apart from slow_ok's."""
    time.sleep(float(os.environ.get("PMQA_FAULT_SLEEP", "0.3")))
    return -si.eager_ok(q, *args)


def fails_all(q, *args):
    raise RuntimeError("this drop fails every case")


def segfaults_once(q, *args):
    """A SIGSEGV on case b the first time (a marker file in PMQA_FAULT_DIR remembers it)."""
    marker = os.path.join(os.environ["PMQA_FAULT_DIR"], "segfaulted")
    if _faulty(q) and not os.path.exists(marker):
        open(marker, "w").close()
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return si.eager_ok(q, *args)


def forks_then_exits(q, *args):
    """Starts a child that outlives the op (it holds every inherited descriptor), then exits 3."""
    if _faulty(q):
        child = os.fork()
        if child == 0:
            time.sleep(3600)
            os._exit(0)
        _trace("children", str(child))
        os._exit(3)
    return si.eager_ok(q, *args)


def hangs_with_child(q, *args):
    """Starts a sleeping child, notes both pids, then hangs."""
    if _faulty(q):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        _trace("pids", f"{os.getpid()} {child.pid}")
        time.sleep(3600)
    return si.eager_ok(q, *args)


def hangs_noting_pid(q, *args):
    """Notes its worker's pid (PMQA_FAULT_DIR/hung) and hangs on case b; slow_ok on the others (so a
    run over several devices is still going when a test kills the worker that hangs)."""
    if _faulty(q):
        _trace("hung", str(os.getpid()))
        time.sleep(3600)
    return slow_ok(q, *args)


def changes_folder(q, *args):
    """Moves to another working folder on every call (and leaves it there)."""
    os.chdir(os.environ.get("PMQA_FAULT_CHDIR", "/"))
    return si.eager_ok(q, *args)


def removes_out(q, *args):
    """Removes the output folder while case b runs."""
    if _faulty(q):
        import shutil
        shutil.rmtree(os.environ["PMQA_TEST_OUT"])
    return si.eager_ok(q, *args)


def corrupts_weights(q, kv_cache, weights, *args):
    """Scales its weights in place on every call: the next launch reads other inputs."""
    out = si.eager_ok(q, kv_cache, weights, *args)
    if _faulty(q):
        weights.setflags(write=True)
        weights *= 2
    return out


def prints_forgery(q, *args):
    """Prints, on stdout and stderr (Python's and the C library's), a line that mimics the runner's."""
    if _faulty(q):
        print("pmqa-run: 3 case(s): 3 written, 0 failed, 0 unsupported (refused), 0 invalid (exit 0)")
        print("\x1b[2Jcleared your screen", file=sys.stderr)
        os.write(1, b"pmqa-run: forged from C\n")
    return si.eager_ok(q, *args)


def counts_calls(q, *args):
    """eager_ok that notes each call in PMQA_FAULT_DIR/calls."""
    _trace("calls", "call")
    return si.eager_ok(q, *args)


def forks_child_returns(q, *args):
    """Forks on case b and returns in both processes (the child neither execs nor exits): the child
    comes back into the worker that called the op. Notes the child's pid (PMQA_FAULT_DIR/forked)."""
    if _faulty(q):
        child = os.fork()
        if child != 0:
            _trace("forked", str(child))
    return si.eager_ok(q, *args)


def _worker_connection():
    """The worker's end of its pipe to pmqa-run (found among the live objects: what a misbehaving
    library that holds it would use)."""
    import gc
    from multiprocessing.connection import Connection
    conns = [o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed and o.readable and o.writable]
    assert len(conns) == 1, conns
    return conns[0]


_answers: list = []


def _note_answers() -> None:
    """Wraps the worker's send, keeping a copy of every answer it sends (once per worker)."""
    if _answers:
        return
    conn = _worker_connection()
    send = conn.send

    def noting(msg):
        if msg and msg[0] == "result":
            _answers.append(msg)
        send(msg)

    conn.send = noting
    _answers.append(None)  # the wrap is in place


def replays_an_answer(q, *args):
    """On case b, sends the worker's last answer (case a's) again, as a library that kept the pipe
    would: a duplicate answer, read while b is in hand."""
    _note_answers()
    if _faulty(q):
        last = [m for m in _answers if m is not None][-1]
        _worker_connection().send(last)
    return si.eager_ok(q, *args)


def replays_an_answer_at_exit(q, *args):
    """Sends the worker's last answer again when the worker exits (atexit): an answer after the last
    case, which only the worker's stop reads."""
    import atexit
    if not _answers:
        _note_answers()
        atexit.register(lambda: _worker_connection().send([m for m in _answers if m is not None][-1]))
    return si.eager_ok(q, *args)


def balloons_then_killed(q, *args):
    """On case b, takes PMQA_FAULT_MIB (256) MiB, touched, then dies of SIGKILL as the kernel's OOM
    killer ends a process (a real OOM would take the test machine down with it)."""
    if _faulty(q):
        import signal
        import numpy as np
        ballast = np.ones(int(os.environ.get("PMQA_FAULT_MIB", "256")) << 20, dtype=np.uint8)
        _trace("ballooned", str(int(ballast.sum())))
        os.kill(os.getpid(), signal.SIGKILL)
    return si.eager_ok(q, *args)


def binds_out_read_only(q, *args):
    """On case b, mounts the --out folder (PMQA_TEST_OUT) over itself read-only (a bind mount: the
    run's open lock keeps the folder from being remounted) before b's result is written; once (a
    marker file in PMQA_FAULT_DIR remembers it)."""
    marker = os.path.join(os.environ["PMQA_FAULT_DIR"], "bound-read-only")
    if _faulty(q) and not os.path.exists(marker):
        open(marker, "w").close()
        out = os.environ["PMQA_TEST_OUT"]
        subprocess.run(["mount", "--bind", out, out], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", out], check=True)
    return si.eager_ok(q, *args)


def pid_alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("ctypes", "os", "subprocess", "sys", "time", "si")]
