"""pmqa-run with torch: the torch backend and eager_torch_op, on CPU and (when present) CUDA/ROCm.

Skipped where torch is not installed (CI); bench/h200/eager_run.sh runs it on the GPU machine first. The eager
op is compared cell by cell with the numpy stand-in eager_ok (run_standins.py, written from the spec):
the same -inf and NaN pattern, finite cells within fp32 summation-order noise.
"""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import run_standins as si  # noqa: E402
from pmqa.run import SENTINEL_BITS, NumpyBackend  # noqa: E402
from pmqa.run.conventions import CONVENTIONS, GuardedBuffer, RunOptions  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

DEVICES = []
if torch is not None:
    DEVICES.append("cpu")
    if torch.cuda.is_available():
        DEVICES.append("cuda")


def expected(cf):
    b = NumpyBackend()
    inv = CONVENTIONS["eager"].build(cf, b, RunOptions())
    return si.eager_ok(*inv.args)


def eager_torch(cf, device, codes=False, **kwargs):
    """eager_torch_op on the eager convention's arguments; q as uint8 codes with fp8_format where
    this torch has no dtype for the case's format (as the runner hands it), or always with codes=True."""
    from eager_torch_op import fp8_paged_mqa_logits
    from pmqa.run.torch_backend import TorchBackend
    backend = TorchBackend(device)
    inv = CONVENTIONS["eager"].build(cf, backend, RunOptions())
    args = list(inv.args)
    if codes:
        args[0] = backend.tensor(cf.q)
    if codes or cf.fp8_format in backend.fp8_as_codes:
        kwargs["fp8_format"] = cf.fp8_format
    out = fp8_paged_mqa_logits(*args, **kwargs)
    return backend.to_numpy(inv.collect(out))


HAS_FP8_DTYPES = torch is not None and hasattr(torch, "float8_e4m3fn") and hasattr(torch, "float8_e4m3fnuz")


@unittest.skipIf(torch is None, "torch is not installed")
class EagerTorch(unittest.TestCase):
    def same(self, cf, codes=False, **kwargs):
        want = expected(cf)
        for device in DEVICES:
            with self.subTest(device=device, case=cf.name):
                got = eager_torch(cf, device, codes, **kwargs)
                self.assertEqual(got.shape, want.shape)
                self.assertTrue(np.array_equal(np.isneginf(got), np.isneginf(want)), "-inf pattern")
                self.assertTrue(np.array_equal(np.isnan(got), np.isnan(want)), "NaN pattern")
                finite = np.isfinite(want)
                self.assertTrue(np.isfinite(got[finite]).all())
                scale = float(np.abs(want[finite]).max()) if finite.any() else 0.0
                err = float(np.abs(got[finite].astype(np.float64) - want[finite]).max()) if finite.any() else 0.0
                self.assertLessEqual(err, 1e-4 * max(scale, 1e-30), f"max error {err} against max |ref| {scale}")

    def test_plain(self):
        self.same(si.make_case(seed=1, name="plain"))

    def test_shapes(self):
        for i, kw in enumerate([dict(pad=40), dict(fmt="e4m3fnuz"), dict(lens2d=True, next_n=3),
                                dict(block_size=1, max_blocks=40, num_blocks=50),
                                dict(heads=64, head_dim=128, block_size=64, max_blocks=3, max_model_len=150),
                                dict(batch=0), dict(next_n=1), dict(max_model_len=7, block_size=4, max_blocks=2)]):
            self.same(si.make_case(seed=10 + i, name=f"shape-{i}", **kw))

    def test_chunked_keys(self):
        cf = si.make_case(seed=3, max_blocks=5, num_blocks=9, max_model_len=80, block_size=16)
        self.same(cf, max_chunk_elements=1)  # one logical block per chunk

    def test_nan_codes_propagate(self):
        for fmt, code in (("e4m3fn", 0x7F), ("e4m3fnuz", 0x80)):
            cf = si.make_case(seed=5, fmt=fmt, name=f"nan-{fmt}")
            cf.context_lens[:] = cf.max_model_len // 2
            cf.q[0, 0, 1, 3] = code
            cf.kv_cache[cf.block_table[1, 0], 2 * cf.head_dim + 1] = code  # sequence 1, key 2
            want = expected(cf)
            self.assertTrue(np.isnan(want[0, 0]))
            self.same(cf)

    def test_unread_table_entries_may_hold_anything(self):
        cf = si.make_case(seed=6, max_blocks=4, max_model_len=60)
        cf.context_lens[:] = [5, 20]
        cf.block_table[0, 1:] = -1
        cf.block_table[1, 2:] = 10 ** 6
        self.same(cf)

    def test_uint8_codes_with_their_format(self):
        """The path a torch without fp8 dtypes takes, on every torch: the same answers as the numpy op,
        NaN codes of both formats included."""
        for fmt, code in (("e4m3fn", 0x7F), ("e4m3fnuz", 0x80)):
            cf = si.make_case(seed=7, fmt=fmt, name=f"codes-{fmt}")
            cf.context_lens[:] = cf.max_model_len // 2
            cf.q[0, 0, 1, 3] = code
            self.same(cf, codes=True)

    def test_the_table_is_torch_s_decode(self):
        from eager_torch_op import fp8_table
        if not HAS_FP8_DTYPES:
            self.skipTest(f"torch {torch.__version__} has no fp8 dtypes to compare the table with")
        codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
        for fmt in ("e4m3fn", "e4m3fnuz"):
            mine = fp8_table(fmt, torch.device("cpu")).numpy()
            theirs = codes.view(getattr(torch, "float8_" + fmt)).to(torch.float32).numpy()
            self.assertTrue(np.array_equal(mine, theirs, equal_nan=True), fmt)

    def test_rejects_what_it_cannot_read(self):
        from eager_torch_op import fp8_paged_mqa_logits
        cf = si.make_case()
        q = torch.from_numpy(cf.q)
        with self.assertRaisesRegex(TypeError, "uint8 codes: pass fp8_format"):
            fp8_paged_mqa_logits(q, None, None, None, None, 4)
        with self.assertRaisesRegex(TypeError, "expected torch.float8_e4m3fn, torch.float8_e4m3fnuz or uint8"):
            fp8_paged_mqa_logits(q.to(torch.float32), None, None, None, None, 4)
        with self.assertRaisesRegex(ValueError, "fp8_format 'e5m2'"):
            fp8_paged_mqa_logits(q, None, None, None, None, 4, fp8_format="e5m2")


