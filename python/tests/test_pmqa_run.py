"""pmqa-run without torch and without the pmqa binary: backends, conventions, the runner's exit codes.

The stand-in ops and the fp8 decode they use live in run_standins.py (written from the spec).
Tests that judge outputs with the real `pmqa verify` are in test_pmqa_run_verify.py.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import pmqa.cases  # noqa: E402
import run_standins as si  # noqa: E402
from pmqa.run import SENTINEL_BITS, Fp8Tensor, NumpyBackend, main  # noqa: E402
from pmqa.run.conventions import CONVENTIONS, GuardedBuffer, OpOutputError, RunOptions, check_output  # noqa: E402
from pmqa.run.conventions import lens_2d_from_1d  # noqa: E402


def run_main(argv):
    """main(argv) in-process: (exit status, stdout + stderr)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        status = main(argv)
    return status, buf.getvalue()


class Fp8Decode(unittest.TestCase):
    """The stand-ins' decode (spec §3), checked on the table's named codes."""

    def test_named_codes(self):
        fn, fnuz = si.DECODE["e4m3fn"], si.DECODE["e4m3fnuz"]
        self.assertEqual(fn[0x7E], 448.0)
        self.assertEqual(fnuz[0x7F], 240.0)
        self.assertTrue(np.isnan(fn[0x7F]) and np.isnan(fn[0xFF]) and not np.isnan(fnuz[0xFF]))
        self.assertTrue(np.isnan(fnuz[0x80]))
        self.assertEqual(fn[0x80], 0.0)
        self.assertTrue(np.signbit(fn[0x80]))
        self.assertEqual(fn[0x01], 2.0 ** -9)
        self.assertEqual(fnuz[0x01], 2.0 ** -10)
        self.assertEqual(fn[0x38], 1.0)
        for code in range(256):
            if code not in (0x7F, 0xFF, 0x80):
                self.assertEqual(fnuz[code], fn[code] / 2, hex(code))


class Backend(unittest.TestCase):
    def test_kv_view_honours_a_padded_stride(self):
        cf = si.make_case(pad=24)
        b = NumpyBackend()
        kv = b.kv_view(cf.kv_cache, cf.block_size, cf.head_dim)
        row = cf.head_dim + 4
        self.assertEqual(kv.shape, (cf.num_blocks, cf.block_size, 1, row))
        self.assertEqual(kv.strides, (cf.block_stride, row, row, 1))
        self.assertFalse(kv.flags.writeable)
        for p in range(cf.num_blocks):
            self.assertEqual(kv[p].reshape(-1).tobytes(), cf.kv_cache[p, :cf.block_size * row].tobytes())

    def test_q_is_labelled_not_converted(self):
        cf = si.make_case(fmt="e4m3fnuz")
        q = NumpyBackend().fp8(cf.q, cf.fp8_format)
        self.assertIsInstance(q, Fp8Tensor)
        self.assertEqual(q.format, "e4m3fnuz")
        self.assertEqual(q.dtype_name, "float8_e4m3fnuz")
        self.assertEqual(q.codes.tobytes(), cf.q.tobytes())

    def test_to_numpy_keeps_bits(self):
        b = NumpyBackend()
        a = b.full_bits((2, 3), SENTINEL_BITS)
        self.assertTrue((b.to_numpy(a).view(np.uint32) == SENTINEL_BITS).all())
        with self.assertRaises(TypeError):
            b.to_numpy(np.zeros((1, 1), dtype=np.float64))


class Guards(unittest.TestCase):
    def test_layout_and_fill(self):
        b = NumpyBackend()
        g = GuardedBuffer(b, (), rows=3, cols=5, pad=4)
        self.assertEqual(g.view.shape, (3, 5))
        self.assertEqual(g.view.strides, (9 * 4, 4))
        self.assertTrue((g.base.view(np.uint32) == SENTINEL_BITS).all())
        self.assertIsNone(g.guard_problem())
        g2 = GuardedBuffer(b, (2,), rows=3, cols=5, pad=0, inner="-inf")
        self.assertEqual(g2.view.shape, (2, 3, 5))
        self.assertTrue(np.isneginf(g2.view).all())
        self.assertEqual(int((g2.base.view(np.uint32) == SENTINEL_BITS).sum()), 2 * 2 * 5)

    def test_violations_are_located(self):
        b = NumpyBackend()
        g = GuardedBuffer(b, (), rows=3, cols=5, pad=4)
        g.view[...] = 1.0
        self.assertIsNone(g.guard_problem())
        g.base[2, 6] = 0.0
        self.assertIn("wrote 1 cell(s) outside its output rows; first at row 1, column 6", g.guard_problem())
        g.reset()
        self.assertIsNone(g.guard_problem())
        g.base[0, 0] = 0.0
        self.assertIn("the guard row before row 0", g.guard_problem())
        g.reset()
        g.base[4, 8] = 0.0
        self.assertIn("the guard row after row 2", g.guard_problem())
        h = GuardedBuffer(b, (4,), rows=2, cols=3, pad=1, inner="-inf")
        h.base[3, 1, 3] = 5.0
        self.assertIn("row 0 of head [3], column 3", h.guard_problem())


