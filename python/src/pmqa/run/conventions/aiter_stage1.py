"""aiter-stage1: AITER's two-stage path, stage 1 (``deepgemm_fp8_paged_mqa_logits_stage1``), with
stage 2 (the sum over heads) done by the runner (spec §1.4).

    op(q_fp8, kv_cache, weights, out_qk, context_lens, block_table, max_model_len, **--op-kwarg)
    logits = out_qk.sum(0)

* out_qk: a caller buffer [H, B*N, max_model_len] pre-filled with -inf (as vLLM does), rows with a
  stride of max_model_len + --out-row-pad cells, guard cells around each head's rows; stage 1 writes
  weights[r][h] * relu(s * dot_h) into it; the runner sums over heads (a sum of -inf stays -inf);
* context_lens: 1-D [B];
* ChunkQ = heads, as vLLM calls it (--op-kwarg ChunkQ=N passes another); stage 1 reads the block
  size from kv_cache.shape[1], so any block size is passed as the case has it;
* what it supports (1-D lengths, the NORMAL layout, H % ChunkQ == 0, the platforms' limits) is its
  envelope, cases/data/envelopes/aiter-stage1.json.

Contract clean: every cell past E_r is -inf after the sum.
"""

from __future__ import annotations

from typing import Optional

from pmqa.cases import CaseFile

from ..backend import Backend
from .base import Convention
from .common import GuardedBuffer, Invocation, RunOptions


class AiterStage1(Convention):
    name = "aiter-stage1"
    contract = "clean"
    tolerance = "matrix-unit"
    nan = "relu-clamp"  # relu is max(x, 0) on the tensor cores: a NaN term counts 0
    signature = ("op(q_fp8, kv_cache[num_blocks, block_size, 1, D+4], weights, out_qk[H, B*N, max_model_len] (-inf), "
                 "context_lens[B], block_table, max_model_len, ChunkQ=heads); logits = out_qk.sum(0)")

    def chunk_q(self, cf: CaseFile, options: RunOptions) -> Optional[int]:
        value = options.op_kwargs.get("ChunkQ", cf.heads)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def build(self, cf: CaseFile, backend: Backend, options: RunOptions) -> Invocation:
        x = self.common_inputs(cf, backend)
        out = GuardedBuffer(backend, (cf.heads,), cf.rows, cf.max_model_len, options.out_row_pad, inner="-inf")
        lens = backend.tensor(cf.context_lens)
        args = (x["q"], x["kv_cache"], x["weights"], out.view, lens, x["block_table"], cf.max_model_len)
        return Invocation(args=args, kwargs=self.merged_kwargs({"ChunkQ": cf.heads}, options),
                          collect=lambda result: out.view.sum(0), reset=out.reset,
                          guard_problem=out.guard_problem, inputs=dict(x, context_lens=lens),
                          notes={"out_row_stride": str(out.row_stride)})
