"""python3 -m pmqa.run: run a Python-callable FP8 paged MQA logits op on pmqa case files.

For each case: build the arguments the op's calling convention expects on the device, call the op,
and write a case file holding the op's logits, the producer (the op), the output contract and, with
--bench, the op's times (its kernels' device time "kernel_ms", its wall time "bench_ms") -- the input
of `pmqa verify`.

main() only wires the parts together: the command line (options, option_checks), --show-envelope
(op_setup) and the run (runner). It imports them when called, with SIGINT held back (a Ctrl-C is
noted, and said once the imports are done: a KeyboardInterrupt inside a C extension's import comes
out as an ImportError, e.g. numpy's "PyCapsule_Import could not import module datetime"), then
checks the options and plans the cases inside a KeyboardInterrupt guard. Either way a Ctrl-C
before the run has started prints one line and returns 130, never a traceback; from then on the
runner handles it (its record, its JUnit, its workers).
"""

from __future__ import annotations

import os
import signal
from typing import List, Optional

EXIT_INTERRUPTED = 128 + signal.SIGINT


def main(argv: Optional[List[str]] = None) -> int:
    try:
        if _import_held_back():
            _interrupted_line()
            return EXIT_INTERRUPTED
        return _main(argv)
    except KeyboardInterrupt:
        _interrupted_line()
        return EXIT_INTERRUPTED


def _import_held_back() -> bool:
    """Imports what _main uses with SIGINT noted instead of raised (where this thread may set the
    handler, and SIGINT is not ignored); whether one came."""
    came: List[int] = []
    previous = None
    try:
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    except ValueError:  # not the main thread: SIGINT is the main thread's
        previous = None
    try:
        from . import backend, backend_registry, op_setup, option_checks, options, runner, text  # noqa: F401
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return bool(came)


def _interrupted_line() -> None:
    """One line on stderr, written without anything that could be interrupted half-way (no import,
    no lock): a second Ctrl-C here still leaves no traceback."""
    try:
        os.write(2, b"pmqa-run: interrupted (SIGINT) before the run started: no case was run\n")
    except OSError:
        pass


def _main(argv: Optional[List[str]]) -> int:
    from .backend import BackendError
    from .backend_registry import make_backend
    from .op_setup import load_envelope
    from .option_checks import resume_args
    from .options import EXIT_INVALID, EXIT_OK, UsageError, make_parser
    from .runner import Runner
    from .text import say_error

    parser = make_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 0 for --help, 2 for a usage error
        return int(e.code or 0)
    if args.show_envelope:
        if not args.convention:
            say_error("pmqa-run: error: --show-envelope needs --convention")
            return EXIT_INVALID
        try:
            backend = make_backend(args.backend, args.device, args.num_sms) if args.platform == "auto" else None
            print(load_envelope(args.convention, args.platform, args.envelope, backend).describe())
        except (UsageError, BackendError) as e:
            say_error(f"pmqa-run: error: {e}")
            return EXIT_INVALID
        return EXIT_OK
    try:
        record = None
        if args.resume:
            args, record = resume_args(parser, argv, args)
        runner = Runner(args, record)
    except UsageError as e:
        say_error(f"pmqa-run: error: {e}")
        return EXIT_INVALID
    return runner.run()
