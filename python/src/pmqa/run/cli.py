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
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple


from .backend import BackendError, make_backend
from .case_run import CaseResult, CaseRunner, recorded_tolerance as _recorded_tolerance  # noqa: F401
from .._data import DataError
from .floor import DEFAULT_FLOOR_MIN_MB, DEFAULT_MAX_FLOOR_RATIO
from .kernel_names import load_kernel_names
from .worker import InProcess, SetupError, WorkerPool
from .case_run import relaunch_difference  # noqa: F401 - part of the module's interface
from .conventions import CONVENTIONS, RunOptions
from .envelope import Envelope, EnvelopeError, make_envelope, read_envelope_file
from .junit import write_junit

EXIT_OK = 0        # every selected case ran and its output file was written
EXIT_OP_FAILED = 1  # an op raised, returned the wrong thing, wrote outside its rows, or was not repeatable
EXIT_INVALID = 2   # usage error, unusable op/backend, invalid case file, or a case the convention refused

TOLERANCES = ("fp32", "matrix-unit", "bf16-output", "matrix-unit-bf16")
NAN_RULES = ("propagate", "relu-clamp")

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
  What each library supports is the convention's envelope (fixtures/data/envelopes/<name>.json, per
  platform, a reason per limit; --show-envelope prints it): a case outside is unsupported, refused
  before the call with the limit's reason, never converted.

exit status:
  0  every selected case ran and its output file was written (--skip-unsupported: cases outside
     the envelope are skipped, counted per limit, and do not count against the run)
  1  an op failed on some case: it raised, returned something other than [B*N, max_model_len]
     float32/bfloat16 on the device, wrote outside its output rows (guard cells), or (--bench) gave
     different valid cells on a relaunch. Guard and relaunch failures still write the file.
  2  usage error, an op/metadata function that cannot be imported, no torch or no device, an
     unreadable or invalid case file or envelope, no case files, or a case outside the envelope
     (without --skip-unsupported)
  The worst status wins (2 over 1 over 0); every case is tried either way.
  A CI job gates on this status AND on `pmqa verify OUT_DIR`'s (0 pass, 1 mismatch, 2 invalid).

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
    p.add_argument("--convention", required=True, choices=sorted(CONVENTIONS), help="how the op is called")
    p.add_argument("--cases", nargs="+", metavar="PATH",
                   help="case files (*.safetensors, e.g. from `pmqa gen`) or directories of them")
    p.add_argument("--out", metavar="DIR", help="where the output case files go (same file names)")
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
                        "(fixtures/data/kernel_names.json)")
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


def build_case_runner(args: argparse.Namespace, heartbeat: Callable[[], None] = lambda: None) -> CaseRunner:
    """Everything that touches the device: the backend, the op, its envelope (a worker process, or
    pmqa-run itself with --in-process). A usage error is a SetupError."""
    try:
        convention = CONVENTIONS[args.convention]
        kwargs = parse_kwargs(args.op_kwarg, convention.reserved_kwargs, convention.name)
        backend = make_backend(args.backend, args.device, args.num_sms)
        envelope = load_envelope(convention.name, args.platform, args.envelope, backend)
        op, module = load_callable(args.op, "--op")
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


def case_name(path: Path) -> Optional[str]:
    """The case's name from its header (the file is not read whole here), None if unreadable."""
    try:
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            if n < 2 or n > (16 << 20):
                return None
            meta = json.loads(f.read(n).decode("utf-8")).get("__metadata__", {})
        name = meta.get("name")
        return name if isinstance(name, str) else None
    except (OSError, ValueError, AttributeError, UnicodeDecodeError):
        return None


