"""python3 -m pmqa_run: run a Python-callable FP8 paged MQA logits op on pmqa case files.

For each case: build the arguments the op's calling convention expects on the device, call the op,
and write a case file holding the op's logits, the producer (the op), the output contract and, with
--bench, the op's time ("bench_ms") -- the input of `pmqa verify`.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import importlib
import os
import statistics
import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from pmqa_cases import CaseFile, CaseFileError, read_case_file, write_case_file

from .backend import BackendError, make_backend
from .conventions import CONVENTIONS, OpOutputError, RunOptions

EXIT_OK = 0        # every selected case ran and its output file was written
EXIT_OP_FAILED = 1  # an op raised, returned the wrong thing, wrote outside its rows, or was not repeatable
EXIT_INVALID = 2   # usage error, unusable op/backend, invalid case file, or a case the convention refused

TOLERANCES = ("fp32", "matrix-unit", "bf16-output", "matrix-unit-bf16")
NAN_RULES = ("propagate", "relu-clamp")

# Metadata this runner (re)writes: stale values from the input file are dropped.
_RUNNER_KEYS = ("bench_ms", "bench_min_ms", "bench_iters", "bench_warmup", "bench_flush_bytes", "tolerance",
                "convention", "device", "runner", "logits_from", "logits_dtype", "out_row_stride", "num_sms",
                "context_lens_passed", "relaunches", "op_kwargs", "nan")

EPILOG = """\
conventions (spec §1.4, §2, §4):
  aiter-fused   op(q, kv_cache, weights, out_logits, context_lens[B], block_table, max_model_len,
                   Preshuffle=<SHUFFLE>, KVBlockSize=<block_size>, ChunkK=256) writes a caller buffer
                   pre-filled with the sentinel; contract valid-only; reads NORMAL and SHUFFLE
  aiter-stage1  op(q, kv_cache, weights, out_qk[H, B*N, L] pre-filled with -inf, context_lens[B],
                   block_table, max_model_len); the runner sums over heads; contract clean;
                   NORMAL layout, block_size 1
  deepgemm      op(q, kv_cache, weights, context_lens[B, N], block_table, schedule, max_model_len)
                   returns logits (row stride may be padded); schedule = metadata_fn(context_lens[B, N],
                   block_size, num_sms); contract valid-only; NORMAL layout, e4m3fn
  eager         op(q, kv_cache, weights, context_lens, block_table, max_model_len) returns logits;
                   contract clean; NORMAL layout
  q is torch.float8_e4m3fn or torch.float8_e4m3fnuz per the case; kv_cache is uint8
  [num_blocks, block_size, 1, D+4], a strided view of the case's [num_blocks, block_stride] bytes.
  A case a convention cannot express is refused with the reason, never converted.

exit status:
  0  every selected case ran and its output file was written (--skip-unsupported: refused cases
     are skipped and do not count)
  1  an op failed on some case: it raised, returned something other than [B*N, max_model_len]
     float32/bfloat16 on the device, wrote outside its output rows (guard cells), or (--bench) gave
     different valid cells on a relaunch. Guard and relaunch failures still write the file.
  2  usage error, an op/metadata function that cannot be imported, no torch or no device, an
     unreadable or invalid case file, no case files, or a case the convention cannot express
  The worst status wins (2 over 1 over 0); every case is tried either way.
  A CI job gates on this status AND on `pmqa verify OUT_DIR`'s (0 pass, 1 mismatch, 2 invalid).

example:
  pmqa gen --suite quick --out cases/
  python3 -m pmqa_run --op pmqa_run.eager_torch:fp8_paged_mqa_logits --convention eager \\
      --cases cases/ --out out/ --bench --skip-unsupported
  pmqa verify out/
