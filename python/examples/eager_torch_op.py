"""A torch eager implementation of FP8 paged MQA logits, for the ``eager`` convention.

    logits = fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, max_model_len)

Spec §1.1-§1.3, clean contract, NORMAL layout:

* q [B, N, H, D] torch.float8_e4m3fn or torch.float8_e4m3fnuz; the cache's values are in the same
  format (a case has one format) and are decoded through the same torch dtype. On a torch without
  fp8 dtypes (before 2.1 / 2.2) q comes as its uint8 codes and ``fp8_format`` names the format
  ("e4m3fn" or "e4m3fnuz"): q and the values are then decoded by a 256-entry table (spec §3);
* kv_cache uint8 [num_blocks, block_size, 1, D+4], any stride between blocks (a padded cache is a
  strided view); block p holds the values at [t*D + d] and the fp32 scales at block_size*D + 4*t;
* weights [B*N, H] float32; context_lens [B] (E_r = context_lens[b] - N + n + 1) or [B, N]
  (E_r = context_lens[b][n]); block_table [B, max_blocks] int32 (entries past a sequence's need
  are never read and may hold anything);
* returns float32 [B*N, max_model_len]: sum_h w[r][h] * relu(s * q_h . k) for j < E_r, -inf after.

Vectorised over the batch: each chunk of logical blocks is gathered for every sequence at once, the
dot products over D are one batched fp32 matmul (decoded fp8 values are exact in fp32 and in TF32;
TF32 is switched off for the call anyway), s and relu are applied per (head, key) and the head sum is
an fp32 reduction. relu keeps NaN (a NaN code must reach the row's valid cells, spec §1.1). Works on
CPU and on CUDA/ROCm devices; the only host synchronisation is reading the longest row length.
"""

from __future__ import annotations

import contextlib
import math
from typing import Optional

import torch

_FP8_DTYPES = tuple(getattr(torch, n) for n in ("float8_e4m3fn", "float8_e4m3fnuz") if hasattr(torch, n))

#: Upper bound on the elements of one intermediate, [B, N, H, keys] or [B, keys, D] (64 Mi floats = 256 MiB).
DEFAULT_MAX_CHUNK_ELEMENTS = 1 << 26


@contextlib.contextmanager
def _ieee_fp32_matmul(device: torch.device):
    """fp32 matmuls in IEEE fp32 for the duration (TF32 off), restoring the caller's setting."""
    if device.type != "cuda":
        yield
        return
    matmul = torch.backends.cuda.matmul
    saved = None
    try:
        if hasattr(matmul, "fp32_precision"):
            saved = ("fp32_precision", matmul.fp32_precision)
            matmul.fp32_precision = "ieee"
        else:
            saved = ("allow_tf32", matmul.allow_tf32)
            matmul.allow_tf32 = False
    except (AttributeError, RuntimeError, ValueError):
        saved = None  # the setting cannot be read or changed here: decoded fp8 is exact in TF32 anyway
    try:
        yield
    finally:
        if saved is not None:
            try:
                setattr(matmul, saved[0], saved[1])
            except (AttributeError, RuntimeError, ValueError):
                pass


def _relu_keep_nan(x: torch.Tensor) -> torch.Tensor:
    """max(x, 0) that keeps NaN (NaN < 0 is false, so NaN passes through)."""
    return torch.where(x < 0, torch.zeros((), dtype=x.dtype, device=x.device), x)


def valid_keys(context_lens: torch.Tensor, batch: int, next_n: int) -> torch.Tensor:
    """E_r as int64 [B, N] (spec §1.2); may be <= 0."""
    lens = context_lens.to(torch.int64)
    if lens.dim() == 1 and lens.shape[0] == batch:
        n = torch.arange(next_n, device=lens.device, dtype=torch.int64)
        return lens[:, None] - next_n + n[None, :] + 1
    if lens.dim() == 2 and tuple(lens.shape) == (batch, next_n):
        return lens
    raise ValueError(f"context_lens has shape {list(context_lens.shape)}, expected [B] = [{batch}] or "
                     f"[B, N] = [{batch}, {next_n}]")


def fp8_table(fmt: str, device: torch.device) -> torch.Tensor:
    """The 256 float32 values of an E4M3 format's codes (spec §3), NaN codes NaN."""
    if fmt not in ("e4m3fn", "e4m3fnuz"):
        raise ValueError(f"fp8_format {fmt!r}: expected e4m3fn or e4m3fnuz")
    bias = 7 if fmt == "e4m3fn" else 8
    values = []
    for code in range(256):
        e, m = (code >> 3) & 0xF, code & 0x7
        v = m * 2.0 ** (1 - bias - 3) if e == 0 else 2.0 ** (e - bias) * (1 + m / 8)
        v = -v if code & 0x80 else v
        nan = (code & 0x7F) == 0x7F if fmt == "e4m3fn" else code == 0x80
        values.append(float("nan") if nan else v)
    return torch.tensor(values, dtype=torch.float32, device=device)


def _decoder(q: torch.Tensor, fp8_format: Optional[str]):
    """How this call turns fp8 bytes (a uint8 tensor) into float32: through q's fp8 dtype, or, for q
    given as uint8 codes, through the table of fp8_format."""
    if q.dtype in _FP8_DTYPES:
        if fp8_format is not None and str(q.dtype) != f"torch.float8_{fp8_format}":
            raise ValueError(f"q is {q.dtype} but fp8_format is {fp8_format!r}")
        return lambda codes: codes.view(q.dtype).to(torch.float32)
    if q.dtype == torch.uint8:
        if fp8_format is None:
            raise TypeError("q holds uint8 codes: pass fp8_format='e4m3fn' or 'e4m3fnuz' to say how they decode")
        table = fp8_table(fp8_format, q.device)
        return lambda codes: table[codes.to(torch.int64)]
    raise TypeError(f"q has dtype {q.dtype}, expected torch.float8_e4m3fn, torch.float8_e4m3fnuz or uint8 codes")


