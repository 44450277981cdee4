"""aiter-stage1: AITER's two-stage path, stage 1 (``deepgemm_fp8_paged_mqa_logits_stage1``), with
stage 2 (the sum over heads) done by the runner (spec §1.4).

    op(q_fp8, kv_cache, weights, out_qk, context_lens, block_table, max_model_len, **--op-kwarg)
    logits = out_qk.sum(0)

* out_qk: a caller buffer [H, B*N, max_model_len] pre-filled with -inf (as vLLM does), rows with a
  stride of max_model_len + --out-row-pad cells, guard cells around each head's rows; stage 1 writes
  weights[r][h] * relu(s * dot_h) into it; the runner sums over heads (a sum of -inf stays -inf);
* context_lens: 1-D [B]; a case with 2-D lengths is refused;
* NORMAL layout only (spec §4: the two-stage path reads NORMAL), and block_size 1 only: AITER's
  stage 1 takes kv_cache as [num_blocks, 1, 1, D+4] with the block table as per-token slots and has
  no block-size parameter, so a larger block cannot be expressed (on ROCm, NORMAL means block_size 1:
  spec §2).

Contract clean: every cell past E_r is -inf after the sum.
"""

from __future__ import annotations

from typing import Optional

from pmqa_cases import CaseFile

from ..backend import Backend
from .base import Convention
from .common import GuardedBuffer, Invocation, RunOptions


class AiterStage1(Convention):
    name = "aiter-stage1"
    contract = "clean"
    tolerance = "matrix-unit"
    nan = "relu-clamp"  # relu is max(x, 0) on the tensor cores: a NaN term counts 0
    signature = ("op(q_fp8, kv_cache[num_blocks, 1, 1, D+4], weights, out_qk[H, B*N, max_model_len] (-inf), "
                 "context_lens[B], block_table, max_model_len); logits = out_qk.sum(0)")

    def refusal(self, cf: CaseFile) -> Optional[str]:
        if cf.kv_layout != "normal":
            return ("aiter-stage1 reads the NORMAL layout only (the two-stage path, spec §4) and this case's "
                    "cache is SHUFFLE; only aiter-fused (Preshuffle=True) reads SHUFFLE")
        if cf.block_size != 1:
            return (f"aiter-stage1 takes kv_cache as [num_blocks, 1, 1, D+4] with one token per block and has no "
                    f"block-size parameter; this case has block_size {cf.block_size}")
        if cf.context_lens_2d:
            return ("aiter-stage1 passes context_lens as 1-D [B] and this case has 2-D context_lens [B, N]")
        return None

    def build(self, cf: CaseFile, backend: Backend, options: RunOptions) -> Invocation:
        x = self.common_inputs(cf, backend)
        out = GuardedBuffer(backend, (cf.heads,), cf.rows, cf.max_model_len, options.out_row_pad, inner="-inf")
        args = (x["q"], x["kv_cache"], x["weights"], out.view, backend.tensor(cf.context_lens),
                x["block_table"], cf.max_model_len)
        return Invocation(args=args, kwargs=self.merged_kwargs({}, options),
                          collect=lambda result: out.view.sum(0), reset=out.reset,
                          guard_problem=out.guard_problem,
                          notes={"out_row_stride": str(out.row_stride)})
