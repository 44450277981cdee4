#!/usr/bin/env python3
"""A stand-in of `pmqa_bench_gpu --case FILE ... --json F` for machines without a GPU: the same
command line and JSON, its times from pmqa-run's numpy device model (pmqa.run.backend: a launch
lasts NUMPY_LAUNCH_US plus the bytes it moves at NUMPY_DEVICE_GBPS) for the launches pmqa's paths
make: the fused kernel reads the case's buffers and writes the output once; the two-stage path fills
its [H, rows, max_model_len] buffer, writes it in stage 1 and reads it in the head sum.

It lets bench/h200/speed_gate.py --numpy (CTest) run its pmqa leg: the orchestration, the JSON it
reads and the verdicts, not pmqa's kernels (those run on a GPU only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import pmqa.cases  # noqa: E402
from pmqa.run.backend import NUMPY_DEVICE_GBPS, numpy_kernel_ms  # noqa: E402


def runs(cf) -> list:
    inputs = cf.q.nbytes + cf.kv_cache.nbytes + cf.weights.nbytes + cf.context_lens.nbytes + cf.block_table.nbytes
    out = cf.rows * cf.max_model_len * 4
    per_head = cf.heads * out
    fused = numpy_kernel_ms(inputs + out)
    two_stage = numpy_kernel_ms(per_head) + numpy_kernel_ms(inputs + per_head) + numpy_kernel_ms(per_head + out)
    return [{"path": "fused", "kernel": "fused-mma/wgmma", "ms": fused, "min_ms": fused, "correct": True},
            {"path": "two-stage", "kernel": "two-stage", "ms": two_stage, "min_ms": two_stage, "correct": True}]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    cases = [{"file": f, "case": pmqa.cases.read_case_file(f).name, "runs": runs(pmqa.cases.read_case_file(f))}
             for f in args.case]
    doc = {"device": "numpy device model (fake_bench_gpu.py)", "arch": "none", "copy_gbs": NUMPY_DEVICE_GBPS,
           "reps": args.reps, "cases": cases}
    for c in cases:
        for r in c["runs"]:
            print(f"{c['case']:<26} {r['path']:<10} {r['kernel']:<20} {r['ms']:10.4f}")
    if args.json:
        Path(args.json).write_text(json.dumps(doc) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
