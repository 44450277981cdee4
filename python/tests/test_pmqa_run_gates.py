"""The GPU runner's gates without a GPU: the kernel-name table and the path it reads from the kernels
an op launched, the byte floor against hand counts, the floor-ratio gate, and the worker that
survives ops that hang, raise a device error, abort or exit (numpy stand-ins in run_standins)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import pmqa.cases  # noqa: E402
import run_standins as si  # noqa: E402
from pmqa.run import main  # noqa: E402
from pmqa.run.kernel_names import KernelNamesError as DataError  # noqa: E402  (a ValueError naming the file)
from pmqa.run.floor import floor_bytes  # noqa: E402
from pmqa.run.kernel_names import classify, judge, load_kernel_names, parse_kernel_names  # noqa: E402

PMQA = os.environ.get("PMQA_BIN", "")

# Kernel names as torch's profiler reports them (the libraries' own names, abbreviated where
# templates run long).
AITER_TRITON_FUSED = "_deepgemm_fp8_paged_mqa_logits"
AITER_GLUON = "_gluon_deepgemm_fp8_paged_mqa_logits_preshuffle"
AITER_STAGE1 = "_deepgemm_fp8_paged_mqa_logits_stage1"
TORCH_FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, "
              "1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")
TORCH_SUM = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
             "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)> > >(...)")
DG_KERNEL = "void deep_gemm::sm90_fp8_paged_mqa_logits<64u, 2u, 128u, 64u, 4u, 128u, 256u, float>(...)"
DG_META = "void deep_gemm::smxx_paged_mqa_logits_metadata<32u, 256u, 132u>(unsigned int, unsigned int const*, unsigned int*)"
DG_CLEAN = "void deep_gemm::smxx_clean_logits<2u, 128u, 256u>(...)"
EAGER = ["void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<...> >(long, ...)",
         "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_kernel__5x_cublas",
         "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<...> >(int, ...)", TORCH_SUM]
ROCBLAS = "Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0_APM1"
PMQA_FUSED = "void pmqa::kdev::gpu_build::fused_wgmma_kernel<pmqa::kdev::gpu_build::Faithful, WgmmaShipped, 64, true>(...)"
PMQA_TWO_STAGE = ["void pmqa::kdev::gpu_build::fill_minus_infinity_kernel<pmqa::kdev::gpu_build::Faithful>(float*, long)",
                  "void pmqa::kdev::gpu_build::stage1_kernel<pmqa::kdev::gpu_build::Faithful, 128, false>(...)",
                  "void pmqa::kdev::gpu_build::head_sum_kernel<pmqa::kdev::gpu_build::Faithful>(...)"]


class KernelNames(unittest.TestCase):
    def setUp(self):
        self.table = load_kernel_names()

    def path(self, *names):
        return classify(names, self.table).path

    def test_the_table_reads_strictly_and_every_entry_says_why(self):
        self.assertGreater(len(self.table), 20)
        for e in self.table:
            self.assertTrue(e.role and e.source and e.library, e.pattern)
        head = {"schema": "pmqa-kernel-names/1"}
        ok = {"pattern": "x*", "library": "l", "means": "fused", "role": "r", "source": "s"}
        parse_kernel_names(json.dumps(dict(head, kernels=[ok])), "t")
        for bad, needle in ((dict(ok, means="fast"), "is not one of"), ({k: v for k, v in ok.items() if k != "role"},
                            "role: missing"), (dict(ok, note="n"), 'unknown key "note"'), (dict(ok, source=" "), "empty")):
            with self.assertRaisesRegex(DataError, needle):
                parse_kernel_names(json.dumps(dict(head, kernels=[bad])), "t")
        with self.assertRaisesRegex(DataError, "schema"):
            parse_kernel_names(json.dumps({"kernels": [ok]}), "t")

    def test_each_librarys_launches_mean_their_path(self):
        self.assertEqual(self.path(AITER_TRITON_FUSED), "fused")
        self.assertEqual(self.path(AITER_GLUON), "fused")
        self.assertEqual(self.path("_gluon_deepgemm_fp8_paged_mqa_logits_preshuffle_varctx",
                                   "_deepgemm_fp8_paged_mqa_logits_varctx_schedule"), "fused")
        self.assertEqual(self.path(TORCH_FILL, AITER_STAGE1, TORCH_SUM), "two-stage")  # vLLM's two-stage composite
        self.assertEqual(self.path(DG_META, DG_KERNEL), "fused")
        self.assertEqual(self.path(DG_META, DG_KERNEL, DG_CLEAN), "fused")
        self.assertEqual(self.path(*EAGER), "eager")
        self.assertEqual(self.path(ROCBLAS, TORCH_SUM), "eager")
        self.assertEqual(self.path(PMQA_FUSED), "fused")
        self.assertEqual(self.path(*PMQA_TWO_STAGE), "two-stage")
        self.assertEqual(self.path(TORCH_FILL, "Memset (Device)"), "none")  # helpers alone compute nothing
        # a library path decides over the ATen kernels an engine adds around it
        self.assertEqual(self.path(TORCH_FILL, AITER_TRITON_FUSED, "Memcpy DtoD (Device -> Device)"), "fused")
        self.assertEqual(self.path(AITER_TRITON_FUSED, TORCH_SUM), "fused")
        # a call that ran the two-stage path at all (besides a fused kernel) took the slow one
        self.assertEqual(self.path(AITER_TRITON_FUSED, AITER_STAGE1), "two-stage")

    def test_judgements_name_the_kernels(self):
        r = classify([TORCH_FILL, AITER_STAGE1, TORCH_SUM], self.table)
        self.assertIsNone(judge(r, "two-stage"))
        why = judge(r, "fused")
        self.assertIn("expected the fused path, the op took the two-stage path", why)
        self.assertIn(f"{AITER_STAGE1} (aiter two-stage) x1", why)
        why = judge(classify(["my_kernel<1>", AITER_TRITON_FUSED], self.table), "fused")
        self.assertIn("does not know: my_kernel<1>", why)
        self.assertIn("--kernel-names", why)
        self.assertIn("x1", classify([AITER_STAGE1] * 3, self.table).metadata().replace("x3", "x1"))

    def test_extra_entries_come_first(self):
        with tempfile.TemporaryDirectory() as tmp:
            extra = Path(tmp) / "k.json"
            extra.write_text(json.dumps({"schema": "pmqa-kernel-names/1", "kernels": [
                {"pattern": "my_kernel*", "library": "mine", "means": "fused", "role": "r", "source": "s"},
                {"pattern": "_deepgemm_fp8_paged_mqa_logits", "library": "mine", "means": "eager", "role": "r",
                 "source": "s"}]}))
            table = load_kernel_names([str(extra)])
        self.assertEqual(classify(["my_kernel<1>"], table).path, "fused")
        self.assertEqual(classify([AITER_TRITON_FUSED], table).known[AITER_TRITON_FUSED].library, "mine")


def case(batch, next_n, heads, head_dim, block_size, lens, table, max_model_len, num_blocks, name="c"):
    rows = batch * next_n
    stride = block_size * (head_dim + 4)
    kv = np.zeros((num_blocks, stride), dtype=np.uint8)
    kv[:, block_size * head_dim:] = np.full((num_blocks, block_size), 1.0, dtype="<f4").view(np.uint8)
    return pmqa.cases.CaseFile(q=np.zeros((batch, next_n, heads, head_dim), dtype=np.uint8), kv_cache=kv,
                               weights=np.zeros((rows, heads), dtype=np.float32),
                               context_lens=np.array(lens, dtype=np.int32), block_table=np.array(table, dtype=np.int32),
                               block_size=block_size, max_model_len=max_model_len, name=name)


class Floor(unittest.TestCase):
    """floor_bytes against hand counts (the comments are the counts)."""

    def check(self, cf, contract, **want):
        pmqa.cases.validate(cf)
        fb = floor_bytes(cf, contract)
        got = {k: getattr(fb, k) for k in want}
        self.assertEqual(got, want)
        self.assertEqual(fb.total, sum(want.values()))

    def test_two_sequences_clean(self):
        # B 2, N 1, H 4, D 16, bs 16, lengths 20 and 5: sequence 0 reads pages 3 and 1, sequence 1 page 0
        cf = case(2, 1, 4, 16, 16, [20, 5], [[3, 1, -1], [0, 7, 7]], 40, 4)
        self.check(cf, "clean",
                   q=2 * 1 * 4 * 16,               # 128
                   kv=3 * 16 * (16 + 4),           # 3 pages: 960
                   weights=2 * 1 * 4 * 4,          # 32
                   block_table=(2 + 1) * 4,        # 12
                   context_lens=2 * 4,             # 8
                   output=2 * 40 * 4)              # clean: every cell, 320

    def test_shared_prefix_valid_only(self):
        # B 2, N 2, 1-D lengths 8 and 6: E_r 7, 8 and 5, 6; both read page 5 first
        cf = case(2, 2, 2, 32, 4, [8, 6], [[5, 2], [5, 7]], 10, 8)
        self.check(cf, "valid-only",
                   q=2 * 2 * 2 * 32,               # 256
                   kv=3 * 4 * (32 + 4),            # pages 5, 2, 7 once each: 432
                   weights=2 * 2 * 2 * 4,          # 32
                   block_table=(2 + 2) * 4,        # 16
                   context_lens=2 * 4,             # 8
                   output=(7 + 8 + 5 + 6) * 4)     # valid cells only: 104

    def test_2d_lengths_with_empty_rows(self):
        # B 3, N 2, 2-D lengths [0, 0], [3, 9], [0, 17], bs 8: sequence 0 reads nothing
        cf = case(3, 2, 1, 16, 8, [[0, 0], [3, 9], [0, 17]], [[9, 9, 9], [1, 2, 9], [3, 4, 5]], 24, 10)
        self.check(cf, "clean",
                   q=3 * 2 * 1 * 16,               # 96
                   kv=5 * 8 * (16 + 4),            # pages 1, 2 and 3, 4, 5: 800
                   weights=3 * 2 * 1 * 4,          # 24
                   block_table=(0 + 2 + 3) * 4,    # 20
                   context_lens=6 * 4,             # 24
                   output=6 * 24 * 4)              # 576


class _Run(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.cases = self.root / "cases"
        self.cases.mkdir()
        self.out = self.root / "out"

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, *cfs):
        for cf in cfs:
            pmqa.cases.write_case_file(self.cases / f"{cf.name}.safetensors", cf)

    def run_main(self, *argv, env=None):
        buf = io.StringIO()
        saved = dict(os.environ)
        os.environ.update(env or {})
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                status = main(["--backend", "numpy", "--cases", str(self.cases), "--out", str(self.out), *argv])
        finally:
            os.environ.clear()
            os.environ.update(saved)
        return status, buf.getvalue()


class Workers(_Run):
    """Faults on the case with next_n 3 ("b"); "a" before it and "c" after it run in workers too."""

    def setUp(self):
        super().setUp()
        self.write(si.make_case(seed=1, next_n=1, name="a"), si.make_case(seed=2, next_n=3, name="b"),
                   si.make_case(seed=3, next_n=2, name="c"))

    def faulty_run(self, op, *extra):
        report = self.root / "run.xml"
        status, text = self.run_main("--op", f"run_standins:{op}", "--convention", "eager", "--junit", str(report),
                                     *extra, env={"PMQA_TEST_OUT": str(self.out)})
        self.assertEqual(status, 1, text)
        self.assertIn("2 written, 1 failed", text)
        self.assertTrue((self.out / "a.safetensors").exists() and (self.out / "c.safetensors").exists(), text)
        self.assertFalse((self.out / "b.safetensors").exists())
        self.assertFalse(list(self.out.glob("*.partial")))
        suite = ET.parse(report).getroot().find("testsuite")
        self.assertEqual((suite.get("tests"), suite.get("failures")), ("3", "1"))
        return text

    def test_a_hang_times_out_and_the_run_goes_on(self):
        text = self.faulty_run("hangs", "--timeout-s", "3")
        self.assertIn("FAIL     case b", text)
        self.assertIn("timed out: no op call finished and no answer within --timeout-s 3 s (a hang?)", text)
        self.assertIn("2 worker processes", text)

    def test_an_abort_is_reported_for_its_case(self):
        text = self.faulty_run("aborts")
        self.assertIn("died while running the case (killed by SIGABRT)", text)

    def test_an_exit_is_reported_for_its_case(self):
        text = self.faulty_run("exits")
        self.assertIn("died while running the case (exited with status 3)", text)

    def test_a_device_error_gets_a_fresh_worker(self):
        text = self.faulty_run("device_error")
        self.assertIn("the op raised RuntimeError: CUDA error: an illegal memory access", text)
        self.assertIn("a fresh worker takes the next case", text)
        self.assertIn("2 worker processes", text)

    def test_each_file_is_complete_before_the_next_case_starts(self):
        # the op checks, before each case, that every file written so far is complete
        text = self.faulty_run("checks_earlier_outputs")
        self.assertNotIn("temporary file", text)

    def test_an_ordinary_failure_keeps_the_worker(self):
        status, text = self.run_main("--op", "run_standins:raises", "--convention", "eager")
        self.assertEqual(status, 1, text)
        self.assertNotIn("worker processes", text)  # one worker served all three

    def test_setup_errors_are_usage_errors(self):
        status, text = self.run_main("--op", "no_such_module_xyz:f", "--convention", "eager")
        self.assertEqual(status, 2, text)
        self.assertIn("cannot import no_such_module_xyz", text)


class Gates(_Run):
    def test_the_floor_ratio_is_recorded_and_gated(self):
        self.write(si.make_case(seed=1, name="a"))
        status, text = self.run_main("--op", "run_standins:eager_ok", "--convention", "eager", "--max-floor-ratio",
                                     "1e12", "--floor-min-mb", "0", "--iters", "3", "--warmup", "1")
        self.assertEqual(status, 0, text)
        got = pmqa.cases.read_case_file(self.out / "a.safetensors")
        src = pmqa.cases.read_case_file(self.cases / "a.safetensors")
        self.assertEqual(int(got.extra["floor_bytes"]), floor_bytes(src, "clean").total)
        ratio = float(got.extra["floor_ratio"])  # gated: the kernel time; the wall time's ratio beside it
        self.assertAlmostEqual(ratio, float(got.extra["kernel_ms"]) / float(got.extra["floor_ms"]), delta=ratio * 1e-3)
        wall = float(got.extra["floor_ratio_wall"])
        self.assertAlmostEqual(wall, float(got.extra["bench_ms"]) / float(got.extra["floor_ms"]), delta=wall * 1e-3)
        self.assertIn(f"x{got.extra['floor_ratio']} floor", text)
        # --copy-gbps: the floor at a stated bandwidth instead of a measured one
        status, text = self.run_main("--op", "run_standins:eager_ok", "--convention", "eager", "--max-floor-ratio",
                                     "1e12", "--floor-min-mb", "0", "--iters", "1", "--warmup", "0", "--copy-gbps", "50")
        self.assertEqual(status, 0, text)
        pinned = pmqa.cases.read_case_file(self.out / "a.safetensors").extra
        self.assertEqual(pinned["copy_gbps"], "50")
        self.assertAlmostEqual(float(pinned["floor_ms"]), floor_bytes(src, "clean").total / 50e9 * 1e3, places=6)
        status, text = self.run_main("--op", "run_standins:eager_ok", "--convention", "eager", "--copy-gbps", "0")
        self.assertEqual(status, 2, text)
        self.assertIn("--copy-gbps must be > 0", text)
        # 0.25 s per call is far past ten times the fast op's ratio
        status, text = self.run_main("--op", "run_standins:slow", "--convention", "eager", "--max-floor-ratio",
                                     f"{10 * ratio:g}", "--floor-min-mb", "0", "--iters", "2", "--warmup", "0")
        self.assertEqual(status, 1, text)
        self.assertRegex(text, r"is [0-9.e+]+x the byte floor .* above --max-floor-ratio [0-9.e+]+: a slow path")
        # a floor below --floor-min-mb is reported, not judged
        status, text = self.run_main("--op", "run_standins:slow", "--convention", "eager", "--max-floor-ratio",
                                     "--iters", "1", "--warmup", "0")
        self.assertEqual(status, 0, text)
        self.assertIn("floor (not gated)", text)
        self.assertIn("below --floor-min-mb 16", pmqa.cases.read_case_file(self.out / "a.safetensors").extra["floor_gate"])

    def test_the_gated_ratio_leaves_a_slow_host_out(self):
        """The same op behind 200 us of host sleep before its launch: the gated ratio (kernel time
        over the floor) stays within 10 % of the op's own, while the wall time's ratio moves by the
        host's 200 us, so a gate on wall time would fail this test. The numpy device's kernel times
        follow what an op launches (pmqa.run.backend: a device model; the shared host's clock could
        not give a figure stable to 10 %), so the kernel time is the launches' sum and nothing else."""
        # A small case: the op's own host time stays well under the sleep, so a loaded host's noise
        # on it cannot hide 200 us.
        self.write(si.make_case(seed=7, name="timed"))
        got = {}
        for op in ("eager_ok", "host_200us_before_launch"):
            status, text = self.run_main("--op", f"run_standins:{op}", "--convention", "eager", "--in-process",
                                         "--max-floor-ratio", "1e9", "--floor-min-mb", "0", "--iters", "21",
                                         "--warmup", "2")
            self.assertEqual(status, 0, text)
            x = pmqa.cases.read_case_file(self.out / "timed.safetensors").extra
            self.assertTrue(x["floor_basis"].startswith("kernel time: numpy backend"), x["floor_basis"])
            self.assertEqual(x["kernel_activities"], "5")
            self.assertRegex(text, r"ok +timed .* ms kernels, [0-9.e+-]+ ms wall +x[0-9.e+]+ floor")
            got[op] = x
        plain, host = got["eager_ok"], got["host_200us_before_launch"]
        self.assertLess(abs(float(host["floor_ratio"]) / float(plain["floor_ratio"]) - 1), 0.10, (plain, host))
        # The wall time holds the sleep, by more than the 10 % the gated ratio must keep: a gate on wall
        # time would fail the same op. Compared on each op's fastest call: on a loaded host (CI runs
        # tests side by side) the medians of two ops carry other processes' time, while no call of
        # the sleeping op can be faster than its 200 us.
        fastest = {op: float(x["bench_min_ms"]) for op, x in got.items()}
        self.assertGreater(fastest["host_200us_before_launch"] / fastest["eager_ok"], 1.10,
                           f"a gate on wall time would pass the same op: {fastest}")
        # The kernel time is the sum of what the call launched, on the device model.
        from pmqa.run.backend import numpy_kernel_ms
        cf = pmqa.cases.read_case_file(self.cases / "timed.safetensors")
        kv, out = cf.kv_cache.shape[0] * cf.block_size * (cf.head_dim + 4), cf.rows * cf.max_model_len * 4
        launches = (2 * kv + cf.block_table.nbytes + cf.context_lens.nbytes, 2 * kv, cf.q.nbytes + kv + cf.heads * out,
                    2 * cf.heads * out + cf.weights.nbytes, cf.heads * out + out)
        self.assertAlmostEqual(float(plain["kernel_ms"]), sum(numpy_kernel_ms(n) for n in launches), places=4)

    def test_no_device_activity_is_not_a_pass(self):
        """An op whose timed calls launch nothing the profiler sees cannot be judged on kernel time:
        the gate fails it, saying so, rather than passing a time of zero."""
        self.write(si.make_case(seed=1, name="a"))
        status, text = self.run_main("--op", "run_standins:vllm_eager_no_kernels", "--convention", "eager",
                                     "--in-process", "--max-floor-ratio", "--floor-min-mb", "0", "--iters", "2",
                                     "--warmup", "0")
        self.assertEqual(status, 1, text)
        self.assertIn("the profiler recorded no device activity in 2 of 2 timed call(s)", text)
        self.assertEqual(pmqa.cases.read_case_file(self.out / "a.safetensors").extra["floor_ratio"], "unknown")

    def test_expect_path_reads_the_kernels(self):
        self.write(si.make_case(seed=1, name="a"), si.make_case(seed=2, name="shuffled", layout="shuffle",
                                                                  block_size=16, next_n=1))
        args = ("--convention", "vllm-rocm", "--platform", "rocm", "--expect-path", "fused", "--skip-unsupported")
        status, text = self.run_main("--op", "run_standins:engine_entry", *args)
        self.assertEqual(status, 0, text)
        self.assertIn("path fused", text)
        got = pmqa.cases.read_case_file(self.out / "shuffled.safetensors")
        self.assertEqual((got.extra["path"], got.extra["nan"]), ("fused", "relu-clamp"))
        self.assertIn("_gluon_deepgemm_fp8_paged_mqa_logits_preshuffle x1", got.extra["kernels"])
        status, text = self.run_main("--op", "run_standins:engine_entry_forgets_gfx950", *args,
                                     env={"PMQA_STANDIN_ARCH": "gfx950"})
        self.assertEqual(status, 1, text)
        self.assertIn("expected the fused path, the op took the two-stage path: it launched", text)
        self.assertIn("_deepgemm_fp8_paged_mqa_logits_stage1 (aiter two-stage) x1", text)
        self.assertEqual(pmqa.cases.read_case_file(self.out / "shuffled.safetensors").extra["path"], "two-stage")
        status, text = self.run_main("--op", "run_standins:launches_unknown_kernel", "--convention", "eager",
                                     "--expect-path", "eager", "--skip-unsupported")
        self.assertEqual(status, 1, text)
        self.assertIn("does not know: my_new_library::paged_logits_v2<64>", text)
        status, text = self.run_main("--op", "run_standins:eager_ok", "--convention", "eager", "--expect-path", "eager",
                                     "--skip-unsupported")
        self.assertEqual(status, 0, text)
        if PMQA:
            v = subprocess.run([PMQA, "verify", str(self.out)], capture_output=True, text=True)
            self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
            self.assertIn("path eager", v.stdout)

    def test_vllm_rocm_is_refused_on_cuda(self):
        self.write(si.make_case(seed=1, name="a"))
        status, text = self.run_main("--op", "run_standins:engine_entry", "--convention", "vllm-rocm", "--platform",
                                     "cuda", "--skip-unsupported")
        self.assertEqual(status, 0, text)
        self.assertIn("vllm-rocm's library does not run there", text)
        self.assertIn("0 written, 0 failed, 1 unsupported", text)


if __name__ == "__main__":
    unittest.main()