class Conventions(unittest.TestCase):
    def setUp(self):
        self.backend = NumpyBackend(num_sms=5)

    def test_lens_2d_from_1d(self):
        lens = np.array([0, 1, 5, 7], dtype=np.int32)
        got = lens_2d_from_1d(lens, 3)
        self.assertEqual(got.dtype, np.int32)
        self.assertEqual(got.tolist(), [[0, 0, 0], [0, 0, 1], [3, 4, 5], [5, 6, 7]])
        cf = si.make_case(seed=4, next_n=3, max_model_len=40)
        self.assertEqual(lens_2d_from_1d(cf.context_lens, 3).reshape(-1).tolist(),
                         np.maximum(cf.valid_keys(), 0).tolist())

    def test_aiter_fused_arguments(self):
        cf = si.make_case(layout="shuffle", fmt="e4m3fnuz", pad=8)
        inv = CONVENTIONS["aiter-fused"].build(cf, self.backend, RunOptions(op_kwargs={"ChunkK": 64}, out_row_pad=7))
        q, kv, w, out, lens, table, max_len = inv.args
        self.assertEqual(q.format, "e4m3fnuz")
        self.assertEqual(kv.strides[0], cf.block_stride)
        self.assertEqual(out.shape, (cf.rows, cf.max_model_len))
        self.assertEqual(out.strides[0], (cf.max_model_len + 7) * 4)
        self.assertTrue((out.view(np.uint32) == SENTINEL_BITS).all())
        self.assertEqual(lens.shape, (cf.batch,))
        self.assertEqual(max_len, cf.max_model_len)
        self.assertEqual(inv.kwargs, {"Preshuffle": True, "KVBlockSize": 16, "ChunkK": 64})
        self.assertIs(inv.collect("ignored"), out)
        self.assertEqual(inv.notes["out_row_stride"], str(cf.max_model_len + 7))
        normal = CONVENTIONS["aiter-fused"].build(si.make_case(), self.backend, RunOptions())
        self.assertEqual(normal.kwargs, {"Preshuffle": False, "KVBlockSize": 16, "ChunkK": 256})

    def test_aiter_stage1_arguments_and_head_sum(self):
        cf = si.make_case(block_size=1, max_blocks=40, num_blocks=60, heads=3)
        inv = CONVENTIONS["aiter-stage1"].build(cf, self.backend, RunOptions())
        out = inv.args[3]
        self.assertEqual(out.shape, (3, cf.rows, cf.max_model_len))
        self.assertTrue(np.isneginf(out).all())
        out[0, :, :2] = 1.0
        out[1, :, :2] = 2.0
        out[2, :, :1] = 4.0
        self.assertEqual(inv.collect(None)[0, :3].tolist(), [7.0, -np.inf, -np.inf])  # -inf in any head wins
        out[2, :, 1] = 0.5
        self.assertEqual(inv.collect(None)[0, :3].tolist(), [7.0, 3.5, -np.inf])
        inv.reset()
        self.assertTrue(np.isneginf(out).all())

    def test_deepgemm_arguments(self):
        seen = {}

        def meta(lens, block_kv, num_sms):
            seen.update(lens=np.array(lens), block_kv=block_kv, num_sms=num_sms)
            return np.zeros((num_sms + 1, 2), dtype=np.int32)

        cf = si.make_case(seed=3, next_n=3)
        inv = CONVENTIONS["deepgemm"].build(cf, self.backend, RunOptions(metadata_fn=meta))
        q, kv, w, lens, table, schedule, max_len = inv.args
        self.assertEqual(lens.shape, (cf.batch, 3))
        self.assertEqual(lens.dtype, np.int32)
        self.assertEqual(lens.reshape(-1).tolist(), np.maximum(cf.valid_keys(), 0).tolist())
        self.assertEqual(seen["lens"].tolist(), lens.tolist())
        self.assertEqual((seen["block_kv"], seen["num_sms"]), (cf.block_size, 5))
        self.assertEqual(schedule.shape, (6, 2))
        self.assertEqual(inv.notes["context_lens_passed"], "2-D, built from the 1-D lengths per spec §1.2")
        cf2 = si.make_case(seed=3, next_n=3, lens2d=True)
        lens2 = CONVENTIONS["deepgemm"].build(cf2, self.backend, RunOptions(metadata_fn=meta)).args[3]
        self.assertEqual(lens2.tolist(), cf2.context_lens.tolist())
        # a padded-stride result is read through its strides
        padded = np.full((cf.rows, cf.max_model_len + 9), 7.0, dtype=np.float32)[:, :cf.max_model_len]
        self.assertIs(inv.collect(padded), padded)
        with self.assertRaisesRegex(OpOutputError, r"shape \[4, 41\], expected \[B\*N, max_model_len\] = \[6, 40\]|"
                                                   r"shape"):
            inv.collect(np.zeros((cf.rows, cf.max_model_len + 1), dtype=np.float32))

    def test_eager_passes_lengths_as_stored(self):
        for lens2d in (False, True):
            cf = si.make_case(lens2d=lens2d)
            inv = CONVENTIONS["eager"].build(cf, self.backend, RunOptions())
            self.assertEqual(inv.args[3].tolist(), cf.context_lens.tolist())
            self.assertEqual(len(inv.args), 6)

    def test_check_output(self):
        b = self.backend
        with self.assertRaisesRegex(OpOutputError, "is a list"):
            check_output(b, [1.0], 1, 1, "x")
        with self.assertRaisesRegex(OpOutputError, "dtype float64"):
            check_output(b, np.zeros((1, 1)), 1, 1, "x")

    def test_envelopes_name_the_limit(self):
        from pmqa.cases.envelope import make_envelope, traits_of

        def refusal(convention, cf, platform="cuda", chunk_q=None):
            r = make_envelope(convention, platform).refusal(traits_of(cf, chunk_q))
            return r and r[1]

        shuffle = si.make_case(layout="shuffle")
        fnuz = si.make_case(fmt="e4m3fnuz")
        lens2d = si.make_case(lens2d=True)
        self.assertIn("limit layout: kv_layout is shuffle", refusal("eager", shuffle))
        self.assertIn("also outside: heads, head-dim, layout", refusal("deepgemm", shuffle))
        self.assertIn("limit layout", refusal("aiter-stage1", shuffle))
        self.assertIn("limit layout", refusal("aiter-fused", shuffle, "cuda"))   # no Gluon kernel on CUDA
        self.assertIsNone(refusal("aiter-fused", shuffle, "rocm"))
        self.assertIn("fp8e4b8 not supported", refusal("aiter-fused", fnuz, "cuda"))
        self.assertIsNone(refusal("aiter-fused", fnuz, "rocm"))
        self.assertIsNone(refusal("eager", fnuz))
        self.assertIn("limit lengths-1d", refusal("aiter-fused", lens2d, "rocm"))
        self.assertIsNone(refusal("eager", lens2d))
        # stage 1 takes any block size; ChunkQ = heads always divides
        self.assertIsNone(refusal("aiter-stage1", si.make_case(), "rocm", chunk_q=4))
        self.assertIn("limit chunk-q", refusal("aiter-stage1", si.make_case(), "rocm", chunk_q=64))  # H 4 < 64
        self.assertIn("does not run there", refusal("deepgemm", si.make_case(), "rocm"))
        stage1 = CONVENTIONS["aiter-stage1"]
        self.assertEqual(stage1.chunk_q(si.make_case(), RunOptions()), 4)
        self.assertEqual(stage1.chunk_q(si.make_case(), RunOptions(op_kwargs={"ChunkQ": 2})), 2)


