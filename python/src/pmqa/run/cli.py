"""python3 -m pmqa.run: run a Python-callable FP8 paged MQA logits op on pmqa case files.

For each case: build the arguments the op's calling convention expects on the device, call the op,
and write a case file holding the op's logits, the producer (the op), the output contract and, with
--bench, the op's times (its kernels' device time "kernel_ms", its wall time "bench_ms") -- the input
of `pmqa verify`.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import importlib
import json
import os
import signal
import stat
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple


from pmqa.cases.atomic_file import CANNOT_WRITE_HERE, describe_os_error
from pmqa.cases.case_file import file_kind, first_control_character
from pmqa.cases.data import DataError
from pmqa.cases.envelope import Envelope, EnvelopeError, make_envelope, read_envelope_file
from pmqa.cases.logits_file import sha256_file
from pmqa.cases.names import CONTRACTS, NAN_RULES, TOLERANCES  # noqa: F401 - the model's names, one list each
from pmqa.cases.shard import assign_shards, parse_shard, shard_work

from .backend import BackendError, make_backend
from .case_run import CaseResult, CaseRunner, recorded_tolerance as _recorded_tolerance  # noqa: F401
from .case_run import relaunch_difference  # noqa: F401 - part of the module's interface
from .conventions import CONVENTIONS, RunOptions
from .floor import DEFAULT_FLOOR_MIN_MB, DEFAULT_MAX_FLOOR_RATIO
from .junit import write_junit
from .kernel_names import load_kernel_names
from .record import OutputBusy, OutputLock, RecordedCase, RecordError, RunRecord, new_run_id
from .text import clean_line, indented, say, say_error
from .worker import STARTUP_TIMEOUT_S, DeviceWorkers, InProcess, SetupError, WorkerPool

EXIT_OK = 0        # every selected case ran and its output file was written
EXIT_OP_FAILED = 1  # an op raised, returned the wrong thing, wrote outside its rows, or was not repeatable
EXIT_INVALID = 2   # usage error, unusable op/backend, invalid case file, or a case the convention refused

EPILOG = """\
conventions (spec §1.4, §2, §4):
  aiter-fused   op(q, kv_cache, weights, out_logits, context_lens[B], block_table, max_model_len,
                   Preshuffle=<SHUFFLE>, KVBlockSize=<block_size>, ChunkK=256) writes a caller buffer
                   pre-filled with the sentinel; contract valid-only; reads NORMAL and SHUFFLE
  aiter-stage1  op(q, kv_cache, weights, out_qk[H, B*N, L] pre-filled with -inf, context_lens[B],
                   block_table, max_model_len, ChunkQ=heads); the runner sums over heads; contract
                   clean; NORMAL layout, any block size
  deepgemm      op(q, kv_cache, weights, context_lens[B, N], block_table, schedule, max_model_len)
                   returns logits (row stride may be padded); schedule = metadata_fn(context_lens[B, N],
                   block_size, num_sms); contract valid-only; NORMAL layout, e4m3fn
  eager         op(q, kv_cache, weights, context_lens, block_table, max_model_len) returns logits;
                   contract clean; NORMAL layout
  vllm-rocm     op(q, kv_cache, weights, context_lens[B], block_tables, schedule_metadata,
                   max_model_len) returns logits: vLLM's ROCm entry and its own dispatch; contract
                   valid-only; SHUFFLE for block_size > 1 (vLLM's writer), ROCm only
  q is torch.float8_e4m3fn or torch.float8_e4m3fnuz per the case; kv_cache is uint8
  [num_blocks, block_size, 1, D+4], a strided view of the case's [num_blocks, block_stride] bytes.
  What each library supports is the convention's envelope (cases/data/envelopes/<name>.json, per
  platform, a reason per limit; --show-envelope prints it): a case outside is unsupported, refused
  before the call with the limit's reason, never converted.

