"""Sparse-MLA indexer ops on ROCm: paged FP8 MQA logits (decode) and the indexer op around them.

Stand-in written for pmqa-probe's tests (see tests/vllm_trees/README.md): the dispatch of the
published vLLM module after PR 42062, in this project's own code.
"""
import functools
import importlib
from importlib.util import find_spec

import torch

import vllm.envs as envs
from vllm.compilation.breakable_cudagraph import eager_break_during_capture
from vllm.config import get_current_vllm_config
from vllm.forward_context import get_forward_context
from vllm.logger import init_logger
from vllm.platforms import current_platform
from vllm.triton_utils import tl, triton
from vllm.utils.torch_utils import LayerNameType, direct_register_custom_op
from vllm.v1.attention.backends.mla.indexer import DeepseekV32IndexerMetadata
from vllm.v1.attention.ops.common import pack_seq_triton
from vllm.v1.worker.workspace import current_workspace_manager

if current_platform.is_rocm():
    from vllm.platforms.rocm import _ON_GFX942, _ON_GFX950
else:
    _ON_GFX942 = False
    _ON_GFX950 = False

logger = init_logger(__name__)

FP8_DTYPE = current_platform.fp8_dtype()

# DeepSeek-V4 compresses the indexer cache; ratio 4 (C4A) stores it block-flat (token-major values,
# then the block's scales) instead of the 16x16-tiled layout of ratios 1 and 2.
_C4A_RATIO = 4
_TRITON_PAGE_MULTIPLE = 64


def _is_block_flat(compress_ratio: int) -> bool:
    return compress_ratio == _C4A_RATIO


