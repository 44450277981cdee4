"""pmqa-run end to end with the real `pmqa` binary: `pmqa gen --suite quick`, the runner with a numpy
stand-in op, then `pmqa verify` on what it wrote.

* per convention, a stand-in that follows it exactly passes verify (exit 0);
* stand-ins with a planted convention mistake fail it (exit 1), on exactly the cases the mistake
  matters for: 1-D lengths where 2-D are due, the wrong fp8 format, a NORMAL read of a SHUFFLE cache,
  ignoring the cache's block stride, ignoring the output's row stride;
* cases a convention cannot express are refused (exit 2) with a message naming the case.

The binary comes from PMQA_BIN (CTest passes $<TARGET_FILE:pmqa>); without it these tests skip.
Each run is a subprocess with /usr/bin/python3-style isolation: the same interpreter as the tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from child_env import child_pythonpath  # python/tests

HERE = Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent
SRC_DIR = PYTHON_DIR / "src"  # the folder holding the pmqa package
PMQA = os.environ.get("PMQA_BIN", "")

_state = {}


def setUpModule():
    if not PMQA:
        raise unittest.SkipTest("PMQA_BIN is not set (ctest runs these as python.pmqa.run.verify.*)")
    if not os.access(PMQA, os.X_OK):
        raise RuntimeError(f"PMQA_BIN={PMQA} is not an executable")
    tmp = tempfile.TemporaryDirectory(prefix="pmqa_run_verify.")
    _state["tmp"] = tmp
    root = Path(tmp.name)
    quick = root / "quick"
    gen = subprocess.run([PMQA, "gen", "--suite", "quick", "--out", str(quick)], capture_output=True, text=True)
    if gen.returncode != 0:
        raise RuntimeError(f"pmqa gen failed ({gen.returncode}):\n{gen.stdout}\n{gen.stderr}")
    _state["root"], _state["quick"] = root, quick


def tearDownModule():
    if "tmp" in _state:
        _state["tmp"].cleanup()


def cases(*names):
    return [str(_state["quick"] / f"{n}.safetensors") for n in names]


def run(op, convention, out, *extra, cases_=None):
    env = dict(os.environ, PYTHONPATH=child_pythonpath(SRC_DIR, HERE), PYTHONDONTWRITEBYTECODE="1")
    argv = [sys.executable, "-B", "-m", "pmqa.run", "--backend", "numpy", "--op", f"run_standins:{op}",
            "--convention", convention, "--cases", *(cases_ or [str(_state["quick"])]), "--out", str(out),
            "--tolerance", "fp32", *extra]
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


def verify(*args):
    p = subprocess.run([PMQA, "verify", *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


class _Base(unittest.TestCase):
    def out(self, name):
        return _state["root"] / f"{self.__class__.__name__}.{name}"

    def overlay(self, convention, limit_id, platform=None):
        """An overlay file dropping one limit (what a user writes for a drop that lifted it)."""
        import json
        drop = [{"id": limit_id, "drop": True, "reason": "the test lifts it"}]
        doc = {"schema": "pmqa-envelope-overlay/1", "convention": convention, "calls": "test", "sources": "test"}
        if platform:
            doc["platforms"] = {platform: {"limits": drop}}
        else:
            doc["limits"] = drop
        path = _state["root"] / f"drop-{convention}-{limit_id}.json"
        path.write_text(json.dumps(doc))
        return path

    def passes(self, op, convention, at_least, *extra):
        out = self.out(op)
        status, text = run(op, convention, out, "--skip-unsupported", *extra)
        self.assertEqual(status, 0, text)
        files = sorted(out.glob("*.safetensors"))
        self.assertGreaterEqual(len(files), at_least, text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 0, vtext)
        self.assertIn(f"{len(files)} passed, 0 failed, 0 invalid", vtext)
        return out, text

    def fails_exactly(self, op, convention, bad, run_status=0, extra=(), cases_=None):
        """Runs op over the quick suite (the convention's own limits: --platform none); verify must fail
        (exit 1) on exactly the files in bad."""
        out = self.out(op)
        status, text = run(op, convention, out, "--skip-unsupported", *extra, cases_=cases_)
        self.assertEqual(status, run_status, text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 1, vtext)
        failed = sorted(Path(line.split()[-1]).stem for line in vtext.splitlines()
                        if line.startswith("FAIL") and line.endswith(".safetensors"))  # verdict lines
        self.assertEqual(failed, sorted(bad), vtext)
        return vtext


class AiterFused(_Base):
    def test_follows_the_convention(self):
        out, text = self.passes("aiter_fused_ok", "aiter-fused", 28, "--platform", "rocm")
        self.assertIn("SKIP     lengths-2d", text)
        self.assertIn("SKIP     empty-batch", text)
        self.assertTrue((out / "shuffle-bs64-e4m3fnuz.safetensors").exists())

    def test_dense_output_rows_also_work(self):
        self.passes("aiter_fused_ok", "aiter-fused", 28, "--out-row-pad", "0", "--platform", "rocm")

    def test_the_triton_kernel_on_cuda(self):
        out, text = self.passes("aiter_fused_triton", "aiter-fused", 12, "--platform", "cuda")
        self.assertFalse((out / "shuffle-bs64-e4m3fn.safetensors").exists())
        self.assertIn("unsupported by limit: fp8-format 9, layout 2, lengths-1d 2, empty-batch 1", text)
        self.assertTrue((out / "one-head.safetensors").exists())  # 1 head is a power of two


class AiterStage1(_Base):
    def test_follows_the_convention(self):
        # any block size, ChunkQ = heads: every NORMAL case with 1-D lengths runs
        out, text = self.passes("aiter_stage1_ok", "aiter-stage1", 20, "--platform", "rocm")
        for name in ("block-size-1", "block-size-256", "deepseek-small", "one-head", "heads-128"):
            self.assertTrue((out / f"{name}.safetensors").exists(), name)

    def test_its_default_chunk_q_divides_by_zero_below_64_heads(self):
        out = self.out("chunk-q")
        status, text = run("aiter_stage1_ok", "aiter-stage1", out, "--platform", "rocm", "--op-kwarg", "ChunkQ=64",
                           "--skip-unsupported", cases_=cases("one-head", "deepseek-small"))
        self.assertEqual(status, 0, text)
        self.assertIn("SKIP     one-head", text)
        self.assertIn("limit chunk-q: heads_mod_chunk_q is 1, not 0", text)
        # without the envelope's limit the op raises as AITER's does
        status, text = run("aiter_stage1_ok", "aiter-stage1", out, "--platform", "rocm", "--op-kwarg", "ChunkQ=64",
                           "--envelope", str(self.overlay("aiter-stage1", "chunk-q")), cases_=cases("one-head"))
        self.assertEqual(status, 1, text)
        self.assertIn("ZeroDivisionError", text)


class DeepGemm(_Base):
    def test_follows_the_convention(self):
        out, text = self.passes("deepgemm_ok", "deepgemm", 4, "--platform", "cuda")
        self.assertTrue((out / "deepseek-small.safetensors").exists())
        self.assertIn("SKIP     special-codes-e4m3fnuz", text)
        self.assertIn("SKIP     lengths-2d", text)

    def test_clean_logits_under_the_clean_contract(self):
        self.passes("deepgemm_ok", "deepgemm", 4, "--op-kwarg", "clean_logits=True", "--contract", "clean",
                    "--platform", "cuda")

    def test_falling_lengths_are_cells_never_written(self):
        """With the lengths-fall limit dropped, DeepGEMM's unwritten cells past context_lens[b][N-1] are
        reported as never written, not as a race, and pmqa verify fails them."""
        sys.path.insert(0, str(SRC_DIR))
        import numpy as np
        import pmqa.cases
        src = pmqa.cases.read_case_file(_state["quick"] / "deepseek-small.safetensors")
        L = [int(x) for x in src.context_lens]  # what each sequence's pages hold
        lens = np.array([[L[0], L[0] // 2], [L[1] - 10, L[1]], [40, 0], [L[3], L[3]]], dtype=np.int32)
        falling = pmqa.cases.CaseFile(q=src.q, kv_cache=src.kv_cache, weights=src.weights, context_lens=lens,
                                      block_table=src.block_table, block_size=src.block_size,
                                      max_model_len=src.max_model_len, name="falling", suite="test", seed=1,
                                      producer="test")
        pmqa.cases.validate(falling)
        path = _state["root"] / "falling.safetensors"
        pmqa.cases.write_case_file(path, falling)
        out = self.out("falling")
        status, text = run("deepgemm_ok", "deepgemm", out, "--platform", "cuda", cases_=[str(path)])
        self.assertEqual(status, 2, text)
        self.assertIn("limit lengths-fall: last_row_longest is false", text)
        status, text = run("deepgemm_ok", "deepgemm", out, "--platform", "cuda", "--bench", "--iters", "1",
                           "--warmup", "0", "--envelope", str(self.overlay("deepgemm", "lengths-fall", "cuda")),
                           cases_=[str(path)])
        self.assertEqual(status, 1, text)
        self.assertIn("all never written by the op", text)
        self.assertIn(f"first at row 0 (E_r = {L[0]}), which the op wrote only up to column {L[0] // 2}", text)
        self.assertNotIn("a race", text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 1, vtext)


class Eager(_Base):
    def test_follows_the_convention(self):
        self.passes("eager_ok", "eager", 28)

    def test_bench_time_shows_beside_the_verdict(self):
        out = self.out("bench")
        status, text = run("eager_ok", "eager", out, "--bench", "--iters", "3", "--warmup", "1",
                           cases_=cases("deepseek-small"))
        self.assertEqual(status, 0, text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 0, vtext)
        # the kernel time the speed gate judges, the wall time beside it
        self.assertRegex(vtext, r"PASS [0-9.e+-]+ ms kernels, [0-9.e+-]+ ms wall +deepseek-small")


class Planted(_Base):
    """Convention mistakes pmqa verify must catch (exit 1), on exactly the cases they matter for."""

    def test_1d_lengths_where_2d_are_due(self):
        import pmqa.cases
        ocp_normal = [str(p) for p in sorted(_state["quick"].glob("*.safetensors"))
                      if pmqa.cases.read_case_file(p).fp8_format == "e4m3fn"
                      and pmqa.cases.read_case_file(p).kv_layout == "normal"]
        self.fails_exactly("deepgemm_lens_as_1d", "deepgemm", self._lens_sensitive(), cases_=ocp_normal)

    def _lens_sensitive(self):
        """Cases where reading the [B, N] lengths through a [B] pointer shortens some row's E_r, leaving
        valid cells unwritten (a longer E_r only writes cells the valid-only contract does not check;
        next_n = 1 cases are immune: [B, 1] read as [B] is the same numbers)."""
        sys.path.insert(0, str(SRC_DIR))
        import numpy as np
        import pmqa.cases
        from pmqa.run.conventions import lens_2d_from_1d
        bad = []
        for path in sorted(_state["quick"].glob("*.safetensors")):
            cf = pmqa.cases.read_case_file(path)
            if cf.fp8_format != "e4m3fn" or cf.kv_layout != "normal" or cf.rows == 0:
                continue
            lens2 = cf.context_lens if cf.context_lens_2d else lens_2d_from_1d(cf.context_lens, cf.next_n)
            misread = lens2.reshape(-1)[:cf.batch].astype(np.int64)
            e_wrong = misread[:, None] - cf.next_n + np.arange(cf.next_n)[None, :] + 1
            if (np.maximum(e_wrong, 0).reshape(-1) < np.maximum(cf.valid_keys(), 0)).any():
                bad.append(path.stem)
        self.assertGreaterEqual(len(bad), 5)
        return bad

    def test_wrong_fp8_format(self):
        import pmqa.cases
        fnuz = [p.stem for p in sorted(_state["quick"].glob("*.safetensors"))
                if pmqa.cases.read_case_file(p).fp8_format == "e4m3fnuz"
                and pmqa.cases.read_case_file(p).kv_layout == "normal"
                and pmqa.cases.read_case_file(p).rows > 0]
        self.assertGreaterEqual(len(fnuz), 5)
        self.fails_exactly("eager_always_e4m3fn", "eager", fnuz)

    def test_normal_read_of_a_shuffle_cache(self):
        self.fails_exactly("aiter_fused_reads_normal", "aiter-fused",
                           ["shuffle-bs16-e4m3fn", "shuffle-bs16-e4m3fnuz", "shuffle-bs64-e4m3fn",
                            "shuffle-bs64-e4m3fnuz"])

    def test_ignoring_the_cache_block_stride(self):
        self.fails_exactly("eager_dense_kv_stride", "eager", ["padded-stride"])

    def test_ignoring_the_output_row_stride(self):
        text = self.fails_exactly("aiter_fused_dense_out", "aiter-fused",
                                  self._rows_misplaced(), run_status=1)
        self.assertIn("FAIL", text)

    def _rows_misplaced(self):
        """Every case with a row past the first holding a valid key lands rows in the wrong place."""
        import numpy as np
        import pmqa.cases
        bad = []
        for path in sorted(_state["quick"].glob("*.safetensors")):
            cf = pmqa.cases.read_case_file(path)
            if cf.context_lens_2d or cf.rows < 2 or cf.max_model_len == 0:
                continue
            if (np.maximum(cf.valid_keys(), 0)[1:] > 0).any():
                bad.append(path.stem)
        return bad


class Refusals(_Base):
    """Cases outside the envelope: exit 2 and a message naming the case and the limit, no output file."""

    def check(self, op, convention, name, reason, platform="cuda"):
        out = self.out(f"{op}.{name}")
        status, text = run(op, convention, out, "--platform", platform, cases_=cases(name))
        self.assertEqual(status, 2, text)
        self.assertIn(f"UNSUPPORTED case {name} (", text)
        self.assertIn(reason, text)
        self.assertFalse((out / f"{name}.safetensors").exists())

    def test_shuffle_case_to_eager(self):
        self.check("eager_ok", "eager", "shuffle-bs16-e4m3fn", "limit layout: kv_layout is shuffle")

    def test_shuffle_case_to_deepgemm(self):
        self.check("deepgemm_ok", "deepgemm", "shuffle-bs64-e4m3fn", "limit layout: kv_layout is shuffle")

    def test_fnuz_case_to_deepgemm(self):
        self.check("deepgemm_ok", "deepgemm", "mma-special-codes-e4m3fnuz", "limit fp8-format: value_format is e4m3fnuz")

    def test_fnuz_and_shuffle_to_aiter_on_cuda(self):
        self.check("aiter_fused_triton", "aiter-fused", "special-codes-e4m3fnuz", "fp8e4b8 not supported")
        self.check("aiter_fused_triton", "aiter-fused", "shuffle-bs64-e4m3fn", "the Gluon kernel")

    def test_2d_lengths_to_aiter(self):
        self.check("aiter_fused_ok", "aiter-fused", "lengths-2d", "limit lengths-1d", platform="rocm")
        self.check("aiter_stage1_ok", "aiter-stage1", "lengths-2d", "limit lengths-1d", platform="rocm")

    def test_deepgemm_on_rocm(self):
        self.check("deepgemm_ok", "deepgemm", "deepseek-small", "does not run there", platform="rocm")

    def test_whole_suite_without_skip(self):
        out = self.out("suite")
        status, text = run("eager_ok", "eager", out)
        self.assertEqual(status, 2, text)
        self.assertIn("28 written, 0 failed, 4 unsupported (refused)", text)
        self.assertIn("unsupported by limit: layout 4", text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 0, vtext)


class LogitsOnly(_Base):
    """--logits-only files hold the logits and the input's name and sha256; pmqa verify --cases judges
    them, and an input that is not the one the run read is invalid (exit 2)."""

    def test_verified_against_the_inputs_they_name(self):
        import shutil
        sys.path.insert(0, str(SRC_DIR))
        import pmqa.cases
        out = self.out("eager")
        status, text = run("eager_ok", "eager", out, "--skip-unsupported", "--logits-only")
        self.assertEqual(status, 0, text)
        files = sorted(out.glob("*.safetensors"))
        self.assertEqual(len(files), 28)
        for f in files:
            self.assertTrue(pmqa.cases.is_logits_file(f))
            lf = pmqa.cases.read_logits_file(f)
            self.assertEqual(lf.input_sha256, pmqa.cases.sha256_file(_state["quick"] / f.name))
            self.assertLess(f.stat().st_size, (_state["quick"] / f.name).stat().st_size)
        vstatus, vtext = verify(out, "--cases", _state["quick"])
        self.assertEqual(vstatus, 0, vtext)
        self.assertIn("28 passed, 0 failed, 0 invalid", vtext)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 2, vtext)
        self.assertIn("holds logits only", vtext)
        # One input changed after the run: that file is invalid input, the others still pass.
        changed = _state["root"] / "changed-cases"
        shutil.copytree(_state["quick"], changed)
        cf = pmqa.cases.read_case_file(changed / "padded-stride.safetensors")
        cf.weights[0, 0] *= 2
        pmqa.cases.write_case_file(changed / "padded-stride.safetensors", cf)
        vstatus, vtext = verify(out, "--cases", changed)
        self.assertEqual(vstatus, 2, vtext)
        self.assertIn("27 passed, 0 failed, 1 invalid", vtext)
        self.assertRegex(vtext, r"ERROR .*padded-stride.safetensors: __metadata__.input_sha256: the run read an input "
                                r"with sha256 [0-9a-f]{64}, but .* has [0-9a-f]{64}")

    def test_a_wrong_output_still_fails(self):
        out = self.out("wrong")
        status, text = run("eager_always_e4m3fn", "eager", out, "--skip-unsupported", "--logits-only",
                           cases_=cases("fnuz-max-224", "one-head"))
        self.assertEqual(status, 0, text)
        vstatus, vtext = verify(out, "--cases", _state["quick"])
        self.assertEqual(vstatus, 1, vtext)
        self.assertIn("FAIL", vtext)
        self.assertIn("--cases", vtext)  # the reproduce command finds the inputs too


class JUnit(_Base):
    def test_unsupported_cases_are_skipped_testcases(self):
        import xml.etree.ElementTree as ET
        out = self.out("eager")
        report = _state["root"] / "pmqa.run.junit.xml"
        status, text = run("eager_ok", "eager", out, "--skip-unsupported", "--junit", str(report))
        self.assertEqual(status, 0, text)
        root = ET.parse(report).getroot()
        suite = root.find("testsuite")
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("skipped")), ("32", "0", "4"))
        skipped = [tc for tc in suite.iter("testcase") if tc.find("skipped") is not None]
        self.assertEqual(sorted(tc.get("name") for tc in skipped),
                         ["shuffle-bs16-e4m3fn", "shuffle-bs16-e4m3fnuz", "shuffle-bs64-e4m3fn", "shuffle-bs64-e4m3fnuz"])
        self.assertTrue(all("limit layout" in tc.find("skipped").get("message") for tc in skipped))
        status, text = run("raises", "eager", self.out("raises"), "--skip-unsupported", "--junit", str(report),
                           cases_=cases("one-head"))
        self.assertEqual(status, 1, text)
        tc = ET.parse(report).getroot().find("testsuite").find("testcase")
        self.assertIn("planted failure", tc.find("failure").get("message"))


# The library stand-ins (run_standins) on the standard suite, on the platform each models: with
# --skip-unsupported every convention exits 0, the refusals are counted per limit, and what ran
# passes pmqa verify. The written counts are the corpus's (../shared/realworld: how many standard
# cases each real library produced on the H200), less DeepGEMM's random-2141, whose lengths fall.
STANDARD_RUNS = (
    ("aiter_fused_triton", "aiter-fused", "cuda", (), 36, "fp8-format"),
    ("aiter_fused_ok", "aiter-fused", "rocm", (), None, "lengths-1d"),
    ("aiter_stage1_triton", "aiter-stage1", "cuda", (), 36, "fp8-format"),
    ("aiter_stage1_ok", "aiter-stage1", "rocm", (), None, "layout"),
    ("deepgemm_ok", "deepgemm", "cuda", (), 7, "block-size"),
    ("eager_ok", "eager", "cuda", (), 122, "layout"),
    ("vllm_eager", "eager", "cuda", ("--envelope", "overlays/vllm-eager.json"), 97, "vllm-eager-last-block"),
)


class StandardSuite(_Base):
    @classmethod
    def setUpClass(cls):
        std = _state["root"] / "standard"
        if not std.exists():
            gen = subprocess.run([PMQA, "gen", "--suite", "standard", "--out", str(std)], capture_output=True, text=True)
            if gen.returncode != 0:
                raise RuntimeError(gen.stdout + gen.stderr)
        _state["standard"] = std

    def run_standard(self, op, convention, platform, extra, written, limit):
        envelopes = PYTHON_DIR.parent / "cases" / "data" / "envelopes"
        extra = tuple(str(envelopes / x) if x.endswith(".json") else x for x in extra)
        out = self.out(f"{op}.{platform}")
        status, text = run(op, convention, out, "--skip-unsupported", "--platform", platform, "--logits-only", *extra,
                           cases_=[str(_state["standard"])])
        self.assertEqual(status, 0, text)
        summary = [line for line in text.splitlines() if line.startswith("pmqa-run: 187 case(s)")]
        self.assertEqual(len(summary), 1, text)
        n_written = len(list(out.glob("*.safetensors")))
        if written is not None:
            self.assertEqual(n_written, written, summary[0])
        self.assertIn(f"{n_written} written, 0 failed, {187 - n_written} unsupported (skipped), 0 invalid", summary[0])
        by_limit = [line for line in text.splitlines() if line.startswith("pmqa-run: unsupported by limit: ")]
        self.assertEqual(len(by_limit), 1, text)
        counts = dict(item.rsplit(" ", 1) for item in by_limit[0].split(": ", 2)[2].split(", "))
        self.assertEqual(sum(int(v) for v in counts.values()), 187 - n_written, by_limit[0])
        self.assertIn(limit, counts)
        vstatus, vtext = verify(out, "--cases", _state["standard"])
        self.assertEqual(vstatus, 0, vtext[-3000:])
        return out, text

    def test_every_convention_exits_0_with_its_refusals_counted(self):
        for op, convention, platform, extra, written, limit in STANDARD_RUNS:
            with self.subTest(op=op, platform=platform):
                self.run_standard(op, convention, platform, extra, written, limit)

    def test_without_the_envelope_the_libraries_raise(self):
        """The stand-ins raise as the libraries do outside their limits: what the envelope spares the run."""
        for op, convention, needle in (("aiter_fused_triton", "aiter-fused", "fp8e4b8 not supported"),
                                       ("aiter_stage1_ok", "aiter-stage1", "ZeroDivisionError"),
                                       ("deepgemm_ok", "deepgemm", "Assertion error (csrc/apis/attention.hpp): block_kv == 64"),
                                       ("vllm_eager", "eager", "The expanded size of the tensor")):
            with self.subTest(op=op):
                extra = (("--op-kwarg", "ChunkQ=64", "--envelope", str(self.overlay("aiter-stage1", "chunk-q")))
                         if convention == "aiter-stage1" else ())
                status, text = run(op, convention, self.out(f"{op}.none"), "--skip-unsupported", "--platform", "none",
                                   "--logits-only", *extra, cases_=[str(_state["standard"])])
                self.assertEqual(status, 1, text[-2000:])
                self.assertIn(needle, text)


class FittedSuites(_Base):
    """`pmqa gen --suite standard --fit CONVENTION` and this package's envelope agree: what C++ keeps
    of the suite is exactly what Python finds inside, every fitted case runs through the library
    stand-in without a refusal, and pmqa verify passes them."""

    def test_fitted_standard_suites_run_whole(self):
        sys.path.insert(0, str(SRC_DIR))
        import pmqa.cases
        from pmqa.cases.envelope import make_envelope, read_envelope_file, traits_of
        StandardSuite.setUpClass()
        standard = {p.stem: pmqa.cases.read_case_file(p) for p in _state["standard"].glob("*.safetensors")}
        envelopes = PYTHON_DIR.parent / "cases" / "data" / "envelopes"
        for op, convention, platform, extra, _, _ in STANDARD_RUNS:
            with self.subTest(op=op, platform=platform):
                overlays = [str(envelopes / x) for x in extra if x.endswith(".json")]
                fit_args = ["--fit", convention, "--platform", platform] + [a for o in overlays for a in ("--envelope", o)]
                listing = subprocess.run([PMQA, "gen", "--list", "--suite", "standard", *fit_args], capture_output=True,
                                         text=True)
                self.assertEqual(listing.returncode, 0, listing.stderr)
                names = [line.split()[0] for line in listing.stdout.splitlines()[3:] if line.strip()]
                kept = {n for n in names if not n.startswith("fit-")}
                e = make_envelope(convention, platform, [read_envelope_file(o) for o in overlays])
                chunk = CONVENTIONS_CHUNK.get(convention)
                inside = {n for n, cf in standard.items()
                          if e.refusal(traits_of(cf, cf.heads if chunk else None)) is None}
                self.assertEqual(kept, inside)
                cases_dir = _state["root"] / f"fit-{op}-{platform}"
                gen = subprocess.run([PMQA, "gen", "--suite", "standard", "--out", str(cases_dir), *fit_args],
                                     capture_output=True, text=True)
                self.assertEqual(gen.returncode, 0, gen.stdout + gen.stderr)
                self.assertGreaterEqual(len(names), 150)
                out = self.out(f"fit.{op}.{platform}")
                status, text = run(op, convention, out, "--platform", platform, "--logits-only",
                                   *[a for o in overlays for a in ("--envelope", o)], cases_=[str(cases_dir)])
                self.assertEqual(status, 0, text[-3000:])
                self.assertIn(f"{len(names)} written, 0 failed, 0 unsupported", text)
                vstatus, vtext = verify(out, "--cases", cases_dir)
                self.assertEqual(vstatus, 0, vtext[-3000:])


CONVENTIONS_CHUNK = {"aiter-stage1": True}  # the conventions that pass ChunkQ (= heads)


def aiter_fused_via_eager(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
                          Preshuffle=False, KVBlockSize=1, ChunkK=256):
    """aiter-fused on the torch backend: eager_torch_op's logits copied into the caller's buffer."""
    from eager_torch_op import fp8_paged_mqa_logits
    assert not Preshuffle and kv_cache.shape[1] == KVBlockSize
    out_logits[...] = fp8_paged_mqa_logits(q_fp8, kv_cache, weights, context_lens, block_table, max_model_len)


class FakeTorch(_Base):
    """The torch code path -- TorchBackend, the conventions on it, eager_torch_op -- on
    run_fake_torch (numpy underneath) when torch is absent: its logic, judged by pmqa verify."""

    def run_in_process(self, op, convention, out, *extra):
        import contextlib
        import io
        import run_fake_torch
        sys.path.insert(0, str(SRC_DIR))
        from pmqa.run import main
        fresh = ("torch", "pmqa.run.torch_backend", "eager_torch_op")
        saved = {m: sys.modules.pop(m) for m in fresh if m in sys.modules}
        sys.modules["torch"] = run_fake_torch.as_module()
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                status = main(["--backend", "torch", "--device", "cpu", "--in-process", "--op", op, "--convention", convention,
                               "--cases", str(_state["quick"]), "--out", str(out), "--skip-unsupported",
                               "--tolerance", "fp32", *extra])
        finally:
            for m in fresh:
                sys.modules.pop(m, None)
            sys.modules.update(saved)
        return status, buf.getvalue()

    def setUp(self):
        try:
            import torch  # noqa: F401
            self.skipTest("real torch is installed: test_pmqa_run_torch.py covers this path")
        except ImportError:
            pass

    def test_eager_torch_through_the_eager_convention(self):
        out = self.out("eager")
        status, text = self.run_in_process("eager_torch_op:fp8_paged_mqa_logits", "eager", out,
                                           "--bench", "--iters", "1", "--warmup", "0")
        self.assertEqual(status, 0, text)
        self.assertIn("torch 0.0-fake", text)
        self.assertIn("28 written, 0 failed, 4 unsupported (skipped)", text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 0, vtext)
        self.assertIn("28 passed, 0 failed, 0 invalid", vtext)

    def test_guarded_buffers_on_the_torch_backend(self):
        out = self.out("fused")
        # The op computes as the eager op does (NaN propagates), so that is the behaviour recorded.
        status, text = self.run_in_process("test_pmqa_run_verify:aiter_fused_via_eager", "aiter-fused", out,
                                           "--case", "*", "--out-row-pad", "5", "--nan", "propagate")
        # SHUFFLE cases make the op's assert fire (exit 1); every other case must pass verify
        self.assertEqual(status, 1, text)
        self.assertEqual(text.count("FAIL     case shuffle-"), 4, text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 0, vtext)
        self.assertIn("25 passed, 0 failed, 0 invalid", vtext)  # empty-batch: outside aiter-fused's envelope


if __name__ == "__main__":
    unittest.main()