exit status:
  0  every selected case ran and its output file was written (--skip-unsupported: cases outside
     the envelope are skipped, counted per limit, and do not count against the run)
  1  an op failed on some case: it raised, returned something other than [B*N, max_model_len]
     float32/bfloat16 on the device, wrote outside its output rows (guard cells) or into its inputs,
     or (--bench) gave different valid cells on a relaunch. Guard and relaunch failures still write
     the file.
  2  usage error, an op/metadata function that cannot be imported, no torch or no device, an
     unreadable or invalid case file or envelope, no case files, a case outside the envelope
     (without --skip-unsupported), an --out in use by another pmqa-run, read-only or full, or a run
     that stopped early (its cases not run are listed as errors in --junit)
  128+N  stopped by signal N (SIGINT, SIGTERM, SIGHUP), after writing the record and --junit
  The worst status wins (2 over 1 over 0); every case is tried either way.
  A CI job gates on this status AND on `pmqa verify OUT_DIR`'s (0 pass, 1 mismatch, 2 invalid).

the run record (OUT/pmqa-run.json) and a killed run:
  The record lists every case with its outcome and result file's sha256, rewritten as each case
  finishes; OUT/pmqa-run.lock keeps a second run out of the folder. A killed run leaves its finished
  files whole, the record (complete: false) and --junit with the cases not reached as errors.
  `pmqa verify OUT` calls files the latest run did not write stale; `pmqa-run --resume --out OUT`
  finishes the run with its recorded settings, keeping finished cases whose files are unchanged.

example:
  pmqa gen --suite quick --out cases/
  python3 -m pmqa.run --op pmqa.run.eager_torch:fp8_paged_mqa_logits --convention eager \\
      --cases cases/ --out out/ --bench --skip-unsupported
  pmqa verify out/
