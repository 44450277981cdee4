"""Test-only: a full or a read-only file system, emulated for one folder where `mount -t tmpfs` is not
allowed (test_pmqa_run_faults.Item11SmallerFaults uses a real tmpfs when it can, this otherwise, and
says which it ran).

Put this folder first on PYTHONPATH; then in every Python process (pmqa-run and its spawned
workers):
- PMQA_TEST_FULL_DIR=DIR, PMQA_TEST_FULL_BYTES=N: os.write to a file directly in DIR fails with
  ENOSPC once the files in DIR would hold more than N bytes, as a full disk fails it;
- PMQA_TEST_READ_ONLY_DIR=DIR: os.open of a file directly in DIR for writing or creating fails
  with EROFS, as a read-only mount refuses it.
pmqa's writers (pmqa.cases.atomic_file, the run's lock) go through os.open and os.write, so they
meet these folders as they would real ones (the case and result files are written by the C++ core,
which these do not reach: their tests use a real tmpfs).

- PMQA_TEST_SIGINT_AT=WHO:EVENT:ARG: a Ctrl-C at the terminal (SIGINT to the process group) the first
  time the process WHO ("main": pmqa-run; "worker": a worker it spawned) meets the audit event
  EVENT whose first argument is ARG ("" for any): a fixed point of the run, no timing
  (test_pmqa_run_faults.Item16EarlyCtrlC), e.g. "main:import:numpy", "worker:import:numpy",
  "main:os.killpg:".
"""

import errno
import os

_FULL = os.environ.get("PMQA_TEST_FULL_DIR")
_LIMIT = int(os.environ.get("PMQA_TEST_FULL_BYTES", "0"))
_READ_ONLY = os.environ.get("PMQA_TEST_READ_ONLY_DIR")


def _folder_of_fd(fd) -> str:
    try:
        return os.path.dirname(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return ""


if _FULL:
    _FULL = os.path.realpath(_FULL)
    _real_write = os.write

    def _used() -> int:
        return sum(e.stat(follow_symlinks=False).st_size for e in os.scandir(_FULL) if e.is_file(follow_symlinks=False))

    def _full_write(fd, data):
        if _folder_of_fd(fd) == _FULL and _used() + len(data) > _LIMIT:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return _real_write(fd, data)

    os.write = _full_write

if _READ_ONLY:
    _READ_ONLY = os.path.realpath(_READ_ONLY)
    _real_open = os.open
    _WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def _read_only_open(path, flags, mode=0o777, *, dir_fd=None):
        where = os.path.dirname(os.path.realpath(os.fspath(path)))
        if dir_fd is None and flags & _WRITING and where == _READ_ONLY:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return _real_open(path, flags, mode, dir_fd=dir_fd)

    os.open = _read_only_open

_SIGINT_AT = os.environ.get("PMQA_TEST_SIGINT_AT")

if _SIGINT_AT:
    import signal
    import sys

    _WHO, _EVENT, _ARG = _SIGINT_AT.split(":", 2)
    _fired = []

    def _ctrl_c_hook(event, args):
        if _fired or event != _EVENT or (_ARG and (not args or str(args[0]) != _ARG)):
            return
        worker = "--multiprocessing-fork" in sys.orig_argv
        if worker != (_WHO == "worker"):
            return
        _fired.append(event)
        if worker and signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, []):
            # Said whatever the race's outcome: the worker must start with SIGINT blocked.
            sys.stderr.write("fault injection: SIGINT is not blocked in the starting worker\n")
        # The terminal's foreground group is pmqa-run's: a worker may already lead a group of its own,
        # which no Ctrl-C at the terminal reaches.
        os.killpg(os.getpgid(os.getppid() if worker else 0), signal.SIGINT)

    sys.addaudithook(_ctrl_c_hook)
