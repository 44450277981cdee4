"""numpy stand-in ops for the pmqa-run tests: one per calling convention, following it exactly, and a
few with a planted convention mistake. They receive what pmqa-run's numpy backend hands an op:
q as pmqa.run.Fp8Tensor (uint8 codes + format), kv_cache as a uint8 [num_blocks, block_size, 1, D+4]
strided view, the other inputs as numpy arrays, output buffers as float32 views with a row stride.

The fp8 decode and the KV indexing are written here from spec §2-§3 (never imported from pmqa's C++
code or from pmqa-run), so a shared bug cannot pass both sides.
"""

from __future__ import annotations

import os
import time

import numpy as np

try:
    from pmqa.run.backend import record_kernel
except ImportError:  # the stand-ins also run without pmqa-run on the path
    def record_kernel(name, nbytes=0):
        pass


def nbytes(*arrays) -> int:
    """The bytes of what a kernel reads or writes (an Fp8Tensor counts its codes): what the numpy
    backend's device model times a launch by (record_kernel)."""
    return int(sum(np.asarray(getattr(a, "codes", a)).nbytes for a in arrays))

# ============================================================================ spec §3: fp8 decode


def _decode_table(fmt: str) -> np.ndarray:
    """All 256 codes of an E4M3 format as float32: 1 sign, 4 exponent, 3 mantissa bits, no infinities."""
    bias = 7 if fmt == "e4m3fn" else 8
    out = np.empty(256, dtype=np.float32)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> 3) & 0xF
        m = code & 0x7
        if fmt == "e4m3fn" and (code & 0x7F) == 0x7F:
            value = float("nan")                              # 0x7F and 0xFF
        elif fmt == "e4m3fnuz" and code == 0x80:
            value = float("nan")                              # the only NaN; no -0
        elif e == 0:
            value = sign * m * 2.0 ** (1 - bias - 3)          # subnormal: m * 2^-9 (fn), m * 2^-10 (fnuz)
        else:
            value = sign * 2.0 ** (e - bias) * (1 + m / 8)
        out[code] = value
    return out


DECODE = {"e4m3fn": _decode_table("e4m3fn"), "e4m3fnuz": _decode_table("e4m3fnuz")}


def decode(codes: np.ndarray, fmt: str) -> np.ndarray:
    return DECODE[fmt][np.asarray(codes, dtype=np.uint8)]


# ============================================================================ spec §2: KV bytes


def kv_blocks(kv: np.ndarray) -> np.ndarray:
    """[num_blocks, block_size, 1, D+4] (any strides) -> each block's bytes, [num_blocks, block_size*(D+4)]."""
    nb, bs, _, row = kv.shape
    return np.asarray(kv).reshape(nb, bs * row)  # reshape follows the strides (a copy when padded)


