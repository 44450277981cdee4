#!/usr/bin/env python3
"""The speed gate's evidence: each path's kernel time over its byte floor at DeepSeek-V3.2's decode
shapes, in fresh processes, and whether pmqa-run's two gates (--expect-path fused,
--max-floor-ratio R) called every run right.

    python3 bench/h200/speed_gate.py OUT_DIR --build BUILD_DIR       # on the GPU machine, from the repo root
    python3 bench/h200/speed_gate.py OUT_DIR --numpy                 # CI: numpy stand-ins, small cases, no GPU

Paths, each run in --processes fresh processes (default 20), every process on every case:
  triton-fused      pmqa_run_gates.fused_triton, one Triton kernel (aiter-fused convention), through
                    pmqa-run with --expect-path fused --max-floor-ratio R: must pass both gates
  triton-two-stage  pmqa_run_gates.entry_two_stage, an engine entry running torch.full(-inf), a Triton
                    stage 1 and torch's head sum (vllm-rocm convention), the same command: must fail
                    both (the regression the gate exists for)
  pmqa-fused        pmqa's fused path as its kernel list picks it (fused-mma/wgmma on an H200 built for
                    90a), timed by BUILD_DIR/bench/pmqa_bench_gpu --case: must be seen as fused and
                    pass R
  pmqa-two-stage    pmqa's two-stage path (fill, stage 1, head sum), the same way: must be seen as
                    two-stage and fail R
The cases are pmqa's nightly suite's deepseek-8k-n1, deepseek-8k-n2 and deepseek-32k (written by
BUILD_DIR/cli/pmqa gen). pmqa's own kernels are C++/HIP with no Python entry (pmqa's Python
extension is the host oracle), so pmqa-run cannot call them; pmqa_bench_gpu launches them from C++,
where a launch is queued in microseconds and nothing of the host lies between the device events
around it, so those events give the kernels' own time (the two-stage path's three kernels back to
back), the same quantity pmqa-run's profiler pass sums for a Python op. Their ratios use
pmqa-run's floor (pmqa.run.floor, the clean contract pmqa's kernels write) at the copy bandwidth
the benchmark measures in the same process.

A run of 20 processes per path takes about a quarter of an hour on an H200 (pmqa-run starts torch
and times three cases twice per process); --resume continues in the same OUT_DIR, so it can go in
several commands (`timeout 540 python3 bench/h200/speed_gate.py OUT --build B --resume`, repeated
until it prints the table).

Needs, on the GPU machine: python3 with torch (CUDA), triton and numpy; BUILD_DIR from
bench/h200/build.sh (pmqa and pmqa_bench_gpu; nothing is built here). Writes OUT_DIR/cases,
OUT_DIR/runs/<path>/<process>/ (pmqa-run's files and log, or the benchmark's JSON and log),
OUT_DIR/speed_gate.json (every ratio) and OUT_DIR/speed_gate.md (the table), and prints the table:
per path the gated ratio (kernel time over the floor) min / median / max, the wall time's ratio
beside it, and the wrong verdicts; then min(two-stage) / max(fused) and the R between them. Exit 0
when no verdict is wrong and min(two-stage) / max(fused) >= 1.5, else 1.

--numpy runs the same orchestration on pmqa-run's numpy backend (its device model times the
stand-ins' launches) with small cases, and pmqa's leg through a stand-in of the benchmark that
writes its JSON from the same device model (python/tests/fake_bench_gpu.py): CTest's
python.pmqa.run.speed_gate_script. It checks the pipeline and the verdicts, not a GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pmqa.cases  # noqa: E402
import pmqa_run_gates as gates  # noqa: E402 - the Triton stand-ins, their kernel names and envelope
from pmqa.run.floor import DEFAULT_MAX_FLOOR_RATIO, floor_bytes, floor_ms  # noqa: E402

CASES = ("deepseek-8k-n1", "deepseek-8k-n2", "deepseek-32k")
PATHS = ("triton-fused", "triton-two-stage", "pmqa-fused", "pmqa-two-stage")
REQUIRED_SEPARATION = 1.5


def fused(path: str) -> bool:
    return path.endswith("-fused")


# ============================================================================ cases

def write_cases(out: Path, args) -> List[Path]:
    d = out / "cases"
    d.mkdir(parents=True, exist_ok=True)
    done = sorted(d.glob("*.safetensors"))
    if args.resume and len(done) == len(CASES):
        return done
    if args.numpy:  # the decode shapes' forms, small: B 2, H 64, D 128, block 64
        small = (("deepseek-8k-n1-small", 401, 2, 1, 512, 1024), ("deepseek-8k-n2-small", 402, 2, 2, 512, 1024),
                 ("deepseek-32k-small", 403, 1, 1, 2048, 2688))
        paths = []
        for name, seed, batch, next_n, context, mml in small:
            p = d / f"{name}.safetensors"
            pmqa.cases.write_case_file(p, gates.make_case(name, seed, batch, next_n, context, mml))
            paths.append(p)
        return paths
    argv = [str(args.build / "cli" / "pmqa"), "gen", "--suite", "nightly", "--out", str(d)]
    for c in CASES:
        argv += ["--case", c]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"speed_gate.py: pmqa gen failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return [d / f"{c}.safetensors" for c in CASES]


# ============================================================================ one process of one path

def run_pmqa_run(path: str, cases: List[Path], d: Path, out: Path, args) -> List[dict]:
    """One pmqa-run process over every case; each case's ratios and what its two gates said."""
    m = "run_standins" if args.numpy else "pmqa_run_gates"
    if path == "triton-fused":
        op, conv, env = (f"{m}:aiter_fused_ok" if args.numpy else f"{m}:fused_triton"), "aiter-fused", {}
    else:
        op = f"{m}:engine_entry_forgets_gfx950" if args.numpy else f"{m}:entry_two_stage"
        conv, env = "vllm-rocm", {"PMQA_STANDIN_ARCH": "gfx950"}
    argv = [sys.executable, "-B", "-m", "pmqa.run", "--op", op, "--convention", conv, "--cases", *map(str, cases),
            "--out", str(d), "--logits-only", "--in-process", "--platform", "cuda",
            "--kernel-names", str(out / "standin_kernel_names.json"), "--expect-path", "fused",
            "--max-floor-ratio", f"{args.max_floor_ratio:g}", "--iters", str(args.iters), "--warmup", str(args.warmup)]
    if conv == "vllm-rocm":
        argv += ["--envelope", str(out / "standin_envelope.json")]
    if args.numpy:
        argv += ["--backend", "numpy", "--tolerance", "fp32", "--floor-min-mb", "0"]
    pypath = os.pathsep.join([str(REPO / "python" / "src"), str(REPO / "bench" / "h200"), str(REPO / "python" / "tests")])
    p = subprocess.run(argv, capture_output=True, text=True, cwd=REPO,
                       env=dict(os.environ, PYTHONPATH=pypath, PYTHONDONTWRITEBYTECODE="1", **env))
    log = p.stdout + p.stderr
    (d / "run.log").write_text(log)
    rows = []
    for c in cases:
        name = c.stem
        line = next((ln for ln in log.splitlines()
                     if ln.startswith(f"ok       {name} ") or ln.startswith(f"FAIL     case {name} (")), "")
        f = d / c.name
        x = pmqa.cases.read_logits_file(f).extra if f.exists() else {}
        rows.append({"case": name, "exit": p.returncode, "line": line[:400],
                     "ratio": _num(x.get("floor_ratio")), "wall_ratio": _num(x.get("floor_ratio_wall")),
                     "kernel_ms": _num(x.get("kernel_ms")), "wall_ms": _num(x.get("bench_ms")),
                     "path_seen": x.get("path", ""),
                     "path_gate": "fail" if re.search(r"expected the [\w-]+ path|does not know", line) else
                                  ("pass" if line else "?"),
                     "floor_gate": "fail" if "a slow path" in line or "cannot judge" in line else
                                   ("pass" if line else "?")})
    return rows