"""


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m pmqa_run", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a Python-callable FP8 paged MQA logits op (AITER, DeepGEMM, a framework's eager op) on "
                    "pmqa case files and store its logits for `pmqa verify`.")
    p.add_argument("--op", required=True, metavar="MODULE:FUNCTION",
                   help="the op to run, e.g. aiter.ops.triton.attention.pa_mqa_logits:deepgemm_fp8_paged_mqa_logits")
    p.add_argument("--convention", required=True, choices=sorted(CONVENTIONS), help="how the op is called")
    p.add_argument("--cases", required=True, nargs="+", metavar="PATH",
                   help="case files (*.safetensors, e.g. from `pmqa gen`) or directories of them")
    p.add_argument("--out", required=True, metavar="DIR", help="where the output case files go (same file names)")
    p.add_argument("--case", action="append", default=[], metavar="GLOB",
                   help="run only cases whose name matches (repeatable)")
    p.add_argument("--skip-unsupported", action="store_true",
                   help="skip (and report) cases the convention cannot express instead of exiting 2")
    p.add_argument("--backend", choices=("torch", "numpy"), default="torch",
                   help="torch (real ops; default) or numpy (numpy stand-in ops, no torch needed)")
    p.add_argument("--device", default=None, help="torch device: cuda (default), cuda:N or cpu")
    p.add_argument("--op-kwarg", action="append", default=[], metavar="KEY=VALUE",
                   help="extra keyword argument for the op (VALUE is a Python literal, else a string)")
    p.add_argument("--metadata-fn", default=None, metavar="MODULE:FUNCTION",
                   help="deepgemm: the schedule-metadata function (default: the op module's "
                        "get_paged_mqa_logits_metadata)")
    p.add_argument("--num-sms", type=int, default=None, help="SM/CU count passed to the metadata function "
                                                            "(default: the device's)")
    p.add_argument("--out-row-pad", type=int, default=32, metavar="CELLS",
                   help="caller-owned output buffers get this many guard cells after each row (default 32; "
                        "0 for dense rows)")
    p.add_argument("--contract", choices=("clean", "valid-only"), default=None,
                   help="record this output contract instead of the convention's")
    p.add_argument("--tolerance", choices=TOLERANCES, default=None,
                   help="record this tolerance profile for pmqa verify (default: the convention's: "
                        "fp32 for eager, matrix-unit otherwise; with bfloat16 logits matrix-unit-bf16, or "
                        "bf16-output for eager)")
    p.add_argument("--nan", choices=NAN_RULES, default=None,
                   help="record this NaN behaviour for pmqa verify (default: the convention's: relu-clamp for the "
                        "tensor-core libraries, propagate for eager)")
    p.add_argument("--producer", default=None, help="producer recorded in the files (default: the --op text)")
    p.add_argument("--bench", action="store_true",
                   help="time each call with device events (warm-up, median, L2 flushed between) and record "
                        "bench_ms; also checks that relaunches give the same valid cells")
    p.add_argument("--warmup", type=int, default=3, help="--bench: untimed calls first (default 3)")
    p.add_argument("--iters", type=int, default=20, help="--bench: timed calls, the median is recorded (default 20)")
    p.add_argument("--flush-mib", type=int, default=None,
                   help="--bench: MiB written between calls to flush the L2 (default: 2x the device's L2, at "
                        "least 256 MiB; numpy backend 8 MiB)")
    p.add_argument("-v", "--verbose", action="store_true", help="print the traceback when an op raises")
    return p


def load_callable(spec: str, what: str) -> Tuple[Callable[..., Any], Any]:
    """MODULE:FUNCTION (FUNCTION may be dotted) -> (the callable, the module)."""
    if spec.count(":") != 1:
        raise UsageError(f"{what} {spec!r}: expected MODULE:FUNCTION")
    module_name, attr = spec.split(":")
    if not module_name or not attr:
        raise UsageError(f"{what} {spec!r}: expected MODULE:FUNCTION")
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - any import failure is reported the same way
        raise UsageError(f"{what} {spec}: cannot import {module_name}: {type(e).__name__}: {e}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{what} {spec}: {module_name} has no attribute {attr}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{what} {spec}: {attr} is a {type(obj).__name__}, not callable")
    return obj, module


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


def find_case_files(paths: List[str]) -> List[Path]:
    files: List[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(x for x in path.iterdir() if x.name.endswith(".safetensors") and x.is_file())
            if not found:
                raise UsageError(f"--cases {p}: the directory holds no *.safetensors files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise UsageError(f"--cases {p}: no such file or directory")
    names: Dict[str, Path] = {}
    for f in files:
        if f.name in names and names[f.name].resolve() != f.resolve():
            raise UsageError(f"--cases: {names[f.name]} and {f} would both be written to --out as {f.name}")
        names[f.name] = f
    return list(dict.fromkeys(files))


def _selected(name: str, stem: str, globs: List[str]) -> bool:
    """--case GLOB matches the case's name or its file name without .safetensors."""
    return not globs or any(fnmatch.fnmatchcase(name, g) or fnmatch.fnmatchcase(stem, g) for g in globs)


def _shape(cf: CaseFile) -> str:
    return (f"B{cf.batch} N{cf.next_n} H{cf.heads} D{cf.head_dim} bs{cf.block_size} "
            f"{'fn' if cf.fp8_format == 'e4m3fn' else 'fnuz'} {cf.kv_layout}"
            f"{' lens2d' if cf.context_lens_2d else ''}")


