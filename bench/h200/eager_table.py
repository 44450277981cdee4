"""python3 bench/h200/eager_table.py ROOT SUITE...: the summary table of a gen -> run -> verify pipeline.

Reads, for each suite, what eager_run.sh leaves in ROOT/SUITE/: cases/ (from `pmqa gen`), out/ (from
pmqa-run), run.rc and verify.rc (exit statuses), verify.json (`pmqa verify --json`), and prints one
markdown row per suite: cases generated, cases skipped as inexpressible, passed / failed / invalid
per pmqa verify, the median and the largest bench_ms over the verified files, and both exit
statuses. Exit status: 0 when every suite's run and verify exited 0 and verified at least one file,
else 1.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import List, Optional


def _read_int(path: Path) -> Optional[int]:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _fmt(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def suite_row(root: Path, suite: str) -> dict:
    d = root / suite
    cases = len(list((d / "cases").glob("*.safetensors"))) if (d / "cases").is_dir() else 0
    written = len(list((d / "out").glob("*.safetensors"))) if (d / "out").is_dir() else 0
    row = {"suite": suite, "cases": cases, "written": written, "skipped": 0, "passed": 0, "failed": 0,
           "invalid": 0, "median_ms": None, "max_ms": None, "run_rc": _read_int(d / "run.rc"),
           "verify_rc": _read_int(d / "verify.rc"), "device": ""}
    try:
        log = (d / "run.log").read_text(errors="replace").splitlines()
    except OSError:
        log = []
    row["skipped"] = sum(1 for line in log if line.startswith("SKIP"))
    try:
        report = json.loads((d / "verify.json").read_text())
    except (OSError, ValueError):
        report = {"results": []}
    times: List[float] = []
    for r in report.get("results", []):
        if r.get("error"):
            row["invalid"] += 1
        elif r.get("passed"):
            row["passed"] += 1
        else:
            row["failed"] += 1
        ms = r.get("report", {}).get("bench_ms", r.get("bench_ms"))
        try:
            times.append(float(ms))
        except (TypeError, ValueError):
            pass
    if times:
        row["median_ms"] = statistics.median(times)
        row["max_ms"] = max(times)
    for line in log:
        if line.startswith("pmqa-run: ") and " on " in line and "case file(s)" in line:
            row["device"] = line.split(" on ", 1)[1].rsplit(";", 1)[0]
            break
    return row


def render(rows: List[dict]) -> str:
    head = ["suite", "cases", "skipped (not expressible)", "passed", "failed", "invalid",
            "median bench_ms", "max bench_ms", "run exit", "verify exit"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        cells = [r["suite"], str(r["cases"]), str(r["skipped"]), str(r["passed"]), str(r["failed"]),
                 str(r["invalid"]), _fmt(r["median_ms"]), _fmt(r["max_ms"]), str(r["run_rc"]), str(r["verify_rc"])]
        lines.append("| " + " | ".join(cells) + " |")
    devices = sorted({r["device"] for r in rows if r["device"]})
    if devices:
        lines.append("")
        lines.extend(f"device: {d}" for d in devices)
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    root = Path(argv[0])
    rows = [suite_row(root, s) for s in argv[1:]]
    print(render(rows))
    ok = all(r["run_rc"] == 0 and r["verify_rc"] == 0 and r["passed"] > 0 for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