def run_bench(path: str, cases: List[Path], d: Path, args, cache: Dict[str, dict]) -> List[dict]:
    """pmqa's kernels: one benchmark process times both paths of every case; the process's JSON is
    shared by pmqa-fused and pmqa-two-stage of the same round (cache)."""
    key = str(d.parent.parent / "pmqa" / d.name)
    if key not in cache:
        bd = Path(key)
        bd.mkdir(parents=True, exist_ok=True)
        cmd = ([sys.executable, str(REPO / "python" / "tests" / "fake_bench_gpu.py")] if args.numpy
               else [str(args.build / "bench" / "pmqa_bench_gpu")])
        argv = [*cmd, "--reps", str(args.iters), "--json", str(bd / "bench.json")]
        for c in cases:
            argv += ["--case", str(c)]
        p = subprocess.run(argv, capture_output=True, text=True, cwd=REPO)
        (bd / "bench.log").write_text(p.stdout + p.stderr)
        try:
            cache[key] = dict(json.loads((bd / "bench.json").read_text()), exit=p.returncode)
        except (OSError, ValueError):
            cache[key] = {"exit": p.returncode, "cases": [], "copy_gbs": 0}
    got = cache[key]
    want = "fused" if fused(path) else "two-stage"
    rows = []
    for c in cases:
        cf = pmqa.cases.read_case_file(c)
        entry = next((e for e in got.get("cases", []) if Path(e.get("file", "")).name == c.name), {})
        run = next((r for r in entry.get("runs", []) if r.get("path") == want), None)
        if run is None or not got.get("copy_gbs"):
            rows.append({"case": c.stem, "exit": got["exit"], "line": "no time (see bench.log)", "ratio": None,
                         "wall_ratio": None, "kernel_ms": None, "wall_ms": None, "path_seen": "",
                         "path_gate": "?", "floor_gate": "?"})
            continue
        fl = floor_ms(floor_bytes(cf, "clean").total, got["copy_gbs"] * 1e9)
        ratio = run["ms"] / fl
        seen = "two-stage" if run["kernel"] == "two-stage" else "fused"
        rows.append({"case": c.stem, "exit": got["exit"], "line": f"{run['kernel']} {run['ms']:.4g} ms"
                     f"{'' if run.get('correct') else ' WRONG NUMBERS'}", "ratio": ratio, "wall_ratio": ratio,
                     "kernel_ms": run["ms"], "wall_ms": run["ms"], "path_seen": seen,
                     "path_gate": "pass" if seen == "fused" and run.get("correct") else "fail",
                     "floor_gate": "pass" if ratio <= args.max_floor_ratio else "fail"})
    return rows


