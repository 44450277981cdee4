"""The parsed options checked and completed before anything runs: the values, the paths (made
absolute, their names checked), the case files, the overlays; and --resume's settings, taken from
the run's record."""

from __future__ import annotations

import argparse
import ast
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from pmqa.cases.envelope import EnvelopeError, read_envelope_file
from pmqa.cases.shard import parse_shard

from .case_files import find_case_files, name_problem
from .conventions import CONVENTIONS
from .conventions.base import Convention
from .kernel_names import KernelNamesError, load_kernel_names
from .options import UsageError, make_parser
from .record import RecordError, RunRecord
from .text import clean_line

RESUME_OPTIONS = ("out", "resume", "timeout_s", "startup_timeout_s", "verbose", "devices")


def parse_kwargs(items: List[str], reserved: Tuple[str, ...], convention: str) -> Dict[str, Any]:
    kwargs: Dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--op-kwarg {item!r}: expected KEY=VALUE with KEY a Python identifier")
        if key in reserved:
            raise UsageError(f"--op-kwarg {key}: {convention} sets {key} from each case "
                             f"({', '.join(reserved)} follow the case's layout and block size)")
        try:
            kwargs[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            kwargs[key] = text
    return kwargs


def check_options(args: argparse.Namespace) -> Tuple[Convention, Optional[Tuple[int, int]]]:
    """The run's convention and --shard (K, N) or None; a UsageError for a missing or wrong value."""
    missing = [f"--{n}" for n in ("op", "convention", "cases", "out") if not getattr(args, n)]
    if missing:
        raise UsageError(f"{', '.join(missing)} required")
    convention = CONVENTIONS[args.convention]
    if args.out_row_pad < 0:
        raise UsageError("--out-row-pad must be >= 0")
    if args.max_floor_ratio is not None:
        if args.max_floor_ratio <= 0:
            raise UsageError("--max-floor-ratio must be > 0")
        args.bench = True  # the gate judges the median time
    if args.copy_gbps is not None and not args.copy_gbps > 0:
        raise UsageError("--copy-gbps must be > 0")
    if args.bench and (args.iters < 1 or args.warmup < 0):
        raise UsageError("--iters must be >= 1 and --warmup >= 0")
    if args.timeout_s < 0 or args.startup_timeout_s < 0:
        raise UsageError("--timeout-s and --startup-timeout-s must be >= 0 (0: no timeout)")
    parse_kwargs(args.op_kwarg, convention.reserved_kwargs, convention.name)
    shard = None
    if getattr(args, "shard", None):
        try:
            shard = parse_shard(args.shard)
        except ValueError as e:
            raise UsageError(str(e)) from None
    return convention, shard


def check_paths(args: argparse.Namespace, find_cases: bool) -> Optional[List[Path]]:
    """Makes every path option absolute (what the op does to its working folder cannot move the
    runner's files) after checking its name, reads the --envelope and --kernel-names files, and
    returns the case files --cases names (None unless find_cases)."""
    paths = [("--out", args.out), *(("--cases", p) for p in args.cases), ("--junit", args.junit or ""),
             *(("--envelope", p) for p in args.envelope), *(("--kernel-names", p) for p in args.kernel_names)]
    for option, path in paths:
        problem = name_problem(os.path.abspath(path), "the path") if path else None
        if problem:
            raise UsageError(f"{option} {clean_line(path)}: {problem}")
    args.out = str(Path(os.path.abspath(args.out)))
    args.junit = os.path.abspath(args.junit) if args.junit else None
    args.envelope = [os.path.abspath(p) for p in args.envelope]
    args.kernel_names = [os.path.abspath(p) for p in args.kernel_names]
    files = find_case_files(args.cases) if find_cases else None
    args.cases = [os.path.abspath(p) for p in args.cases]
    try:
        for path in args.envelope:
            read_envelope_file(path)
        for path in args.kernel_names:
            load_kernel_names([path])
    except (EnvelopeError, KernelNamesError) as e:
        raise UsageError(str(e)) from None
    return files


def resume_args(parser: argparse.ArgumentParser, argv: Optional[List[str]], args: argparse.Namespace
                ) -> Tuple[argparse.Namespace, RunRecord]:
    """--resume: the run's own settings, from its record in --out (only RESUME_OPTIONS may be given)."""
    if not args.out:
        raise UsageError("--resume needs --out DIR, the folder of the run to finish")
    given = _given_options(argv)
    extra = sorted(set(given) - set(RESUME_OPTIONS))
    if extra:
        raise UsageError("--resume takes every setting from the run's record; only --timeout-s, "
                         "--startup-timeout-s, --devices and -v may be given with it, not " +
                         ", ".join("--" + e.replace("_", "-") for e in extra))
    out = Path(os.path.abspath(args.out))
    try:
        record = RunRecord.load(out)
    except RecordError as e:
        raise UsageError(f"--resume: {e}") from None
    settings = vars(parser.parse_args([]))
    settings.update({k: v for k, v in record.settings.items() if k in settings})
    settings.update({k: getattr(args, k) for k in given})
    settings["out"] = str(out)
    return argparse.Namespace(**settings), record


def _given_options(argv: Optional[List[str]]) -> List[str]:
    """The options the command line names (their dests), whatever their values."""
    quiet = make_parser()
    for action in quiet._actions:  # noqa: SLF001 - argparse has no public way to drop every default
        action.default = argparse.SUPPRESS
    return list(vars(quiet.parse_args(argv)))
