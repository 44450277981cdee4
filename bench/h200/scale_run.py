#!/usr/bin/env python3
"""Issue 37 on the GPU: pmqa-run --devices against a plain run, and pmqa verify -j 1 against -j N.

    python3 bench/h200/scale_run.py OUT_DIR --pmqa PMQA_BIN                 # on the GPU machine, from the repo
    python3 bench/h200/scale_run.py OUT_DIR --pmqa PMQA_BIN --case deepseek-8k-n1 --case random-3001
    python3 bench/h200/scale_run.py OUT_DIR --pmqa PMQA_BIN --numpy         # CI: numpy stand-in, no GPU

Steps, each timed:
  gen        PMQA_BIN gen --suite SUITE [--case ...] --out OUT_DIR/cases (default: nightly, its large
             case left out as gen leaves it out)
  plain      pmqa-run of the stand-in op over the cases, one worker (OUT_DIR/plain, plain.xml)
  devices    the same command with --devices 0 (OUT_DIR/devices; --devices LIST for another list,
             e.g. all on a machine with several GPUs)
  compare    the two runs' verdicts (each case's status), their JUnit statuses, their result files
             (the same names; the logits bit for bit; the metadata but run_id and device equal) and
             each --devices file's "device" naming the device it ran on
  verify -jN PMQA_BIN verify OUT_DIR/plain -j N for each N of --jobs (default 1,16): the report and the
             exit status must be -j 1's; and `PMQA_BIN verify OUT_DIR/devices` must exit as the plain
             folder's does
Then a short table (also OUT_DIR/scale_run.md; every number in OUT_DIR/scale_run.json). Exit 0 when
every comparison holds, 1 otherwise, 2 on a usage error or a step that could not run.

The op (--op): eager (default), eager_torch_op:fp8_paged_mqa_logits, torch ops on the device,
every shape but the SHUFFLE layout (skipped: --skip-unsupported); triton, bench/h200/pmqa_run_gates.py's
fused Triton kernel (the aiter-fused convention; cases its tl.arange cannot take fail alike in both
runs). Builds nothing: PMQA_BIN is a prebuilt pmqa (a carried build folder's cli/pmqa). Needs, on the
GPU machine, python3 with torch (CUDA) and numpy (and triton for --op triton).

--numpy runs the same steps on pmqa-run's numpy backend with the numpy eager stand-in
(python/tests/run_standins.py:eager_ok) over the quick suite, the devices fake ids: CTest's
python.pmqa.run.h200_scale_script, so the script cannot rot. It checks the pipeline, not a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))

import pmqa.cases  # noqa: E402

VOLATILE = ("run_id", "device")  # what a run or its device sets in a result file; the rest is the op's


class StepFailed(Exception):
    pass


def timed(argv: List[str], log: Path, env: Optional[Dict[str, str]] = None, timeout: Optional[float] = None):
    """Runs argv, its output into log; (exit status, seconds, output)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        log.write_text(out)
        raise StepFailed(f"{' '.join(argv[:4])} ... ran past {timeout:g} s (log: {log})") from None
    seconds = time.monotonic() - t0
    text = p.stdout + p.stderr
    log.write_text(text)
    return p.returncode, seconds, text


def last_line(text: str, prefix: str) -> str:
    return next((ln for ln in reversed(text.splitlines()) if ln.startswith(prefix)), "")


# ============================================================================ steps

def gen(args, out: Path) -> dict:
    cases = out / "cases"
    if cases.exists():
        for f in cases.glob("*.safetensors"):
            f.unlink()
    argv = [str(args.pmqa), "gen", "--suite", args.suite, "--out", str(cases)]
    for c in args.case:
        argv += ["--case", c]
    status, seconds, text = timed(argv, out / "gen.log")
    if status != 0:
        raise StepFailed(f"pmqa gen exited {status}:\n{text[-2000:]}")
    files = sorted(cases.glob("*.safetensors"))
    return {"step": "gen", "seconds": seconds, "files": len(files), "bytes": sum(f.stat().st_size for f in files),
            "line": last_line(text, "pmqa gen")}