def fp8_paged_mqa_logits_torch(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    weights: torch.Tensor,
    context_lens: torch.Tensor,
    block_tables: torch.Tensor,
    max_model_len: int,
) -> torch.Tensor:
    """Eager reference over a token-major cache: logit = sum_h w[h] * relu(scale * q_h . k)."""
    batch, next_n, heads, dim = q.shape
    num_blocks, block_size = kv_cache.shape[:2]
    flat = kv_cache.reshape(num_blocks, -1)
    values = flat[:, : block_size * dim].view(FP8_DTYPE).float().reshape(num_blocks, block_size, dim)
    scales = flat[:, block_size * dim :].contiguous().view(torch.float32)
    logits = torch.full((batch * next_n, max_model_len), float("-inf"), device=q.device, dtype=torch.float32)
    positions = torch.arange(max_model_len, device=q.device)
    for b in range(batch):
        length = int(context_lens[b])
        pages = block_tables[b, : (length + block_size - 1) // block_size]
        keys = (values[pages] * scales[pages].unsqueeze(-1)).reshape(-1, dim)[:length]
        for n in range(next_n):
            row = b * next_n + n
            visible = length - next_n + n + 1
            scores = torch.relu(q[b, n].float() @ keys.T) * weights[row].unsqueeze(-1)
            logits[row, :length] = torch.where(positions[:length] < visible, scores.sum(0), float("-inf"))
    return logits


@triton.jit
def _fp8_paged_mqa_logits_decode_kernel(
    q_ptr, kv_ptr, scale_ptr, w_ptr, lens_ptr, table_ptr, out_ptr,
    stride_q_row, stride_kv_block, stride_scale_block, stride_table, stride_out, max_model_len,
    BLOCK_SIZE: tl.constexpr, HEADS: tl.constexpr, DIM: tl.constexpr, NEXT_N: tl.constexpr, TILE: tl.constexpr,
):
    # One program per (row, tile of TILE keys); tiles never straddle a page (TILE divides BLOCK_SIZE).
    row = tl.program_id(0)
    tile = tl.program_id(1)
    seq = row // NEXT_N
    visible = tl.load(lens_ptr + seq) - NEXT_N + row % NEXT_N + 1
    keys = tile * TILE + tl.arange(0, TILE)
    page = tl.load(table_ptr + seq * stride_table + (tile * TILE) // BLOCK_SIZE).to(tl.int64)
    slot = keys % BLOCK_SIZE
    mask = keys < visible
    k = tl.load(kv_ptr + page * stride_kv_block + slot[:, None] * DIM + tl.arange(0, DIM)[None, :],
                mask=mask[:, None], other=0.0)
    q = tl.load(q_ptr + row * stride_q_row + tl.arange(0, HEADS)[:, None] * DIM + tl.arange(0, DIM)[None, :])
    w = tl.load(w_ptr + row * HEADS + tl.arange(0, HEADS))
    s = tl.sum(tl.maximum(tl.dot(k, tl.trans(q)), 0.0) * w[None, :], axis=1)
    s = s * tl.load(scale_ptr + page * stride_scale_block + slot, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_out + keys, tl.where(mask, s, float("-inf")), mask=keys < max_model_len)


def rocm_fp8_paged_mqa_logits_triton(
    q_fp8: torch.Tensor,
    kv_cache_fp8: torch.Tensor,
    weights: torch.Tensor,
    context_lens: torch.Tensor,
    block_tables: torch.Tensor,
    max_model_len: int,
) -> torch.Tensor:
    """vLLM's own fused kernel for block-flat (C4A) caches; pages must be a multiple of 64 tokens."""
    batch, next_n, heads, dim = q_fp8.shape
    num_blocks, block_size = kv_cache_fp8.shape[:2]
    assert block_size % _TRITON_PAGE_MULTIPLE == 0
    flat = kv_cache_fp8.reshape(num_blocks, -1)
    (logits,) = current_workspace_manager().get_simultaneous(((batch * next_n, max_model_len), torch.float32))
    tile = _TRITON_PAGE_MULTIPLE
    _fp8_paged_mqa_logits_decode_kernel[(batch * next_n, triton.cdiv(max_model_len, tile))](
        q_fp8, flat.view(FP8_DTYPE), flat.view(torch.float32)[:, block_size * dim // 4 :], weights,
        context_lens, block_tables, logits,
        q_fp8.stride(1), flat.stride(0), flat.stride(0) // 4, block_tables.stride(0), logits.stride(0), max_model_len,
        BLOCK_SIZE=block_size, HEADS=heads, DIM=dim, NEXT_N=next_n, TILE=tile,
    )
    return logits


@functools.lru_cache
def paged_mqa_logits_module():
    """AITER's paged-MQA-logits module; AITER moved it under attention/, so both paths are tried."""
    for path in ("aiter.ops.triton.pa_mqa_logits", "aiter.ops.triton.attention.pa_mqa_logits"):
        if find_spec(path) is not None:
            try:
                return importlib.import_module(path)
            except ImportError:
                return None
    return None


def rocm_fp8_paged_mqa_logits(
    q_fp8: torch.Tensor,
    kv_cache_fp8: torch.Tensor,
    weights: torch.Tensor,
    context_lens: torch.Tensor,
    block_tables: torch.Tensor,
    schedule_metadata: torch.Tensor,
    max_model_len: int,
    *,
    compress_ratio: int = 1,
) -> torch.Tensor:
    """Logits [B * next_n, max_model_len] fp32 of q [B, next_n, H, D] against the paged cache
    [blocks, block_size, 1, D + 4] (fp8 values, then the block's fp32 scales).

    compress_ratio 4 (C4A) caches are block-flat: on gfx942/gfx950 they go to vLLM's Triton kernel
    when the page size allows it, else to the eager op; every other cache goes to AITER when it is
    enabled (fused on gfx942/gfx950, stage 1 plus a sum over heads elsewhere), else the eager op.
    schedule_metadata is DeepGEMM's and unused here.
    """
    from vllm._aiter_ops import rocm_aiter_ops

    batch, next_n, heads, _ = q_fp8.shape
    block_size = kv_cache_fp8.shape[1]

    if (_ON_GFX942 or _ON_GFX950) and _is_block_flat(compress_ratio) and block_size > 1:
        if block_size % _TRITON_PAGE_MULTIPLE == 0:
            return rocm_fp8_paged_mqa_logits_triton(
                q_fp8, kv_cache_fp8, weights, context_lens, block_tables, max_model_len)
        return fp8_paged_mqa_logits_torch(q_fp8, kv_cache_fp8, weights, context_lens, block_tables, max_model_len)

    aiter_module = None
    if rocm_aiter_ops.is_enabled() or rocm_aiter_ops.is_rdna_aiter_enabled():
        aiter_module = paged_mqa_logits_module()
    if aiter_module is None:
        # No AITER (or switched off): the eager reference.
        return fp8_paged_mqa_logits_torch(q_fp8, kv_cache_fp8, weights, context_lens, block_tables, max_model_len)

    if _ON_GFX942 or _ON_GFX950:
        (logits,) = current_workspace_manager().get_simultaneous(((batch * next_n, max_model_len), torch.float32))
        aiter_module.deepgemm_fp8_paged_mqa_logits(
            q_fp8, kv_cache_fp8, weights, logits, context_lens, block_tables, max_model_len,
            ChunkK=256, Preshuffle=block_size > 1, KVBlockSize=block_size, WavePerEU=2)
        return logits

    (per_head,) = current_workspace_manager().get_simultaneous(
        ((heads, batch * next_n, max_model_len), torch.float32))
    per_head.fill_(float("-inf"))
    aiter_module.deepgemm_fp8_paged_mqa_logits_stage1(
        q_fp8, kv_cache_fp8, weights, per_head, context_lens, block_tables, max_model_len, ChunkQ=heads)
    return per_head.sum(dim=0)


def rocm_aiter_sparse_attn_indexer_fake(
    hidden_states: torch.Tensor,
    k_cache_prefix: LayerNameType,
    kv_cache: torch.Tensor,
    q_fp8: torch.Tensor,
    weights: torch.Tensor,
    topk_tokens: int,
    max_model_len: int,
    topk_indices_buffer: torch.Tensor,
    compress_ratio: int = 1,
) -> torch.Tensor:
    return topk_indices_buffer


@eager_break_during_capture
def rocm_aiter_sparse_attn_indexer(
    hidden_states: torch.Tensor,
    k_cache_prefix: LayerNameType,
    kv_cache: torch.Tensor,
    q_fp8: torch.Tensor,
    weights: torch.Tensor,
    topk_tokens: int,
    max_model_len: int,
    topk_indices_buffer: torch.Tensor,
    compress_ratio: int = 1,
) -> torch.Tensor:
    """The indexer op: decode rows score the paged cache, then a top-k picks the keys to attend."""
    metadata = get_forward_context().attn_metadata
    if not isinstance(metadata, dict):
        # A profiling run: reserve the decode logits buffer the entry above takes from the workspace.
        rows = getattr(getattr(get_current_vllm_config(), "scheduler_config", None), "max_num_seqs", 1)
        shape = (rows, max_model_len) if (_ON_GFX942 or _ON_GFX950) else (q_fp8.shape[1], rows, max_model_len)
        current_workspace_manager().get_simultaneous((shape, torch.float32))
        return rocm_aiter_sparse_attn_indexer_fake(hidden_states, k_cache_prefix, kv_cache, q_fp8, weights,
                                                   topk_tokens, max_model_len, topk_indices_buffer, compress_ratio)
    layer = metadata[k_cache_prefix]
    assert isinstance(layer, DeepseekV32IndexerMetadata)
    decode = layer.decode
    logits = rocm_fp8_paged_mqa_logits(q_fp8[: layer.num_decode_tokens], kv_cache, weights,
                                       decode.seq_lens, decode.block_table, decode.schedule_metadata, max_model_len,
                                       compress_ratio=compress_ratio)
    topk = torch.topk(logits, min(topk_tokens, max_model_len), dim=-1).indices
    topk_indices_buffer[: topk.shape[0], : topk.shape[1]] = topk
    if envs.VLLM_SPARSE_INDEXER_MAX_LOGITS_MB <= 0:
        logger.warning_once("VLLM_SPARSE_INDEXER_MAX_LOGITS_MB is not positive; prefill chunks are unbounded")
    return topk_indices_buffer


direct_register_custom_op(
    op_name="rocm_aiter_sparse_attn_indexer",
    op_func=rocm_aiter_sparse_attn_indexer,
    mutates_args=["topk_indices_buffer"],
    fake_impl=rocm_aiter_sparse_attn_indexer_fake,
)

__all__ = ["pack_seq_triton", "rocm_fp8_paged_mqa_logits", "rocm_aiter_sparse_attn_indexer"]
