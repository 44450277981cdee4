"""vllm-rocm: vLLM's ROCm entry point, ``rocm_fp8_paged_mqa_logits`` (vllm/v1/attention/ops/
rocm_aiter_mla_sparse.py), the engine's own dispatch between AITER's fused kernel, its two-stage
path and the eager fallback (spec §4).

    logits = op(q_fp8, kv_cache_fp8, weights, context_lens, block_tables, schedule_metadata,
                max_model_len, **--op-kwarg)

* q: the case's fp8 format (vLLM passes its platform's fp8 dtype: float8_e4m3fnuz on gfx942,
  float8_e4m3fn on gfx950; the envelope refuses the other one on those archs);
* kv_cache: uint8 [num_blocks, block_size, 1, D+4], as vLLM's writer lays it out: SHUFFLE whenever
  block_size > 1 (the entry passes Preshuffle = block_size > 1 to AITER), NORMAL for block_size 1;
* context_lens: 1-D [B] int32, as the entry's docstring states;
* schedule_metadata: --metadata-fn's result (called as deepgemm's is) if given, else None: the entry
  reads it nowhere on ROCm;
* the entry returns logits [B*N, max_model_len] float32 it owns (vLLM's workspace buffer; the entry
  needs vLLM's workspace manager, which an engine sets up).

Contract valid-only (AITER's fused kernel writes -inf only up to a chunk boundary past E_r); NaN
rule relu-clamp for the AITER paths, propagate when --expect-path saw the eager fallback run.
"""

from __future__ import annotations

from typing import Optional

from pmqa.cases import CaseFile

from ..backend import Backend
from .base import Convention
from .common import Invocation, RunOptions, check_output


class VllmRocm(Convention):
    name = "vllm-rocm"
    owns_output = True
    contract = "valid-only"
    tolerance = "matrix-unit"
    nan = "relu-clamp"
    signature = ("op(q_fp8, kv_cache_fp8, weights, context_lens[B], block_tables, schedule_metadata, max_model_len) "
                 "-> logits")

    def nan_for_path(self, path: Optional[str]) -> str:
        return "propagate" if path == "eager" else self.nan

    def build(self, cf: CaseFile, backend: Backend, options: RunOptions) -> Invocation:
        x = self.common_inputs(cf, backend)
        lens = backend.tensor(cf.context_lens)
        schedule = None
        if options.metadata_fn is not None:
            schedule = options.metadata_fn(lens, cf.block_size, backend.num_sms())
        args = (x["q"], x["kv_cache"], x["weights"], lens, x["block_table"], schedule, cf.max_model_len)
        rows, cols = cf.rows, cf.max_model_len
        return Invocation(args=args, kwargs=self.merged_kwargs({}, options), inputs=dict(x, context_lens=lens),
                          collect=lambda result: check_output(backend, result, rows, cols, "the returned logits"),
                          notes={"schedule_metadata": "from --metadata-fn" if schedule is not None else "None"})
