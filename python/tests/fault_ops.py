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


def pid_alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("ctypes", "os", "subprocess", "sys", "time", "si")]
