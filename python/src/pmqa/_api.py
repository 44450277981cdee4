"""The in-process API: cases, the oracle's logits, and the verdict on a kernel's logits.

Every number comes from pmqa's C++ code (pmqa._core): the case reader and the suite generators,
the fp64 oracle, the tolerance profiles and the comparison `pmqa verify` makes. This module only
carries arrays across.
"""
from __future__ import annotations

import hashlib
import shlex
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

import numpy as np

from . import _tensors
from ._native import core

CaseError = core.CaseError
CaseFileError = core.CaseFileError
Fp8CodesWarning = _tensors.Fp8CodesWarning

CONTRACTS = tuple(core.contract_names())  # the C++ model's spellings, never a copy
NAN_RULES = tuple(core.nan_rule_names())
TOLERANCES = tuple(core.tolerance_names())
SENTINEL_BITS = core.sentinel_bits()
LARGE_REASON = "a large case (gigabytes of buffers): GPU runs only, and only when asked for"

_FIELDS = ("name", "suite", "seed", "fp8", "layout", "batch", "next_n", "heads", "head_dim", "block_size",
           "num_blocks", "block_stride", "max_blocks_per_seq", "max_model_len", "context_lens_2d", "contract",
           "producer", "description", "metadata")


class Case:
    """One call's inputs (spec §1), from a case file or a suite.

    The inputs come as read-only numpy arrays, or as torch tensors on ``device`` (q in the torch
    fp8 dtype of the case's format). A suite's case is generated on first use; ``release()`` frees
    its buffers (they come back on the next use, the same bytes: cases are seeded).
    """

    def __init__(self, handle: Any, device: Optional[str] = None, outside: Optional[str] = None):
        self._h = handle
        self.device = device
        #: The envelope limit the case breaks (cases(envelope=...)), or None.
        self.outside = outside or None
        self._fields: Optional[Dict[str, Any]] = None
        self._arrays: Optional[Dict[str, Any]] = None

    # ---- what the case is
    @property
    def name(self) -> str:
        return self._h.name

    @property
    def source(self) -> str:
        """The case file's path; empty for a suite's case."""
        return self._h.source

    @property
    def large(self) -> bool:
        """A case with gigabytes of buffers (the nightly suite's 2^31-byte case)."""
        return self._h.large

    @property
    def skip_reason(self) -> Optional[str]:
        """Why a test runner should not run this case (outside the envelope asked for, or a gigabyte
        case), or None."""
        if self.outside:
            return self.outside
        return LARGE_REASON if self.large else None

    def _field(self, key: str) -> Any:
        if self._fields is None:
            self._fields = self._h.fields()
        return self._fields[key]

    def __getattr__(self, key: str) -> Any:
        if key in _FIELDS:
            return self._field(key)
        raise AttributeError(f"pmqa.Case has no attribute {key!r}")

    @property
    def rows(self) -> int:
        """B * next_n: the rows of the logits, r = b * next_n + n."""
        return self._field("batch") * self._field("next_n")

    @property
    def shape(self) -> tuple:
        """The logits' shape, [B*N, max_model_len]."""
        return (self.rows, self._field("max_model_len"))

    def __repr__(self) -> str:
        where = f" from {self.source}" if self.source else (f" of suite {self._h.suite}" if self._h.suite else "")
        dev = f" on {self.device}" if self.device else ""
        return f"<pmqa.Case {self.name}{where}{dev}>"

    # ---- the inputs
    def _array(self, key: str) -> Any:
        if self._arrays is None:
            self._arrays = self._h.arrays()
        return self._arrays[key]

    def numpy(self) -> Dict[str, Any]:
        """Every input (and the stored logits, or None) as read-only numpy arrays."""
        return {k: self._array(k) for k in ("q", "kv_cache", "weights", "context_lens", "block_table", "logits")}

    def _on_device(self, key: str, fp8: Optional[str] = None) -> Any:
        a = self._array(key)
        return None if a is None else _tensors.to_device(a, self.device, fp8)

    @property
    def q(self) -> Any:
        """[B, N, H, D] fp8 codes (uint8 in numpy; torch.float8_e4m3fn / _e4m3fnuz on a device)."""
        return self._on_device("q", self._field("fp8"))

    @property
    def kv_cache(self) -> Any:
        """[num_blocks, block_stride] uint8: each block's fp8 values, then its fp32 scales (spec §2)."""
        return self._on_device("kv_cache")

    @property
    def kv_cache_blocks(self) -> Any:
        """kv_cache as the frameworks view it: [num_blocks, block_size, 1, D+4], a strided view."""
        return _tensors.kv_blocks_view(self.kv_cache, self._field("block_size"), self._field("head_dim"))

    @property
    def weights(self) -> Any:
        """[B*N, H] float32."""
        return self._on_device("weights")

    @property
    def context_lens(self) -> Any:
        """[B] int32, or [B, N] when context_lens_2d."""
        return self._on_device("context_lens")

    @property
    def block_table(self) -> Any:
        """[B, max_blocks_per_seq] int32."""
        return self._on_device("block_table")

    @property
    def logits(self) -> Any:
        """The logits stored in the case file, [B*N, max_model_len] float32, or None."""
        return self._on_device("logits")

    @property
    def valid_keys(self) -> np.ndarray:
        """E_r for every row (spec §1.2), int64 [B*N]."""
        return self._h.valid_keys()

    def to(self, device: Optional[str]) -> "Case":
        """The same case with its inputs on another device (None: numpy)."""
        return Case(self._h, device, self.outside)

    def release(self) -> None:
        """Frees a suite case's buffers and its cached oracle (arrays already handed out stay valid)."""
        self._fields = None
        self._arrays = None
        self._h.release()

    def save(self, path: str, logits: Any = None, contract: Optional[str] = None,
             metadata: Optional[Mapping[str, str]] = None) -> None:
        """Writes the case file (with these logits when given), for `pmqa verify` or another runner."""
        arr = None if logits is None else _tensors.host_float32(logits)
        core.write_case(self._h, str(path), arr, contract, dict(metadata or {}))