def _num(text) -> Optional[float]:
    try:
        v = float(text)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def wrong(path: str, row: dict) -> bool:
    """A verdict that is not the one the path must get: a fused path must pass both gates, a
    two-stage path must fail both (the path gate naming it, the floor gate on its kernel time)."""
    want = "pass" if fused(path) else "fail"
    return row["path_gate"] != want or row["floor_gate"] != want


# ============================================================================ the table

def spread(values: List[float]) -> str:
    if not values:
        return "-"
    return f"{min(values):.3g} / {statistics.median(values):.3g} / {max(values):.3g}"


def render(results: Dict[str, List[dict]], args, header: List[str]) -> str:
    R = args.max_floor_ratio
    lines = list(header) + ["", f"--max-floor-ratio {R:g}, {args.processes} fresh process(es) per path, "
                            f"--iters {args.iters}", "",
                            "| path | runs | gated ratio (kernel time / floor) min / median / max | "
                            "wall time / floor min / median / max | median kernel ms per case | wrong verdicts |",
                            "|---|---|---|---|---|---|"]
    for path in PATHS:
        rows = results.get(path, [])
        if not rows:
            continue
        by_case: Dict[str, List[float]] = {}
        for r in rows:
            if r["kernel_ms"] is not None:
                by_case.setdefault(r["case"], []).append(r["kernel_ms"])
        per_case = ", ".join(f"{c} {statistics.median(v):.4g}" for c, v in by_case.items())
        lines.append(f"| {path} | {len(rows)} | {spread([r['ratio'] for r in rows if r['ratio'] is not None])} | "
                     f"{spread([r['wall_ratio'] for r in rows if r['wall_ratio'] is not None])} | {per_case} | "
                     f"{sum(wrong(path, r) for r in rows)} |")
    fast = [r["ratio"] for p in PATHS if fused(p) for r in results.get(p, []) if r["ratio"] is not None]
    slow = [r["ratio"] for p in PATHS if not fused(p) for r in results.get(p, []) if r["ratio"] is not None]
    lines.append("")
    if fast and slow:
        sep = min(slow) / max(fast)
        mid = math.sqrt(min(slow) * max(fast))
        lines.append(f"min(two-stage) / max(fused) = {min(slow):.3g} / {max(fast):.3g} = {sep:.2f} "
                     f"(required >= {REQUIRED_SEPARATION}); R = {R:g} leaves {R / max(fast):.2f}x above the slowest "
                     f"fused run and {min(slow) / R:.2f}x below the fastest two-stage run; the geometric middle "
                     f"is {mid:.3g}")
    bad = [(p, r) for p in PATHS for r in results.get(p, []) if wrong(p, r)]
    for p, r in bad[:20]:
        lines.append(f"WRONG {p} {r['case']}: path gate {r['path_gate']}, floor gate {r['floor_gate']}, ratio "
                     f"{r['ratio']}: {r['line'][:200]}")
    return "\n".join(lines)


