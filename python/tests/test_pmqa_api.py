"""pmqa's in-process API (pytest): cases, the oracle, verify() and its report, against the CLI.

Needs the built extension (PMQA_CORE_DIR) and, for the comparisons with the command, the pmqa
binary (PMQA_BIN); CTest sets both.
"""
import json
import os
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

from child_env import child_pythonpath  # python/tests

import numpy as np
import pytest

import pmqa

PMQA_BIN = os.environ.get("PMQA_BIN")
needs_cli = pytest.mark.skipif(not PMQA_BIN, reason="PMQA_BIN (the pmqa command) is not set")


def run_cli(*args):
    return subprocess.run([PMQA_BIN, *map(str, args)], capture_output=True, text=True, timeout=600)


def correct_logits(case):
    """What a correct fp32 kernel writes: pmqa's fp32 reference rounded to float32."""
    return pmqa.reference(case, precision="fp32").astype(np.float32)


def first_long_row(case):
    """A row with valid keys in at least two logical blocks and invalid columns after them, and its E_r."""
    e = case.valid_keys
    rows = [r for r in range(case.rows) if case.block_size < e[r] < case.max_model_len]
    assert rows, f"{case.name}: no row with two blocks and a tail"
    r = max(rows, key=lambda i: e[i])
    return r, int(e[r])


@pytest.fixture(scope="module")
def quick():
    return pmqa.cases("quick")


@pytest.fixture(scope="module")
def plain(quick):
    return quick["edge-lengths-1d"]


# ------------------------------------------------------------------ cases

def test_suites_and_lazy_cases(quick):
    assert pmqa.suites() == ["quick", "standard", "nightly"]
    assert len(quick) > 20 and len(set(quick.names)) == len(quick)
    fresh = pmqa.cases("quick")
    assert not fresh[0]._h.loaded, "a suite's case is generated on first use, not when listed"
    assert fresh[0].batch >= 0 and fresh[0]._h.loaded
    fresh[0].release()
    assert not fresh[0]._h.loaded
    with pytest.raises(KeyError, match="no case named"):
        quick["no-such-case"]
    with pytest.raises(ValueError, match="quick"):
        pmqa.cases("no-such-suite")


def test_nightly_large_cases_only_when_asked():
    names = pmqa.cases("nightly").names
    every = pmqa.cases("nightly", include_large=True)
    large = [c for c in every if c.large]
    assert large and all(c.name not in names for c in large)
    assert all(c.skip_reason and "large" in c.skip_reason for c in large)


