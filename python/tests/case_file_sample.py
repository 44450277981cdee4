"""The interop sample: a small case built from formulas only.

cases/tests/case_file_test_support.hpp (sample_case_file) builds the very same case in C++, so
a file either side writes can be checked value by value (and byte by byte) by the other. Keep the
two in step.
"""

from __future__ import annotations

import numpy as np

from pmqa.cases import CaseFile


def sample_case_file() -> CaseFile:
    b, n, h, d = 2, 2, 3, 16
    block_size, num_blocks, max_model_len = 16, 5, 40
    stride = block_size * (d + 4) + 12
    q = ((np.arange(b * n * h * d, dtype=np.int64) * 29 + 3) % 127).astype(np.uint8).reshape(b, n, h, d)
    kv = np.full((num_blocks, stride), 0xA5, dtype=np.uint8)
    k = np.arange(block_size * d, dtype=np.int64)
    t = np.arange(block_size, dtype=np.float32)
    for p in range(num_blocks):
        kv[p, :block_size * d] = ((p * 31 + k * 7 + 1) % 127).astype(np.uint8)
        scales = (np.float32(1.0) + np.float32(0.25) * t + np.float32(p)).astype("<f4")
        kv[p, block_size * d:block_size * (d + 4)] = scales.view(np.uint8)
    weights = (np.arange(b * n * h, dtype=np.float32) * np.float32(0.125) - np.float32(1.0)).reshape(b * n, h)
    context_lens = np.array([33, 7], dtype=np.int32)
    block_table = np.array([[4, 1, 3], [2, -1, -1]], dtype=np.int32)
    cf = CaseFile(q=q, kv_cache=kv, weights=weights, context_lens=context_lens, block_table=block_table,
                  block_size=block_size, max_model_len=max_model_len, value_format="e4m3fnuz", kv_layout="shuffle",
                  contract="valid-only", name="interop-sample", suite="interop", seed=12345678901234567890,
                  producer="interop-sample", extra={"bench_ms": "1.25", "note": "h\u00e9llo \u2713"})
    rows = b * n
    e_r = cf.valid_keys()
    j = np.arange(max_model_len, dtype=np.int64)
    r = np.arange(rows, dtype=np.int64)
    values = ((r[:, None] * max_model_len + j[None, :]).astype(np.float32) * np.float32(0.5) - np.float32(3.0))
    logits = np.where(j[None, :] < e_r[:, None], values, np.float32(-np.inf)).astype(np.float32)
    logits.reshape(-1).view(np.uint32)[1 * 40 + 5] = 0x7FC00000  # a NaN with a fixed payload
    cf.logits = logits
    return cf
