"""aiter-fused: AITER's fused kernel (``deepgemm_fp8_paged_mqa_logits``, spec §1.4).

    op(q_fp8, kv_cache, weights, out_logits, context_lens, block_table, max_model_len,
       Preshuffle=<layout is SHUFFLE>, KVBlockSize=<block_size>, ChunkK=256, **--op-kwarg)

* q: the case's fp8 format (float8_e4m3fnuz on gfx942, float8_e4m3fn on gfx950);
* kv_cache: uint8 [num_blocks, block_size, 1, D+4] strided over the case's block stride;
* out_logits: a caller buffer [B*N, max_model_len] whose rows have a stride of max_model_len +
  --out-row-pad cells, pre-filled with pmqa's sentinel and surrounded by guard cells; the op writes
  into it and its return value is ignored;
* context_lens: 1-D [B] (the kernel derives E_r = context_lens[b] - next_n + n + 1); 2-D lengths
  are outside the envelope (cases/data/envelopes/aiter-fused.json, with the platforms' limits);
* Preshuffle and KVBlockSize come from the case (SHUFFLE <=> Preshuffle=True) and cannot be
  overridden; ChunkK (256, as vLLM calls it) and anything else can, with --op-kwarg.

Contract valid-only: the fused kernel writes -inf only up to a chunk boundary past E_r.
"""

from __future__ import annotations

from pmqa.cases import CaseFile

from ..backend import Backend
from .base import Convention
from .common import GuardedBuffer, Invocation, RunOptions


class AiterFused(Convention):
    name = "aiter-fused"
    contract = "valid-only"
    tolerance = "matrix-unit"
    nan = "relu-clamp"  # relu is max(x, 0) on the tensor cores: a NaN term counts 0
    signature = ("op(q_fp8, kv_cache, weights, out_logits, context_lens[B], block_table, max_model_len, "
                 "Preshuffle=, KVBlockSize=, ChunkK=256)")
    reserved_kwargs = ("Preshuffle", "KVBlockSize")

    def build(self, cf: CaseFile, backend: Backend, options: RunOptions) -> Invocation:
        x = self.common_inputs(cf, backend)
        out = GuardedBuffer(backend, (), cf.rows, cf.max_model_len, options.out_row_pad, inner="sentinel")
        kwargs = self.merged_kwargs({"Preshuffle": cf.kv_layout == "shuffle", "KVBlockSize": cf.block_size,
                                     "ChunkK": 256}, options)
        kwargs["Preshuffle"] = cf.kv_layout == "shuffle"
        kwargs["KVBlockSize"] = cf.block_size
        lens = backend.tensor(cf.context_lens)
        args = (x["q"], x["kv_cache"], x["weights"], out.view, lens, x["block_table"], cf.max_model_len)
        return Invocation(args=args, kwargs=kwargs, collect=lambda result: out.view, reset=out.reset,
                          guard_problem=out.guard_problem, inputs=dict(x, context_lens=lens),
                          notes={"out_row_stride": str(out.row_stride)})