def verdict(results: Dict[str, List[dict]]) -> bool:
    fast = [r["ratio"] for p in PATHS if fused(p) for r in results.get(p, []) if r["ratio"] is not None]
    slow = [r["ratio"] for p in PATHS if not fused(p) for r in results.get(p, []) if r["ratio"] is not None]
    if not fast or not slow:
        return False
    return not any(wrong(p, r) for p in results for r in results[p]) and min(slow) / max(fast) >= REQUIRED_SEPARATION


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="where the cases, the runs, speed_gate.json and speed_gate.md go")
    ap.add_argument("--build", type=Path, help="bench/h200/build.sh's build folder (pmqa, pmqa_bench_gpu)")
    ap.add_argument("--numpy", action="store_true", help="numpy stand-ins and small cases, no GPU (CI)")
    ap.add_argument("--processes", type=int, default=None, help="fresh processes per path (default 20; numpy 2)")
    ap.add_argument("--paths", default=",".join(PATHS), help=f"a subset of {','.join(PATHS)}")
    ap.add_argument("--max-floor-ratio", type=float, default=DEFAULT_MAX_FLOOR_RATIO)
    ap.add_argument("--iters", type=int, default=20, help="timed calls per case and process (default 20)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs an earlier invocation finished in OUT_DIR and run the rest (a run longer "
                         "than one command may take goes in several)")
    args = ap.parse_args(argv)
    args.processes = args.processes or (2 if args.numpy else 20)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    if any(p not in PATHS for p in paths):
        ap.error(f"--paths: one of {', '.join(PATHS)}")
    if not args.numpy:
        if args.build is None or not (args.build / "cli" / "pmqa").exists():
            ap.error("--build BUILD_DIR (with cli/pmqa and bench/pmqa_bench_gpu) is needed without --numpy")
        if gates.torch is None or not gates.torch.cuda.is_available():
            print("speed_gate.py: needs torch with a CUDA device and triton (or --numpy)", file=sys.stderr)
            return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "standin_kernel_names.json").write_text(json.dumps(gates.KERNEL_NAMES, indent=1))
    (out / "standin_envelope.json").write_text(json.dumps(gates.ENVELOPE, indent=1))
    cases = write_cases(out, args)
    header = [f"speed_gate.py: {'numpy mode (the device model; no GPU)' if args.numpy else 'GPU mode'}, "
              f"cases {', '.join(c.stem for c in cases)}"]
    if not args.numpy:
        p = gates.torch.cuda.get_device_properties(0)
        header.append(f"device: {p.name} (sm_{p.major}{p.minor}), torch {gates.torch.__version__}, "
                      f"triton {gates.triton.__version__}")
    results: Dict[str, List[dict]] = {p: [] for p in paths}
    bench_cache: Dict[str, dict] = {}
    t0 = time.monotonic()
    for i in range(args.processes):  # the paths in turn, so a drift of the machine reaches them all
        for path in paths:
            d = out / "runs" / path / f"p{i:02d}"
            d.mkdir(parents=True, exist_ok=True)
            if args.resume and (d / "rows.json").exists():  # finished by an earlier invocation
                results[path].extend(json.loads((d / "rows.json").read_text()))
                continue
            rows = (run_bench(path, cases, d, args, bench_cache) if path.startswith("pmqa")
                    else run_pmqa_run(path, cases, d, out, args))
            (d / "rows.json").write_text(json.dumps(rows))
            results[path].extend(rows)
            ratios = ", ".join(f"{r['case']} x{r['ratio']:.3g}" if r["ratio"] is not None else f"{r['case']} -"
                               for r in rows)
            flags = sum(wrong(path, r) for r in rows)
            print(f"[{time.monotonic() - t0:6.0f} s] {path:<16} process {i + 1:2d}/{args.processes}: {ratios}"
                  f"{f'  ({flags} WRONG)' if flags else ''}", flush=True)
    (out / "speed_gate.json").write_text(json.dumps({"max_floor_ratio": args.max_floor_ratio, "iters": args.iters,
                                                     "processes": args.processes, "results": results}, indent=1))
    table = render(results, args, header)
    (out / "speed_gate.md").write_text(table + "\n")
    print("\n" + table)
    ok = verdict(results)
    print(f"\nspeed_gate.py: {'0 wrong verdicts and the paths separate' if ok else 'NOT as required'} "
          f"(outputs in {out})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