"""


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pmqa-run", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a Python-callable FP8 paged MQA logits op (AITER, DeepGEMM, a framework's eager op) on "
                    "pmqa case files and store its logits for `pmqa verify`.")
    p.add_argument("--op", metavar="MODULE:FUNCTION",
                   help="the op to run, e.g. aiter.ops.triton.attention.pa_mqa_logits:deepgemm_fp8_paged_mqa_logits")
    p.add_argument("--convention", choices=sorted(CONVENTIONS), help="how the op is called (required)")
    p.add_argument("--cases", nargs="+", metavar="PATH",
                   help="case files (*.safetensors, e.g. from `pmqa gen`) or directories of them")
    p.add_argument("--out", metavar="DIR",
                   help="where the output case files go (same file names), with the run record pmqa-run.json; one "
                        "pmqa-run at a time per folder (a second is refused)")
    p.add_argument("--resume", action="store_true",
                   help="finish the interrupted run recorded in --out DIR (pmqa-run.json): its settings, its cases; "
                        "finished cases whose files still match the record are kept, the rest run")
    p.add_argument("--case", action="append", default=[], metavar="GLOB",
                   help="run only cases whose name matches (repeatable)")
    p.add_argument("--skip-unsupported", action="store_true",
                   help="skip (and count) cases outside the convention's envelope instead of exiting 2")
    p.add_argument("--platform", choices=("auto", "cuda", "rocm", "none"), default="auto",
                   help="whose limits apply: auto (the device's: cuda or rocm; none on the host and the numpy "
                        "backend), cuda, rocm, or none (the convention's own limits only)")
    p.add_argument("--envelope", action="append", default=[], metavar="FILE",
                   help="an envelope overlay (pmqa-envelope-overlay/1) adding, replacing or dropping limits for a "
                        "new drop (repeatable, applied in order)")
    p.add_argument("--show-envelope", action="store_true", help="print the envelope's limits and reasons and exit")
    p.add_argument("--logits-only", action="store_true",
                   help="write result files holding only the logits, the metadata and the input case file's name "
                        "and sha256 (pmqa verify OUT --cases DIR judges them) instead of a copy of every input")
    p.add_argument("--junit", default=None, metavar="FILE",
                   help="write a JUnit XML report: one testcase per case, unsupported ones <skipped>")
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
    p.add_argument("--contract", choices=CONTRACTS, default=None,
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
                   help="time each call (warm-up, median, L2 flushed between): kernel_ms, the durations of the "
                        "device activities it launched summed (torch's profiler), and bench_ms, device events around "
                        "it (the wall time); also checks that relaunches give the same valid cells")
    p.add_argument("--warmup", type=int, default=3, help="--bench: untimed calls first (default 3)")
    p.add_argument("--iters", type=int, default=20, help="--bench: timed calls, the median is recorded (default 20)")
    p.add_argument("--flush-mib", type=int, default=None,
                   help="--bench: MiB written between calls to flush the L2 (default: 2x the device's L2, at "
                        "least 256 MiB; numpy backend 8 MiB)")
    p.add_argument("--expect-path", choices=("fused", "two-stage", "eager"), default=None,
                   help="record the GPU kernels the op's first call launches (torch's profiler) and fail a case "
                        "that launched a kernel the kernel-name table does not know, or took another path")
    p.add_argument("--kernel-names", action="append", default=[], metavar="FILE",
                   help="more kernel-name entries (pmqa-kernel-names/1), matched before the reviewed table "
                        "(cases/data/kernel_names.json)")
    p.add_argument("--max-floor-ratio", type=float, nargs="?", const=DEFAULT_MAX_FLOOR_RATIO, default=None,
                   metavar="R",
                   help=f"fail a case whose median kernel time (--bench, implied) is more than R times its byte floor "
                        f"(the bytes it must move at the copy bandwidth measured here; default R "
                        f"{DEFAULT_MAX_FLOOR_RATIO:g}: fused kernels pass, a two-stage composite fails, at the "
                        f"decode shape); the ratio is printed beside each verdict")
    p.add_argument("--copy-gbps", type=float, default=None, metavar="GBPS",
                   help="the copy bandwidth (GB/s, read + write) the byte floor uses instead of measuring it in "
                        "the run: runs compared at one floor differ only by their kernels' time")
    p.add_argument("--floor-min-mb", type=float, default=DEFAULT_FLOOR_MIN_MB, metavar="MB",
                   help=f"judge the floor ratio only where the floor is at least this many MB (launch latency "
                        f"dominates smaller cases; default {DEFAULT_FLOOR_MIN_MB:g})")
    p.add_argument("--timeout-s", type=float, default=600.0, metavar="S",
                   help="the longest an op call may take (a hang): the worker is killed, the case fails and a fresh "
                        "worker takes the next one (default 600; 0: no timeout)")
    p.add_argument("--startup-timeout-s", type=float, default=STARTUP_TIMEOUT_S, metavar="S",
                   help=f"the longest a worker may take to start (import torch and the op, set up the device); "
                        f"then the run stops, its cases listed as not run (default {STARTUP_TIMEOUT_S:g}; 0: none)")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="run only shard K of N (1-based) of the cases: a stable split by case name balanced by work "
                        "(the case's B*N*H*D*max_model_len), so N jobs with K = 1..N together run every case once (the "
                        "split pmqa gen, check and verify --shard make)")
    p.add_argument("--devices", default=None, metavar="LIST|all",
                   help="spread the cases over these devices, one worker process each: a comma list of device "
                        "indices (0,1,3) or all (every CUDA/ROCm device torch sees; on the numpy backend the devices "
                        "are fake ids, all = the cores available); the largest cases first, one run record and one "
                        "JUnit, each result file naming its device")
    p.add_argument("--in-process", action="store_true",
                   help="run the cases in this process, not in a worker: no timeout, and a crash ends the run")
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
    """The case files named (absolute paths): files as given, *.safetensors entries of folders. An entry
    that is not a regular file (a FIFO, a dangling link) is kept, so the run reports it instead of
    skipping it or hanging on it."""
    files: List[Path] = []
    for p in paths:
        path = Path(os.path.abspath(p))
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise UsageError(f"--cases {p}: no such file or directory") from None
        if stat.S_ISDIR(mode):
            try:
                found = sorted(x for x in path.iterdir() if x.name.endswith(".safetensors"))
            except OSError as e:
                raise UsageError(f"--cases {p}: cannot list the directory: {e.strerror or e}") from None
            if not found:
                raise UsageError(f"--cases {p}: the directory holds no *.safetensors files")
            files.extend(found)
        elif stat.S_ISREG(mode):
            files.append(path)
        else:
            raise UsageError(f"--cases {p}: is {file_kind(mode)}, not a case file or a directory of them")
    names: Dict[str, Path] = {}
    for f in files:
        if f.name in names and names[f.name].resolve() != f.resolve():
            raise UsageError(f"--cases: {names[f.name]} and {f} would both be written to --out as {f.name}")
        names[f.name] = f
    return list(dict.fromkeys(files))


def name_problem(name: str, what: str = "its name") -> Optional[str]:
    """Why a file name or path cannot be used (it would reach reports, JUnit, the terminal and the
    run record, which other tools read as UTF-8 JSON), or None."""
    if first_control_character(name) is not None:
        return f"{what} holds a control character"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return f"{what} is not valid UTF-8"
    return None


def _header_metadata(path: Path) -> Dict[str, Any]:
    """The header's __metadata__ (the file is not read whole here); {} when unreadable or not a regular
    file (never opened then: a FIFO would block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return {}
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            if n < 2 or n > (16 << 20):
                return {}
            meta = json.loads(f.read(n).decode("utf-8")).get("__metadata__", {})
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return {}


def case_header(path: Path) -> Tuple[Optional[str], str]:
    """The case's name and suite from its header (the file is not read whole here); (None, "") when
    unreadable or not a regular file (never opened then: a FIFO would block)."""
    return _name_and_suite(_header_metadata(path))


def _name_and_suite(meta: Dict[str, Any]) -> Tuple[Optional[str], str]:
    name, suite = meta.get("name"), meta.get("suite", "")
    if not isinstance(name, str) or first_control_character(name) is not None:
        return None, ""
    return name, suite if isinstance(suite, str) and first_control_character(suite) is None else ""


def _work(meta: Dict[str, Any]) -> int:
    """shard_work of the shape the header states (pmqa verify --shard reads the same fields); 1 when
    it states no whole shape (the case is still in exactly one shard, where it is reported)."""
    dims = [meta.get(k) for k in ("batch", "next_n", "heads", "head_dim", "max_model_len")]
    if not all(isinstance(d, str) and d.isascii() and d.isdigit() and len(d) <= 12 for d in dims):
        return 1
    return shard_work(*(int(d) for d in dims))


def case_header_and_work(path: Path) -> Tuple[Optional[str], str, int]:
    """case_header's name and suite, and the case's work (what --shard and --devices balance by)."""
    meta = _header_metadata(path)
    return (*_name_and_suite(meta), _work(meta))


def _selected(name: str, stem: str, globs: List[str]) -> bool:
    """--case GLOB matches the case's name or its file name without .safetensors."""
    return not globs or any(fnmatch.fnmatchcase(name, g) or fnmatch.fnmatchcase(stem, g) for g in globs)


def build_case_runner(args: argparse.Namespace, heartbeat: Callable[[], None] = lambda: None,
                      stage: Callable[[str], None] = lambda text: None) -> CaseRunner:
    """Everything that touches the device: the backend, the op, its envelope (a worker process, or
    pmqa-run itself with --in-process). A usage error is a SetupError. stage(text) says what it is
    doing (a worker's start-up timeout names it)."""
    try:
        convention = CONVENTIONS[args.convention]
        kwargs = parse_kwargs(args.op_kwarg, convention.reserved_kwargs, convention.name)
        stage(f"setting up the {args.backend} backend (importing it, finding the device)")
        backend = make_backend(args.backend, args.device, args.num_sms)
        envelope = load_envelope(convention.name, args.platform, args.envelope, backend)
        stage(f"importing the op's module ({args.op.split(':')[0]})")
        op, module = load_callable(args.op, "--op")
        stage("setting up the op's metadata function and kernel names")
        metadata_fn = None
        if args.metadata_fn:
            if convention.name not in ("deepgemm", "vllm-rocm"):
                raise UsageError(f"--metadata-fn: only the deepgemm and vllm-rocm conventions use one, not "
                                 f"{convention.name}")
            metadata_fn, _ = load_callable(args.metadata_fn, "--metadata-fn")
        elif convention.name == "deepgemm":
            metadata_fn = getattr(module, "get_paged_mqa_logits_metadata", None)
            if not callable(metadata_fn):
                raise UsageError(f"--op {args.op}: deepgemm needs a schedule-metadata function and "
                                 f"{module.__name__} has no get_paged_mqa_logits_metadata; name one with "
                                 f"--metadata-fn MODULE:FUNCTION")
        names = load_kernel_names(args.kernel_names) if args.expect_path else None
    except (UsageError, BackendError, DataError) as e:
        raise SetupError(str(e)) from None
    options = RunOptions(op_kwargs=kwargs, out_row_pad=args.out_row_pad, metadata_fn=metadata_fn)
    return CaseRunner(args, convention, envelope, backend, op, options, names, heartbeat)


NOT_REACHED = ("not run: pmqa-run has not reached this case: the run is still going, or was interrupted or killed "
               "before it (`pmqa-run --resume --out {out}` finishes the run)")
RESUME_OPTIONS = ("out", "resume", "timeout_s", "startup_timeout_s", "verbose", "devices")


class Interrupted(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class _Entry:
    """A recorded case as JUnit shows it (pmqa.run.junit's result shape)."""

    def __init__(self, c: RecordedCase, not_run: str):
        self.name, self.suite, self.path, self.seconds = c.name, c.suite, c.file, c.seconds
        self.status = c.status if c.finished else "not-run"
        self.message = c.message if c.finished else not_run


class Runner:
    """One pmqa-run into one --out folder: its lock, its record, its cases, its JUnit."""

    def __init__(self, args: argparse.Namespace, record: Optional[RunRecord] = None):
        self.args = args
        self.status = EXIT_OK
        self.cases = None
        self.lock: Optional[OutputLock] = None
        self._interrupted = False
        self.refused: List[RecordedCase] = []  # refused by name before the run: reported when it starts
        missing = [f"--{n}" for n in ("op", "convention", "cases", "out") if not getattr(args, n)]
        if missing:
            raise UsageError(f"{', '.join(missing)} required")
        self.convention = CONVENTIONS[args.convention]
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
        parse_kwargs(args.op_kwarg, self.convention.reserved_kwargs, self.convention.name)
        self.shard = None
        if getattr(args, "shard", None):
            try:
                self.shard = parse_shard(args.shard)
            except ValueError as e:
                raise UsageError(str(e)) from None
        self.devices = resolve_devices(args) if getattr(args, "devices", None) else []
        # Every path absolute: what the op does to its working folder cannot move the runner's files.
        self.out_dir = Path(os.path.abspath(args.out))
        paths = [("--out", args.out), *(("--cases", p) for p in args.cases), ("--junit", args.junit or ""),
                 *(("--envelope", p) for p in args.envelope), *(("--kernel-names", p) for p in args.kernel_names)]
        for option, path in paths:
            problem = name_problem(os.path.abspath(path), "the path") if path else None
            if problem:
                raise UsageError(f"{option} {clean_line(path)}: {problem}")
        args.out = str(self.out_dir)
        args.junit = os.path.abspath(args.junit) if args.junit else None
        args.envelope = [os.path.abspath(p) for p in args.envelope]
        args.kernel_names = [os.path.abspath(p) for p in args.kernel_names]
        files = None if record else find_case_files(args.cases)
        args.cases = [os.path.abspath(p) for p in args.cases]
        try:
            for path in args.envelope:
                read_envelope_file(path)
            for path in args.kernel_names:
                load_kernel_names([path])
        except (EnvelopeError, DataError) as e:
            raise UsageError(str(e)) from None
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
            self.record = self.resumed(record) if record else self.planned(files, run_id)
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

    # ---- the plan
    def planned(self, files: List[Path], run_id: str) -> RunRecord:
        self.note_earlier_run()
        cases: List[RecordedCase] = []
        for path in files:
            problem = name_problem(path.name)
            if problem:  # refused unread; its name is stored escaped (the record is JSON other tools read)
                cases.append(RecordedCase(clean_line(str(path)), clean_line(path.stem), result=clean_line(path.name),
                                          status="invalid", message=f"{clean_line(str(path))}: file: refused: {problem}"))
                self.refused.append(cases[-1])
                continue
            name, suite, work = case_header_and_work(path)
            if name is not None and not _selected(name, path.stem, self.args.case):
                continue
            cases.append(RecordedCase(str(path), name or path.stem, suite=suite, result=path.name, work=work))
        shard_of = len(cases)
        if self.shard:
            # The split is over every case the run would take without --shard (refused ones too: each is
            # reported by exactly one shard), by name and work: the split pmqa gen --shard made of the suite.
            k, n = self.shard
            which = assign_shards([(c.name, c.work or 1) for c in cases], n)
            cases = [c for c, w in zip(cases, which) if w == k]
            taken = {id(c) for c in cases}
            self.refused = [c for c in self.refused if id(c) in taken]
        settings = {k: v for k, v in vars(self.args).items() if k not in ("resume", "run_id")}
        record = RunRecord(self.out_dir, run_id, self.producer, self.args.op, self.convention.name, settings, cases)
        if self.shard:
            record.shard, record.shard_of = f"{self.shard[0]}/{self.shard[1]}", shard_of
        ours = {c.result for c in cases}
        others = sorted(p.name for p in self.out_dir.glob("*.safetensors") if p.name not in ours)
        if others:
            say(f"pmqa-run: note: {len(others)} file(s) in --out are not this run's (e.g. {others[0]}): `pmqa verify "
                f"{self.out_dir}` will report them as stale")
        return record

    def note_earlier_run(self) -> None:
        try:
            old = RunRecord.load(self.out_dir)
        except RecordError:
            return
        if not old.complete:
            done = sum(c.finished for c in old.cases)
            say(f"pmqa-run: note: --out held run {old.run_id}, which did not finish ({done} of {len(old.cases)} "
                f"case(s)); this run replaces its record (--resume would have finished it)")

    def resumed(self, record: RunRecord) -> RunRecord:
        kept = again = 0
        for c in record.cases:
            if not c.finished:
                continue
            if c.written:
                path = self.out_dir / c.result
                try:
                    same = path.is_file() and sha256_file(path) == c.sha256
                except OSError:
                    same = False
                if not same:
                    say(f"pmqa-run: resume: {c.result}: the file is gone or changed since run {record.run_id} "
                        f"wrote it; the case runs again")
                    c.status, c.message, c.written, c.sha256 = "pending", "", False, ""
                    again += 1
                    continue
            kept += 1
        record.resumed.append(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        record.complete, record.stopped = False, ""
        pending = sum(not c.finished for c in record.cases)
        say(f"pmqa-run: resuming run {record.run_id}: {kept} finished case(s) kept, {pending} to run"
            f"{f' ({again} again)' if again else ''}")
        return record

    # ---- running
    def say(self, text: str) -> None:
        say(text)

    def worst(self, status: int) -> None:
        self.status = max(self.status, status)

    def _on_signal(self, signum, frame) -> None:
        if self._interrupted:
            return  # finishing the record and the JUnit after the first one
        self._interrupted = True
        raise Interrupted(signum)

    def run(self) -> int:
        handlers = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
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
            except Interrupted as e:
                self.stop(f"pmqa-run was stopped by {signal.Signals(e.signum).name}", 128 + e.signum)
            except KeyboardInterrupt:
                self._interrupted = True
                self.stop("pmqa-run was interrupted (SIGINT)", 128 + signal.SIGINT)
            finally:
                if self.cases is not None:
                    if self._interrupted:
                        self.cases.abort()
                    else:
                        self.cases.close()
            self.finish()
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            self.lock.release()
        return self.status

    def start_cases(self) -> bool:
        a = self.args
        where = "in this process" if a.in_process else \
            f"in a worker process (--timeout-s {a.timeout_s:g} per call)"
        pending = sum(not c.finished for c in self.record.cases)
        self.say(f"pmqa-run: {a.op} as {self.convention.name}, run {self.record.run_id}: {pending} case file(s) -> "
                 f"{self.out_dir}{' (logits only)' if a.logits_only else ''}; {where}")
        for c in self.refused:
            self.say(f"ERROR    {c.message}")
        if pending == 0:
            return True
        if self.devices:
            self.say(f"pmqa-run: {len(self.devices)} device(s) ({', '.join(self.devices)}), one worker each; the "
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
        self.say(f"pmqa-run: on {h['backend']}; envelope {h['convention']} on {h['platform']} ({h['limits']} limit(s))")
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
                self.say(f"pmqa-run: device {device}: on {payload['backend']}; envelope {payload['convention']} on "
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
        if not self.record.stopped and any(not c.finished for c in self.record.cases):
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
        label = f"case {r.name} ({r.path})" + (f" on device {entry.device}" if entry.device else "")
        h = self.cases.header
        if r.status == "ok":
            bench = f"{r.bench_ms:>9} ms" if r.bench_ms else ""
            if r.kernel_ms:
                bench = f"{r.kernel_ms:>9} ms kernels, {r.bench_ms} ms wall"
            ratio = f"  x{r.floor_ratio} floor{'' if r.floor_gated else ' (not gated)'}" if r.floor_ratio else ""
            path = f"  path {r.kernel_path}" if r.kernel_path else ""
            on = f"  [{entry.device}]" if entry.device else ""
            self.say(f"ok       {r.name:<26} {r.shape:<34} {bench}{ratio}{path}{on}  {r.out_path}")
        elif r.status == "unsupported":
            if self.args.skip_unsupported:
                self.say(f"SKIP     {r.name:<26} {r.shape:<34} unsupported by {h['convention']} on {h['platform']}: "
                         f"{r.message}")
            else:
                self.say(f"UNSUPPORTED {label}: {h['convention']} on {h['platform']}: {r.message}")
        elif r.status == "failed":
            ratio = f" [x{r.floor_ratio} floor]" if r.floor_ratio else ""
            self.say(indented(f"FAIL     {label}{ratio}: {r.message}"))
        else:
            self.say(indented(f"ERROR    {r.message}"))

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
        self.summary()
        self.write_junit()

    def write_junit(self) -> None:
        if not self.args.junit:
            return
        if self.record.stopped:
            not_run = f"not run: the run stopped before this case: {self.record.stopped}"
        else:
            not_run = NOT_REACHED.format(out=self.out_dir)
        properties = [("run_id", self.record.run_id), ("producer", self.producer), ("op", self.args.op),
                      ("convention", self.convention.name), ("complete", str(self.record.complete).lower())]
        if self.record.stopped:
            properties.append(("stopped", self.record.stopped))
        try:
            write_junit(self.args.junit, f"pmqa-run {self.convention.name}",
                        [_Entry(c, not_run) for c in self.record.cases], properties)
        except OSError as err:
            self.worst(EXIT_INVALID)
            say_error(f"pmqa-run: error: --junit {self.args.junit}: cannot write it: {describe_os_error(err)}")
            self.args.junit = None

    def summary(self) -> None:
        cases = self.record.cases
        count = Counter(c.status for c in cases)
        not_run = sum(not c.finished for c in cases)
        if not cases:
            self.say(f"pmqa-run: error: no case matched --case {' '.join(self.args.case)}")
        how = "skipped" if self.args.skip_unsupported else "refused"
        shard = f"shard {self.record.shard}: {len(cases)} of {self.record.shard_of} case(s)" if self.record.shard \
            else f"{len(cases)} case(s)"
        self.say(f"pmqa-run: {shard}: {count['ok']} written, {count['failed']} failed, "
                 f"{count['unsupported']} unsupported ({how}), {count['invalid']} invalid"
                 f"{f', {not_run} not run' if not_run else ''} (exit {self.status})")
        limits = Counter(c.limit for c in cases if c.status == "unsupported")
        if limits:
            self.say("pmqa-run: unsupported by limit: " +
                     ", ".join(f"{lid} {n}" for lid, n in sorted(limits.items(), key=lambda x: (-x[1], x[0]))))
        if not self.args.in_process and self.cases is not None and self.cases.started > max(1, len(self.devices)):
            self.say(f"pmqa-run: {self.cases.started} worker processes ("
                     f"{f'{len(self.devices)} device(s), ' if self.devices else ''}a fresh one after each fault)")
        if self.record.stopped:
            kept = sum(c.written and (self.out_dir / c.result).is_file() for c in cases)
            self.say(f"pmqa-run: the run stopped early ({self.record.stopped}): {kept} result file(s) kept in "
                     f"{self.out_dir}, {not_run} case(s) not run; `pmqa-run --resume --out {self.out_dir}` finishes it")

def resolve_devices(args: argparse.Namespace) -> List[str]:
    """--devices LIST|all as the device ids the workers get ("0", "1", ...)."""
    text = str(args.devices).strip()
    if args.in_process:
        raise UsageError("--devices runs one worker process per device; --in-process runs none")
    if args.device:
        raise UsageError("--device and --devices: give one (--devices sets each worker's device)")
    if text == "all":
        count = count_devices(args.backend, args.startup_timeout_s)
        if count < 1:
            raise UsageError("--devices all: torch sees no CUDA/ROCm device here")
        return [str(i) for i in range(count)]
    parts = text.split(",")
    if not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in parts):
        raise UsageError(f"--devices {clean_line(text)}: expected a comma list of device indices (e.g. 0,1) or all")
    ids = [str(int(p)) for p in parts]
    dupes = sorted({d for d in ids if ids.count(d) > 1}, key=int)
    if dupes:
        raise UsageError(f"--devices {text}: device {', '.join(dupes)} given twice (one worker per device)")
    return ids


def count_devices(backend: str, timeout_s: float) -> int:
    """The devices --devices all means: torch's CUDA/ROCm devices (counted in a child process, so this
    one never initialises a device), or on the numpy backend one fake device per core available."""
    if backend == "numpy":
        try:
            return len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            return os.cpu_count() or 1
    import subprocess
    import sys
    code = "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=timeout_s if timeout_s and timeout_s > 0 else None)
    except subprocess.TimeoutExpired:
        raise UsageError(f"--devices all: counting torch's devices took over {timeout_s:g} s") from None
    if p.returncode != 0 or not p.stdout.strip().isdigit():
        last = (p.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"--devices all: cannot count torch's devices: {clean_line(last)}")
    return int(p.stdout.strip())


def device_args(args: argparse.Namespace, device: str) -> argparse.Namespace:
    """A worker's settings for one of --devices: torch gets cuda:N, the numpy backend a fake device."""
    ns = argparse.Namespace(**vars(args))
    ns.device = f"cuda:{device}" if args.backend == "torch" else f"fake:{device}"
    return ns


def load_envelope(convention: str, platform: str, overlays: List[str], backend) -> Envelope:
    """The convention's envelope on --platform (auto: the backend's), with the --envelope overlays."""
    try:
        files = [read_envelope_file(p) for p in overlays]
        chosen = backend.platform() if platform == "auto" else platform
        return make_envelope(convention, chosen, files)
    except EnvelopeError as e:
        raise UsageError(f"--envelope: {e}") from None


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
    quiet = _parser()
    for action in quiet._actions:  # noqa: SLF001 - argparse has no public way to drop every default
        action.default = argparse.SUPPRESS
    return list(vars(quiet.parse_args(argv)))


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
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
