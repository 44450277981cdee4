#!/usr/bin/env python3
"""The pytest plugin as a kernel author uses it on a GPU: a Triton kernel judged on CUDA tensors.

    python3 bench/h200/plugin_on_gpu.py OUT_DIR --core-dir DIR --pmqa PMQA_BIN    # on the GPU machine
    python3 bench/h200/plugin_on_gpu.py OUT_DIR --cpu ...                          # the same steps, numpy (CTest)

Builds nothing. --core-dir is the folder holding pmqa's extension built for this python3
(bench/h200/build.sh builds one per interpreter it is given), --pmqa the `pmqa` command. Steps:

  pass      python/examples/test_triton_kernel.py with pytest-xdist (-n 2): every case passes, the
            workers pinned to one GPU each (one GPU here: both to GPU 0)
  fail      the same kernel with a planted bug (every key of a page scaled by its token 0's scale,
            spec §6 class 6), --pmqa-artifacts: the cases it changes fail; each failure's message ends
            with one command, which, run as printed (pmqa -> --pmqa), gives the same verdict

--cpu runs the steps on python/examples/test_my_kernel.py with a planted bug of its own (numpy, no
GPU): what CTest checks of this script. Prints a table; exit 0 when every step came out as expected.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "python" / "examples"

# (example, the planted bug: exact text -> replacement; the text must occur once)
GPU = ("test_triton_kernel.py", "s_ptr = kv_ptr + page * stride_kv + BS * D + t * 4",
       "s_ptr = kv_ptr + page * stride_kv + BS * D + 0 * t")
CPU = ("test_my_kernel.py", "k, s = keys[pages, j % block_size], scales[pages, j % block_size]",
       "k, s = keys[pages, j % block_size], scales[pages, 0 * j]")


def failure_endings(stdout: str) -> list:
    """[(test, reproduce command, gates the report says broke)] from pytest's failure sections."""
    found = []
    for part in re.split(r"^_{3,} (?=\S+ _{3,}$)", stdout, flags=re.M)[1:]:
        test = part.split(" ", 1)[0]
        command = re.search(r"^E\s+reproduce: (pmqa verify .+)\nE\s+test: ", part, re.M)
        broke = re.search(r"\(broke: ([^)]*)\)", part)
        if command and broke:
            found.append((test, command.group(1), broke.group(1)))
    return found


def junit_counts(path: Path) -> dict:
    out = {"passed": 0, "failed": 0, "skipped": 0}
    for tc in ET.parse(path).getroot().iter("testcase"):
        if tc.find("failure") is not None or tc.find("error") is not None:
            out["failed"] += 1
        elif tc.find("skipped") is not None:
            out["skipped"] += 1
        else:
            out["passed"] += 1
    return out


