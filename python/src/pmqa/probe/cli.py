"""python3 -m pmqa.probe --engine vllm (--source DIR | --installed) [--junit F] [--json F]

Runs the engine's real dispatch entry for every row of pmqa's expected matrix it can express, with
the GPU simulated, the kernel libraries replaced by recorders, and compares what ran with the row.
Exit status: 0 every probed row matches; 1 a row mismatches (an engine regression or a matrix row
to review); 2 the probe could not run (a name the adapter expects is missing, the entry raised, or
a row needs more than the probe's stand-ins offer).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import __version__, adapters, plan, report, runner
from .data import DataError, load_arch_table, load_matrix


def parse_args(argv):
    p = argparse.ArgumentParser(prog="pmqa-probe", description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", required=True, choices=adapters.ENGINES, help="the engine's adapter")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--source", metavar="DIR", help="the engine's source tree (its files run, the rest is stubbed)")
    where.add_argument("--installed", action="store_true", help="the engine this Python imports")
    p.add_argument("--matrix", metavar="F", help="expected-dispatch matrix (default: the packaged or in-tree one)")
    p.add_argument("--arch-table", metavar="F", help="arch table (default: the packaged or in-tree one)")
    p.add_argument("--arch", action="append", metavar="NAME", help="probe only these archs (repeatable)")
    p.add_argument("--junit", metavar="F", help="write a JUnit XML report")
    p.add_argument("--json", metavar="F", help="write a JSON report")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="interpreters at once (default: CPUs)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per interpreter (default 300)")
    torch = p.add_mutually_exclusive_group()
    torch.add_argument("--fake-torch", action="store_true", help="use the probe's torch stand-in even if torch is installed")
    torch.add_argument("--real-torch", action="store_true", help="require an installed torch")
    p.add_argument("--failures-only", action="store_true", help="table: only rows that mismatched or could not run")
    p.add_argument("--quiet", action="store_true", help="no table, only failures and the summary")
    p.add_argument("--version", action="version", version=f"pmqa-probe {__version__}")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    start = time.monotonic()
    adapter = adapters.load(args.engine)
    source = None
    if args.source:
        source = str(Path(args.source).resolve())
        if not Path(source).is_dir():
            print(f"pmqa-probe: --source {args.source}: not a directory", file=sys.stderr)
            return 2
    try:
        matrix = load_matrix(args.matrix)
        table = load_arch_table(args.arch_table)
        rows = plan.build(matrix, table, adapter, args.arch)
    except DataError as exc:
        print(f"pmqa-probe: {exc}", file=sys.stderr)
        return 2
    mode = "source" if source else "installed"
    try:
        torch, torch_note = runner.choose_torch("stand-in" if args.fake_torch else ("real" if args.real_torch else "auto"),
                                                adapter.torch_needs)
    except RuntimeError as exc:
        print(f"pmqa-probe: {exc}", file=sys.stderr)
        return 2
    products = {t: "/".join(i.products) for t, i in table.archs.items()}
    plans = runner.plans(rows, adapter.name, mode, source, torch, products)
    results = runner.run(plans, args.jobs, args.timeout)
    by_id = runner.index_results(results)
    for pr in rows:
        if not pr.skip:
            result, error = by_id.get(pr.id, (None, {"kind": "probe", "message": "no interpreter ran this row"}))
            plan.judge(pr, result, error, adapter)
    wall = time.monotonic() - start
    where = f"{source} (source tree)" if source else "the installed engine"
    title = f"--engine {adapter.name} ({adapter.title} at {where})"
    torches = sorted({r.get("torch") for r in results if r.get("torch")})
    if torch == "stand-in" and torches:
        torches = [torch_note]  # the interpreters ran the stand-in: the header says why
    head = [f"pmqa-probe: {adapter.title} entry {adapter.entry_module}.{adapter.entry}, at {where}",
            f"  matrix {matrix.source} ({len(matrix.rows)} policy rows, "
            f"{sum(1 for r in matrix.engine_rows if r.engine == adapter.name)} {adapter.name} rows); "
            f"arch table {table.source}",
            f"  arch: {adapter.arch_reaches_engine}; torch: {', '.join(torches) or 'not reached'}"]
    out = list(head)
    if not args.quiet:
        out += ["", report.table(rows, args.failures_only)]
    failures = report.details(rows)
    if failures:
        out += ["", failures]
    out += ["", report.summary(rows, title, wall, len(results))]
    print("\n".join(out))
    meta = {"engine": adapter.name, "mode": mode, "source": source, "matrix": matrix.source,
            "arch_table": table.source, "wall_s": round(wall, 3), "interpreters": len(results),
            "torch": torches, "exit": report.exit_status(rows),
            "interpreter_results": [{"arch": r.get("arch"), "wall_s": round(r.get("wall_s", 0.0), 3),
                                     "identity": r.get("identity"), "torch": r.get("torch"), "error": r.get("error"),
                                     "configs": [{"key": c["key"], "error": c.get("error"),
                                                  "missing_real_modules": c.get("missing_real_modules", []),
                                                  "stubbed": len(c.get("stubbed", []))}
                                                 for c in r.get("configs", [])]}
                                    for r in results]}
    if args.junit:
        report.write_junit(Path(args.junit), rows, title, wall)
    if args.json:
        report.write_json(Path(args.json), rows, meta)
    return report.exit_status(rows)
