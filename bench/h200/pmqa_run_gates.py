#!/usr/bin/env python3
"""pmqa-run's GPU gates on an H200: which kernels ran (--expect-path) and how far from the byte floor
(--max-floor-ratio), and the faults the runner survives (--timeout-s, a fresh worker per fault).

    python3 bench/h200/pmqa_run_gates.py OUT_DIR           # from the repository root, on the GPU machine

Needs python3 with torch (CUDA), triton and numpy; builds nothing (pmqa's Python sources only: the
cases are generated here, pmqa-run runs the ops, the numbers are checked against eager_torch_op
on the same device). Writes OUT_DIR/cases (the inputs), OUT_DIR/<run>/ (pmqa-run's logits-only
result files, run.log, run.xml), OUT_DIR/table.md, and prints the table. Exit 0 when every run came
out as expected (below), 1 otherwise.

The stand-ins are written here, from the spec, sharing no code with any library:
  fused_triton         one Triton kernel (aiter-fused convention): keys tile by tile, all heads in a
                       tl.dot, the head sum in registers
  entry_two_stage      an engine entry (vllm-rocm's calling convention): torch.full(-inf), a Triton
                       stage-1 kernel writing per-head values, torch's sum over heads
  entry_guarded        an engine entry whose guard sends sm_90 / sm_100 to the fused kernel
  entry_forgets_sm90   the same entry with the guard's sm_90 forgotten: the two-stage path runs
  faults_hang/_abort/_device_error   eager_torch_op, except on the next_n 3 case: a GPU kernel
                       that spins, os.abort(), a Triton store to an illegal address
Expected: at the DeepSeek-V3.2 decode shape (B 64, H 64, D 128, block 64, context ~8192, next_n 1
and 2) the fused kernel and the guarded entry pass both gates (the floor gate on kernel time: the
call's device activities summed, its wall time beside it); the two-stage entry and the entry
that forgets sm_90 fail both, the latter's message naming the kernels; eager_torch_op is seen
as the eager path and fails the floor gate; each fault fails its case, the cases after it run in a
fresh worker, and every run completes. The table gives each ratio and the margin on both sides of R.

--numpy runs the same pipeline on the numpy backend with pmqa's numpy stand-ins (python/tests/
run_standins.py) and small cases, no torch or GPU: the orchestration's own test (CTest runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
sys.path.insert(0, str(REPO / "python" / "examples"))  # eager_torch_op, the reference op on the device

import pmqa.cases  # noqa: E402
from pmqa.run.floor import DEFAULT_MAX_FLOOR_RATIO  # noqa: E402

try:  # the GPU stand-ins; absent in --numpy mode on machines without them
    import torch
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - the numpy mode needs neither
    torch = triton = tl = None


# ============================================================================ the GPU stand-ins

if triton is not None:
    @triton.jit
    def _pmqa_standin_body(q_ptr, kv_ptr, w_ptr, lens_ptr, table_ptr, out_ptr, stride_kv, stride_table,
                           stride_out, stride_head, max_model_len, NEXT_N: tl.constexpr, H: tl.constexpr,
                           D: tl.constexpr, BS: tl.constexpr, BLOCK_K: tl.constexpr, STAGE1: tl.constexpr):
        """Program (b, tile): the BLOCK_K keys of sequence b from its pages, scored by every row of the
        sequence. STAGE1: per-head values into [H, rows, max_model_len]; else the head sum, -inf past E_r."""
        b = tl.program_id(0)
        tile = tl.program_id(1)
        length = tl.load(lens_ptr + b)
        if tile * BLOCK_K < length:
            j = tile * BLOCK_K + tl.arange(0, BLOCK_K)
            live = j < length
            page = tl.load(table_ptr + b * stride_table + j // BS, mask=live, other=0).to(tl.int64)
            t = (j % BS).to(tl.int64)
            base = page * stride_kv
            d = tl.arange(0, D)
            codes = tl.load(kv_ptr + base[:, None] + t[:, None] * D + d[None, :], mask=live[:, None], other=0)
            k = codes.to(tl.float8e4nv, bitcast=True)
            sp = kv_ptr + base + BS * D + t * 4
            bits = (tl.load(sp, mask=live, other=0).to(tl.uint32)
                    | (tl.load(sp + 1, mask=live, other=0).to(tl.uint32) << 8)
                    | (tl.load(sp + 2, mask=live, other=0).to(tl.uint32) << 16)
                    | (tl.load(sp + 3, mask=live, other=0).to(tl.uint32) << 24))
            scale = bits.to(tl.float32, bitcast=True)
            h = tl.arange(0, H)
            for n in tl.static_range(NEXT_N):
                r = b * NEXT_N + n
                q = tl.load(q_ptr + r * H * D + h[:, None] * D + d[None, :])
                x = tl.dot(q, tl.trans(k)) * scale[None, :]
                x = tl.maximum(x, 0.0) * tl.load(w_ptr + r * H + h)[:, None]
                valid = j < length - NEXT_N + n + 1
                if STAGE1:
                    tl.store(out_ptr + h[:, None].to(tl.int64) * stride_head + r * stride_out + j[None, :], x,
                             mask=valid[None, :] & (j[None, :] < max_model_len))
                else:
                    logit = tl.sum(x, axis=0)
                    tl.store(out_ptr + r * stride_out + j, tl.where(valid, logit, float("-inf")),
                             mask=j < max_model_len)

    # Two kernels, one body: the profiler sees the path in the launched kernel's name.
    @triton.jit
    def _pmqa_standin_fused_logits(q_ptr, kv_ptr, w_ptr, lens_ptr, table_ptr, out_ptr, stride_kv, stride_table,
                                   stride_out, max_model_len, NEXT_N: tl.constexpr, H: tl.constexpr,
                                   D: tl.constexpr, BS: tl.constexpr, BLOCK_K: tl.constexpr):
        _pmqa_standin_body(q_ptr, kv_ptr, w_ptr, lens_ptr, table_ptr, out_ptr, stride_kv, stride_table, stride_out,
                           0, max_model_len, NEXT_N, H, D, BS, BLOCK_K, False)

    @triton.jit
    def _pmqa_standin_stage1(q_ptr, kv_ptr, w_ptr, lens_ptr, table_ptr, out_ptr, stride_kv, stride_table,
                             stride_out, stride_head, max_model_len, NEXT_N: tl.constexpr, H: tl.constexpr,
                             D: tl.constexpr, BS: tl.constexpr, BLOCK_K: tl.constexpr):
        _pmqa_standin_body(q_ptr, kv_ptr, w_ptr, lens_ptr, table_ptr, out_ptr, stride_kv, stride_table, stride_out,
                           stride_head, max_model_len, NEXT_N, H, D, BS, BLOCK_K, True)

    @triton.jit
    def _pmqa_standin_spin(flag_ptr, limit):
        i = 0
        while (tl.load(flag_ptr, volatile=True) == 0) & (i < limit):
            i += 1

    @triton.jit
    def _pmqa_standin_bad_store(ptr):
        tl.store(ptr + (1 << 40), 1.0)


BLOCK_K = 128


def _launch(q, kv_cache, weights, lens, table, out, max_model_len, stage1):
    b_count, next_n, heads, dim = q.shape
    if b_count == 0:
        return
    bs = kv_cache.shape[1]
    grid = (b_count, triton.cdiv(max_model_len, BLOCK_K))
    shape = dict(NEXT_N=next_n, H=heads, D=dim, BS=bs, BLOCK_K=BLOCK_K, num_warps=4, num_stages=2)
    if stage1:
        _pmqa_standin_stage1[grid](q, kv_cache, weights, lens, table, out, kv_cache.stride(0), table.stride(0),
                                   out.stride(1), out.stride(0), max_model_len, **shape)
    else:
        _pmqa_standin_fused_logits[grid](q, kv_cache, weights, lens, table, out, kv_cache.stride(0), table.stride(0),
                                         out.stride(0), max_model_len, **shape)


def fused_triton(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
                 Preshuffle=False, KVBlockSize=1, ChunkK=256):
    """aiter-fused's calling convention: writes the caller's buffer."""
    assert not Preshuffle and kv_cache.shape[1] == KVBlockSize
    _launch(q_fp8, kv_cache, weights, context_lens, block_table, out_logits, max_model_len, stage1=False)


def _fused_entry(q, kv_cache, weights, lens, table, max_model_len):
    out = torch.empty((q.shape[0] * q.shape[1], max_model_len), dtype=torch.float32, device=q.device)
    _launch(q, kv_cache, weights, lens, table, out, max_model_len, stage1=False)
    return out


def _two_stage_entry(q, kv_cache, weights, lens, table, max_model_len):
    rows, heads = q.shape[0] * q.shape[1], q.shape[2]
    out_qk = torch.full((heads, rows, max_model_len), float("-inf"), dtype=torch.float32, device=q.device)
    _launch(q, kv_cache, weights, lens, table, out_qk, max_model_len, stage1=True)
    return out_qk.sum(dim=0)


def entry_two_stage(q, kv_cache, weights, context_lens, block_tables, schedule_metadata, max_model_len):
    return _two_stage_entry(q, kv_cache, weights, context_lens, block_tables, max_model_len)


def _arch():
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    return f"sm_{p.major}{p.minor}"


def _guarded(fused_archs, q, kv_cache, weights, context_lens, block_tables, max_model_len):
    path = _fused_entry if _arch() in fused_archs else _two_stage_entry
    return path(q, kv_cache, weights, context_lens, block_tables, max_model_len)


def entry_guarded(q, kv_cache, weights, context_lens, block_tables, schedule_metadata, max_model_len):
    return _guarded(("sm_90", "sm_100"), q, kv_cache, weights, context_lens, block_tables, max_model_len)


def entry_forgets_sm90(q, kv_cache, weights, context_lens, block_tables, schedule_metadata, max_model_len):
    return _guarded(("sm_100",), q, kv_cache, weights, context_lens, block_tables, max_model_len)


def _eager(q, *args):
    from eager_torch_op import fp8_paged_mqa_logits
    return fp8_paged_mqa_logits(q, *args)


def faults_hang(q, *args):
    if q.shape[1] == 3:
        flag = torch.zeros(1, dtype=torch.int32, device=q.device)
        _pmqa_standin_spin[(1,)](flag, 2**31 - 1)
        torch.cuda.synchronize()
    return _eager(q, *args)


def faults_abort(q, *args):
    if q.shape[1] == 3:
        torch.cuda.synchronize()
        os.abort()
    return _eager(q, *args)


def faults_device_error(q, *args):
    if q.shape[1] == 3:
        _pmqa_standin_bad_store[(1,)](torch.zeros(1, device=q.device))
        torch.cuda.synchronize()
    return _eager(q, *args)


# The stand-ins' kernel names, reviewed with them (pmqa-run --kernel-names).
KERNEL_NAMES = {"schema": "pmqa-kernel-names/1", "kernels": [
    {"pattern": "_pmqa_standin_fused_logits*", "library": "pmqa-standin", "means": "fused",
     "role": "the stand-in fused kernel", "source": "bench/h200/pmqa_run_gates.py"},
    {"pattern": "_pmqa_standin_stage1*", "library": "pmqa-standin", "means": "two-stage",
     "role": "the stand-in stage 1 (per-head values)", "source": "bench/h200/pmqa_run_gates.py"},
    {"pattern": "_pmqa_standin_spin*", "library": "pmqa-standin", "means": "any", "role": "a kernel that never ends",
     "source": "bench/h200/pmqa_run_gates.py"},
    {"pattern": "_pmqa_standin_bad_store*", "library": "pmqa-standin", "means": "any",
     "role": "a store to an illegal address", "source": "bench/h200/pmqa_run_gates.py"}]}

# The engine entries use vllm-rocm's calling convention on CUDA: this overlay gives it the platform,
# with the stand-ins' own limits (they read NORMAL, OCP).
ENVELOPE = {"schema": "pmqa-envelope-overlay/1", "convention": "vllm-rocm",
            "calls": "the stand-in engine entries of bench/h200/pmqa_run_gates.py",
            "sources": "bench/h200/pmqa_run_gates.py",
            "limits": [{"id": "layout", "drop": True,
                        "reason": "the stand-ins read NORMAL at every block size (the cuda section says so)"}],
            "platforms": {"cuda": {"note": "the stand-ins", "limits": [
                {"id": "standin-layout", "field": "kv_layout", "in": ["normal"], "reason": "the stand-ins read NORMAL"},
                {"id": "standin-fp8", "field": "value_format", "in": ["e4m3fn"],
                 "reason": "tl.float8e4nv: OCP only on NVIDIA"},
                {"id": "standin-dim", "field": "head_dim", "in": [32, 64, 128], "reason": "tl.dot over D"},
                {"id": "standin-heads", "field": "heads", "power_of_two": True,
                 "reason": "the heads are one tl.arange block"}]}}}


# ============================================================================ cases

def make_case(name, seed, batch, next_n, context, max_model_len, heads=64, dim=128, block=64):
    """A DeepSeek-V3.2 style decode case: lengths uniform in [0.7, 1.3] x context, a shuffled page
    pool, random non-NaN OCP codes, power-of-two scales, weights with the query scale folded in."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(int(context * 0.7), int(context * 1.3) + 1, size=batch).astype(np.int32)
    lens = np.minimum(lens, max_model_len)
    per_seq = (lens.astype(np.int64) + block - 1) // block
    num_blocks = int(per_seq.sum()) + 3
    pool = rng.permutation(num_blocks).astype(np.int32)
    table = np.full((batch, int(per_seq.max(initial=0)) + 1), -1, dtype=np.int32)
    at = 0
    for b in range(batch):
        table[b, :per_seq[b]] = pool[at:at + per_seq[b]]
        at += int(per_seq[b])
    stride = block * (dim + 4)
    kv = rng.integers(0, 256, size=(num_blocks, stride), dtype=np.uint8)
    values = kv[:, :block * dim]
    values[(values & 0x7F) == 0x7F] = 0x7E                      # no NaN code
    scales = np.ldexp(np.float32(1), rng.integers(-12, -5, size=(num_blocks, block))).astype("<f4")
    kv[:, block * dim:] = scales.view(np.uint8).reshape(num_blocks, -1)
    q = rng.integers(0, 256, size=(batch, next_n, heads, dim), dtype=np.uint8)
    q[(q & 0x7F) == 0x7F] = 0x7E
    weights = (rng.standard_normal((batch * next_n, heads)) * 2.0 ** -10).astype(np.float32)
    cf = pmqa.cases.CaseFile(q=q, kv_cache=kv, weights=weights, context_lens=lens, block_table=table,
                             block_size=block, max_model_len=max_model_len, name=name, suite="h200-gates",
                             seed=seed, producer="bench/h200/pmqa_run_gates.py")
    pmqa.cases.validate(cf)
    return cf