def pmqa_run(args, out: Path, key: str, extra: List[str]) -> dict:
    d = out / key
    if args.numpy:
        op = ["--op", "run_standins:eager_ok", "--convention", "eager", "--backend", "numpy"]
    elif args.op == "triton":
        op = ["--op", "pmqa_run_gates:fused_triton", "--convention", "aiter-fused", "--platform", "cuda"]
    else:
        op = ["--op", "eager_torch_op:fp8_paged_mqa_logits", "--convention", "eager"]
    argv = [sys.executable, "-B", "-m", "pmqa.run", *op, "--cases", str(out / "cases"), "--out", str(d),
            "--junit", str(out / f"{key}.xml"), "--skip-unsupported", *extra]
    pypath = os.pathsep.join([str(REPO / "python" / "src"), str(REPO / "bench" / "h200"), str(REPO / "python" / "tests"),
                         str(REPO / "python" / "examples")])
    env = dict(os.environ, PYTHONPATH=pypath, PYTHONDONTWRITEBYTECODE="1")
    status, seconds, text = timed(argv, out / f"{key}.log", env=env, timeout=args.run_timeout_s)
    summary = next((ln for ln in text.splitlines() if ln.startswith("pmqa-run: ") and "case(s):" in ln),
                   last_line(text, "pmqa-run: "))
    if not (d / "pmqa-run.json").exists():
        raise StepFailed(f"pmqa-run ({key}) left no run record (exit {status}):\n{text[-3000:]}")
    return {"step": f"pmqa-run {key}" + (f" ({' '.join(extra)})" if extra else ""), "seconds": seconds,
            "exit": status, "line": summary}


def result_files(folder: Path) -> Dict[str, tuple]:
    out = {}
    for p in sorted(folder.glob("*.safetensors")):
        if pmqa.cases.is_logits_file(p):
            f = pmqa.cases.read_logits_file(p)
            logits, extra = f.logits, f.extra
        else:
            cf = pmqa.cases.read_case_file(p)
            logits, extra = cf.logits, cf.extra
        out[p.name] = (np.ascontiguousarray(logits).view(np.uint32), extra)
    return out


def junit_statuses(path: Path) -> Dict[str, str]:
    suite = ET.parse(path).getroot().find("testsuite")
    out = {}
    for tc in suite.iter("testcase"):
        out[tc.get("name")] = next((t for t in ("failure", "error", "skipped") if tc.find(t) is not None), "ok")
    return out


