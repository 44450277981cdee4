"""pmqa-run's command line: its options, its help, its exit statuses and its usage error."""

from __future__ import annotations

import argparse

from pmqa import __version__
from pmqa.cases.names import CONTRACTS, NAN_RULES, TOLERANCES

from .backend_registry import BACKENDS
from .conventions import CONVENTIONS
from .floor import DEFAULT_FLOOR_MIN_MB, DEFAULT_MAX_FLOOR_RATIO
from .worker import STARTUP_TIMEOUT_S

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
     or (--bench) gave different valid cells on a relaunch, or killed its worker (a SIGKILL is
     said with what speaks for out of memory: the worker's peak RSS, the case file's size). Guard
     and relaunch failures still write the file. Also: the worker answered out of turn (for
     another case, twice, late, or from a process the op forked).
  2  usage error, an op/metadata function that cannot be imported, no torch or no device, an
     unreadable or invalid case file or envelope, no case files, a case outside the envelope
     (without --skip-unsupported), an --out in use by another pmqa-run, read-only or full (a result
     the system refuses is "not written", not the op's failure: --resume runs it again), or a run
     that stopped early (its cases not run are listed as errors in --junit)
  128+N  stopped by signal N (SIGINT, SIGTERM, SIGHUP), after writing the record and --junit (before
     the run has started: one line, 130 for a Ctrl-C)
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
  PYTHONPATH=python/examples python3 -m pmqa.run --op eager_torch_op:fp8_paged_mqa_logits --convention eager \\
      --cases cases/ --out out/ --bench --skip-unsupported
  pmqa verify out/
"""


class UsageError(Exception):
    """A command line or setting pmqa-run cannot use (exit 2)."""


def make_parser() -> argparse.ArgumentParser:
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
    p.add_argument("--backend", choices=tuple(BACKENDS), default="torch",
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
    p.add_argument("--version", action="version", version=f"pmqa-run {__version__}")
    return p