def _recorded_tolerance(convention_profile: str, dtype: str) -> str:
    """The profile a convention's output is judged under: bf16 logits add the bf16 roundings."""
    if dtype != "bfloat16":
        return convention_profile
    return "matrix-unit-bf16" if convention_profile == "matrix-unit" else "bf16-output"


def relaunch_difference(first: np.ndarray, again: np.ndarray, cf: CaseFile, contract: str) -> Optional[str]:
    """Bitwise comparison of two launches' logits over the cells the contract checks."""
    a, b = first.view(np.uint32), again.view(np.uint32)
    differ = a != b
    if contract == "valid-only":
        cols = np.arange(cf.max_model_len)[None, :]
        differ &= cols < cf.valid_keys()[:, None]
    count = int(differ.sum())
    if count == 0:
        return None
    r, j = (int(i) for i in np.argwhere(differ)[0])
    return (f"relaunches differ in {count} cell(s) the contract checks; first at row {r}, column {j}: "
            f"{first[r, j]!r} then {again[r, j]!r} (a race?)")


class Runner:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.convention = CONVENTIONS[args.convention]
        if args.out_row_pad < 0:
            raise UsageError("--out-row-pad must be >= 0")
        if args.bench and (args.iters < 1 or args.warmup < 0):
            raise UsageError("--iters must be >= 1 and --warmup >= 0")
        kwargs = parse_kwargs(args.op_kwarg, self.convention.reserved_kwargs, self.convention.name)
        self.files = find_case_files(args.cases)
        try:
            self.backend = make_backend(args.backend, args.device, args.num_sms)
        except BackendError as e:
            raise UsageError(str(e)) from None
        self.op, module = load_callable(args.op, "--op")
        metadata_fn = None
        if self.convention.name == "deepgemm":
            if args.metadata_fn:
                metadata_fn, _ = load_callable(args.metadata_fn, "--metadata-fn")
            else:
                metadata_fn = getattr(module, "get_paged_mqa_logits_metadata", None)
                if not callable(metadata_fn):
                    raise UsageError(f"--op {args.op}: deepgemm needs a schedule-metadata function and "
                                     f"{module.__name__} has no get_paged_mqa_logits_metadata; name one with "
                                     f"--metadata-fn MODULE:FUNCTION")
        elif args.metadata_fn:
            raise UsageError(f"--metadata-fn: only the deepgemm convention uses one, not {self.convention.name}")
        self.options = RunOptions(op_kwargs=kwargs, out_row_pad=args.out_row_pad, metadata_fn=metadata_fn)
        self.out_dir = Path(args.out)
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--out {args.out}: cannot create the directory: {e.strerror or e}") from None
        self.producer = args.producer or args.op
        self.counts = {"written": 0, "skipped": 0, "refused": 0, "failed": 0, "invalid": 0}
        self.status = EXIT_OK

    def say(self, text: str) -> None:
        print(text, flush=True)

    def worst(self, status: int) -> None:
        self.status = max(self.status, status)

    def run(self) -> int:
        self.say(f"pmqa_run: {self.args.op} as {self.convention.name} on {self.backend.describe()}; "
                 f"{len(self.files)} case file(s) -> {self.out_dir}")
        for path in self.files:
            self.run_file(path)
        c = self.counts
        ran = c["written"] + c["failed"] + c["refused"] + c["invalid"] + c["skipped"]
        if ran == 0:
            self.worst(EXIT_INVALID)
            self.say(f"pmqa_run: error: no case matched --case {' '.join(self.args.case)}")
        self.say(f"pmqa_run: {ran} case(s): {c['written']} written, {c['failed']} failed, {c['refused']} refused, "
                 f"{c['skipped']} skipped, {c['invalid']} invalid (exit {self.status})")
        return self.status

    def run_file(self, path: Path) -> None:
        try:
            cf = read_case_file(path)
        except CaseFileError as e:
            self.counts["invalid"] += 1
            self.worst(EXIT_INVALID)
            self.say(f"ERROR    {e}")
            return
        name = cf.name or path.stem
        if not _selected(name, path.stem, self.args.case):
            return
        label = f"case {name} ({path})"
        reason = self.convention.refusal(cf)
        if reason is not None:
            if self.args.skip_unsupported:
                self.counts["skipped"] += 1
                self.say(f"SKIP     {name:<26} {_shape(cf):<34} {self.convention.name} cannot express it: {reason}")
            else:
                self.counts["refused"] += 1
                self.worst(EXIT_INVALID)
                self.say(f"REFUSED  {label}: convention {self.convention.name} cannot express it: {reason}")
            return
        try:
            self.run_case(cf, path, name, label)
        except _CaseFailed as e:
            self.counts["failed"] += 1
            self.worst(EXIT_OP_FAILED)
            self.say(f"FAIL     {label}: {e}")

    def call(self, inv) -> Any:
        result = self.op(*inv.args, **inv.kwargs)
        self.backend.synchronize()
        return result

    def run_case(self, cf: CaseFile, path: Path, name: str, label: str) -> None:
        args = self.args
        try:
            inv = self.convention.build(cf, self.backend, self.options)
        except Exception as e:  # noqa: BLE001 - e.g. the metadata function raised
            raise _CaseFailed(f"building the {self.convention.name} arguments raised {self._exc(e)}") from None
        try:
            result = self.call(inv)
        except Exception as e:  # noqa: BLE001
            raise _CaseFailed(f"the op raised {self._exc(e)}") from None
        logits, dtype = self.collect(inv, result)
        problems = []
        guard = inv.guard_problem()
        if guard:
            problems.append(guard)
        contract = args.contract or self.convention.contract
        extra = {k: v for k, v in cf.extra.items() if k not in _RUNNER_KEYS}
        if args.bench:
            last: List[Any] = [None]

            def timed():
                last[0] = self.op(*inv.args, **inv.kwargs)

            flush = args.flush_mib << 20 if args.flush_mib is not None else self.backend.default_flush_bytes()
            try:
                times = self.backend.time_calls(timed, inv.reset, args.warmup, args.iters, flush)
                self.backend.synchronize()
            except Exception as e:  # noqa: BLE001
                raise _CaseFailed(f"the op raised on a relaunch (--bench) {self._exc(e)}") from None
            again, _ = self.collect(inv, last[0])
            diff = relaunch_difference(logits, again, cf, contract)
            if diff:
                problems.append(diff)
            median = statistics.median(times)
            extra.update({"bench_ms": f"{median:.6g}", "bench_min_ms": f"{min(times):.6g}",
                          "bench_iters": str(args.iters), "bench_warmup": str(args.warmup),
                          "bench_flush_bytes": str(flush),
                          "relaunches": f"{args.warmup + args.iters}, {'differ' if diff else 'identical'}"})
        tolerance = args.tolerance or _recorded_tolerance(self.convention.tolerance, dtype)
        extra.update({"convention": self.convention.name, "device": self.backend.describe(), "runner": "pmqa_run",
                      "tolerance": tolerance, "logits_dtype": dtype, "nan": args.nan or self.convention.nan})
        if self.options.op_kwargs:
            extra["op_kwargs"] = ", ".join(f"{k}={v!r}" for k, v in self.options.op_kwargs.items())
        extra.update(inv.notes)
        out = replace(cf, logits=logits, producer=self.producer, contract=contract, extra=extra)
        out_path = self.out_dir / path.name
        try:
            write_case_file(out_path, out)
        except (CaseFileError, OSError) as e:
            self.counts["invalid"] += 1
            self.worst(EXIT_INVALID)
            self.say(f"ERROR    {label}: cannot write {out_path}: {e}")
            return
        bench = f"{extra['bench_ms']:>9} ms" if args.bench else ""
        if problems:
            raise _CaseFailed("; ".join(problems) + f" (file written: {out_path})")
        self.counts["written"] += 1
        self.say(f"ok       {name:<26} {_shape(cf):<34} {bench}  {out_path}")

    def collect(self, inv, result) -> Tuple[np.ndarray, str]:
        try:
            arr = inv.collect(result)
            dtype = self.backend.dtype_name(arr)
            return self.backend.to_numpy(arr), dtype
        except (OpOutputError, TypeError) as e:
            raise _CaseFailed(f"the op's output is unusable: {e}") from None

    def _exc(self, e: BaseException) -> str:
        text = f"{type(e).__name__}: {e}"
        if self.args.verbose:
            text += "\n" + "".join(traceback.format_exception(type(e), e, e.__traceback__))
        else:
            tb = traceback.extract_tb(e.__traceback__)
            if tb:
                frame = tb[-1]
                text += f" (at {os.path.basename(frame.filename)}:{frame.lineno}; -v for the traceback)"
        return text


class _CaseFailed(Exception):
    pass


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 0 for --help, 2 for a usage error
        return int(e.code or 0)
    try:
        runner = Runner(args)
    except UsageError as e:
        print(f"pmqa_run: error: {e}", file=sys.stderr, flush=True)
        return EXIT_INVALID
    return runner.run()