# ============================================================================ runs

class Run:
    def __init__(self, key, what, op, convention, cases, expect, args=(), env=None):
        self.key, self.what, self.op, self.convention = key, what, op, convention
        self.cases, self.expect, self.args, self.env = cases, expect, list(args), env or {}
        self.status: Optional[int] = None
        self.log = ""
        self.per_case: Dict[str, dict] = {}
        self.problems: List[str] = []


def plan(numpy_mode: bool, decode: List[str], small: List[str]) -> List[Run]:
    m = "run_standins" if numpy_mode else "pmqa_run_gates"
    ops = {"fused": f"{m}:aiter_fused_ok" if numpy_mode else f"{m}:fused_triton",
           "two-stage": f"{m}:engine_entry_forgets_gfx950" if numpy_mode else f"{m}:entry_two_stage",
           "guarded": f"{m}:engine_entry" if numpy_mode else f"{m}:entry_guarded",
           "forgets": f"{m}:engine_entry_forgets_gfx950" if numpy_mode else f"{m}:entry_forgets_sm90",
           "eager": f"{m}:eager_ok" if numpy_mode else "eager_torch_op:fp8_paged_mqa_logits",
           "hang": f"{m}:hangs" if numpy_mode else f"{m}:faults_hang",
           "abort": f"{m}:aborts" if numpy_mode else f"{m}:faults_abort",
           "device": f"{m}:device_error" if numpy_mode else f"{m}:faults_device_error"}
    gate = ["--bench", "--max-floor-ratio"]
    return [
        Run("fused", "fused Triton kernel", ops["fused"], "aiter-fused", decode, "pass", ["--expect-path", "fused", *gate]),
        Run("two-stage", "two-stage entry (fill, stage 1, head sum)", ops["two-stage"], "vllm-rocm", decode,
            "fail-both", ["--expect-path", "fused", *gate], {"PMQA_STANDIN_ARCH": "gfx950"}),
        Run("guarded", "entry, guard names the arch", ops["guarded"], "vllm-rocm", decode, "pass",
            ["--expect-path", "fused", *gate], {"PMQA_STANDIN_ARCH": "gfx950"}),
        Run("forgets", "entry, guard forgets the arch", ops["forgets"], "vllm-rocm", decode, "fail-both",
            ["--expect-path", "fused", *gate], {"PMQA_STANDIN_ARCH": "gfx950"}),
        Run("eager", "eager_torch_op" if not numpy_mode else "eager stand-in", ops["eager"], "eager", decode,
            "fail-floor", ["--expect-path", "eager", *gate]),
        Run("hang", "hangs on the next_n 3 case", ops["hang"], "eager", small, "fault",
            ["--timeout-s", "3" if numpy_mode else "30"]),
        Run("abort", "aborts on the next_n 3 case", ops["abort"], "eager", small, "fault"),
        Run("device-error", "illegal address on the next_n 3 case", ops["device"], "eager", small, "fault"),
    ]