@unittest.skipIf(torch is None, "torch is not installed")
class TorchBackendTests(unittest.TestCase):
    def test_inputs(self):
        from pmqa.run.torch_backend import TorchBackend
        cf = si.make_case(pad=24, fmt="e4m3fnuz")
        for device in DEVICES:
            with self.subTest(device=device):
                b = TorchBackend(device)
                kv = b.kv_view(cf.kv_cache, cf.block_size, cf.head_dim)
                self.assertEqual(kv.dtype, torch.uint8)
                self.assertEqual(tuple(kv.shape), (cf.num_blocks, cf.block_size, 1, cf.head_dim + 4))
                self.assertEqual(kv.stride(), (cf.block_stride, cf.head_dim + 4, cf.head_dim + 4, 1))
                self.assertEqual(kv.cpu().numpy().reshape(cf.num_blocks, -1).tobytes(),
                                 cf.kv_cache[:, :cf.block_size * (cf.head_dim + 4)].tobytes())
                q = b.fp8(cf.q, cf.fp8_format)
                if hasattr(torch, "float8_e4m3fnuz"):
                    self.assertEqual(q.dtype, torch.float8_e4m3fnuz)
                    self.assertNotIn("e4m3fnuz", b.fp8_as_codes)
                else:  # torch < 2.2: the codes, and the header says why
                    self.assertEqual(q.dtype, torch.uint8)
                    self.assertIn("torch >= 2.2 has it", b.fp8_as_codes["e4m3fnuz"])
                    self.assertIn("uint8 codes", b.describe())
                self.assertEqual(q.view(torch.uint8).cpu().numpy().tobytes(), cf.q.tobytes())
                self.assertGreater(b.num_sms(), 0)

    def test_guarded_buffer(self):
        from pmqa.run.torch_backend import TorchBackend
        for device in DEVICES:
            with self.subTest(device=device):
                b = TorchBackend(device)
                g = GuardedBuffer(b, (2,), rows=3, cols=5, pad=4, inner="-inf")
                self.assertEqual(g.view.stride(), (5 * 9, 9, 1))
                self.assertTrue(torch.isneginf(g.view).all())
                self.assertIsNone(g.guard_problem())
                g.base[1, 2, 7] = 1.0
                self.assertIn("row 1 of head [1], column 7", g.guard_problem())
                g.reset()
                self.assertIsNone(g.guard_problem())
                s = GuardedBuffer(b, (), rows=2, cols=3, pad=0)
                bits = b.to_numpy(s.view).view(np.uint32)
                self.assertTrue((bits == SENTINEL_BITS).all())

    def test_timing(self):
        from pmqa.run.torch_backend import TorchBackend
        for device in DEVICES:
            with self.subTest(device=device):
                b = TorchBackend(device)
                x = torch.ones(1 << 20, device=b.device)
                t = b.time_calls(lambda: x.mul_(1.0), lambda: None, 1, 3, 1 << 20)
                self.assertEqual(len(t.wall_ms), 3)
                self.assertTrue(all(ms > 0 for ms in t.wall_ms))
                if b.is_cuda:  # the profiler's pass: one kernel per call
                    self.assertEqual(t.activities, [1, 1, 1])
                    self.assertTrue(all(ms > 0 for ms in t.kernel_ms))
                else:
                    self.assertIsNone(t.kernel_ms)
                    self.assertIn("wall time only", t.how)


if __name__ == "__main__":
    unittest.main()


@unittest.skipIf(torch is None, "torch is not installed")
class TorchRunner(unittest.TestCase):
    """pmqa-run --backend torch with eager_torch_op, the whole command, on whatever torch is here:
    every case written (on a torch without fp8 dtypes the op is told the format of its uint8 codes)."""

    def test_every_case_runs(self):
        import contextlib
        import io
        import tempfile

        import pmqa.cases
        from pmqa.run import main
        with tempfile.TemporaryDirectory() as tmp:
            cases = Path(tmp) / "cases"
            cases.mkdir()
            for i, kw in enumerate([{}, dict(fmt="e4m3fnuz"), dict(lens2d=True, next_n=3), dict(pad=40)]):
                cf = si.make_case(seed=40 + i, name=f"c{i}", **kw)
                pmqa.cases.write_case_file(cases / f"{cf.name}.safetensors", cf)
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                status = main(["--backend", "torch", "--device", "cpu", "--in-process", "--convention", "eager",
                               "--op", "eager_torch_op:fp8_paged_mqa_logits", "--cases", str(cases),
                               "--out", str(Path(tmp) / "out")])
            text = buf.getvalue()
            self.assertEqual(status, 0, text)
            self.assertIn("4 written, 0 failed", text)
            if not HAS_FP8_DTYPES:
                self.assertIn("as uint8 codes", text)
