"""Fresh interpreters: one per arch (--source), one per arch and library configuration (--installed).

A source tree is imported afresh per configuration inside its arch's interpreter (the child purges
the engine's modules), which keeps the whole matrix within a few interpreters. An installed engine
may register torch operators when imported, which a second import in the same interpreter would
repeat, so each of its configurations gets an interpreter of its own.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .plan import ProbeRow

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding the pmqa package
ENGINE_ENV = ("VLLM_ROCM_USE_AITER",)


def _row_plan(pr: ProbeRow) -> dict:
    r = pr.row
    return {"id": r.id, "block_size": r.block_size, "next_n": r.next_n, "heads": r.heads,
            "entry_kwargs": dict(r.entry_kwargs)}


def plans(rows: List[ProbeRow], engine: str, mode: str, source: Optional[str], torch: str,
          products: Dict[str, str]) -> List[dict]:
    groups: Dict[Tuple, Dict[str, list]] = {}
    order: List[Tuple] = []
    for pr in rows:
        if pr.skip:
            continue
        key = (pr.row.arch,) if mode == "source" else (pr.row.arch, pr.config_key())
        if key not in groups:
            groups[key] = {}
            order.append(key)
        groups[key].setdefault(pr.config_key(), []).append(pr)
    out = []
    for key in order:
        configs = []
        for ckey, members in groups[key].items():
            configs.append({"key": ckey, "present": members[0].present, "enabled": members[0].enabled,
                            "rows": [_row_plan(p) for p in members]})
        arch = key[0]
        out.append({"engine": engine, "mode": mode, "source": source, "arch": arch, "torch": torch,
                    "product": products.get(arch.split(":")[0], ""), "configs": configs})
    return out


def choose_torch(requested: str, needs: Tuple[str, ...]) -> Tuple[str, str]:
    """(mode for the interpreters, what the report's header says) for --fake-torch ("stand-in"),
    --real-torch ("real") or neither ("auto"). auto runs the installed torch when it has what the
    engine's files use (an adapter's torch_needs) and the probe's stand-in otherwise, so a torch too
    old for the engine (Debian's 1.13 for vLLM) gives the verdicts the stand-in gives. Raises
    RuntimeError for --real-torch without a usable torch."""
    if requested == "stand-in":
        return "stand-in", "the probe's stand-in (--fake-torch)"
    code = ("import json, sys\ntry:\n    import torch\nexcept Exception as e:\n"
            "    print(json.dumps({'error': f'{type(e).__name__}: {e}'})); sys.exit()\n"
            "print(json.dumps({'version': torch.__version__, "
            f"'missing': [a for a in {list(needs)!r} if not hasattr(torch, a)]}}))")
    try:
        proc = subprocess.run([sys.executable, "-B", "-c", code], env=_child_env(), capture_output=True, text=True,
                              timeout=120)
        seen = json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        seen = {"error": f"asking the installed torch failed ({exc})"}
    if "error" in seen:
        if requested == "real":
            raise RuntimeError(f"--real-torch: torch is not importable ({seen['error']})")
        return "stand-in", "the probe's stand-in (torch is not installed)"
    if seen["missing"]:
        why = (f"torch {seen['version']} is too old for the engine (no torch."
               + ", torch.".join(seen["missing"]) + ")")
        if requested == "real":
            raise RuntimeError(f"--real-torch: {why}")
        return "stand-in", f"the probe's stand-in ({why})"
    return "real", f"torch {seen['version']}"


def _child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # The interpreters run in a scratch folder: relative entries would point elsewhere there.
    paths = [PACKAGE_PARENT] + [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    for key in ENGINE_ENV:
        env.pop(key, None)
    return env


def run_one(plan: dict, timeout: float, workdir: Path, n: int) -> dict:
    plan_file = workdir / f"plan{n}.json"
    out_file = workdir / f"result{n}.json"
    plan_file.write_text(json.dumps(plan))
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-B", "-m", "pmqa.probe.child", str(plan_file), str(out_file)],
                              env=_child_env(), capture_output=True, text=True, timeout=timeout,
                              cwd=str(workdir))
    except subprocess.TimeoutExpired:
        return {"arch": plan["arch"], "configs": [], "wall_s": timeout, "plan": plan,
                "error": {"kind": "timeout", "message": f"the interpreter for {plan['arch']} ran past {timeout:.0f} s"}}
    wall = time.monotonic() - start
    if not out_file.is_file():
        tail = "\n".join((proc.stderr or proc.stdout or "").strip().splitlines()[-15:])
        return {"arch": plan["arch"], "configs": [], "wall_s": wall, "plan": plan,
                "error": {"kind": "probe", "message": f"the interpreter for {plan['arch']} exited {proc.returncode} "
                                                      f"without a result:\n{tail}"}}
    result = json.loads(out_file.read_text())
    result["wall_s"] = wall
    result["plan"] = plan
    return result


def run(plans_: List[dict], jobs: int, timeout: float) -> List[dict]:
    with tempfile.TemporaryDirectory(prefix="pmqa_probe_") as tmp:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(run_one, p, timeout, Path(tmp), i) for i, p in enumerate(plans_)]
            return [f.result() for f in futures]


def index_results(results: List[dict]) -> Dict[str, Tuple[Optional[dict], Optional[dict]]]:
    """row id -> (the row's result, the error that stopped its configuration or interpreter)."""
    out: Dict[str, Tuple[Optional[dict], Optional[dict]]] = {}
    for res in results:
        plan = res.get("plan") or {}
        by_key = {c["key"]: c for c in res.get("configs", [])}
        for config in plan.get("configs", []):
            got = by_key.get(config["key"])
            error = res.get("error") or (got or {}).get("error")
            if got is None and error is None:
                error = {"kind": "probe", "message": "the interpreter returned no result for this configuration"}
            rows = {r["id"]: r for r in (got or {}).get("rows", [])}
            for row in config["rows"]:
                out[row["id"]] = (rows.get(row["id"]), error)
    return out