class CaseList(list):
    """A suite's cases in order; also indexable by case name."""

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            for c in self:
                if c.name == key:
                    return c
            raise KeyError(f"no case named {key!r} (cases: {', '.join(c.name for c in self)})")
        return super().__getitem__(key)

    @property
    def names(self) -> List[str]:
        return [c.name for c in self]


def suites() -> List[str]:
    """The built-in suites: quick, standard, nightly."""
    return list(core.suite_names())


def read_case(path: str, device: Optional[str] = None, cases: Optional[str] = None) -> Case:
    """Reads a case file (strict: CaseFileError names the file, the field and the problem). A result
    file pmqa-run wrote reads the same way; with ``cases`` (the folder of its input) a logits-only one
    too, joined with its input as `pmqa verify --cases` joins it. A result file carries the gates its
    run recorded, and verify() re-applies them."""
    return Case(core.read_case(str(path), None if cases is None else str(cases)), device)


def _convention(spec: str) -> tuple:
    """'deepgemm' or 'aiter-fused:cuda' -> (convention, platform; '' for the one the envelope lists)."""
    convention, _, platform = str(spec).partition(":")
    return convention, platform


def envelopes() -> List[str]:
    """The calling conventions with an envelope (what the library behind each supports)."""
    return list(core.envelope_conventions())


def describe_envelope(convention: str, overlays: Iterable[str] = ()) -> str:
    """Every limit of a convention's envelope ("CONVENTION[:PLATFORM]") with its reason."""
    conv, platform = _convention(convention)
    return core.describe_envelope(conv, platform, [str(p) for p in overlays])


def cases(suite: str = "quick", fit: Optional[str] = None, device: Optional[str] = None,
          include_large: bool = False, envelope: Optional[str] = None, overlays: Iterable[str] = ()) -> CaseList:
    """A built-in suite's cases, generated on first use, with inputs as numpy arrays (device None)
    or torch tensors on ``device``.

    fit: "CONVENTION[:PLATFORM]" (aiter-fused, aiter-stage1, deepgemm, eager, vllm-rocm; cuda, rocm,
    none): the
    suite drawn inside the envelope of the library behind that calling convention, as
    `pmqa gen --suite SUITE --fit CONVENTION --platform PLATFORM` writes it (the platform may be
    left out where the envelope lists one). envelope: the same, but the suite's own cases, those
    outside the envelope carrying the limit they break as their skip_reason. overlays: envelope
    overlay files (`pmqa gen --envelope FILE`). include_large: also the gigabyte cases, with a
    skip_reason (a test runner decides).
    """
    overlays = [str(p) for p in overlays]
    if fit is not None and envelope is not None:
        raise ValueError("fit= draws the cases inside an envelope, envelope= marks the suite's own cases outside "
                         "it: give one of them")
    chosen = fit if fit is not None else envelope
    try:
        if fit is not None:
            handles = list(core.fitted_suite(suite, *_convention(fit), overlays))
        else:
            handles = list(core.suite(suite))
        outside: List[str] = [""] * len(handles)
        if chosen is not None:
            outside = list(core.refusals(handles, *_convention(chosen), overlays))
    except ValueError as exc:
        if chosen is not None and not _convention(chosen)[1] and "choose one" in str(exc):
            conv = _convention(chosen)[0]
            raise ValueError(f"{exc}; here: \"{conv}:PLATFORM\", e.g. \"{conv}:cuda\"") from None
        raise
    out = CaseList()
    for h, why in zip(handles, outside):
        if h.large and not include_large:
            continue
        out.append(Case(h, device, why))
    return out