def execute(run: Run, out: Path, numpy_mode: bool) -> None:
    d = out / run.key
    d.mkdir(parents=True, exist_ok=True)
    paths = [str(out / "cases" / f"{c}.safetensors") for c in run.cases]
    argv = [sys.executable, "-B", "-m", "pmqa.run", "--op", run.op, "--convention", run.convention, "--cases", *paths,
            "--out", str(d), "--logits-only", "--junit", str(d / "run.xml"), "--platform", "cuda",
            "--kernel-names", str(out / "standin_kernel_names.json"), "--envelope" if run.convention == "vllm-rocm"
            else "", str(out / "standin_envelope.json") if run.convention == "vllm-rocm" else "", *run.args]
    argv = [a for a in argv if a != ""]
    if numpy_mode:
        argv += ["--backend", "numpy", "--tolerance", "fp32", "--iters", "2", "--warmup", "0", "--floor-min-mb", "1e9"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "python" / "src"), str(REPO / "bench" / "h200"),
                                                       str(REPO / "python" / "tests"), str(REPO / "python" / "examples")]),
               PYTHONDONTWRITEBYTECODE="1", **run.env)
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO)
    run.status, run.log = p.returncode, p.stdout + p.stderr
    (d / "run.log").write_text(run.log)
    for c in run.cases:
        info: dict = {"line": ""}
        for line in run.log.splitlines():
            if line.startswith(f"ok       {c} ") or line.startswith(f"FAIL     case {c} ("):
                info["line"] = line
        f = d / f"{c}.safetensors"
        if f.exists():
            info.update(pmqa.cases.read_logits_file(f).extra)
        info["path_gate"] = "fail" if re.search(r"expected the \w[\w-]* path|does not know", info["line"]) else "pass"
        info["floor_gate"] = "fail" if "a slow path" in info["line"] else "pass"
        info["ok"] = info["line"].startswith("ok")
        run.per_case[c] = info
    run.seconds = time.monotonic() - t0