def kv_values_scales(kv: np.ndarray, head_dim: int, layout: str):
    """(value codes [num_blocks, block_size, D] as uint8, scales [num_blocks, block_size] float32)."""
    nb, bs, _, _ = kv.shape
    d = head_dim
    blocks = kv_blocks(kv)
    region = blocks[:, :bs * d]
    if layout == "normal":
        values = region.reshape(nb, bs, d)
    else:  # SHUFFLE: 16-token x 16-byte tiles
        t = np.arange(bs)[:, None]
        dd = np.arange(d)[None, :]
        offset = (t // 16) * 16 * d + (dd // 16) * 256 + (t % 16) * 16 + (dd % 16)
        values = region[:, offset]
    scales = np.ascontiguousarray(blocks[:, bs * d:bs * (d + 4)]).view("<f4").reshape(nb, bs)
    return values, scales


# ============================================================================ the operation (spec §1)


def valid_keys(context_lens: np.ndarray, next_n: int) -> np.ndarray:
    """E_r per row, int64 [B*N]."""
    lens = np.asarray(context_lens, dtype=np.int64)
    if lens.ndim == 2:
        return lens.reshape(-1)
    n = np.arange(next_n, dtype=np.int64)
    return (lens[:, None] - next_n + n[None, :] + 1).reshape(-1)


def per_head_values(q, kv, weights, context_lens, block_table, *, layout="normal", fmt=None, lens_1d=None,
                    relu="propagate"):
    """For each sequence b: (E [N], values [N, H, Emax]) with values = w * relu(s * dot) for keys < Emax.

    fmt overrides the q/kv format (a planted mistake), lens_1d makes 2-D lengths read as 1-D ones.
    relu: "propagate" (NaN stays NaN, the eager op) or "clamp" (max(x, 0) gives 0 for NaN, as the
    tensor-core libraries compute it; spec §1.1).
    """
    codes, qfmt = q.codes, q.format
    fmt = fmt or qfmt
    b_count, n_count, h_count, d = codes.shape
    values, scales = kv_values_scales(kv, d, layout)
    bs = kv.shape[1]
    lens = np.asarray(context_lens)
    if lens_1d is not None:
        lens = lens_1d
    e_all = valid_keys(lens, n_count).reshape(b_count, n_count)
    qf = decode(codes, fmt)
    w = np.asarray(weights, dtype=np.float32).reshape(b_count, n_count, h_count)
    for b in range(b_count):
        e = e_all[b]
        emax = int(max(e.max(initial=0), 0))
        if emax == 0:
            yield b, e, np.zeros((n_count, h_count, 0), dtype=np.float32)
            continue
        if lens_1d is not None:  # the planted mistake reads past what the table maps: stay in the arrays
            emax = min(emax, block_table.shape[1] * bs)
        j = np.arange(emax)
        pages = np.asarray(block_table[b], dtype=np.int64)[j // bs]
        if lens_1d is not None:
            pages = np.clip(pages, 0, values.shape[0] - 1)
        k = decode(values[pages, j % bs], fmt)                        # [Emax, D]
        s = scales[pages, j % bs]                                     # [Emax]
        with np.errstate(all="ignore"):                               # NaN codes, garbage from planted bugs
            dots = np.matmul(qf[b], k.T)                              # [N, H, Emax], fp32
            x = dots * s[None, None, :]
            v = np.maximum(x, np.float32(0)) if relu == "propagate" else np.where(x > 0, x, np.float32(0))
            v = v * w[b][:, :, None]
        yield b, e, v


def logits_into(out, q, kv, weights, context_lens, block_table, max_model_len, *, tail="all", chunk=256, **kw):
    """Writes logits into out[B*N, L] (a strided view). tail: "all" -inf for every j >= E_r (clean),
    "chunk" -inf only up to the next multiple of chunk (AITER's fused kernel), "none" leaves them."""
    n_count = q.codes.shape[1]
    for b, e, v in per_head_values(q, kv, weights, context_lens, block_table, **kw):
        with np.errstate(all="ignore"):
            sums = v.sum(axis=1, dtype=np.float32)                    # [N, Emax]
        for n in range(n_count):
            r = b * n_count + n
            er = int(max(min(e[n], max_model_len, sums.shape[1]), 0))
            out[r, :er] = sums[n, :er]
            end = {"all": max_model_len, "chunk": min(max_model_len, -(-er // chunk) * chunk), "none": er}[tail]
            out[r, er:end] = -np.inf


# ============================================================================ conventions, followed exactly


EAGER_KERNELS = ("void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<...> >(long, ...)",
                 "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(...)>(...)",
                 "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_kernel__5x_cublas",
                 "void at::native::vectorized_elementwise_kernel<4, at::native::clamp_min_scalar_kernel_impl(...)>(...)",
                 "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
                 "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)> > >(...)")


def eager_ok(q, kv_cache, weights, context_lens, block_table, max_model_len):
    """The eager op: its launches as the profiler lists them, each with the bytes an eager op moves
    (the keys gathered and copied, the per-head scores written, clamped and summed: H-fold)."""
    rows, heads = q.codes.shape[0] * q.codes.shape[1], q.codes.shape[2]
    out = np.empty((rows, max_model_len), dtype=np.float32)
    per_head = heads * out.nbytes
    record_kernel(EAGER_KERNELS[0], 2 * nbytes(kv_cache) + nbytes(block_table, context_lens))
    record_kernel(EAGER_KERNELS[1], 2 * nbytes(kv_cache))
    record_kernel(EAGER_KERNELS[2], nbytes(q, kv_cache) + per_head)
    record_kernel(EAGER_KERNELS[3], 2 * per_head + nbytes(weights))
    record_kernel(EAGER_KERNELS[4], per_head + out.nbytes)
    logits_into(out, q, kv_cache, weights, context_lens, block_table, max_model_len, tail="all")
    return out


# ---- the libraries' limits, raised the way the real ones raise (../shared/realworld/README.md lists
# what made them raise on an H200; the messages are Triton's, torch's and Python's own where the
# README names them, and DeepGEMM-like host assertions where it does not)


class TritonError(Exception):
    """Stands in for triton.compiler.errors.CompilationError (what Triton raises at compile time)."""


def _triton_limits(q, kv_cache, heads):
    """What AITER's plain Triton kernels on NVIDIA cannot do (fused and stage 1 alike)."""
    if q.format == "e4m3fnuz":
        raise TritonError("type fp8e4b8 not supported in this architecture. The supported fp8 dtypes are "
                          "('fp8e4nv', 'fp8e5')")
    if kv_cache.strides[0] % 4:
        raise RuntimeError(f"self.stride(-2) must be divisible by 4 to view Byte as Float (different element "
                           f"sizes), but got {kv_cache.strides[0]}")
    if heads & (heads - 1):
        raise TritonError("arange's range must be a power of 2")


def aiter_fused_ok(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
                   Preshuffle=False, KVBlockSize=1, ChunkK=256, **_):
    """AITER's fused kernel as on ROCm (the Gluon kernel reads SHUFFLE with Preshuffle=True)."""
    assert np.asarray(context_lens).ndim == 1, "aiter-fused takes 1-D context_lens"
    assert kv_cache.shape[1] == KVBlockSize
    batch = q_fp8.codes.shape[0]
    _ = (batch * q_fp8.codes.shape[1]) // batch  # the wrapper's split of the grid: B = 0 divides by zero
    layout = "shuffle" if Preshuffle else "normal"
    record_kernel("_gluon_deepgemm_fp8_paged_mqa_logits_preshuffle" if Preshuffle else "_deepgemm_fp8_paged_mqa_logits",
                  nbytes(q_fp8, kv_cache, weights, context_lens, block_table, out_logits))
    logits_into(out_logits, q_fp8, kv_cache, weights, context_lens, block_table, max_model_len, tail="chunk",
                chunk=ChunkK, layout=layout, relu="clamp")
    return "cache-key"  # AITER returns a compile-cache key; the runner ignores it


def aiter_fused_triton(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
                       Preshuffle=False, KVBlockSize=1, ChunkK=256, **kw):
    """AITER's fused kernel as on CUDA: the plain Triton kernel (no Gluon, so no SHUFFLE)."""
    if Preshuffle:
        raise RuntimeError("Preshuffle=True needs the Gluon kernel, which is only built for AMD GPUs")
    _triton_limits(q_fp8, kv_cache, q_fp8.codes.shape[2])
    return aiter_fused_ok(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
                          Preshuffle=Preshuffle, KVBlockSize=KVBlockSize, ChunkK=ChunkK, **kw)


def aiter_stage1_ok(q_fp8, kv_cache, weights, out_qk, context_lens, block_table, max_model_len, ChunkQ=64,
                    ChunkK=256, **_):
    """AITER's stage 1: the block size from kv_cache.shape[1], heads in groups of ChunkQ."""
    assert np.asarray(context_lens).ndim == 1
    heads = q_fp8.codes.shape[2]
    groups = heads // ChunkQ
    _ = out_qk.shape[0] // groups  # H < ChunkQ: no group, and the grid split divides by zero
    assert heads % ChunkQ == 0
    record_kernel("_deepgemm_fp8_paged_mqa_logits_stage1", nbytes(q_fp8, kv_cache, weights, context_lens, block_table,
                                                                 out_qk))
    n_count = q_fp8.codes.shape[1]
    for b, e, v in per_head_values(q_fp8, kv_cache, weights, context_lens, block_table, relu="clamp"):
        for n in range(n_count):
            r = b * n_count + n
            er = int(max(min(e[n], max_model_len), 0))
            out_qk[:, r, :er] = v[n, :, :er]
            end = min(max_model_len, -(-er // ChunkK) * ChunkK)         # -inf in whole chunks, rest pre-filled
            out_qk[:, r, er:end] = -np.inf
    return None


def aiter_stage1_triton(q_fp8, kv_cache, weights, out_qk, context_lens, block_table, max_model_len, **kw):
    """AITER's stage 1 as on CUDA; B = 0 never ran there (modelled as the grid's division by zero)."""
    _triton_limits(q_fp8, kv_cache, q_fp8.codes.shape[2])
    _ = 1 // q_fp8.codes.shape[0]
    return aiter_stage1_ok(q_fp8, kv_cache, weights, out_qk, context_lens, block_table, max_model_len, **kw)


def get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms):
    assert np.asarray(context_lens).ndim == 2, "DeepGEMM's metadata takes 2-D context_lens"
    record_kernel("void deep_gemm::smxx_paged_mqa_logits_metadata<32u, 256u, 132u>(unsigned int, unsigned int, bool, "
                  "unsigned int const*, unsigned int*)", nbytes(context_lens) + (num_sms + 1) * 8)
    meta = np.zeros((num_sms + 1, 2), dtype=np.int32)
    meta[:, 0] = np.arange(num_sms + 1)
    meta[0, 1] = block_kv
    return meta


def _deepgemm_assert(ok, text):
    if not ok:
        raise RuntimeError(f"Assertion error (csrc/apis/attention.hpp): {text}")


def deepgemm_ok(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, clean_logits=False):
    """DeepGEMM's SM90 kernel: its host checks, then row (b, n) computed up to context_lens[b][N-1]
    only, into an output it allocates without initialising (cells it does not write keep the
    memory's previous contents)."""
    from pmqa.run.backend import uninitialised

    lens = np.asarray(context_lens)
    assert lens.ndim == 2 and lens.shape == q.codes.shape[:2], "DeepGEMM takes 2-D context_lens [B, N]"
    b_count, n_count, heads, dim = q.codes.shape
    _deepgemm_assert(q.format == "e4m3fn", "q.scalar_type() == torch::kFloat8_e4m3fn")
    _deepgemm_assert(kv_cache.shape[1] == 64, f"block_kv == 64 (block_kv = {kv_cache.shape[1]})")
    _deepgemm_assert(heads in (32, 64), f"num_heads == 32 or num_heads == 64 (num_heads = {heads})")
    _deepgemm_assert(n_count in (1, 2), f"next_n == 1 or next_n == 2 (next_n = {n_count})")
    _deepgemm_assert(dim in (32, 64, 128), f"unsupported head_dim {dim}")
    _deepgemm_assert(kv_cache.strides[0] % 16 == 0, "kv_cache.stride(0) * kv_cache.element_size() % 16 == 0 (TMA)")
    assert schedule_meta.shape[1] == 2 and schedule_meta[0, 1] == kv_cache.shape[1]
    rows = b_count * n_count
    stride = -(-max(max_context_len, 1) // 256) * 256                 # DeepGEMM pads rows
    out = uninitialised((rows, stride))[:, :max_context_len]
    computed = np.repeat(lens[:, -1:], n_count, axis=1) if n_count else lens
    record_kernel("void deep_gemm::sm90_fp8_paged_mqa_logits<64u, 2u, 128u, 64u, 4u, 128u, 256u, float>(...)",
                  nbytes(q, kv_cache, weights, lens, block_table, out))
    full = np.full((rows, max_context_len), np.nan, dtype=np.float32)
    logits_into(full, q, kv_cache, weights, lens, block_table, max_context_len, tail="all" if clean_logits else "none",
                relu="clamp")
    e_comp = computed.reshape(-1)
    for r in range(rows):
        upto = int(max(min(e_comp[r], max_context_len), 0))
        e_r = int(max(min(lens.reshape(-1)[r], max_context_len), 0))
        out[r, :min(upto, e_r)] = full[r, :min(upto, e_r)]
        if clean_logits:
            out[r, e_r:] = -np.inf
    return out


def vllm_eager(q, kv_cache, weights, context_lens, block_table, max_model_len):
    """vLLM's torch fallback's store for next_n > 1: whole blocks into logits[:, i*bs:(i+1)*bs], so a
    last block that ends past max_model_len raises torch's shape error (the numbers here are
    eager_ok's: the fallback's known wrong answers for block_size > 1 are not modelled)."""
    b_count, n_count = q.codes.shape[:2]
    bs = kv_cache.shape[1]
    lens = np.asarray(context_lens)
    if n_count > 1:
        for b in range(b_count):
            longest = int(lens[b].max()) if lens.ndim == 2 else int(lens[b])
            last = -(-longest // bs) - 1
            if last >= 0 and (last + 1) * bs > max_model_len:
                have = max_model_len - last * bs
                raise RuntimeError(f"The expanded size of the tensor ({have}) must match the existing size ({bs}) at "
                                   f"non-singleton dimension 1.  Target sizes: [{n_count}, {have}].  Tensor sizes: "
                                   f"[{n_count}, {bs}]")
    return eager_ok(q, kv_cache, weights, context_lens, block_table, max_model_len)


# ============================================================================ planted convention mistakes


def deepgemm_lens_as_1d(q, kv_cache, weights, context_lens, block_table, schedule_meta, max_context_len, **_):
    """Reads the 2-D lengths through a 1-D pointer: context_lens[b] is taken as sequence b's length."""
    b_count = q.codes.shape[0]
    lens_1d = np.asarray(context_lens).reshape(-1)[:b_count]
    rows = b_count * q.codes.shape[1]
    out = np.full((rows, max_context_len), 12345.0, dtype=np.float32)
    logits_into(out, q, kv_cache, weights, context_lens, block_table, max_context_len, tail="none", lens_1d=lens_1d)
    return out


def eager_always_e4m3fn(q, kv_cache, weights, context_lens, block_table, max_model_len):
    """Decodes every case as OCP E4M3FN, whatever format q carries (the FNUZ-vs-OCP bug)."""
    rows = q.codes.shape[0] * q.codes.shape[1]
    out = np.empty((rows, max_model_len), dtype=np.float32)
    logits_into(out, q, kv_cache, weights, context_lens, block_table, max_model_len, fmt="e4m3fn")
    return out


def aiter_fused_reads_normal(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
                             Preshuffle=False, KVBlockSize=1, ChunkK=256, **_):
    """Ignores Preshuffle: reads a SHUFFLE cache with NORMAL indexing."""
    logits_into(out_logits, q_fp8, kv_cache, weights, context_lens, block_table, max_model_len, tail="chunk",
                chunk=ChunkK, layout="normal", relu="clamp")


def eager_dense_kv_stride(q, kv_cache, weights, context_lens, block_table, max_model_len):
    """Ignores the cache's block stride: block p taken at p * block_size * (D+4) bytes."""
    nb, bs, one, row = kv_cache.shape
    dense = np.lib.stride_tricks.as_strided(kv_cache, shape=kv_cache.shape, strides=(bs * row, row, row, 1),
                                            writeable=False)
    return eager_ok(q, dense, weights, context_lens, block_table, max_model_len)


def aiter_fused_dense_out(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
                          Preshuffle=False, KVBlockSize=1, ChunkK=256, **_):
    """Ignores the output's row stride: writes row r at r * max_model_len cells from the start."""
    rows, cols = out_logits.shape
    dense = np.lib.stride_tricks.as_strided(out_logits, shape=(rows, cols), strides=(cols * 4, 4))
    layout = "shuffle" if Preshuffle else "normal"
    logits_into(dense, q_fp8, kv_cache, weights, context_lens, block_table, max_model_len, tail="chunk",
                chunk=ChunkK, layout=layout, relu="clamp")


# ============================================================================ misbehaving ops (runner paths)


def raises(*args, **kwargs):
    raise RuntimeError("planted failure inside the op")


def wrong_shape(q, kv_cache, weights, context_lens, block_table, max_model_len):
    rows = q.codes.shape[0] * q.codes.shape[1]
    return np.zeros((rows, max_model_len + 1), dtype=np.float32)


def wrong_dtype(q, kv_cache, weights, context_lens, block_table, max_model_len):
    rows = q.codes.shape[0] * q.codes.shape[1]
    return np.zeros((rows, max_model_len), dtype=np.float64)


def writes_past_row(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len, **kw):
    """Correct values, then one store one cell past the end of row 0 (into the guard columns)."""
    aiter_fused_ok(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len, **kw)
    if out_logits.shape[0]:
        past = np.lib.stride_tricks.as_strided(out_logits, shape=(1, max_model_len + 1),
                                               strides=out_logits.strides)
        past[0, max_model_len] = 0.0


_calls = {"n": 0}


def racy(q, kv_cache, weights, context_lens, block_table, max_model_len):
    """Correct on the first call, one valid cell off on later ones (a race seen as run-to-run change)."""
    out = eager_ok(q, kv_cache, weights, context_lens, block_table, max_model_len)
    _calls["n"] += 1
    if _calls["n"] > 1:
        e = valid_keys(context_lens, q.codes.shape[1])
        rows = np.nonzero(e > 0)[0]
        if rows.size:
            out[rows[0], 0] += 1.0
    return out


def kwargs_echo(q, kv_cache, weights, context_lens, block_table, max_model_len, **kwargs):
    """eager_ok that insists on the keyword arguments the test passes."""
    assert kwargs == {"alpha": 3, "name": "x y", "flag": True}, kwargs
    return eager_ok(q, kv_cache, weights, context_lens, block_table, max_model_len)


# ============================================================================ small valid cases


def make_case(seed=1, batch=2, next_n=2, heads=4, head_dim=16, block_size=16, max_blocks=3, num_blocks=5,
              max_model_len=40, fmt="e4m3fn", layout="normal", lens2d=False, pad=0, name=None):
    """A small valid case (no NaN codes, scales > 0), built here so the tests need no generator."""
    import pmqa.cases

    rng = np.random.default_rng(seed)
    rows = batch * next_n
    stride = block_size * (head_dim + 4) + pad
    finite = np.array([c for c in range(256) if c not in (0x7F, 0xFF, 0x80)], dtype=np.uint8)
    q = rng.choice(finite, size=(batch, next_n, heads, head_dim)).astype(np.uint8)
    kv = rng.integers(0, 256, size=(num_blocks, stride), dtype=np.uint8)
    kv[:, :block_size * head_dim] = rng.choice(finite, size=(num_blocks, block_size * head_dim))
    scales = np.ldexp(np.float32(1), rng.integers(-8, 2, size=(num_blocks, block_size))).astype("<f4")
    kv[:, block_size * head_dim:block_size * (head_dim + 4)] = scales.view(np.uint8).reshape(num_blocks, -1)
    weights = rng.standard_normal((rows, heads)).astype(np.float32)
    limit = min(max_model_len, max_blocks * block_size)
    if lens2d:
        lens = rng.integers(0, limit + 1, size=(batch, next_n), dtype=np.int32)
    else:
        lens = rng.integers(0, limit + 1, size=(batch,), dtype=np.int32)
    table = rng.integers(0, num_blocks, size=(batch, max_blocks), dtype=np.int32)
    cf = pmqa.cases.CaseFile(q=q, kv_cache=kv, weights=weights, context_lens=lens, block_table=table,
                             block_size=block_size, max_model_len=max_model_len, value_format=fmt, kv_layout=layout,
                             name=name or f"made-{seed}", suite="pmqa-run-tests", seed=seed, producer="make_case")
    pmqa.cases.validate(cf)
    return cf


# ============================================================================ an engine's entry (vllm-rocm)


def _engine_entry(fused_archs, q, kv_cache, weights, context_lens, block_tables, schedule_metadata, max_model_len):
    """An engine entry with vLLM's shape: the fused kernel for the archs its guard names, stage 1 and a
    head sum for the others. The arch comes from PMQA_STANDIN_ARCH (the numpy backend has no device)."""
    arch = os.environ.get("PMQA_STANDIN_ARCH", "gfx950")
    b_count, n_count, heads, _ = q.codes.shape
    bs = kv_cache.shape[1]
    rows = b_count * n_count
    if arch in fused_archs:
        out = np.full((rows, max_model_len), np.nan, dtype=np.float32)
        aiter_fused_ok(q, kv_cache, weights, out, context_lens, block_tables, max_model_len, Preshuffle=bs > 1,
                       KVBlockSize=bs, ChunkK=256)
        return out
    out_qk = np.full((heads, rows, max_model_len), -np.inf, dtype=np.float32)
    record_kernel("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                  "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", nbytes(out_qk))
    aiter_stage1_ok(q, kv_cache, weights, out_qk, context_lens, block_tables, max_model_len, ChunkQ=heads)
    out = out_qk.sum(0)
    record_kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<"
                  "float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)> > >(...)",
                  nbytes(out_qk, out))
    return out


def engine_entry(*args):
    """The guard after vLLM PR 42062: gfx942 and gfx950 take the fused kernel."""
    return _engine_entry(("gfx942", "gfx950"), *args)


def engine_entry_forgets_gfx950(*args):
    """The guard before PR 42062: gfx950 falls through to the two-stage path (same numbers, slower)."""
    return _engine_entry(("gfx942",), *args)


def launches_unknown_kernel(q, kv_cache, weights, context_lens, block_table, max_model_len):
    record_kernel("my_new_library::paged_logits_v2<64>")
    return eager_ok(q, kv_cache, weights, context_lens, block_table, max_model_len)


# ============================================================================ faults (the worker's tests)
# Each misbehaves on cases with next_n == 3 only, and is eager_ok elsewhere.


def _faulty(q):
    return q.codes.shape[1] == 3


def hangs(q, *args):
    if _faulty(q):
        time.sleep(3600)
    return eager_ok(q, *args)


def device_error(q, *args):
    if _faulty(q):
        raise RuntimeError("CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
                           "asynchronously reported at some other API call")
    return eager_ok(q, *args)


def aborts(q, *args):
    if _faulty(q):
        os.abort()
    return eager_ok(q, *args)


def exits(q, *args):
    if _faulty(q):
        os._exit(3)
    return eager_ok(q, *args)


def slow(q, *args):
    """eager_ok after a kernel that streams 25 GB (0.25 s on the numpy device): far above any floor."""
    record_kernel("my_library::slow_prologue_kernel", 25 * 10**9)
    return eager_ok(q, *args)


def vllm_eager_no_kernels(q, kv_cache, weights, context_lens, block_table, max_model_len):
    """The eager op's numbers with no kernel launched: what the profiler sees of an op that ran on
    another device, or of a profiler that records nothing."""
    rows = q.codes.shape[0] * q.codes.shape[1]
    out = np.empty((rows, max_model_len), dtype=np.float32)
    logits_into(out, q, kv_cache, weights, context_lens, block_table, max_model_len, tail="all")
    return out


def host_200us_before_launch(q, *args):
    """eager_ok behind a slow Python wrapper: the host sleeps 200 us before the first launch, which
    the speed gate must not count (the kernel time leaves the host out)."""
    time.sleep(200e-6)
    return eager_ok(q, *args)


def checks_earlier_outputs(q, *args):
    """eager_ok that first checks, in PMQA_TEST_OUT, that every output written so far is complete
    (readable as a case file) and that no temporary file is left: writes are atomic and finished
    before the next case starts."""
    import pmqa.cases
    out = os.environ["PMQA_TEST_OUT"]
    if os.path.isdir(out):
        for name in os.listdir(out):
            assert not name.endswith(".partial"), f"a temporary file is left: {name}"
            if name.endswith(".safetensors"):
                pmqa.cases.read_case_file(os.path.join(out, name))
    return device_error(q, *args)
