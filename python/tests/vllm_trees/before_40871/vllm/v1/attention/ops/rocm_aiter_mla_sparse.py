"""Sparse-MLA indexer ops on ROCm, as the dispatch stood before vLLM PR 40871.

Stand-in written for pmqa-probe's tests (see tests/vllm_trees/README.md): AITER, when enabled, ran
its stage-1 kernel plus a sum over heads on every arch (no fused path yet); the per-head buffer was
allocated on the spot; there was no compress_ratio keyword.
"""
import functools
import importlib

import torch

from vllm.forward_context import get_forward_context
from vllm.platforms import current_platform
from vllm.triton_utils import tl, triton  # noqa: F401  (the cache writer's kernels use them)
from vllm.v1.attention.backends.mla.indexer import DeepseekV32IndexerMetadata  # noqa: F401
from vllm.v1.attention.ops.common import pack_seq_triton  # noqa: F401


def fp8_paged_mqa_logits_torch(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    weights: torch.Tensor,
    context_lens: torch.Tensor,
    block_tables: torch.Tensor,
    max_model_len: int,
) -> torch.Tensor:
    """Eager reference over a token-major cache."""
    fp8 = current_platform.fp8_dtype()
    batch, next_n, heads, dim = q.shape
    num_blocks, block_size = kv_cache.shape[:2]
    flat = kv_cache.reshape(num_blocks, -1)
    values = flat[:, : block_size * dim].view(fp8).float().reshape(num_blocks, block_size, dim)
    scales = flat[:, block_size * dim :].contiguous().view(torch.float32)
    logits = torch.full((batch * next_n, max_model_len), float("-inf"), device="cuda", dtype=torch.float32)
    for b in range(batch):
        length = int(context_lens[b])
        pages = block_tables[b, : (length + block_size - 1) // block_size]
        keys = (values[pages] * scales[pages].unsqueeze(-1)).reshape(-1, dim)[:length]
        for n in range(next_n):
            scores = torch.relu(q[b, n].float() @ keys.T) * weights[b * next_n + n].unsqueeze(-1)
            logits[b * next_n + n, : length - next_n + n + 1] = scores.sum(0)[: length - next_n + n + 1]
    return logits


def rocm_fp8_paged_mqa_logits(
    q_fp8: torch.Tensor,
    kv_cache_fp8: torch.Tensor,
    weights: torch.Tensor,
    context_lens: torch.Tensor,
    block_tables: torch.Tensor,
    schedule_metadata: torch.Tensor,
    max_model_len: int,
) -> torch.Tensor:
    """Logits [B * next_n, max_model_len] fp32: AITER's stage 1 and a head sum when AITER is enabled,
    the eager reference otherwise."""
    from vllm._aiter_ops import rocm_aiter_ops

    @functools.lru_cache
    def aiter_module():
        for path in ("aiter.ops.triton.pa_mqa_logits", "aiter.ops.triton.attention.pa_mqa_logits"):
            if importlib.util.find_spec(path) is not None:
                try:
                    return importlib.import_module(path)
                except ImportError:
                    return None
        return None

    module = None
    if rocm_aiter_ops.is_enabled() or rocm_aiter_ops.is_rdna_aiter_enabled():
        module = aiter_module()
    if module is None:
        return fp8_paged_mqa_logits_torch(q_fp8, kv_cache_fp8, weights, context_lens, block_tables, max_model_len)
    batch, next_n, heads, _ = q_fp8.shape
    per_head = torch.full((heads, batch * next_n, max_model_len), float("-inf"), device="cuda", dtype=torch.float32)
    module.deepgemm_fp8_paged_mqa_logits_stage1(
        q_fp8, kv_cache_fp8, weights, per_head, context_lens, block_tables, max_model_len)
    return per_head.sum(dim=0)


def rocm_aiter_sparse_attn_indexer_fake(hidden_states, k_cache_prefix, kv_cache, q_fp8, weights, topk_tokens,
                                        max_model_len, topk_indices_buffer):
    """The op's shape-only twin for tracing and profiling runs."""
    return topk_indices_buffer


def rocm_aiter_sparse_attn_indexer(hidden_states, k_cache_prefix, kv_cache, q_fp8, weights, topk_tokens,
                                   max_model_len, topk_indices_buffer):
    """The indexer op (decode rows only in this stand-in)."""
    layer = get_forward_context().attn_metadata[k_cache_prefix]
    decode = layer.decode
    logits = rocm_fp8_paged_mqa_logits(q_fp8[: layer.num_decode_tokens], kv_cache, weights, decode.seq_lens,
                                       decode.block_table, decode.schedule_metadata, max_model_len)
    topk = torch.topk(logits, min(topk_tokens, max_model_len), dim=-1).indices
    topk_indices_buffer[: topk.shape[0], : topk.shape[1]] = topk
    return topk_indices_buffer