def reference(case: Case, nan: Optional[str] = None, precision: str = "fp64", dtype: Any = np.float32) -> np.ndarray:
    """The oracle's logits, [B*N, max_model_len], -inf past each row's valid keys.

    nan: the NaN rule (propagate, relu-clamp; default: the file's "nan" metadata, else propagate);
    precision: fp64 (the oracle the judge uses) or fp32 (pmqa's fp32 reference, as a kernel would).
    dtype: float32 (default: what a kernel stores, so ``assert_matches(case, reference(case))``
    passes) or float64 (the oracle's own values).
    """
    out = core.reference(case._h, nan, precision)
    dt = np.dtype(dtype)
    if dt == np.float64:
        return out
    if dt != np.float32:
        raise TypeError(f"dtype {dt}: the reference comes as float32 or float64")
    return out.astype(np.float32)


class Report:
    """pmqa's verdict on one output: the gates, the counts, the first mismatches decoded, the map, and
    the gates of the run that wrote the case's file (``run_gates``).

    ``str(report)`` is the text `pmqa verify` prints for a file.
    """

    def __init__(self, native: Any, case: Case):
        self._r = native
        self.case = case
        #: Why this tolerance profile judged the logits ("given", "the logits are bfloat16", ...).
        self.tolerance_reason = "given"
        #: The gates the run that wrote the case's file recorded (pmqa-run --max-floor-ratio, --expect-path),
        #: re-judged as `pmqa verify` re-judges them: ``.gates`` (each with gate, outcome, passed, message),
        #: ``.passed``, ``.failed`` (the names). None recorded (a suite's case, a file pmqa gen wrote): empty.
        self.run_gates = core.run_gates(case._h)

    # ---- the verdict
    @property
    def passed(self) -> bool:
        """The numbers pass the judge and every gate the run recorded passes (as `pmqa verify` decides)."""
        return self._r.passed and self.run_gates.passed

    @property
    def worst(self) -> float:
        """The element gate: max |out - ref| / element limit over the compared cells (< 1 passes)."""
        return self._r.worst_bound_ratio

    def __getattr__(self, key: str) -> Any:
        # worst_bound_ratio, calc_diff, broken, gates, bias, nan_seen, judging (its contract, tolerance,
        # nan as one dict), contract, tolerance, nan_rule,
        # cells_checked, max_abs_error, max_rel_error, failures, failing_cells, failing_regions, ...
        return getattr(self._r, key)

    @property
    def bias(self) -> Dict[str, Any]:
        """The bias gate over the whole output: the signed means of err/sigma ("offset": above or
        below the reference) and of err/sigma x sign(ref) ("scale": larger or smaller in
        magnitude), their "limit" and "cells", and "signs": what the regions that broke the gate
        showed ("magnitude too small", "above the reference", ...; "" when none did)."""
        return self._r.bias

    @property
    def counts(self) -> Dict[str, int]:
        """The cell checks' counts and the regions over their gate."""
        r = self._r
        return {"cells_checked": r.cells_checked, "value_mismatches": r.value_mismatches,
                "nan_mismatches": r.nan_mismatches, "inf_pattern_errors": r.inf_pattern_errors,
                "unwritten": r.unwritten, "guard_violations": r.guard_violations,
                "block_regions": r.gates["block"][1], "row_regions": r.gates["row"][1],
                "global_regions": r.gates["global"][1], "bias_regions": r.gates["bias"][1]}

    @property
    def first(self) -> List[Any]:
        """The first mismatching cells, each decoded to (row, col, b, n, logical and physical block,
        token and value offset in the block, got, expected, bound)."""
        return list(self._r.first)

    @property
    def regions(self) -> List[Any]:
        return list(self._r.regions)

    def map(self) -> Any:
        """The ErrorMap: rows x logical blocks, each block's worst error over the element limit and
        the checks it broke; ``.text()`` a small text picture, ``.svg()`` the picture."""
        return self._r.map

    def svg(self, where: str = "") -> str:
        """The error map as an SVG picture titled with the verdict and the worst gate, the case and
        the judging settings (where: a line naming the file or test, optional)."""
        return self._r.svg(where)

    def to_json(self) -> Dict[str, Any]:
        """The report as `pmqa verify --json` writes it for a file."""
        return dict(self._r.to_json(), run_gates=self.run_gates.to_json(), failed_gates=self.run_gates.failed)

    def __str__(self) -> str:
        """What `pmqa verify` prints under a file's verdict line: the report, for failed numbers the
        small text map of where the errors sit, and the run's gates when one failed (then named first:
        the judge's own text may say PASS for numbers a failed gate fails)."""
        text = self._r.to_text()
        if not self._r.passed and self._r.map is not None:
            text += self._r.map.block()
        gates = self.run_gates
        return (f"FAIL: {gates.summary()}\n" if not gates.passed else "") + text + gates.failure_text()

    def __repr__(self) -> str:
        broken = ([self._r.broken] if not self._r.passed else []) + [f"{g} gate" for g in self.run_gates.failed]
        verdict = "PASS" if self.passed else f"FAIL ({', '.join(broken)})"
        return f"<pmqa.Report {self.case.name}: {verdict}, worst {self.worst:.3g}>"


