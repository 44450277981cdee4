"""The first test on a GPU: a Triton kernel judged by pmqa on CUDA tensors.

The kernel below is a plain Triton implementation written from the spec (one program per row and
tile of keys, the sum over D and over the heads in fp32, relu keeping NaN), inside the envelope
AITER's Triton kernel has on NVIDIA: e4m3fn, NORMAL layout, 1-D context lengths, a power-of-two head
count. The marker asks for that suite on the GPU; on a machine without one every case is skipped
with the reason.

    python -m pytest test_triton_kernel.py                 # the quick suite fitted to the envelope
    python -m pytest test_triton_kernel.py -n 2            # pytest-xdist: each worker on one GPU
    python -m pytest test_triton_kernel.py --pmqa-suite standard
"""
import pytest

import pmqa

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = triton.language

BLOCK_K = 64


@triton.jit
def _logits_kernel(q_ptr, kv_ptr, w_ptr, lens_ptr, table_ptr, out_ptr, stride_kv, stride_table, stride_out,
                   max_model_len, NEXT_N: tl.constexpr, H: tl.constexpr, D: tl.constexpr, BS: tl.constexpr,
                   BLOCK: tl.constexpr):
    r = tl.program_id(0)                     # row r = b * NEXT_N + n
    b, n = r // NEXT_N, r % NEXT_N
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    valid = j < tl.load(lens_ptr + b) - NEXT_N + n + 1                   # spec 1.2, 1-D lengths
    page = tl.load(table_ptr + b * stride_table + j // BS, mask=valid, other=0).to(tl.int64)
    t = (j % BS).to(tl.int64)
    d = tl.arange(0, D)
    codes = tl.load(kv_ptr + page[:, None] * stride_kv + t[:, None] * D + d[None, :], mask=valid[:, None], other=0)
    k = codes.to(tl.float8e4nv, bitcast=True).to(tl.float32)            # [BLOCK, D], exact
    s_ptr = kv_ptr + page * stride_kv + BS * D + t * 4                  # little-endian fp32 scales
    bits = (tl.load(s_ptr, mask=valid, other=0).to(tl.uint32)
            | (tl.load(s_ptr + 1, mask=valid, other=0).to(tl.uint32) << 8)
            | (tl.load(s_ptr + 2, mask=valid, other=0).to(tl.uint32) << 16)
            | (tl.load(s_ptr + 3, mask=valid, other=0).to(tl.uint32) << 24))
    scale = bits.to(tl.float32, bitcast=True)
    logit = tl.zeros([BLOCK], dtype=tl.float32)
    for h in range(H):
        q = tl.load(q_ptr + (r * H + h) * D + d).to(tl.float8e4nv, bitcast=True).to(tl.float32)
        x = tl.sum(k * q[None, :], axis=1) * scale
        x = tl.where(x < 0, 0.0, x)                                      # relu that keeps NaN
        logit += x * tl.load(w_ptr + r * H + h)
    tl.store(out_ptr + r * stride_out + j, tl.where(valid, logit, float("-inf")), mask=j < max_model_len)


def triton_logits(q, kv_blocks, weights, context_lens, block_table, max_model_len):
    """logits [B*N, max_model_len] float32 from the framework view of the cache (spec 2)."""
    batch, next_n, heads, dim = q.shape
    out = torch.empty((batch * next_n, max_model_len), dtype=torch.float32, device=q.device)
    if out.numel():
        grid = (batch * next_n, triton.cdiv(max_model_len, BLOCK_K))
        _logits_kernel[grid](q.view(torch.uint8), kv_blocks, weights, context_lens, block_table, out,
                             kv_blocks.stride(0), block_table.stride(0), out.stride(0), max_model_len,
                             NEXT_N=next_n, H=heads, D=dim, BS=kv_blocks.shape[1], BLOCK=BLOCK_K)
    return out


@pytest.mark.pmqa(fit="aiter-fused:cuda", device="cuda")
def test_triton_kernel(pmqa_case):
    c = pmqa_case
    logits = triton_logits(c.q, c.kv_cache_blocks, c.weights, c.context_lens, c.block_table, c.max_model_len)
    pmqa.assert_matches(c, logits)  # fp32 sums: the fp32 profile; NaN propagates as the spec's default
