"""Test an FP8 paged MQA logits kernel against pmqa's oracle: one test per case of a suite.

Copy this file into your kernel's tests and replace ``my_kernel`` by a call of your kernel. Then

    python -m pytest test_my_kernel.py                          # pmqa's quick suite (seconds)
    python -m pytest test_my_kernel.py --pmqa-suite standard    # 187 cases: lengths, pages, formats, NaN codes
    python -m pytest test_my_kernel.py --pmqa-device cuda       # the inputs as torch tensors on the GPU
    python -m pytest test_my_kernel.py --pmqa-fit aiter-fused   # only the cases your library's envelope holds

With pmqa installed (the README's quick start) pytest loads the plugin by itself; from a pmqa source
tree add ``-p pmqa.pytest_plugin``. A failing case prints pmqa's report: the gates the output broke,
the first mismatches decoded to row, column and page, a text map of where the errors sit; it leaves
the case with the logits and an SVG map in --pmqa-artifacts and ends with the command that
reproduces the verdict (``pmqa verify FILE``). test_triton_kernel.py is the same on a GPU.

``my_kernel`` below is a plain numpy stand-in, written from the spec, so that this file runs as it
is (the fp32 sums of a correct kernel, NaN propagating, -inf past each row's valid keys).
"""
import numpy as np

import pmqa


def _fp8_table(fmt):
    """The 256 values of an E4M3 format (spec §3): bias 7 (e4m3fn) or 8 (e4m3fnuz)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    e, m = (codes >> 3) & 0xF, codes & 0x7
    bias = 7 if fmt == "e4m3fn" else 8
    values = np.where(e == 0, m * 2.0 ** (-bias - 2), 2.0 ** (e - bias) * (1 + m / 8)) * sign
    nan = (codes & 0x7F) == 0x7F if fmt == "e4m3fn" else codes == 0x80
    return np.where(nan, np.nan, values).astype(np.float32)


def my_kernel(q, kv_blocks, weights, context_lens, block_table, max_model_len, *, fp8, layout):
    """logits[b*N + n, j] = sum_h weights[r, h] * relu(scale_j * q[b, n, h] . k_j) for the valid keys
    of each row, -inf after them. kv_blocks: [num_blocks, block_size, 1, D+4] uint8 (spec §2)."""
    table = _fp8_table(fmt=fp8)
    batch, next_n, heads, dim = q.shape
    num_blocks, block_size = kv_blocks.shape[:2]
    blocks = np.ascontiguousarray(kv_blocks).reshape(num_blocks, -1)[:, :block_size * (dim + 4)]
    codes = blocks[:, :block_size * dim]
    if layout == "shuffle":  # 16-token x 16-byte tiles
        t, d = np.arange(block_size)[:, None], np.arange(dim)[None, :]
        codes = codes[:, (t // 16) * 16 * dim + (d // 16) * 256 + (t % 16) * 16 + d % 16]
    keys = table[codes.reshape(num_blocks, block_size, dim)]
    scales = np.ascontiguousarray(blocks[:, block_size * dim:]).view("<f4")
    lens = np.asarray(context_lens, dtype=np.int64)
    if lens.ndim == 1:  # 1-D: row n sees context_len - next_n + n + 1 keys
        lens = lens[:, None] - next_n + np.arange(next_n)[None, :] + 1
    out = np.full((batch * next_n, max_model_len), -np.inf, dtype=np.float32)
    w = np.asarray(weights, dtype=np.float32).reshape(batch, next_n, heads)
    for b in range(batch):
        emax = int(max(lens[b].max(), 0))
        if emax == 0:
            continue
        j = np.arange(emax)
        pages = np.asarray(block_table[b], dtype=np.int64)[j // block_size]
        k, s = keys[pages, j % block_size], scales[pages, j % block_size]
        with np.errstate(invalid="ignore"):
            dots = table[np.asarray(q[b])] @ k.T * s                 # [N, H, keys]
            logits = (np.maximum(dots, 0) * w[b][:, :, None]).sum(axis=1, dtype=np.float32)
        for n in range(next_n):
            e = int(max(lens[b, n], 0))
            out[b * next_n + n, :e] = logits[n, :e]
    return out


def test_my_kernel(pmqa_case):
    case = pmqa_case
    logits = my_kernel(case.q, case.kv_cache_blocks, case.weights, case.context_lens, case.block_table,
                       case.max_model_len, fp8=case.fp8, layout=case.layout)
    # Your kernel's promises: contract="valid-only" when it leaves the cells past E_r alone,
    # tolerance="matrix-unit" for fp8 tensor-core sums, nan="relu-clamp" when relu is max(x, 0).
    pmqa.assert_matches(case, logits)