def compare(args, out: Path, plain: dict, devices: dict) -> dict:
    """The --devices run against the plain one; problems listed (none: the same verdicts and files)."""
    problems: List[str] = []
    r1 = json.loads((out / "plain" / "pmqa-run.json").read_text())
    r2 = json.loads((out / "devices" / "pmqa-run.json").read_text())
    if plain["exit"] != devices["exit"]:
        problems.append(f"exit {plain['exit']} plain, {devices['exit']} with --devices")
    v1 = {c["name"]: c["status"] for c in r1["cases"]}
    v2 = {c["name"]: c["status"] for c in r2["cases"]}
    if v1 != v2:
        diff = sorted(n for n in set(v1) | set(v2) if v1.get(n) != v2.get(n))
        problems.append(f"verdicts differ in {len(diff)} case(s): " +
                        ", ".join(f"{n} {v1.get(n)}/{v2.get(n)}" for n in diff[:8]))
    if not r2["complete"]:
        problems.append(f"the --devices run did not complete: {r2['stopped']}")
    if junit_statuses(out / "plain.xml") != junit_statuses(out / "devices.xml"):
        problems.append("the JUnit reports differ")
    f1, f2 = result_files(out / "plain"), result_files(out / "devices")
    if sorted(f1) != sorted(f2):
        problems.append(f"result files differ: only plain {sorted(set(f1) - set(f2))[:5]}, only --devices "
                        f"{sorted(set(f2) - set(f1))[:5]}")
    same_bits = 0
    for name in sorted(set(f1) & set(f2)):
        (a, ma), (b, mb) = f1[name], f2[name]
        if a.shape != b.shape or not np.array_equal(a, b):
            problems.append(f"{name}: the logits differ ({int(np.sum(a != b)) if a.shape == b.shape else 'shape'} "
                            f"cell(s))")
        else:
            same_bits += 1
        if {k: v for k, v in ma.items() if k not in VOLATILE} != {k: v for k, v in mb.items() if k not in VOLATILE}:
            keys = sorted(k for k in set(ma) | set(mb) if k not in VOLATILE and ma.get(k) != mb.get(k))
            problems.append(f"{name}: the metadata differs in {', '.join(keys)}")
    by_device: Dict[str, int] = {}
    for c in r2["cases"]:
        by_device[c.get("device", "")] = by_device.get(c.get("device", ""), 0) + 1
        if not c["written"]:
            continue
        named = f2.get(c["result"], (None, {}))[1].get("device", "")
        want = f"fake device {c['device']}" if args.numpy else f"cuda:{c['device']}"
        if want not in named:
            problems.append(f"{c['result']}: ran on device {c['device']!r}, its \"device\" metadata says {named!r}")
    return {"step": "compare", "seconds": 0.0, "files": len(f1), "identical_logits": same_bits,
            "cases": len(v1), "by_device": by_device, "problems": problems,
            "line": (f"{len(v1)} verdicts, {len(f1)} files: {same_bits} bit-identical; per device "
                     f"{', '.join(f'{d}: {n}' for d, n in sorted(by_device.items()))}") if not problems else
                    f"{len(problems)} difference(s): {problems[0][:200]}"}


def verify(args, out: Path) -> List[dict]:
    rows = []
    base = None
    for jobs in args.jobs:
        status, seconds, text = timed([str(args.pmqa), "verify", str(out / "plain"), "-j", str(jobs)],
                                      out / f"verify-j{jobs}.log", env=dict(os.environ, PMQA_PROGRESS_SECONDS="-1"))
        row = {"step": f"verify -j {jobs}", "seconds": seconds, "exit": status, "line": last_line(text, "pmqa verify:"),
               "problems": []}
        if base is None:
            base = (status, text)
        elif (status, text) != base:
            row["problems"].append(f"-j {jobs}: " + (f"exit {status}, -j {args.jobs[0]} exit {base[0]}"
                                                    if status != base[0] else "the report differs from -j "
                                                                               f"{args.jobs[0]}'s"))
        rows.append(row)
    status, seconds, text = timed([str(args.pmqa), "verify", str(out / "devices")], out / "verify-devices.log",
                                  env=dict(os.environ, PMQA_PROGRESS_SECONDS="-1"))
    row = {"step": "verify (--devices folder)", "seconds": seconds, "exit": status,
           "line": last_line(text, "pmqa verify:"), "problems": []}
    if base is not None and status != base[0]:
        row["problems"].append(f"the --devices folder verifies with exit {status}, the plain one {base[0]}")
    rows.append(row)
    return rows


# ============================================================================ the table