def fp8_paged_mqa_logits(q: torch.Tensor, kv_cache: torch.Tensor, weights: torch.Tensor,
                         context_lens: torch.Tensor, block_table: torch.Tensor, max_model_len: int,
                         max_chunk_elements: Optional[int] = None, fp8_format: Optional[str] = None) -> torch.Tensor:
    decode = _decoder(q, fp8_format)
    if q.dim() != 4:
        raise ValueError(f"q has shape {list(q.shape)}, expected [B, N, H, D]")
    batch, next_n, heads, dim = (int(x) for x in q.shape)
    if kv_cache.dtype != torch.uint8 or kv_cache.dim() != 4 or kv_cache.shape[2] != 1 or kv_cache.shape[3] != dim + 4:
        raise ValueError(f"kv_cache is {kv_cache.dtype} {list(kv_cache.shape)}, expected uint8 "
                         f"[num_blocks, block_size, 1, D+4 = {dim + 4}]")
    num_blocks, block_size = int(kv_cache.shape[0]), int(kv_cache.shape[1])
    rows = batch * next_n
    if tuple(weights.shape) != (rows, heads):
        raise ValueError(f"weights has shape {list(weights.shape)}, expected [B*N, H] = [{rows}, {heads}]")
    if block_table.dim() != 2 or block_table.shape[0] != batch:
        raise ValueError(f"block_table has shape {list(block_table.shape)}, expected [B = {batch}, max_blocks]")
    cols = int(max_model_len)
    device = q.device
    out = torch.full((rows, cols), float("-inf"), dtype=torch.float32, device=device)
    if rows == 0 or cols == 0:
        return out

    e = valid_keys(context_lens.to(device), batch, next_n)                     # [B, N]
    longest = int(e.max().item())                                              # the one host sync
    if longest <= 0:
        return out
    if longest > cols:
        raise ValueError(f"a row has {longest} valid keys, above max_model_len = {cols}")
    blocks_needed = math.ceil(longest / block_size)
    if blocks_needed > block_table.shape[1]:
        raise ValueError(f"a row needs {blocks_needed} logical blocks, block_table has {block_table.shape[1]}")
    if num_blocks == 0:
        raise ValueError("rows have valid keys but kv_cache has no blocks")

    # Which (sequence, logical block) pairs are read; the others may hold anything (even -1).
    per_seq = (e.max(dim=1).values.clamp(min=0) + block_size - 1) // block_size   # [B]
    table = block_table[:, :blocks_needed].to(device=device, dtype=torch.int64)
    used = torch.arange(blocks_needed, device=device)[None, :] < per_seq[:, None]
    bad = used & ((table < 0) | (table >= num_blocks))
    if bool(bad.any()):
        b, i = (int(x) for x in torch.nonzero(bad)[0])
        raise ValueError(f"block_table[{b}][{i}] = {int(table[b, i])} is outside [0, {num_blocks})")
    table = torch.where(used, table, torch.zeros((), dtype=torch.int64, device=device))

    # The cache's bytes per block (a view: the inner dims of kv_cache are contiguous), then the
    # value region [num_blocks, block_size, D] (NORMAL) and the scales [num_blocks, block_size].
    block_bytes = kv_cache.reshape(num_blocks, block_size * (dim + 4))
    values = block_bytes[:, : block_size * dim].reshape(num_blocks, block_size, dim)
    scales = block_bytes[:, block_size * dim: block_size * (dim + 4)].contiguous().view(torch.float32)

    qf = decode(q.contiguous().view(torch.uint8) if q.dtype != torch.uint8 else q)
    qf = qf.reshape(batch, next_n * heads, dim)                                # exact decode
    w = weights.to(device=device, dtype=torch.float32).reshape(batch, next_n, heads, 1)
    out3 = out.view(batch, next_n, cols)
    limit = max_chunk_elements or DEFAULT_MAX_CHUNK_ELEMENTS
    # keys per chunk: bounded by both intermediates, [B, N, H, T] and the gathered keys [B, T, D]
    chunk_blocks = max(1, limit // (block_size * max(rows * heads, batch * dim, 1)))
    neg_inf = torch.full((), float("-inf"), dtype=torch.float32, device=device)

    with _ieee_fp32_matmul(device):
        for first in range(0, blocks_needed, chunk_blocks):
            last = min(blocks_needed, first + chunk_blocks)
            pages = table[:, first:last]                                        # [B, c]
            keys = (last - first) * block_size
            k = decode(values[pages]).reshape(batch, keys, dim)                # [B, T, D]
            s = scales[pages].reshape(batch, 1, 1, keys)                         # [B, 1, 1, T]
            dots = torch.matmul(qf, k.transpose(1, 2)).reshape(batch, next_n, heads, keys)
            per_head = _relu_keep_nan(dots * s) * w                              # [B, N, H, T]
            logits = per_head.sum(dim=2)                                         # [B, N, T]
            j = torch.arange(first * block_size, first * block_size + keys, device=device)
            logits = torch.where(j[None, None, :] < e[:, :, None], logits, neg_inf)
            end = min(cols, first * block_size + keys)
            out3[:, :, first * block_size: end] = logits[:, :, : end - first * block_size]
    return out