class Runner(unittest.TestCase):
    """The command in-process, numpy backend, stand-in ops, synthetic cases."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.cases = self.root / "cases"
        self.cases.mkdir()
        for cf in (si.make_case(seed=1, name="plain"), si.make_case(seed=2, name="padded", pad=40),
                   si.make_case(seed=3, name="fnuz", fmt="e4m3fnuz"), si.make_case(seed=4, name="two-d", lens2d=True),
                   si.make_case(seed=5, name="shuffled", layout="shuffle", next_n=1)):
            pmqa.cases.write_case_file(self.cases / f"{cf.name}.safetensors", cf)
        self.out = self.root / "out"

    def tearDown(self):
        self.tmp.cleanup()

    def run_op(self, op, convention, *extra):
        return run_main(["--backend", "numpy", "--op", f"run_standins:{op}", "--convention", convention,
                         "--cases", str(self.cases), "--out", str(self.out), *extra])

    def test_writes_outputs_with_metadata(self):
        status, text = self.run_op("eager_ok", "eager", "--skip-unsupported")
        self.assertEqual(status, 0, text)
        self.assertIn("SKIP     shuffled", text)
        self.assertIn("4 written, 0 failed, 1 unsupported (skipped), 0 invalid (exit 0)", text)
        self.assertIn("pmqa-run: unsupported by limit: layout 1", text)
        got = pmqa.cases.read_case_file(self.out / "padded.safetensors")
        src = pmqa.cases.read_case_file(self.cases / "padded.safetensors")
        self.assertEqual(got.producer, "run_standins:eager_ok")
        self.assertEqual(got.contract, "clean")
        self.assertEqual(got.extra["convention"], "eager")
        self.assertEqual(got.extra["tolerance"], "fp32")
        self.assertEqual(got.extra["nan"], "propagate")
        self.assertEqual(got.extra["runner"], "pmqa-run")
        self.assertNotIn("bench_ms", got.extra)
        self.assertEqual(got.kv_cache.tobytes(), src.kv_cache.tobytes())
        want = si.eager_ok(Fp8Tensor(src.q, src.fp8_format), NumpyBackend().kv_view(src.kv_cache, 16, 16),
                           src.weights, src.context_lens, src.block_table, src.max_model_len)
        self.assertEqual(got.logits.tobytes(), want.tobytes())
        self.assertFalse((self.out / "shuffled.safetensors").exists())

    def test_refusal_exits_2_and_names_the_case(self):
        status, text = self.run_op("eager_ok", "eager")
        self.assertEqual(status, 2, text)
        self.assertRegex(text, r"UNSUPPORTED case shuffled \(.*shuffled\.safetensors\): eager on none: limit layout: "
                               r"kv_layout is shuffle, .*SHUFFLE")
        self.assertTrue((self.out / "plain.safetensors").exists())  # the others still ran
        status, text = self.run_op("deepgemm_ok", "deepgemm", "--case", "fnuz", "--platform", "cuda")
        self.assertEqual(status, 2, text)
        self.assertIn("case fnuz", text)
        self.assertIn("limit block-size: block_size is 16, not one of 64", text)
        self.assertIn("(also outside: heads, head-dim, fp8-format)", text)
        status, text = self.run_op("aiter_fused_ok", "aiter-fused", "--case", "two-d")
        self.assertEqual(status, 2, text)
        self.assertIn("case two-d", text)

    def test_op_failures_exit_1(self):
        for op, convention, expect in (("raises", "eager", "the op raised RuntimeError: planted failure"),
                                       ("wrong_shape", "eager", "shape [4, 41], expected [B*N, max_model_len]"),
                                       ("wrong_dtype", "eager", "dtype float64"),
                                       ("writes_past_row", "aiter-fused", "outside its output rows")):
            with self.subTest(op=op):
                status, text = self.run_op(op, convention, "--case", "plain")
                self.assertEqual(status, 1, text)
                self.assertIn("FAIL     case plain", text)
                self.assertIn(expect, text)
        self.assertTrue((self.out / "plain.safetensors").exists())  # a guard failure still writes the file

    def test_worst_status_wins(self):
        status, text = self.run_op("raises", "eager")
        self.assertEqual(status, 2, text)
        self.assertIn("4 failed, 1 unsupported (refused)", text)

    def test_bench_records_times_and_checks_relaunches(self):
        status, text = self.run_op("eager_ok", "eager", "--case", "plain", "--bench", "--iters", "3", "--warmup", "1")
        self.assertEqual(status, 0, text)
        got = pmqa.cases.read_case_file(self.out / "plain.safetensors")
        self.assertGreater(float(got.extra["bench_ms"]), 0.0)
        self.assertEqual(got.extra["bench_iters"], "3")
        self.assertEqual(got.extra["relaunches"], "5, identical")  # the op owns its output: one poisoned relaunch more
        si._calls["n"] = 0
        status, text = self.run_op("racy", "eager", "--case", "plain", "--bench", "--iters", "2", "--warmup", "0")
        self.assertEqual(status, 1, text)
        self.assertIn("relaunches differ in 1 cell(s)", text)

    def test_the_lock_holds_through_the_runs_start(self):
        # The runner reads the folder's earlier, unfinished record after it took the lock (to say it
        # replaces it), and that read asks whether the lock is held (it opens and closes the lock file).
        # With a POSIX lock that close dropped the lock and let a second pmqa-run into the same --out.
        status, text = self.run_op("eager_ok", "eager", "--case", "plain")
        self.assertEqual(status, 0, text)
        record = self.out / "pmqa-run.json"
        record.write_text(record.read_text().replace('"complete": true', '"complete": false'))
        from pmqa.run.options import make_parser
        from pmqa.run.runner import Runner as RunnerOfCli
        args = make_parser().parse_args(["--backend", "numpy", "--op", "run_standins:eager_ok", "--convention",
                                         "eager", "--cases", str(self.cases), "--out", str(self.out), "--case", "plain"])
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            runner = RunnerOfCli(args)  # everything a run does before its cases: lock, plan, record, JUnit
        try:
            self.assertIn("did not finish", buf.getvalue())  # the earlier record was read after locking
            second = subprocess.run(
                [sys.executable, "-c", "import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\n"
                 "fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)", str(self.out / "pmqa-run.lock")],
                capture_output=True, text=True)
            self.assertNotEqual(second.returncode, 0, "a second process took the lock of a starting run")
            self.assertRegex(second.stderr, "BlockingIOError|PermissionError")
        finally:
            runner.lock.release()

    def test_bench_relaunch_refills_caller_buffers(self):
        status, text = self.run_op("aiter_fused_ok", "aiter-fused", "--case", "plain", "--bench", "--iters", "2")
        self.assertEqual(status, 0, text)

    def test_op_kwargs(self):
        status, text = self.run_op("kwargs_echo", "eager", "--case", "plain", "--op-kwarg", "alpha=3",
                                   "--op-kwarg", "name=x y", "--op-kwarg", "flag=True")
        self.assertEqual(status, 0, text)
        status, text = self.run_op("aiter_fused_ok", "aiter-fused", "--op-kwarg", "Preshuffle=False")
        self.assertEqual(status, 2, text)
        self.assertIn("aiter-fused sets Preshuffle from each case", text)

    def test_usage_errors_exit_2(self):
        status, text = run_main(["--backend", "numpy", "--op", "no_such_module_xyz:f", "--convention", "eager",
                                 "--cases", str(self.cases), "--out", str(self.out)])
        self.assertEqual(status, 2)
        self.assertIn("cannot import no_such_module_xyz", text)
        status, text = self.run_op("no_such_function", "eager")
        self.assertEqual(status, 2)
        self.assertIn("has no attribute no_such_function", text)
        status, text = run_main(["--backend", "numpy", "--op", "json:dumps", "--convention", "deepgemm",
                                 "--cases", str(self.cases), "--out", str(self.out)])
        self.assertEqual(status, 2)
        self.assertIn("json has no get_paged_mqa_logits_metadata; name one with --metadata-fn", text)
        status, text = self.run_op("eager_ok", "eager", "--case", "nothing-matches")
        self.assertEqual(status, 2)
        self.assertIn("no case matched", text)
        empty = self.root / "empty"
        empty.mkdir()
        status, text = run_main(["--backend", "numpy", "--op", "run_standins:eager_ok", "--convention", "eager",
                                 "--cases", str(empty), "--out", str(self.out)])
        self.assertEqual(status, 2)
        self.assertIn("holds no *.safetensors files", text)
        status, text = run_main(["--backend", "numpy", "--op", "run_standins:eager_ok", "--convention", "nope",
                                 "--cases", str(self.cases), "--out", str(self.out)])
        self.assertEqual(status, 2)
        status, text = run_main(["--backend", "numpy", "--device", "cuda", "--op", "run_standins:eager_ok",
                                 "--convention", "eager", "--cases", str(self.cases), "--out", str(self.out)])
        self.assertEqual(status, 2)
        self.assertIn("host only", text)

    def test_invalid_case_file_exits_2(self):
        (self.cases / "broken.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{}")
        status, text = self.run_op("eager_ok", "eager", "--skip-unsupported")
        self.assertEqual(status, 2, text)
        self.assertIn("ERROR    ", text)
        self.assertIn("broken.safetensors", text)
        self.assertTrue((self.out / "plain.safetensors").exists())

    def test_deepgemm_metadata_from_the_module(self):
        fits = si.make_case(seed=7, heads=32, head_dim=32, block_size=64, max_blocks=2, num_blocks=4, max_model_len=100,
                            name="deepgemm-shape")
        pmqa.cases.write_case_file(self.cases / "deepgemm-shape.safetensors", fits)
        status, text = self.run_op("deepgemm_ok", "deepgemm", "--skip-unsupported", "--num-sms", "3", "--platform", "cuda")
        self.assertEqual(status, 0, text)
        self.assertIn("1 written, 0 failed, 5 unsupported (skipped)", text)
        got = pmqa.cases.read_case_file(self.out / "deepgemm-shape.safetensors")
        self.assertEqual(got.contract, "valid-only")
        self.assertEqual(got.extra["num_sms"], "3")
        self.assertEqual(got.extra["tolerance"], "matrix-unit")
        self.assertEqual(got.extra["nan"], "relu-clamp")
        status, text = self.run_op("deepgemm_ok", "deepgemm", "--skip-unsupported",
                                   "--metadata-fn", "run_standins:no_such_meta")
        self.assertEqual(status, 2)

    def test_nan_rule_recorded_and_overridden(self):
        status, text = self.run_op("eager_ok", "eager", "--skip-unsupported", "--nan", "relu-clamp")
        self.assertEqual(status, 0, text)
        self.assertEqual(pmqa.cases.read_case_file(self.out / "plain.safetensors").extra["nan"], "relu-clamp")
        self.assertEqual(run_main(["--op", "run_standins:eager_ok", "--convention", "eager", "--nan", "clamp",
                                   "--cases", str(self.cases), "--out", str(self.out)])[0], 2)

    def test_bf16_logits_add_the_bf16_roundings_to_the_profile(self):
        from pmqa.run.conventions.base import recorded_tolerance
        self.assertEqual(recorded_tolerance("matrix-unit", "bfloat16"), "matrix-unit-bf16")
        self.assertEqual(recorded_tolerance("fp32", "bfloat16"), "bf16-output")
        self.assertEqual(recorded_tolerance("matrix-unit", "float32"), "matrix-unit")
        self.assertEqual({c.nan for c in CONVENTIONS.values() if c.name != "eager"}, {"relu-clamp"})

    def test_a_convention_gives_one_judging_value(self):
        # What the result file records for pmqa verify, as one value: the runner's flags over the
        # convention's contract, its bf16-widened profile and the NaN rule of the path seen.
        rocm = CONVENTIONS["vllm-rocm"]
        self.assertEqual(rocm.judging("fused", "float32"),
                         {"contract": "valid-only", "tolerance": "matrix-unit", "nan": "relu-clamp"})
        self.assertEqual(rocm.judging("eager", "bfloat16"),
                         {"contract": "valid-only", "tolerance": "matrix-unit-bf16", "nan": "propagate"})
        self.assertEqual(rocm.judging(None, "float32", {"contract": "clean", "tolerance": None, "nan": "propagate"}),
                         {"contract": "clean", "tolerance": "matrix-unit", "nan": "propagate"})
        for c in CONVENTIONS.values():
            self.assertEqual(set(c.judging(None, "float32")), {"contract", "tolerance", "nan"}, c.name)

    def test_torch_backend_without_torch_is_a_usage_error(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            status, text = run_main(["--op", "run_standins:eager_ok", "--convention", "eager",
                                     "--cases", str(self.cases), "--out", str(self.out)])
            self.assertEqual(status, 2)
            self.assertIn("torch is not installed", text)
        else:
            self.skipTest("torch is installed here")


if __name__ == "__main__":
    unittest.main()
