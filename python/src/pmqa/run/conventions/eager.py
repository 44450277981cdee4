"""eager: a framework's eager op (vLLM's torch fallback, or python/examples/eager_torch_op.py).

    logits = op(q_fp8, kv_cache, weights, context_lens, block_table, max_model_len, **--op-kwarg)

* q: the case's fp8 format; kv_cache: uint8 [num_blocks, block_size, 1, D+4] strided over the
  case's block stride, NORMAL layout only (an eager op indexes the values as t*D + d; envelope
  cases/data/envelopes/eager.json, and overlays/vllm-eager.json for vLLM's op);
* context_lens: as the case stores them, 1-D [B] or 2-D [B, N] (spec §1.2 defines both);
* the op returns logits [B*N, max_model_len] (any strides), -inf past E_r.

Contract clean.
"""

from __future__ import annotations

from pmqa.cases import CaseFile

from ..backend import Backend
from .base import Convention
from .common import Invocation, RunOptions, check_output


class Eager(Convention):
    name = "eager"
    owns_output = True
    contract = "clean"
    tolerance = "fp32"
    signature = "op(q_fp8, kv_cache, weights, context_lens, block_table, max_model_len) -> logits"

    def build(self, cf: CaseFile, backend: Backend, options: RunOptions) -> Invocation:
        x = self.common_inputs(cf, backend)
        lens = backend.tensor(cf.context_lens)
        args = (x["q"], x["kv_cache"], x["weights"], lens, x["block_table"], cf.max_model_len)
        rows, cols = cf.rows, cf.max_model_len
        return Invocation(args=args, kwargs=self.merged_kwargs({}, options), inputs=dict(x, context_lens=lens),
                          collect=lambda result: check_output(backend, result, rows, cols, "the returned logits"))