def pytest(work: Path, env: dict, test: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-p", "pmqa.pytest_plugin", "-p", "no:cacheprovider", "-rs", test, *extra]
    print("$", shlex.join(cmd), flush=True)
    return subprocess.run(cmd, cwd=str(work), env=env, capture_output=True, text=True, timeout=1800)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--core-dir", required=True, help="the folder holding pmqa's _core extension for this python3")
    ap.add_argument("--pmqa", required=True, help="the pmqa command")
    ap.add_argument("--cpu", action="store_true", help="numpy example, no GPU (what CTest runs)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    example, old, new = CPU if args.cpu else GPU
    out = args.out.resolve()
    shutil.rmtree(out / "work", ignore_errors=True)
    work = out / "work"
    work.mkdir(parents=True)
    text = (EXAMPLES / example).read_text()
    if text.count(old) != 1:
        print(f"the planted bug's text occurs {text.count(old)} times in {example}", file=sys.stderr)
        return 2
    shutil.copy(EXAMPLES / example, work / example)
    if args.cpu:
        wrong = "test_wrong.py"
        (work / wrong).write_text(text.replace(old, new).replace("def test_my_kernel(", "def test_wrong("))
    else:
        wrong = "test_wrong.py"
        (work / wrong).write_text(text.replace(old, new).replace("def test_triton_kernel(", "def test_wrong("))
    env = dict(os.environ, PYTHONPATH=str(REPO / "python" / "src"), PMQA_CORE_DIR=str(Path(args.core_dir).resolve()),
               PYTHONDONTWRITEBYTECODE="1")
    pmqa_bin = str(Path(args.pmqa).resolve())
    xdist = ["-n", str(args.workers)] if args.workers > 1 else []
    problems, rows = [], []

    good = pytest(work, env, example, *xdist, "--junitxml", str(out / "pass.xml"))
    (out / "pass.log").write_text(good.stdout + good.stderr)
    counts = junit_counts(out / "pass.xml") if (out / "pass.xml").is_file() else {}
    rows.append(("pass", example, good.returncode, counts, "-"))
    if good.returncode != 0 or not counts.get("passed") or counts.get("failed") or counts.get("skipped"):
        problems.append(f"pass: exit {good.returncode}, {counts}; expected every case to pass on the device")

    bad = pytest(work, env, wrong, *xdist, "--junitxml", str(out / "fail.xml"), "--pmqa-artifacts", str(out / "art"))
    (out / "fail.log").write_text(bad.stdout + bad.stderr)
    counts = junit_counts(out / "fail.xml") if (out / "fail.xml").is_file() else {}
    endings = failure_endings(bad.stdout)
    reproduced = 0
    for test, command, broke in endings:
        ran = subprocess.run([pmqa_bin, *shlex.split(command)[1:]], capture_output=True, text=True, timeout=600)
        again = re.search(r"\(broke: ([^)]*)\)", ran.stdout)
        if ran.returncode == 1 and ran.stdout.startswith("FAIL") and again and again.group(1) == broke:
            reproduced += 1
        else:
            problems.append(f"fail: {test}: `{command}` gave exit {ran.returncode} "
                            f"(broke: {again.group(1) if again else '?'}; the test said {broke}): "
                            f"{ran.stdout[:300]}{ran.stderr[:300]}")
    rows.append(("fail", wrong, bad.returncode, counts, f"{reproduced}/{len(endings)}"))
    if bad.returncode != 1 or not counts.get("failed") or len(endings) != counts.get("failed"):
        problems.append(f"fail: exit {bad.returncode}, {counts}, {len(endings)} reproduce lines; expected failures, "
                        "each ending with its command")
    pinned = sorted(set(re.findall(r"worker \S+ pinned to GPU [\w-]+ of [\w,-]+", bad.stdout)))

    lines = [f"python {sys.version.split()[0]}, " + versions(), "",
             "| step | test file | pytest exit | passed | failed | skipped | reproduced by the printed command |",
             "|---|---|---|---|---|---|---|"]
    for step, f, rc, c, rep in rows:
        lines.append(f"| {step} | {f} | {rc} | {c.get('passed', '-')} | {c.get('failed', '-')} | "
                     f"{c.get('skipped', '-')} | {rep} |")
    if endings:
        lines += ["", f"first failure ({endings[0][0]}, broke {endings[0][2]}) ends with:",
                  f"    reproduce: {endings[0][1]}"]
    if pinned:
        lines += ["", "xdist: " + "; ".join(pinned)]
    lines += [""] + [f"UNEXPECTED {p}" for p in problems] + [f"{'PASS' if not problems else 'FAIL'}: "
                                                               f"{len(problems)} unexpected"]
    table = "\n".join(lines)
    (out / "table.md").write_text(table + "\n")
    print(table)
    return 0 if not problems else 1


def versions() -> str:
    got = []
    for name in ("torch", "triton", "numpy", "xdist"):
        try:
            mod = __import__(name)
            got.append(f"{name} {getattr(mod, '__version__', '?')}")
        except ImportError:
            got.append(f"{name} absent")
    try:
        import torch
        if torch.cuda.is_available():
            got.append(torch.cuda.get_device_name(0))
    except ImportError:
        pass
    return ", ".join(got)


if __name__ == "__main__":
    sys.exit(main())