def judge_run(run: Run, numpy_mode: bool) -> None:
    e, p = run.expect, run.problems
    completed = "case(s):" in run.log
    if not completed:
        p.append("the run did not complete")
    for c, info in run.per_case.items():
        gated = not numpy_mode
        if e == "pass":
            if not info["ok"]:
                p.append(f"{c} failed: {info['line'][:300]}")
        elif e in ("fail-both", "fail-floor"):
            if info["ok"] and (e == "fail-both" or gated):
                p.append(f"{c} passed")
            if e == "fail-both" and info["path_gate"] != "fail":
                p.append(f"{c}: the path gate did not fail")
            if gated and info["floor_gate"] != "fail":
                p.append(f"{c}: the floor gate did not fail")
            if e == "fail-floor" and info["path_gate"] != "pass":
                p.append(f"{c}: the eager path was not recognised: {info['line'][:300]}")
            if run.key == "forgets" and "_stage1" not in info["line"] and "_pmqa_standin_fused_logits" not in info["line"] \
                    and "stage1" not in info.get("kernels", ""):
                p.append(f"{c}: the message does not name the kernels")
        elif e == "fault":
            faulty = c.endswith("-n3")
            if faulty and info["ok"]:
                p.append(f"{c}: the fault was not reported")
            if not faulty and not info["ok"]:
                p.append(f"{c} (after the fault or before it) failed: {info['line'][:300]}")
    want = 0 if e == "pass" or (e == "fail-floor" and numpy_mode) else 1
    if run.status != want:
        p.append(f"pmqa-run exited {run.status}, expected {want}")


