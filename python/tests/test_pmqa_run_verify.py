"""pmqa_run end to end with the real `pmqa` binary: `pmqa gen --suite quick`, the runner with a numpy
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

HERE = Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent
PMQA = os.environ.get("PMQA_BIN", "")

_state = {}


def setUpModule():
    if not PMQA:
        raise unittest.SkipTest("PMQA_BIN is not set (ctest runs these as python.pmqa_run.verify.*)")
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
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PYTHON_DIR), str(HERE)]), PYTHONDONTWRITEBYTECODE="1")
    argv = [sys.executable, "-B", "-m", "pmqa_run", "--backend", "numpy", "--op", f"run_standins:{op}",
            "--convention", convention, "--cases", *(cases_ or [str(_state["quick"])]), "--out", str(out),
            "--tolerance", "fp32", *extra]
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


def verify(*paths):
    p = subprocess.run([PMQA, "verify", *map(str, paths)], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


class _Base(unittest.TestCase):
    def out(self, name):
        return _state["root"] / f"{self.__class__.__name__}.{name}"

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

    def fails_exactly(self, op, convention, bad, run_status=0, extra=()):
        """Runs op over the quick suite; verify must fail (exit 1) on exactly the files in bad."""
        out = self.out(op)
        status, text = run(op, convention, out, "--skip-unsupported", *extra)
        self.assertEqual(status, run_status, text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 1, vtext)
        failed = sorted(Path(line.split()[-1]).stem for line in vtext.splitlines()
                        if line.startswith("FAIL") and line.endswith(".safetensors"))  # verdict lines
        self.assertEqual(failed, sorted(bad), vtext)
        return vtext


class AiterFused(_Base):
    def test_follows_the_convention(self):
        out, text = self.passes("aiter_fused_ok", "aiter-fused", 30)
        self.assertIn("SKIP     lengths-2d", text)
        self.assertTrue((out / "shuffle-bs64-e4m3fnuz.safetensors").exists())

    def test_dense_output_rows_also_work(self):
        self.passes("aiter_fused_ok", "aiter-fused", 30, "--out-row-pad", "0")


class AiterStage1(_Base):
    def test_follows_the_convention(self):
        out, text = self.passes("aiter_stage1_ok", "aiter-stage1", 3)
        self.assertEqual(sorted(p.stem for p in out.glob("*.safetensors")),
                         ["block-size-1", "random-1001", "random-1002"])


class DeepGemm(_Base):
    def test_follows_the_convention(self):
        out, text = self.passes("deepgemm_ok", "deepgemm", 21)
        self.assertTrue((out / "lengths-2d.safetensors").exists())
        self.assertIn("SKIP     special-codes-e4m3fnuz", text)

    def test_clean_logits_under_the_clean_contract(self):
        self.passes("deepgemm_ok", "deepgemm", 21, "--op-kwarg", "clean_logits=True", "--contract", "clean")


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
        self.assertRegex(vtext, r"PASS [0-9.e+-]+ ms +deepseek-small")


class Planted(_Base):
    """Convention mistakes pmqa verify must catch (exit 1), on exactly the cases they matter for."""

    def test_1d_lengths_where_2d_are_due(self):
        self.fails_exactly("deepgemm_lens_as_1d", "deepgemm", self._lens_sensitive())

    def _lens_sensitive(self):
        """Cases where reading the [B, N] lengths through a [B] pointer shortens some row's E_r, leaving
        valid cells unwritten (a longer E_r only writes cells the valid-only contract does not check;
        next_n = 1 cases are immune: [B, 1] read as [B] is the same numbers)."""
        sys.path.insert(0, str(PYTHON_DIR))
        import numpy as np
        import pmqa_cases
        from pmqa_run.conventions import lens_2d_from_1d
        bad = []
        for path in sorted(_state["quick"].glob("*.safetensors")):
            cf = pmqa_cases.read_case_file(path)
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
        import pmqa_cases
        fnuz = [p.stem for p in sorted(_state["quick"].glob("*.safetensors"))
                if pmqa_cases.read_case_file(p).fp8_format == "e4m3fnuz"
                and pmqa_cases.read_case_file(p).kv_layout == "normal"
                and pmqa_cases.read_case_file(p).rows > 0]
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
        import pmqa_cases
        bad = []
        for path in sorted(_state["quick"].glob("*.safetensors")):
            cf = pmqa_cases.read_case_file(path)
            if cf.context_lens_2d or cf.rows < 2 or cf.max_model_len == 0:
                continue
            if (np.maximum(cf.valid_keys(), 0)[1:] > 0).any():
                bad.append(path.stem)
        return bad


class Refusals(_Base):
    """What a convention cannot express: exit 2 and a message naming the case, no output file."""

    def check(self, op, convention, name, reason):
        out = self.out(f"{op}.{name}")
        status, text = run(op, convention, out, cases_=cases(name))
        self.assertEqual(status, 2, text)
        self.assertIn(f"REFUSED  case {name} (", text)
        self.assertIn(reason, text)
        self.assertFalse((out / f"{name}.safetensors").exists())

    def test_shuffle_case_to_eager(self):
        self.check("eager_ok", "eager", "shuffle-bs16-e4m3fn", "cache is SHUFFLE")

    def test_shuffle_case_to_deepgemm(self):
        self.check("deepgemm_ok", "deepgemm", "shuffle-bs64-e4m3fn", "cache is SHUFFLE")

    def test_fnuz_case_to_deepgemm(self):
        self.check("deepgemm_ok", "deepgemm", "special-codes-e4m3fnuz", "float8_e4m3fn (OCP) only")

    def test_2d_lengths_to_aiter(self):
        self.check("aiter_fused_ok", "aiter-fused", "lengths-2d", "2-D context_lens")
        self.check("aiter_stage1_ok", "aiter-stage1", "lengths-2d", "block_size 16")

    def test_block_size_to_aiter_stage1(self):
        self.check("aiter_stage1_ok", "aiter-stage1", "deepseek-small", "has no block-size parameter")

    def test_whole_suite_without_skip(self):
        out = self.out("suite")
        status, text = run("eager_ok", "eager", out)
        self.assertEqual(status, 2, text)
        self.assertIn("28 written, 0 failed, 4 refused", text)
        vstatus, vtext = verify(out)
        self.assertEqual(vstatus, 0, vtext)


def aiter_fused_via_eager(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
                          Preshuffle=False, KVBlockSize=1, ChunkK=256):
    """aiter-fused on the torch backend: pmqa_run.eager_torch's logits copied into the caller's buffer."""
    from pmqa_run.eager_torch import fp8_paged_mqa_logits
    assert not Preshuffle and kv_cache.shape[1] == KVBlockSize
    out_logits[...] = fp8_paged_mqa_logits(q_fp8, kv_cache, weights, context_lens, block_table, max_model_len)


class FakeTorch(_Base):
    """The torch code path -- TorchBackend, the conventions on it, pmqa_run.eager_torch -- on
    run_fake_torch (numpy underneath) when torch is absent: its logic, judged by pmqa verify."""

    def run_in_process(self, op, convention, out, *extra):
        import contextlib
        import io
        import run_fake_torch
        sys.path.insert(0, str(PYTHON_DIR))
        from pmqa_run import main
        fresh = ("torch", "pmqa_run.torch_backend", "pmqa_run.eager_torch")
        saved = {m: sys.modules.pop(m) for m in fresh if m in sys.modules}
        sys.modules["torch"] = run_fake_torch.as_module()
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                status = main(["--backend", "torch", "--device", "cpu", "--op", op, "--convention", convention,
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
        status, text = self.run_in_process("pmqa_run.eager_torch:fp8_paged_mqa_logits", "eager", out,
                                           "--bench", "--iters", "1", "--warmup", "0")
        self.assertEqual(status, 0, text)
        self.assertIn("torch 0.0-fake", text)
        self.assertIn("28 written, 0 failed, 0 refused, 4 skipped", text)
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
        self.assertIn("26 passed, 0 failed, 0 invalid", vtext)


if __name__ == "__main__":
    unittest.main()