class Runner:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        missing = [f"--{n}" for n in ("op", "cases", "out") if not getattr(args, n)]
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
        if args.timeout_s < 0:
            raise UsageError("--timeout-s must be >= 0 (0: no timeout)")
        parse_kwargs(args.op_kwarg, self.convention.reserved_kwargs, self.convention.name)
        self.files = find_case_files(args.cases)
        try:
            for path in args.envelope:
                read_envelope_file(path)
            for path in args.kernel_names:
                load_kernel_names([path])
        except (EnvelopeError, DataError) as e:
            raise UsageError(str(e)) from None
        self.out_dir = Path(args.out)
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--out {args.out}: cannot create the directory: {e.strerror or e}") from None
        try:
            self.cases = (InProcess(args, build_case_runner) if args.in_process
                          else WorkerPool(args, build_case_runner, args.timeout_s))
        except SetupError as e:
            raise UsageError(str(e)) from None
        self.results: List[CaseResult] = []
        self.status = EXIT_OK

    def say(self, text: str) -> None:
        print(text, flush=True)

    def worst(self, status: int) -> None:
        self.status = max(self.status, status)

    def run(self) -> int:
        h = self.cases.header
        where = "in this process" if self.args.in_process else \
            f"in a worker process (--timeout-s {self.args.timeout_s:g} per call)"
        self.say(f"pmqa-run: {self.args.op} as {self.convention.name} on {h['backend']}; envelope "
                 f"{h['convention']} on {h['platform']} ({h['limits']} limit(s)); {len(self.files)} case file(s) -> "
                 f"{self.out_dir}{' (logits only)' if self.args.logits_only else ''}; {where}")
        try:
            for path in self.files:
                if not self.run_file(path):
                    break
        finally:
            self.cases.close()
        self.summary()
        self.write_junit()
        return self.status

    def write_junit(self) -> None:
        if not self.args.junit:
            return
        try:
            write_junit(self.args.junit, f"pmqa-run {self.convention.name}", self.results)
        except OSError as err:
            self.worst(EXIT_INVALID)
            self.say(f"pmqa-run: error: --junit {self.args.junit}: {err.strerror or err}")
            self.args.junit = None

    def summary(self) -> None:
        count = Counter(r.status for r in self.results)
        if not self.results:
            self.worst(EXIT_INVALID)
            self.say(f"pmqa-run: error: no case matched --case {' '.join(self.args.case)}")
        how = "skipped" if self.args.skip_unsupported else "refused"
        self.say(f"pmqa-run: {len(self.results)} case(s): {count['ok']} written, {count['failed']} failed, "
                 f"{count['unsupported']} unsupported ({how}), {count['invalid']} invalid (exit {self.status})")
        limits = Counter(r.limit for r in self.results if r.status == "unsupported")
        if limits:
            self.say("pmqa-run: unsupported by limit: " +
                     ", ".join(f"{lid} {n}" for lid, n in sorted(limits.items(), key=lambda x: (-x[1], x[0]))))
        if not self.args.in_process and self.cases.started > 1:
            self.say(f"pmqa-run: {self.cases.started} worker processes (a fresh one after each fault)")

    def run_file(self, path: Path) -> bool:
        """Runs one case; False when no worker can be started any more (the run stops)."""
        name = case_name(path)
        if name is not None and not _selected(name, path.stem, self.args.case):
            return True
        try:
            result = self.cases.run(path)
        except SetupError as e:
            self.record(CaseResult(str(path), name or path.stem, "failed", f"no worker could be started: {e}"))
            self.say("pmqa-run: error: stopping: no worker process could be started")
            return False
        if name is None and result.status != "invalid" and not _selected(result.name, path.stem, self.args.case):
            return True
        self.record(result)
        self.write_junit()  # up to date after every case: a killed run keeps what it did
        return True

    def record(self, r: CaseResult) -> None:
        self.results.append(r)
        label = f"case {r.name} ({r.path})"
        h = self.cases.header
        if r.status == "ok":
            bench = f"{r.bench_ms:>9} ms" if r.bench_ms else ""
            if r.kernel_ms:
                bench = f"{r.kernel_ms:>9} ms kernels, {r.bench_ms} ms wall"
            ratio = f"  x{r.floor_ratio} floor{'' if r.floor_gated else ' (not gated)'}" if r.floor_ratio else ""
            path = f"  path {r.kernel_path}" if r.kernel_path else ""
            self.say(f"ok       {r.name:<26} {r.shape:<34} {bench}{ratio}{path}  {r.out_path}")
        elif r.status == "unsupported":
            if self.args.skip_unsupported:
                self.say(f"SKIP     {r.name:<26} {r.shape:<34} unsupported by {h['convention']} on {h['platform']}: "
                         f"{r.message}")
            else:
                self.worst(EXIT_INVALID)
                self.say(f"UNSUPPORTED {label}: {h['convention']} on {h['platform']}: {r.message}")
        elif r.status == "failed":
            self.worst(EXIT_OP_FAILED)
            ratio = f" [x{r.floor_ratio} floor]" if r.floor_ratio else ""
            self.say(f"FAIL     {label}{ratio}: {r.message}")
        else:
            self.worst(EXIT_INVALID)
            self.say(f"ERROR    {r.message}")


def load_envelope(convention: str, platform: str, overlays: List[str], backend) -> Envelope:
    """The convention's envelope on --platform (auto: the backend's), with the --envelope overlays."""
    try:
        files = [read_envelope_file(p) for p in overlays]
        chosen = backend.platform() if platform == "auto" else platform
        return make_envelope(convention, chosen, files)
    except EnvelopeError as e:
        raise UsageError(f"--envelope: {e}") from None


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 0 for --help, 2 for a usage error
        return int(e.code or 0)
    if args.show_envelope:
        try:
            backend = make_backend(args.backend, args.device, args.num_sms) if args.platform == "auto" else None
            print(load_envelope(args.convention, args.platform, args.envelope, backend).describe())
        except (UsageError, BackendError) as e:
            print(f"pmqa-run: error: {e}", file=sys.stderr, flush=True)
            return EXIT_INVALID
        return EXIT_OK
    try:
        runner = Runner(args)
    except UsageError as e:
        print(f"pmqa-run: error: {e}", file=sys.stderr, flush=True)
        return EXIT_INVALID
    return runner.run()