def judging_tolerance(case: Case, logits: Any, tolerance: Optional[str] = None,
                      tensor_cores: Optional[bool] = None) -> Tuple[str, str]:
    """(profile, why) for these logits: the given tolerance; else the case file's "tolerance"
    metadata (fp32 without it) moved to the bf16 profiles for bfloat16 or float16 logits, and to the
    matrix-unit profiles when tensor_cores is True (fp32 sums when it is False)."""
    if tolerance is not None:
        if tensor_cores is not None:
            raise ValueError("give tolerance= or tensor_cores=, not both: tolerance names the whole profile")
        return tolerance, "given"
    # The rule is C++'s (pmqa/model/tolerance.hpp, profile_for_logits): README "How pmqa judges a kernel".
    recorded = core.judged_options(case._h)["tolerance"]
    return core.profile_for_logits(recorded, _tensors.dtype_name(logits), tensor_cores)


def _reproduce(case: Case, logits_are_the_files: bool, judged: Mapping[str, str]) -> str:
    """The command that reproduces a verdict, from the Judging its report recorded."""
    flags = f"--contract {judged['contract']} --tolerance {judged['tolerance']} --nan {judged['nan']}"
    if case.source and logits_are_the_files:
        return f"pmqa verify {shlex.quote(case.source)} {flags}"
    if case.source:
        inputs = f"the inputs are {shlex.quote(case.source)}"
    else:
        inputs = f"the inputs: pmqa gen {case._h.gen_args} --case {shlex.quote(case.name)} --out DIR"
    return f"{inputs}; case.save(FILE, logits) stores these logits, then: pmqa verify FILE {flags}"


def verify(case: Case, logits: Any, contract: Optional[str] = None, tolerance: Optional[str] = None,
           nan: Optional[str] = None, max_listed: int = 10, tensor_cores: Optional[bool] = None) -> Report:
    """Judges a kernel's logits against the fp64 oracle, as `pmqa verify` judges a case file.

    logits: [B*N, max_model_len], a numpy array or a torch tensor on any device, any strides;
    float32, bfloat16 or float16 (widened exactly). A cell holding pmqa's sentinel NaN 0x7FF0CAFE
    counts as never written. contract (clean, valid-only) and nan (propagate, relu-clamp) default to
    the case file's metadata, then to clean / propagate. The tolerance profile (fp32, matrix-unit,
    bf16-output, matrix-unit-bf16) follows the logits unless given: the case file's metadata (else
    fp32), the bf16 profile for bfloat16/float16 logits, the matrix-unit profile with
    ``tensor_cores=True`` (``judging_tolerance`` says which and why; ``Report.tolerance_reason`` too).
    Nothing is written to disk.
    """
    if not isinstance(case, Case):
        raise TypeError(f"case: expected a pmqa.Case (pmqa.read_case, pmqa.cases), got {type(case).__name__}")
    profile, why = judging_tolerance(case, logits, tolerance, tensor_cores)
    host = _tensors.host_float32(logits)
    # One judging value: the parts given here, the rest the case file's (resolved once, in C++).
    native = core.verify(case._h, host, {"contract": contract, "tolerance": profile, "nan": nan}, max_listed)
    stored = case._array("logits") if case.source else None
    same = stored is not None and host.__array_interface__["data"][0] == stored.__array_interface__["data"][0]
    native.reproduce = _reproduce(case, same, native.judging)
    report = Report(native, case)
    report.tolerance_reason = why
    return report