def render(rows: List[dict], header: List[str]) -> str:
    lines = list(header) + ["", "| step | seconds | exit | result |", "|---|---|---|---|"]
    for r in rows:
        ok = "" if not r.get("problems") else " **DIFFERS**"
        lines.append(f"| {r['step']} | {r['seconds']:.2f} | {r.get('exit', '-')} | {r.get('line', '')}{ok} |")
    j = [r for r in rows if r["step"].startswith("verify -j ")]
    if len(j) >= 2 and j[-1]["seconds"] > 0:
        lines += ["", f"verify: {j[0]['step']} {j[0]['seconds']:.2f} s, {j[-1]['step']} {j[-1]['seconds']:.2f} s: "
                      f"{j[0]['seconds'] / j[-1]['seconds']:.2f}x"]
    runs = [r for r in rows if r["step"].startswith("pmqa-run")]
    if len(runs) == 2 and runs[1]["seconds"] > 0:
        lines.append(f"pmqa-run: plain {runs[0]['seconds']:.2f} s, --devices {runs[1]['seconds']:.2f} s")
    for r in rows:
        for p in r.get("problems", []):
            lines.append(f"DIFFERS {r['step']}: {p}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="where the cases, the two runs, the logs, scale_run.json and scale_run.md go")
    ap.add_argument("--pmqa", type=Path, required=True, help="the prebuilt pmqa command (a build folder's cli/pmqa)")
    ap.add_argument("--suite", default=None, help="the suite pmqa gen writes (default nightly; --numpy: quick)")
    ap.add_argument("--case", action="append", default=[], help="only these cases of the suite (repeatable)")
    ap.add_argument("--op", choices=("eager", "triton"), default="eager",
                    help="eager: eager_torch_op (default); triton: pmqa_run_gates.fused_triton")
    ap.add_argument("--devices", default="0", help="the second run's --devices (default 0)")
    ap.add_argument("--jobs", default="1,16", help="the verify -j values timed, the first the baseline (default 1,16)")
    ap.add_argument("--run-timeout-s", type=float, default=1800, help="the longest one pmqa-run may take")
    ap.add_argument("--numpy", action="store_true", help="numpy stand-in and fake devices, no GPU (CI)")
    args = ap.parse_args(argv)
    args.suite = args.suite or ("quick" if args.numpy else "nightly")
    try:
        args.jobs = [int(j) for j in args.jobs.split(",")]
        if not args.jobs or min(args.jobs) < 1:
            raise ValueError
    except ValueError:
        ap.error("--jobs: a comma list of whole numbers >= 1, e.g. 1,16")
    args.pmqa = args.pmqa.resolve()
    if not os.access(args.pmqa, os.X_OK):
        ap.error(f"--pmqa {args.pmqa}: not an executable")
    header = [f"scale_run.py: {'numpy mode (fake devices; no GPU)' if args.numpy else 'GPU mode'}, suite {args.suite}"
              f"{' (' + ', '.join(args.case) + ')' if args.case else ''}, op {'numpy eager stand-in' if args.numpy else args.op}"]
    if not args.numpy:
        try:
            import torch
        except ImportError:
            print("scale_run.py: needs torch with a CUDA device (or --numpy)", file=sys.stderr)
            return 2
        if not torch.cuda.is_available():
            print("scale_run.py: torch sees no CUDA device (or give --numpy)", file=sys.stderr)
            return 2
        p = torch.cuda.get_device_properties(0)
        header.append(f"devices: {torch.cuda.device_count()} x {p.name} (sm_{p.major}{p.minor}), torch "
                      f"{torch.__version__}, {len(os.sched_getaffinity(0))} cores")
    else:
        header.append(f"{len(os.sched_getaffinity(0))} cores")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows: List[dict] = []
    try:
        for step in ("gen", "plain", "devices", "compare", "verify"):
            print(f"== {step}", flush=True)
            if step == "gen":
                rows.append(gen(args, out))
            elif step == "plain":
                rows.append(pmqa_run(args, out, "plain", []))
            elif step == "devices":
                rows.append(pmqa_run(args, out, "devices", ["--devices", args.devices]))
            elif step == "compare":
                rows.append(compare(args, out, rows[1], rows[2]))
            else:
                rows.extend(verify(args, out))
            for r in rows[-(len(args.jobs) + 1) if step == "verify" else -1:]:
                print(f"   {r['step']}: {r['seconds']:.2f} s  {r.get('line', '')}", flush=True)
    except StepFailed as e:
        print(f"scale_run.py: {e}", file=sys.stderr)
        return 2
    table = render(rows, header)
    (out / "scale_run.md").write_text(table + "\n")
    (out / "scale_run.json").write_text(json.dumps({"header": header, "rows": rows}, indent=1))
    print("\n" + table)
    bad = [r["step"] for r in rows if r.get("problems")]
    print(f"\nscale_run.py: {'every comparison holds' if not bad else 'differences in ' + ', '.join(bad)} "
          f"(outputs in {out})")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
