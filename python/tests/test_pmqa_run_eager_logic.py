"""eager_torch_op's logic without torch: the op runs on run_fake_torch (numpy underneath) and
must agree with the spec's stand-in on every cell -- the same -inf and NaN pattern, finite cells
within fp32 summation-order noise. torch's own semantics are test_pmqa_run_torch.py's business."""

from __future__ import annotations

import importlib.util
import sys
import unittest
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import run_fake_torch as ft  # noqa: E402
import run_standins as si  # noqa: E402
from pmqa.run import NumpyBackend  # noqa: E402
from pmqa.run.conventions import CONVENTIONS, RunOptions  # noqa: E402


def load_eager_on_fake_torch():
    saved = sys.modules.get("torch")
    sys.modules["torch"] = ft.as_module()
    try:
        spec = importlib.util.spec_from_file_location("eager_torch_on_fake_torch",
                                                      HERE.parent / "examples" / "eager_torch_op.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved


EAGER = load_eager_on_fake_torch()


def fake_args(cf):
    """What the torch backend would hand the op, as fake tensors (kv strided over the block stride)."""
    inv = CONVENTIONS["eager"].build(cf, NumpyBackend(), RunOptions())
    q, kv, w, lens, table, max_len = inv.args
    fp8 = {"e4m3fn": ft.float8_e4m3fn, "e4m3fnuz": ft.float8_e4m3fnuz}[q.format]
    return (ft.Tensor(q.codes, fp8), ft.Tensor(kv, ft.uint8), ft.tensor_from(w), ft.tensor_from(lens),
            ft.tensor_from(table), max_len), inv.args


class EagerLogic(unittest.TestCase):
    def same(self, cf, **kwargs):
        fake, args = fake_args(cf)
        got = EAGER.fp8_paged_mqa_logits(*fake, **kwargs).a
        want = si.eager_ok(*args)
        self.assertEqual(got.dtype, np.float32)
        self.assertEqual(got.shape, want.shape)
        self.assertTrue(np.array_equal(np.isneginf(got), np.isneginf(want)), f"{cf.name}: -inf pattern")
        self.assertTrue(np.array_equal(np.isnan(got), np.isnan(want)), f"{cf.name}: NaN pattern")
        finite = np.isfinite(want)
        if finite.any():
            scale = float(np.abs(want[finite]).max())
            err = float(np.abs(got[finite].astype(np.float64) - want[finite]).max())
            self.assertLessEqual(err, 1e-4 * max(scale, 1e-30), f"{cf.name}: max error {err}, max |ref| {scale}")

    def test_shapes(self):
        variants = [dict(), dict(pad=40), dict(fmt="e4m3fnuz"), dict(lens2d=True, next_n=3),
                    dict(block_size=1, max_blocks=40, num_blocks=50), dict(batch=0), dict(next_n=1),
                    dict(heads=64, head_dim=128, block_size=64, max_blocks=3, max_model_len=150),
                    dict(max_model_len=7, block_size=4, max_blocks=2), dict(batch=5, next_n=4, heads=3)]
        for i, kw in enumerate(variants):
            for seed in (1, 2):
                with self.subTest(variant=kw, seed=seed):
                    self.same(si.make_case(seed=seed + 10 * i, name=f"v{i}-{seed}", **kw))

    def test_chunked_keys(self):
        for limit in (1, 3000):
            with self.subTest(limit=limit):
                self.same(si.make_case(seed=3, max_blocks=5, num_blocks=9, max_model_len=80), max_chunk_elements=limit)

    def test_nan_codes_propagate(self):
        for fmt, code in (("e4m3fn", 0x7F), ("e4m3fnuz", 0x80)):
            cf = si.make_case(seed=5, fmt=fmt, name=f"nan-{fmt}")
            cf.context_lens[:] = cf.max_model_len // 2
            cf.q[0, 0, 1, 3] = code
            cf.kv_cache[cf.block_table[1, 0], 2 * cf.head_dim + 1] = code
            self.same(cf)

    def test_unread_table_entries_may_hold_anything(self):
        cf = si.make_case(seed=6, max_blocks=4, max_model_len=60)
        cf.context_lens[:] = [5, 20]
        cf.block_table[0, 1:] = -1
        cf.block_table[1, 2:] = 10 ** 6
        self.same(cf)

    def test_errors(self):
        cf = si.make_case(seed=7, max_blocks=4, max_model_len=60)
        cf.context_lens[:] = [5, 20]
        cf.block_table[1, 1] = 99
        fake, _ = fake_args(cf)
        with self.assertRaisesRegex(ValueError, r"block_table\[1\]\[1\] = 99 is outside \[0, 5\)"):
            EAGER.fp8_paged_mqa_logits(*fake)
        with self.assertRaisesRegex(TypeError, "uint8 codes: pass fp8_format"):
            EAGER.fp8_paged_mqa_logits(ft.Tensor(cf.q, ft.uint8), *fake[1:])
        with self.assertRaisesRegex(ValueError, "but fp8_format is 'e4m3fnuz'"):
            EAGER.fp8_paged_mqa_logits(*fake, fp8_format="e4m3fnuz")


if __name__ == "__main__":
    unittest.main()