def render(runs: List[Run], R: float, numpy_mode: bool, header: List[str]) -> str:
    lines = list(header) + ["", f"--max-floor-ratio {R:g}", "",
                            "| run | stand-in | convention | case | path seen | kernel ms | wall ms | floor ms | "
                            "x floor (kernel, gated) | x floor (wall) | path gate | floor gate | exit | as expected |",
                            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        for c, i in r.per_case.items():
            outcome = "ok" if i["ok"] else (re.sub(r"^FAIL +case \S+ \([^)]*\): ", "", i["line"])[:70] or "no line")
            lines.append(f"| {r.key} | {r.what} | {r.convention} | {c} | {i.get('path', '-')} | "
                         f"{i.get('kernel_ms', '-')} | {i.get('bench_ms', '-')} | {i.get('floor_ms', '-')} | "
                         f"{i.get('floor_ratio', '-')} | {i.get('floor_ratio_wall', '-')} | "
                         f"{i['path_gate']} | {i['floor_gate']} | {r.status} | "
                         f"{'yes' if not r.problems else 'NO'} |" if r.expect != "fault" else
                         f"| {r.key} | {r.what} | {r.convention} | {c} | - | - | - | - | - | - | - | - | {r.status} | "
                         f"{'yes' if not r.problems else 'NO'}: {outcome} |")
    fused = [float(i["floor_ratio"]) for r in runs if r.key in ("fused", "guarded")
             for i in r.per_case.values() if i.get("floor_ratio")]
    slow = [float(i["floor_ratio"]) for r in runs if r.key in ("two-stage", "forgets")
            for i in r.per_case.values() if i.get("floor_ratio")]
    lines.append("")
    if fused and slow and not numpy_mode:
        lines.append(f"fused ratios {min(fused):.3g} to {max(fused):.3g}; two-stage ratios {min(slow):.3g} to "
                     f"{max(slow):.3g} (kernel time over the floor): margins {R / max(fused):.2f}x below R and "
                     f"{min(slow) / R:.2f}x above it; bench/h200/speed_gate.py repeats this in fresh processes")
    for r in runs:
        if r.expect == "fault":
            summary = [ln for ln in r.log.splitlines() if ln.startswith("pmqa-run: ")]
            lines.append(f"{r.key}: " + " | ".join(summary[-2:]))
        for pr in r.problems:
            lines.append(f"UNEXPECTED {r.key}: {pr}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="where the cases, the result files, the logs and table.md go")
    ap.add_argument("--numpy", action="store_true", help="numpy stand-ins and small cases, no GPU (CI)")
    args = ap.parse_args(argv)
    out = Path(args.out).resolve()
    (out / "cases").mkdir(parents=True, exist_ok=True)
    header = []
    if args.numpy:
        header.append("numpy mode: the orchestration only (no GPU, no timing gate)")
        decode_shapes = [("decode-n1", 11, 2, 1, 96, 256), ("decode-n2", 12, 2, 2, 96, 256)]
    else:
        if torch is None or not torch.cuda.is_available():
            print("pmqa_run_gates.py: needs torch with a CUDA device and triton (or --numpy)", file=sys.stderr)
            return 2
        p = torch.cuda.get_device_properties(0)
        header.append(f"device: {p.name} (sm_{p.major}{p.minor}), torch {torch.__version__}, triton {triton.__version__}")
        decode_shapes = [("decode-n1", 301, 64, 1, 8192, 16384), ("decode-n2", 302, 64, 2, 8192, 16384)]
    decode = []
    for name, seed, batch, next_n, context, mml in decode_shapes:
        pmqa.cases.write_case_file(out / "cases" / f"{name}.safetensors", make_case(name, seed, batch, next_n, context, mml))
        decode.append(name)
    small = []
    for name, seed, next_n in (("small-n1", 21, 1), ("small-n3", 22, 3), ("small-n2", 23, 2)):
        pmqa.cases.write_case_file(out / "cases" / f"{name}.safetensors", make_case(name, seed, 2, next_n, 200, 512))
        small.append(name)
    (out / "standin_kernel_names.json").write_text(json.dumps(KERNEL_NAMES, indent=1))
    (out / "standin_envelope.json").write_text(json.dumps(ENVELOPE, indent=1))
    runs = plan(args.numpy, decode, small)
    for run in runs:
        print(f"== {run.key}: {run.what} ({run.op}, {run.convention})", flush=True)
        execute(run, out, args.numpy)
        judge_run(run, args.numpy)
        tail = [ln for ln in run.log.splitlines() if ln.startswith(("ok ", "FAIL", "ERROR", "pmqa-run: "))]
        print("\n".join(tail[-6:]), flush=True)
    if not args.numpy:
        header.append(cross_check(out, runs))
    table = render(runs, DEFAULT_MAX_FLOOR_RATIO, args.numpy, header)
    (out / "table.md").write_text(table + "\n")
    print("\n" + table)
    bad = [r.key for r in runs if r.problems]
    print(f"\npmqa_run_gates.py: {'every run as expected' if not bad else 'unexpected: ' + ', '.join(bad)} "
          f"(outputs in {out})")
    return 0 if not bad else 1


def cross_check(out: Path, runs: List[Run]) -> str:
    """The fused and guarded runs' logits against eager_torch_op on the same device."""
    from eager_torch_op import fp8_paged_mqa_logits
    parts = []
    for r in runs:
        if r.key not in ("fused", "guarded"):
            continue
        for c in r.cases:
            f = out / r.key / f"{c}.safetensors"
            if not f.exists():
                continue
            cf = pmqa.cases.read_case_file(out / "cases" / f"{c}.safetensors")
            dev = torch.device("cuda")
            kv = torch.from_numpy(cf.kv_cache.copy()).to(dev)
            kv = kv.as_strided((cf.num_blocks, cf.block_size, 1, cf.head_dim + 4), (cf.block_stride, cf.head_dim + 4,
                                                                                      cf.head_dim + 4, 1))
            ref = fp8_paged_mqa_logits(torch.from_numpy(cf.q.copy()).to(dev).view(torch.float8_e4m3fn), kv,
                                       torch.from_numpy(cf.weights.copy()).to(dev),
                                       torch.from_numpy(cf.context_lens.copy()).to(dev),
                                       torch.from_numpy(cf.block_table.copy()).to(dev), cf.max_model_len).cpu().numpy()
            got = pmqa.cases.read_logits_file(f).logits
            valid = np.arange(cf.max_model_len)[None, :] < cf.valid_keys()[:, None]
            x, y = got[valid].astype(np.float64), ref[valid].astype(np.float64)
            calc_diff = 1 - 2 * (x * y).sum() / max((x * x + y * y).sum(), 1e-300)
            rel = np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)
            parts.append(f"{r.key}/{c}: calc_diff {calc_diff:.2e}, max |diff| {rel:.2e} of max |ref|")
    return "against eager_torch_op: " + ("; ".join(parts) if parts else "no output to check")


if __name__ == "__main__":
    sys.exit(main())