def test_inputs_are_read_only_views_with_the_case_shapes(plain):
    c = plain
    assert c.q.shape == (c.batch, c.next_n, c.heads, c.head_dim) and c.q.dtype == np.uint8
    assert c.kv_cache.shape == (c.num_blocks, c.block_stride) and c.kv_cache.dtype == np.uint8
    assert c.weights.shape == (c.rows, c.heads) and c.weights.dtype == np.float32
    assert c.block_table.shape == (c.batch, c.max_blocks_per_seq) and c.block_table.dtype == np.int32
    assert c.context_lens.shape == ((c.batch, c.next_n) if c.context_lens_2d else (c.batch,))
    assert c.logits is None
    blocks = c.kv_cache_blocks
    assert blocks.shape == (c.num_blocks, c.block_size, 1, c.head_dim + 4)
    assert blocks.strides[0] == c.block_stride
    with pytest.raises(ValueError):
        c.q[0, 0, 0, 0] = 1  # a kernel that writes its inputs is a bug: numpy says so
    assert c.shape == (c.rows, c.max_model_len)
    assert list(c.valid_keys) == [
        (c.context_lens[r // c.next_n] - c.next_n + r % c.next_n + 1) for r in range(c.rows)]


def test_arrays_outlive_a_release(quick):
    c = pmqa.cases("quick")["edge-lengths-1d"]
    q = c.q
    before = q.copy()
    c.release()
    pmqa.cases("quick")[1].q  # other allocations may reuse freed memory
    assert np.array_equal(q, before), "an array handed out keeps the buffers it views"
    assert np.array_equal(c.q, before), "a released case comes back with the same bytes (it is seeded)"


@needs_cli
def test_fit_is_pmqa_gen_fit(tmp_path):
    """fit= is `pmqa gen --fit`: the same cases, the same inputs, every one inside the envelope."""
    fitted = pmqa.cases("quick", fit="deepgemm")
    assert len(fitted) == len(pmqa.cases("quick")) and all(c.outside is None for c in fitted)
    assert {c.block_size for c in fitted} == {64} and {c.fp8 for c in fitted} == {"e4m3fn"}
    picked = [fitted[0].name, fitted[-1].name]
    r = run_cli("gen", "--suite", "quick", "--fit", "deepgemm", "--case", picked[0], "--case", picked[1], "--out", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in picked:
        theirs, mine = pmqa.read_case(tmp_path / f"{name}.safetensors"), fitted[name]
        for key in ("q", "kv_cache", "weights", "context_lens", "block_table"):
            assert np.array_equal(getattr(theirs, key), getattr(mine, key)), (name, key)
        assert (theirs.seed, theirs.max_model_len, theirs.layout) == (mine.seed, mine.max_model_len, mine.layout)
    bad = correct_logits(fitted[0]) * np.float32(2)
    assert "pmqa gen --suite quick --fit deepgemm --platform cuda --case" in str(pmqa.verify(fitted[0], bad))


def test_envelope_marks_the_cases_outside():
    every = pmqa.cases("standard", envelope="deepgemm")
    outside = [c for c in every if c.outside]
    inside = [c for c in every if not c.outside]
    assert outside and inside and len(every) == len(pmqa.cases("standard"))
    assert all(c.outside.startswith("outside deepgemm on cuda: limit ") and c.skip_reason == c.outside for c in outside)
    assert all(c.block_size == 64 and c.fp8 == "e4m3fn" and c.layout == "normal" and c.heads in (32, 64)
               for c in inside)
    assert any("block-size" in c.outside for c in outside)


def test_envelope_errors_name_the_choice():
    with pytest.raises(ValueError, match='aiter-fused:cuda'):
        pmqa.cases("quick", fit="aiter-fused")  # two platforms listed: one must be chosen
    with pytest.raises(ValueError, match="known: aiter-fused"):
        pmqa.cases("quick", fit="no-such-convention")
    with pytest.raises(ValueError, match="give one"):
        pmqa.cases("quick", fit="deepgemm", envelope="deepgemm")
    assert "block_kv == 64" in pmqa.describe_envelope("deepgemm")
    assert pmqa.envelopes() == ["aiter-fused", "aiter-stage1", "deepgemm", "eager", "vllm-rocm"]


# ------------------------------------------------------------------ the oracle

@needs_cli
def test_reference_is_the_cli_reference(tmp_path):
    """pmqa gen --with-reference stores the fp32 reference; pmqa.reference(precision=fp32) is it."""
    r = run_cli("gen", "--suite", "quick", "--case", "edge-lengths-1d", "--case", "nan-codes-e4m3fn", "--with-reference",
                "--out", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("edge-lengths-1d", "nan-codes-e4m3fn"):
        f = pmqa.read_case(tmp_path / f"{name}.safetensors")
        stored = f.logits
        mine = pmqa.reference(f, precision="fp32").astype(np.float32)
        assert np.array_equal(stored.view(np.uint32), mine.view(np.uint32)), name
        suite_case = pmqa.cases("quick")[name]
        assert np.array_equal(pmqa.reference(suite_case), pmqa.reference(f), equal_nan=True), name


def test_reference_nan_rules(quick):
    c = quick["nan-codes-e4m3fn"]
    prop, clamp = pmqa.reference(c), pmqa.reference(c, nan="relu-clamp")
    assert np.isnan(prop).any() and not np.isnan(clamp).any()
    finite = ~np.isnan(prop)
    assert np.allclose(prop[finite], clamp[finite], rtol=1e-12, atol=0)  # the same sums, fp64


# ------------------------------------------------------------------ verify

def test_correct_logits_pass_and_a_wrong_page_fails_where_it_is(plain):
    c = plain
    good = correct_logits(c)
    rep = pmqa.verify(c, good)
    assert rep.passed and rep.worst < 1 and rep.calc_diff is not None
    assert rep.contract == "clean" and rep.tolerance == "fp32" and rep.nan_rule == "propagate"
    assert rep.judging == {"contract": "clean", "tolerance": "fp32", "nan": "propagate"}, "one judging value"
    assert "PASS" in str(rep) and "error map" not in str(rep)

    r, e = first_long_row(c)
    bad = good.copy()
    bad[r, c.block_size:2 * c.block_size] *= 2  # logical block 1 of row r read with a doubled scale
    rep = pmqa.verify(c, bad)
    assert not rep.passed and rep.worst > 1
    cells = [m for m in rep.first]
    assert cells and all(m.row == r and m.logical_block == 1 for m in cells)
    assert cells[0].kind == "value" and cells[0].physical_block == c.block_table[r // c.next_n, 1]
    assert rep.counts["value_mismatches"] >= 1
    m = rep.map()
    assert (m.rows, m.blocks, m.block_size) == (c.rows, -(-c.max_model_len // c.block_size), c.block_size)
    flagged = np.argwhere(m.flags & pmqa.ErrorMap.ELEMENT)
    assert [tuple(x) for x in flagged] == [(r, 1)], "only the wrong page is marked"
    text = str(rep)
    assert text.startswith("FAIL ") and "first mismatches" in text and "error map" in text and "X" in text
    svg = m.svg(title="t")
    root = ET.fromstring(svg)  # well-formed
    assert root.tag.endswith("svg") and 'fill="#d7191c"' in svg


def test_strides_and_dtypes(plain):
    c = plain
    good = correct_logits(c)
    padded = np.full((c.rows, c.max_model_len + 7), np.nan, dtype=np.float32)
    padded[:, :c.max_model_len] = good
    view = padded[:, :c.max_model_len]
    assert not view.flags["C_CONTIGUOUS"]
    fortran = np.asfortranarray(good)
    reports = [pmqa.verify(c, x) for x in (good, view, fortran, good.astype(np.float16))]
    assert [r.passed for r in reports[:3]] == [True, True, True]
    assert reports[0].worst == reports[1].worst == reports[2].worst
    assert reports[3].passed and reports[3].tolerance == "bf16-output", "float16 logits pick the bf16 profile"
    assert not pmqa.verify(c, good.astype(np.float16), tolerance="fp32").passed, \
        "float16 rounding is far outside the fp32 profile"
    with pytest.raises(TypeError, match="float64"):
        pmqa.verify(c, good.astype(np.float64))
    with pytest.raises(ValueError, match=r"needs \[B\*N, max_model_len\]"):
        pmqa.verify(c, good[:, :-1])
    with pytest.raises(TypeError, match="pmqa.Case"):
        pmqa.verify("edge-lengths-1d", good)
    with pytest.raises(TypeError, match="list"):
        pmqa.verify(c, good.tolist())


def test_sentinel_counts_as_unwritten_and_options_override(plain):
    c = plain
    good = correct_logits(c)
    r, e = first_long_row(c)
    bad = good.copy()
    bad.view(np.uint32)[r, e - 1] = pmqa.SENTINEL_BITS
    rep = pmqa.verify(c, bad)
    assert rep.unwritten == 1 and not rep.passed and rep.first[0].kind == "unwritten"
    assert rep.map().flags[r, (e - 1) // c.block_size] & pmqa.ErrorMap.UNWRITTEN
    tail = good.copy()
    tail[r, e:] = 5.0  # garbage past E_r: wrong under clean, not looked at under valid-only
    assert not pmqa.verify(c, tail).passed
    assert pmqa.verify(c, tail, contract="valid-only").passed
    for bad_option in ({"contract": "dirty"}, {"tolerance": "fp16"}, {"nan": "ignore"}):
        with pytest.raises(ValueError):
            pmqa.verify(c, good, **bad_option)


def test_assert_matches_message_is_the_report(plain):
    c = plain
    good = correct_logits(c)
    assert pmqa.assert_matches(c, good).passed
    bad = good * np.float32(0.5)
    with pytest.raises(AssertionError) as info:
        pmqa.assert_matches(c, bad)
    assert str(info.value) == str(pmqa.verify(c, bad))
    assert "reproduce: the inputs: pmqa gen --suite quick --case edge-lengths-1d" in str(info.value)


def test_a_scale_inside_every_cells_noise_fails_the_bias_gate_with_its_sign(quick):
    """The whole output x1.01 under bf16-output: every cell stays well inside its element limit and
    the rms gates pass it; the bias gate fails it and the report says which way the output is off."""
    c = max(quick, key=lambda x: int(np.clip(x.valid_keys, 0, None).sum()))
    good = correct_logits(c)
    assert pmqa.verify(c, good, tolerance="bf16-output").passed
    for factor, sign in ((1.01, "magnitude too large"), (0.99, "magnitude too small")):
        rep = pmqa.verify(c, good * np.float32(factor), tolerance="bf16-output")
        assert not rep.passed and rep.worst < 1, c.name
        assert rep.broken == f"bias ({sign})", str(rep)
        assert rep.bias["signs"] == sign and (rep.bias["scale"] > 0) == (factor > 1)
        assert rep.bias["cells"] > 0 and abs(rep.bias["scale"]) > rep.bias["limit"]
        assert rep.gates["bias"][1] == rep.counts["bias_regions"] >= 1
        whole = [g for g in rep.regions if g.gate == "bias" and g.over == "global"]
        assert whole and whole[0].bias_kind == "scale" and whole[0].sign == sign
        assert all(g.bias is None for g in rep.regions if g.gate != "bias")
        text = str(rep)
        assert f"broke: bias ({sign})" in text and "bias gate: all valid cells" in text
        assert rep.to_json()["bias"]["signs"] == sign


# ------------------------------------------------------------------ case files, and the CLI's defaults and text

def write_file(case, path, logits, **metadata):
    case.save(path, logits, metadata=metadata)
    return pmqa.read_case(path)


def test_file_metadata_sets_the_defaults(tmp_path, quick):
    c = quick["nan-codes-e4m3fn"]
    clamped = pmqa.reference(c, nan="relu-clamp", precision="fp64").astype(np.float32)
    f = write_file(c, tmp_path / "a.safetensors", clamped, tolerance="matrix-unit", nan="relu-clamp")
    assert f.metadata["tolerance"] == "matrix-unit" and f.source.endswith("a.safetensors")
    rep = pmqa.verify(f, f.logits)
    assert rep.passed and rep.tolerance == "matrix-unit" and rep.nan_rule == "relu-clamp"
    # The reproduce line is what the report recorded, not a second resolution.
    assert rep.reproduce.endswith(f"--contract {rep.contract} --tolerance matrix-unit --nan relu-clamp"), rep.reproduce
    forced = pmqa.verify(f, f.logits, nan="propagate")
    assert not forced.passed and forced.judging["nan"] == "propagate" and forced.judging["tolerance"] == "matrix-unit"
    assert forced.reproduce.endswith("--tolerance matrix-unit --nan propagate"), forced.reproduce
    # A file naming an unknown profile is never written: every reader would refuse it.
    with pytest.raises(pmqa.CaseFileError) as info:
        write_file(c, tmp_path / "b.safetensors", clamped, tolerance="fp16")
    assert info.value.field == "__metadata__.tolerance" and "b.safetensors" in info.value.file
    assert isinstance(info.value, pmqa.CaseError) and isinstance(info.value, ValueError)


def test_bad_files_are_case_file_errors(tmp_path):
    p = tmp_path / "junk.safetensors"
    p.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ")
    with pytest.raises(pmqa.CaseFileError) as info:
        pmqa.read_case(p)
    assert str(p) in str(info.value) and info.value.file == str(p)
    with pytest.raises(pmqa.CaseFileError):
        pmqa.read_case(tmp_path / "missing.safetensors")


@needs_cli
def test_report_text_and_json_are_the_clis(tmp_path, plain):
    """For a file, str(report) is what `pmqa verify FILE` prints under its verdict line, and
    to_json() is its --json report (the same reproduce line included)."""
    c = plain
    bad = correct_logits(c)
    r, _ = first_long_row(c)
    bad[r, :c.block_size] *= 1.5
    path = tmp_path / "bad dir" / "x.safetensors"
    path.parent.mkdir()
    f = write_file(c, path, bad)
    out = run_cli("verify", path, "--json", tmp_path / "v.json")
    assert out.returncode == 1, out.stdout
    printed = out.stdout.split("\n", 1)[1]
    printed = printed[:printed.index("pmqa verify: 1 file(s)")]
    rep = pmqa.verify(f, f.logits)
    assert str(rep) == printed
    cli = json.loads((tmp_path / "v.json").read_text())["results"][0]["report"]
    del cli["file"]
    assert rep.to_json() == cli


# ------------------------------------------------------------------ torch tensors (a stand-in torch: the logic, not torch)

class FakeDtype:
    def __init__(self, name, np_dtype):
        self.name, self.np = name, np.dtype(np_dtype)

    def __repr__(self):
        return "torch." + self.name


def as_bf16(t, logits, device="cuda:0"):
    """logits truncated to bfloat16, as a stand-in torch tensor on a device."""
    bits = (np.ascontiguousarray(logits).view(np.uint32) >> 16).astype(np.uint16)

    class Bf16(FakeTensor):
        def to(self, where):
            assert where is t.float32
            return FakeTensor((self.a.astype(np.uint32) << 16).view(np.float32), t.float32, self.device)

    return Bf16(bits, t.bfloat16, device)


class FakeTensor:
    """What pmqa touches: from_numpy, .to(device), .view(dtype), .as_strided, .detach, .cpu, .numpy."""

    def __init__(self, array, dtype, device="cpu"):
        self.a, self.dtype, self.device = array, dtype, device

    @property
    def shape(self):
        return self.a.shape

    def to(self, where):
        if isinstance(where, FakeDtype):  # a conversion of values
            return FakeTensor(self.a.astype(where.np), where, self.device)
        return FakeTensor(self.a.copy(), self.dtype, str(where))

    def view(self, dtype):
        return FakeTensor(self.a.view(dtype.np), dtype, self.device)

    def as_strided(self, size, stride):
        item = self.a.itemsize
        return FakeTensor(np.lib.stride_tricks.as_strided(self.a, size, [s * item for s in stride]), self.dtype,
                          self.device)

    def detach(self):
        return self

    def cpu(self):
        return FakeTensor(self.a, self.dtype, "cpu")

    def numpy(self):
        assert self.device == "cpu", "numpy() of a tensor on another device"
        return self.a


def fake_torch():
    t = types.ModuleType("torch")
    t.__version__ = "0-fake"
    t.Tensor = FakeTensor
    for name, np_dtype in (("uint8", np.uint8), ("int32", np.int32), ("float32", np.float32),
                           ("float16", np.float16), ("bfloat16", np.uint16), ("float8_e4m3fn", np.uint8),
                           ("float8_e4m3fnuz", np.uint8), ("float64", np.float64)):
        setattr(t, name, FakeDtype(name, np_dtype))
    t.from_numpy = lambda a: FakeTensor(a, {np.dtype(np.uint8): t.uint8, np.dtype(np.int32): t.int32,
                                            np.dtype(np.float32): t.float32}[a.dtype])
    return t


@pytest.fixture
def torch_standin(monkeypatch):
    t = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", t)
    return t


def test_inputs_as_tensors_on_a_device(torch_standin, quick):
    t = torch_standin
    fnuz = next(c for c in quick if c.fp8 == "e4m3fnuz")
    for case in (quick["edge-lengths-1d"], fnuz):
        on = case.to("cuda:1")
        q = on.q
        assert isinstance(q, FakeTensor) and q.device == "cuda:1"
        assert q.dtype is (t.float8_e4m3fn if case.fp8 == "e4m3fn" else t.float8_e4m3fnuz)
        assert np.array_equal(q.a, case.q), "the fp8 codes are relabelled, not converted"
        assert on.weights.device == "cuda:1" and on.weights.dtype is t.float32
        assert on.block_table.dtype is t.int32 and on.kv_cache.dtype is t.uint8
        blocks = on.kv_cache_blocks
        assert blocks.shape == (case.num_blocks, case.block_size, 1, case.head_dim + 4)
        assert np.array_equal(np.asarray(blocks.a), case.kv_cache_blocks)
    assert pmqa.cases("quick", device="cuda")[0].q.device == "cuda"


def test_tensor_logits_from_a_device(torch_standin, plain):
    t = torch_standin
    good = correct_logits(plain)
    tensor = FakeTensor(good, t.float32, "cuda:0")
    assert pmqa.verify(plain, tensor).passed
    bf16_bits = (good.view(np.uint32) >> 16).astype(np.uint16)  # a bf16 output, truncated

    class Bf16(FakeTensor):
        def to(self, where):
            assert where is t.float32
            return FakeTensor((self.a.astype(np.uint32) << 16).view(np.float32), t.float32, self.device)

    rep = pmqa.verify(plain, Bf16(bf16_bits, t.bfloat16, "cuda:0"), tolerance="bf16-output")
    assert rep.passed
    assert not pmqa.verify(plain, Bf16(bf16_bits, t.bfloat16, "cuda:0"), tolerance="fp32").passed
    with pytest.raises(TypeError, match="float64"):
        pmqa.verify(plain, FakeTensor(good.astype(np.float64), t.float64, "cuda:0"))


def test_without_torch_the_message_says_so(monkeypatch, plain):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(ImportError, match="torch tensors need torch"):
        plain.to("cuda").q
    assert pmqa.verify(plain, correct_logits(plain)).passed


def test_extension_missing_is_explained(tmp_path):
    """The plugin module imports without the extension (pytest loads it in every session of an
    environment pmqa is installed in); the API says where it looked and how to build it."""
    package = Path(pmqa.__file__).resolve().parent
    if list(package.glob("_core*")):
        pytest.skip("the extension sits beside the package (an installed pmqa)")
    env = dict(os.environ, PMQA_CORE_DIR=str(tmp_path), PYTHONPATH=child_pythonpath(package.parent))
    code = "import pmqa.pytest_plugin\nimport pmqa.cases\nimport pmqa\npmqa.cases('quick')"
    r = subprocess.run([sys.executable, "-c", code],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "pmqa._core" in r.stderr and f"PMQA_CORE_DIR={tmp_path}" in r.stderr and "pip install" in r.stderr


def test_pmqa_cases_is_the_case_file_package_and_the_suite():
    """One name, two uses: `import pmqa.cases` must not hide the suite call users make."""
    import pmqa.cases
    assert callable(pmqa.cases.read_case_file) and pmqa.cases.CaseFile is not None
    quick = pmqa.cases("quick")
    assert isinstance(quick, pmqa.CaseList) and len(quick) > 0
    assert pmqa.cases is sys.modules["pmqa.cases"]


def test_the_tolerance_follows_the_logits(torch_standin, plain):
    """bf16 logits are judged under the bf16 profile unless told otherwise; tensor_cores picks the
    matrix-unit one; the profile picked still fails a wrong page."""
    t = torch_standin
    good = correct_logits(plain)
    rep = pmqa.verify(plain, as_bf16(t, good))
    assert rep.passed and rep.tolerance == "bf16-output" and "bfloat16" in rep.tolerance_reason
    assert not pmqa.verify(plain, as_bf16(t, good), tolerance="fp32").passed
    assert pmqa.verify(plain, as_bf16(t, good), tensor_cores=True).tolerance == "matrix-unit-bf16"
    assert pmqa.verify(plain, good, tensor_cores=True).tolerance == "matrix-unit"
    assert pmqa.verify(plain, good).tolerance == "fp32"
    assert pmqa.judging_tolerance(plain, good, tensor_cores=False) == ("fp32", "tensor_cores=False")
    with pytest.raises(ValueError, match="not both"):
        pmqa.verify(plain, good, tolerance="fp32", tensor_cores=True)
    r, e = first_long_row(plain)
    bad = good.copy()
    bad[r, plain.block_size:min(e, 2 * plain.block_size)] *= 2  # one page doubled
    for logits in (as_bf16(t, bad), bad.astype(np.float16)):
        rep = pmqa.verify(plain, logits)
        assert rep.tolerance == "bf16-output" and not rep.passed


def test_the_reference_is_a_kernel_output(quick):
    """The first test a user writes: the oracle's own logits, as float32, pass."""
    for c in quick:
        ref = pmqa.reference(c)
        assert ref.dtype == np.float32
        assert pmqa.assert_matches(c, ref).passed, c.name
    oracle = pmqa.reference(quick["edge-lengths-1d"], dtype=np.float64)
    assert oracle.dtype == np.float64
    with pytest.raises(TypeError, match="float32 or float64"):
        pmqa.reference(quick["edge-lengths-1d"], dtype=np.float16)


def test_q_as_codes_where_torch_has_no_fp8_dtype(torch_standin, quick):
    t = torch_standin
    del t.float8_e4m3fn, t.float8_e4m3fnuz  # torch < 2.1, e.g. Debian's 1.13
    for c in (quick["edge-lengths-1d"], next(c for c in quick if c.fp8 == "e4m3fnuz")):
        since = "2.1" if c.fp8 == "e4m3fn" else "2.2"
        with pytest.warns(pmqa.Fp8CodesWarning, match=rf"torch >= {since} has it\).*format {c.fp8}"):
            q = c.to("cuda").q
        assert q.dtype is t.uint8 and np.array_equal(q.a, c.q)


@needs_cli
@pytest.mark.parametrize("output", ["float32", "bfloat16"])
def test_a_failure_leaves_what_reproduces_it(tmp_path, torch_standin, plain, output):
    """The failure message ends with one command; run as printed it gives the same verdict from the
    artifacts (the case with the kernel's logits, judged under the profile the test used)."""
    import shlex
    good = correct_logits(plain)
    r, e = first_long_row(plain)
    good[r, :e] *= 2
    logits = as_bf16(torch_standin, good) if output == "bfloat16" else good
    with pytest.raises(AssertionError) as failure:
        pmqa.assert_matches(plain, logits, artifacts=tmp_path / "art")
    lines = str(failure.value).strip().splitlines()
    assert lines[-1].startswith("reproduce: pmqa verify "), lines[-4:]
    command = shlex.split(lines[-1][len("reproduce: "):])
    saved = Path(command[-1])
    assert saved.parent == tmp_path / "art" and saved.with_suffix(".svg").is_file()
    ET.fromstring(saved.with_suffix(".svg").read_text())
    assert command[:2] == ["pmqa", "verify"]
    got = run_cli(*command[1:])  # the installed command is `pmqa`; here it is PMQA_BIN
    assert got.returncode == 1, got.stdout + got.stderr
    want = pmqa.verify(plain, logits)
    assert not want.passed and want.tolerance == ("bf16-output" if output == "bfloat16" else "fp32")
    assert f"tolerance {want.tolerance}," in got.stdout and f"tolerance {want.tolerance}," in str(failure.value)
    assert f"(broke: {want.broken})" in got.stdout and f"(broke: {want.broken})" in str(failure.value)