class ArtifactSink:
    """Where a failing assert_matches leaves what reproduces it: the case with the kernel's logits
    (a case file `pmqa verify` judges alone) and the error map as SVG; ``rerun`` names the test."""

    def __init__(self, folder: Any, rerun: str = "", label: str = ""):
        self.folder = Path(folder)
        self.rerun = rerun  # the test's node id and how to run it again (the plugin's)
        self.label = label  # what the picture names as its source (the node id), else the saved file

    def save(self, report: Report, logits: Any) -> str:
        """Writes the artifacts; returns the lines that end the failure message. The report's own
        reproduce line becomes the one command that judges the saved file."""
        case = report.case
        self.folder.mkdir(parents=True, exist_ok=True)
        stem = _artifact_stem(case.name)  # the whole name: a suffix is added, never swapped for its last dot's part
        case_file = self.folder / f"{stem}.safetensors"
        judged = report.judging  # the one Judging the report recorded
        case.save(str(case_file), logits, contract=judged["contract"],
                  metadata={"tolerance": judged["tolerance"], "nan": judged["nan"]})
        command = f"pmqa verify {shlex.quote(str(case_file))}"
        report._r.reproduce = command
        lines = ["", f"artifacts: {self.folder}", f"  case with these logits: {case_file.name}"]
        if report.map() is not None:
            svg = self.folder / f"{stem}.svg"
            svg.write_text(report.svg(self.label or str(case_file)))
            lines.append(f"  error map: {svg.name}")
        lines.append(f"reproduce: {command}")
        if self.rerun:
            lines.append(f"test: {self.rerun}")
        return "\n".join(lines)


def _file_stem(name: str) -> str:
    """A name as a file name: its characters outside [A-Za-z0-9._-] become '_' (the plugin's folder
    per test, named by the test)."""
    return "".join(ch if ch.isalnum() and ch.isascii() or ch in "._-" else "_" for ch in name) or "case"


_MAX_STEM = 200  # bytes of an artifact's stem (file systems allow 255 for the whole name)


def _artifact_stem(name: str) -> str:
    """A case name as its artifacts' stem, whole: never cut at a dot ("deepseek-v3.2-decode" stays
    itself; Path.with_suffix made it "deepseek-v3", and "deepseek-v3.2-prefill" overwrote it). A
    name that is not a safe file name as it is (a character outside [A-Za-z0-9._-], a leading dot,
    longer than _MAX_STEM) is made one -- each such character '_', a leading dot '_', cut to
    _MAX_STEM -- and then carries 8 hex digits of the name's SHA-256, so two names never share a
    file ("a/b" gives "a_b-<hash>", "a_b" stays "a_b")."""
    safe = _file_stem(name)
    if safe.startswith("."):
        safe = "_" + safe[1:]
    if safe == name and len(name) <= _MAX_STEM:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe[:_MAX_STEM]}-{digest}"


# The pytest plugin sets this around each test that takes pmqa_case (its artifacts folder and node id).
_sink: Optional[ArtifactSink] = None


def assert_matches(case: Case, logits: Any, contract: Optional[str] = None, tolerance: Optional[str] = None,
                   nan: Optional[str] = None, tensor_cores: Optional[bool] = None,
                   artifacts: Any = None) -> Report:
    """verify(), failing with the report (and its text map) as the assertion message.

    artifacts: a folder where a failure leaves the case with these logits and the error map (SVG);
    the message then ends with the one command that reproduces the verdict. Under pytest the plugin
    picks the folder (--pmqa-artifacts, default the test's tmp_path) and adds the test's node id.
    """
    __tracebackhide__ = True  # pytest: the failure points at the caller's line
    report = verify(case, logits, contract=contract, tolerance=tolerance, nan=nan, tensor_cores=tensor_cores)
    if not report.passed:
        sink = ArtifactSink(artifacts) if artifacts is not None else _sink
        ending = sink.save(report, logits) if sink is not None else ""
        raise AssertionError(str(report) + ending)
    return report
