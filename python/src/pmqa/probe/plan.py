"""Which matrix rows the engine's entry can express, what each must decide, and the verdict.

Rows of "rows" (pmqa's policy rows) are probed when the adapter's entry serves the arch's vendor,
expecting the row's path served by the adapter's default entry for it. A row that expects
`unsupported` or `unknown-arch` expects no kernel path: the engine may refuse (raise) or run its
eager op, and fails when it calls a kernel. Rows of "engine_rows" for this engine add contexts the
policy has no words for (the library's switch, entry keywords) and, with replaces_policy_row, state
the engine's own decision where it knowingly differs from the policy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .._native import core
from .adapters import Adapter
from .data import ArchTable, DataError, Matrix, Row


@dataclass
class Expectation:
    kind: str                      # "path" or "no-kernel"
    reason: str
    path: Optional[str] = None
    fp8: Optional[str] = None
    layout: Optional[str] = None
    entry: Optional[str] = None

    def text(self) -> str:
        if self.kind == "no-kernel":
            return "no kernel path (refused, or the eager op)"
        return f"{self.path}, {self.fp8}, {self.layout.upper()} by {self.entry}"


@dataclass
class ProbeRow:
    row: Row
    label: str
    configuration: str
    expectation: Optional[Expectation] = None
    skip: Optional[str] = None
    verdict: str = "pending"       # ok, mismatch, error, skipped
    observed: str = ""
    message: str = ""
    problem: str = ""              # the message without the row's label (errors shared by rows group by it)
    calls: List[dict] = field(default_factory=list)
    result: Optional[dict] = None

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def present(self) -> bool:
        return self.row.kernels_present

    @property
    def enabled(self) -> bool:
        return self.row.kernels_present and self.row.kernels_enabled

    def config_key(self) -> str:
        if not self.row.kernels_present:
            return "absent"
        return "on" if self.row.kernels_enabled else "off"


def vendor_of(arch: str) -> Optional[str]:
    """"amd" or "nvidia" for a well-formed arch name, None for a malformed one (pmqa's own parser,
    dispatch/include/pmqa/dispatch/arch.hpp, through pmqa._core)."""
    return core.arch_vendor(arch)


def _library_name(adapter: Adapter, vendor: Optional[str]) -> str:
    for lib in adapter.libraries:
        if lib.vendor == vendor:
            return lib.name
    return "kernels"


def describe(row: Row, table: ArchTable, adapter: Adapter) -> str:
    lib = _library_name(adapter, vendor_of(row.arch))
    out = f"{table.label(row.arch)}, {lib} {'present' if row.kernels_present else 'absent'}"
    if row.kernels_present and not row.kernels_enabled:
        out += ", switched off"
    out += f", block_size {row.block_size}, next_n {row.next_n}"
    if row.heads != 64:
        out += f", heads {row.heads}"
    for key, value in sorted(row.entry_kwargs.items()):
        out += f", {key}={value}"
    return out


def configuration(row: Row, adapter: Adapter) -> str:
    lib = _library_name(adapter, vendor_of(row.arch))
    state = "absent" if not row.kernels_present else ("on" if row.kernels_enabled else "off")
    out = f"{lib} {state}, bs {row.block_size}, next_n {row.next_n}"
    if row.heads != 64:
        out += f", heads {row.heads}"
    for key, value in sorted(row.entry_kwargs.items()):
        out += f", {key}={value}"
    return out


def _with_note(reason: str, note: str) -> str:
    return f"{reason}; note: {note}" if note else reason


def policy_expectation(row: Row, table: ArchTable, adapter: Adapter) -> Expectation:
    target = row.arch.split(":")[0]
    info = table.find(target)
    lib = _library_name(adapter, vendor_of(row.arch))
    if row.error == "unknown-arch":
        return Expectation("no-kernel", _with_note(
            f"{target} is not in the arch table: an unknown arch must be an explicit error, never a silent "
            "kernel path (spec §4)", row.note))
    if row.path == "unsupported":
        if info is not None and info.fp8 == "none":
            why = f"{target} has no fp8 instructions"
        elif "block_size % 16" in row.reason_contains:
            why = (f"SHUFFLE needs block_size % 16 == 0 (spec §2): no fused kernel can read a block_size "
                   f"{row.block_size} cache")
        else:
            why = f"pmqa's policy refuses it ({row.reason_contains or 'unsupported'})"
        return Expectation("no-kernel", _with_note(why, row.note))
    entry = adapter.default_entry.get(row.path)
    if entry is None:
        raise DataError(f"the {adapter.name} adapter names no entry for path {row.path!r} (row {row.index})")
    if row.path == "fused":
        why = f"{lib} present and {target} takes the fused kernel in the arch's format (spec §4)"
    elif row.path == "two-stage":
        why = f"{lib} present and {target} is not in the fused guard: stage 1, then a sum over heads (spec §4)"
    elif row.kernels_present:
        why = f"{lib}'s kernel does not serve {target}: the framework's eager op (spec §4)"
    else:
        why = f"{lib} absent: the framework's eager op (spec §4)"
    return Expectation("path", _with_note(why, row.note), row.path, row.fp8, row.layout, entry)


def engine_expectation(row: Row, adapter: Adapter) -> Expectation:
    reason = _with_note(row.reason, row.note)
    if row.path == "unsupported":
        return Expectation("no-kernel", reason)
    entry = row.entry or adapter.default_entry.get(row.path)
    if adapter.entry_named(entry) is None:
        raise DataError(f"engine row {row.index}: the {adapter.name} adapter has no entry {entry!r}")
    return Expectation("path", reason, row.path, row.fp8, row.layout, entry)


def build(matrix: Matrix, table: ArchTable, adapter: Adapter, archs: Optional[List[str]] = None) -> List[ProbeRow]:
    mine = [r for r in matrix.engine_rows if r.engine == adapter.name]
    replaced: Dict[tuple, Row] = {}
    for r in mine:
        unknown = sorted(set(r.entry_kwargs) - set(adapter.entry_kwargs))
        if unknown:
            raise DataError(f"engine row {r.index} sets {', '.join(unknown)}, which the {adapter.name} adapter "
                            f"does not pass to its entry (it knows: {', '.join(adapter.entry_kwargs) or 'none'})")
        if r.replaces_policy_row:
            replaced[r.context()] = r
    out: List[ProbeRow] = []
    for r in matrix.rows + mine:
        pr = ProbeRow(r, describe(r, table, adapter), configuration(r, adapter))
        vendor = vendor_of(r.arch)
        if archs and r.arch not in archs:
            pr.skip = "not among the archs asked for (--arch)"
        elif r.error == "malformed-arch" or vendor is None:
            pr.skip = "not a device identity: malformed names are rows for pmqa's own arch parser"
        elif vendor not in adapter.vendors:
            pr.skip = adapter.not_expressed.get(vendor, f"the {adapter.name} entry does not serve {vendor} GPUs")
        elif r.kind == "policy" and r.context() in replaced:
            pr.skip = f"replaced for {adapter.title} by engine row E{replaced[r.context()].index}"
        else:
            pr.expectation = (policy_expectation(r, table, adapter) if r.kind == "policy"
                              else engine_expectation(r, adapter))
        if pr.skip:
            pr.verdict = "skipped"
            pr.message = pr.skip
        out.append(pr)
    return out


# --- judging what the child saw


def fp8_short(dtype_name: Optional[str]) -> Optional[str]:
    if dtype_name in ("float8_e4m3fn", "float8_e4m3fnuz"):
        return dtype_name[len("float8_"):]
    return dtype_name


def _arg_text(value) -> str:
    if isinstance(value, dict) and "tensor" in value:
        return f"{value['dtype']}{value['tensor']}"
    return repr(value)


def call_text(call: dict) -> str:
    if "kernel" in call:
        scalars = ", ".join(f"{k}={v!r}" for k, v in call.get("scalars", {}).items())
        return f"Triton kernel {call['kernel']}[{call.get('grid', '')}]({scalars})"
    args = call.get("args", [])
    parts = [f"q {_arg_text(args[0])}"] if args else []
    parts += [_arg_text(a) for a in args[1:] if not isinstance(a, (dict, list))]
    parts += [f"{k}={_arg_text(v)}" for k, v in call.get("kwargs", {}).items()]
    return f"{call['function']}({', '.join(parts)})"


def _observed(adapter: Adapter, call: dict):
    entry = adapter.entry_named(call["entry"])
    args = call.get("args", [])
    q = args[0] if args and isinstance(args[0], dict) else {}
    fp8 = fp8_short(q.get("dtype"))
    layout = entry.layout
    if entry.layout_kwarg and entry.layout_kwarg in call.get("kwargs", {}):
        layout = "shuffle" if call["kwargs"][entry.layout_kwarg] else "normal"
    block = call.get("kwargs", {}).get(entry.block_kwarg) if entry.block_kwarg else None
    return entry, fp8, layout, block


def judge(pr: ProbeRow, result: Optional[dict], config_error: Optional[dict], adapter: Adapter) -> None:
    if pr.skip:
        return
    pr.result = result
    exp = pr.expectation
    if config_error is not None:
        pr.verdict, pr.observed = "error", "could not run"
        pr.problem = f"the probe could not run the entry: {config_error['message']}"
        if config_error.get("traceback") and config_error.get("kind") != "missing":
            pr.problem += "\n" + config_error["traceback"]
        pr.message = f"{pr.label}: {pr.problem}"
        return
    if result is None:
        pr.verdict, pr.observed, pr.message = "error", "no result", f"{pr.label}: the probe's child gave no result"
        return
    if result.get("not_expressed"):
        pr.verdict, pr.observed = "skipped", "not expressed"
        pr.message = f"not expressed: {result['not_expressed']}"
        return
    error = result.get("error")
    calls = [dict(c) for c in result.get("calls", [])]
    for launch in result.get("launches", []):
        name = adapter.kernels.get(launch["kernel"])
        if name is None:
            pr.verdict, pr.observed = "error", f"Triton kernel {launch['kernel']}"
            pr.message = (f"{pr.label}: the entry launched Triton kernel {launch['kernel']}, which the "
                          f"{adapter.name} adapter does not map to a path")
            return
        calls.append(dict(launch, entry=name, function=launch["kernel"]))
    pr.calls = calls
    seen = "; ".join(call_text(c) for c in calls) or "no kernel or eager entry was called"
    if error and error["kind"] == "probe-limit":
        pr.verdict, pr.observed = "error", "probe limit"
        pr.message = f"{pr.label}: the probe could not run the entry: {error['message']}"
        return
    if error:
        if exp.kind == "no-kernel" and not calls:
            pr.verdict, pr.observed = "ok", f"refused: {error['type']}"
            pr.message = f"{pr.label}: ok, the entry refused it ({error['type']}: {error['message']})"
            return
        pr.verdict, pr.observed = "error", f"raised {error['type']}"
        pr.message = (f"{pr.label}: the entry raised {error['type']}: {error['message']} (calls before it: {seen})\n"
                      f"{error.get('traceback') or ''}").rstrip()
        return
    problems = [p for c in calls for p in c.get("problems", [])]
    returned = result.get("returned")
    want_return = {"tensor": result.get("out_shape"), "dtype": "float32"}
    if returned != want_return:
        problems.append(f"the entry returned {_arg_text(returned) if returned is not None else 'None'}, "
                        f"expected float32{want_return['tensor']}")
    if len(calls) != 1:
        pr.observed = "none" if not calls else " + ".join(c["entry"] for c in calls)
        pr.verdict = "mismatch"
        pr.message = (f"{pr.label}: expected {exp.text()}; reason: {exp.reason}; observed "
                      f"{'more than one path: ' if calls else ''}{seen}")
        return
    entry, fp8, layout, block = _observed(adapter, calls[0])
    pr.observed = f"{entry.path}, {fp8}, {layout.upper()} by {entry.name}"
    wrong = []
    if exp.kind == "no-kernel":
        if not (entry.kind == "engine" and entry.path == "reference-fallback"):
            wrong.append(f"{entry.name} is a kernel path")
    else:
        if entry.name != exp.entry:
            wrong.append(f"{entry.name} ran, not {exp.entry}")
        if fp8 != exp.fp8:
            wrong.append(f"q in {fp8}, not {exp.fp8}")
        if layout != exp.layout:
            wrong.append(f"reads {layout.upper()}, not {exp.layout.upper()}")
        if entry.block_kwarg and block != pr.row.block_size:
            wrong.append(f"{entry.block_kwarg}={block!r}, the cache's block_size is {pr.row.block_size}")
    wrong += problems
    if wrong:
        pr.verdict = "mismatch"
        pr.message = (f"{pr.label}: expected {exp.text()}; reason: {exp.reason}; observed {pr.observed} "
                      f"({'; '.join(wrong)}); calls: {seen}")
    else:
        pr.verdict = "ok"
        pr.message = f"{pr.label}: ok, {pr.observed}"
