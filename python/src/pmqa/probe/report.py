"""The probe's outputs: the table, the failure details, JUnit and JSON."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import List

from .._native import core
from .plan import ProbeRow

VERDICT = {"ok": "ok", "mismatch": "MISMATCH", "error": "COULD NOT RUN", "skipped": "skipped"}


def exit_status(rows: List[ProbeRow]) -> int:
    if any(r.verdict == "error" for r in rows):
        return 2
    if any(r.verdict == "mismatch" for r in rows):
        return 1
    return 0


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def table(rows: List[ProbeRow], failures_only: bool = False) -> str:
    shown = [r for r in rows if r.verdict != "skipped" or r.observed == "not expressed"]
    if failures_only:
        shown = [r for r in shown if r.verdict in ("mismatch", "error")]
    head = ("row", "arch", "configuration", "expected", "observed", "verdict", "reason")
    lines = [(r.id, r.row.arch, r.configuration, r.expectation.text() if r.expectation else "-",
              r.observed or "-", VERDICT[r.verdict], _short(r.expectation.reason if r.expectation else r.message))
             for r in shown]
    widths = [max([len(h)] + [len(line[i]) for line in lines]) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*head).rstrip(), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*line).rstrip() for line in lines]
    return "\n".join(out)


def details(rows: List[ProbeRow]) -> str:
    out = []
    shared = {}
    for r in rows:
        if r.verdict == "error" and r.problem:
            shared.setdefault(r.problem, []).append(r)
    for r in rows:
        if r.verdict == "mismatch":
            kind = ("an engine regression, or a matrix row to review" if r.row.kind == "policy"
                    else "an engine change, or this engine row to review")
            out.append(f"MISMATCH {r.id} ({kind}): {r.message}")
        elif r.verdict == "error" and not r.problem:
            out.append(f"COULD NOT RUN {r.id}: {r.message}")
    for problem, members in shared.items():
        archs = sorted({m.row.arch for m in members})
        ids = " ".join(m.id for m in members)
        out.append(f"COULD NOT RUN {len(members)} rows ({', '.join(archs)}): {problem}\n  rows: {ids}")
    return "\n".join(out)


def summary(rows: List[ProbeRow], title: str, wall_s: float, interpreters: int) -> str:
    counts = Counter(r.verdict for r in rows)
    skipped = Counter(r.message for r in rows if r.verdict == "skipped")
    lines = [f"pmqa-probe {title}: {counts['ok'] + counts['mismatch'] + counts['error']} rows probed in "
             f"{interpreters} interpreters ({wall_s:.1f} s): {counts['ok']} ok, {counts['mismatch']} mismatched, "
             f"{counts['error']} could not run, {counts['skipped']} not probed"]
    for reason, n in skipped.most_common():
        lines.append(f"  not probed ({n}): {reason}")
    return "\n".join(lines)


# A probe verdict as the JUnit writer's status: a mismatch fails, a row that could not run is an error.
_JUNIT_STATUS = {"ok": "ok", "mismatch": "failed", "error": "invalid", "skipped": "unsupported"}


def write_junit(path: Path, rows: List[ProbeRow], title: str, wall_s: float) -> None:
    """By the one JUnit writer pmqa check, pmqa verify and pmqa-run use (cases/include/pmqa/cases/
    results.hpp); a row not probed is <skipped> with its reason."""
    results = [SimpleNamespace(status=_JUNIT_STATUS[r.verdict], suite=f"pmqa-probe.{r.row.arch}",
                               name=f"{r.id} {r.label}", path="", message=r.message, seconds=0.0) for r in rows]
    core.write_junit(str(path), f"pmqa-probe {title}", results, [("wall_s", f"{wall_s:.3f}")])


def write_json(path: Path, rows: List[ProbeRow], meta: dict) -> None:
    doc = dict(meta)
    doc["schema"] = "pmqa_probe/1"
    doc["rows"] = [{
        "id": r.id, "kind": r.row.kind, "index": r.row.index, "arch": r.row.arch, "label": r.label,
        "configuration": {"kernels": "present" if r.row.kernels_present else "absent",
                          "kernels_enabled": r.row.kernels_enabled, "block_size": r.row.block_size,
                          "next_n": r.row.next_n, "heads": r.row.heads, "entry_kwargs": r.row.entry_kwargs},
        "expected": None if r.expectation is None else {
            "kind": r.expectation.kind, "path": r.expectation.path, "fp8": r.expectation.fp8,
            "layout": r.expectation.layout, "entry": r.expectation.entry, "reason": r.expectation.reason},
        "observed": r.observed, "verdict": r.verdict, "message": r.message, "calls": r.calls,
        "workspace": (r.result or {}).get("workspace", []), "imports": (r.result or {}).get("imports", []),
    } for r in rows]
    doc["summary"] = dict(Counter(r.verdict for r in rows))
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")
