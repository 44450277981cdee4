"""deepgemm: DeepGEMM's fused kernel (``fp8_paged_mqa_logits``, as vLLM calls it on sm_90/sm_100).

    schedule = metadata_fn(context_lens_2d, block_size, num_sms)
    logits = op(q_fp8, kv_cache, weights, context_lens_2d, block_table, schedule, max_model_len,
                **--op-kwarg)

* q: torch.float8_e4m3fn (DeepGEMM has no FNUZ path);
* kv_cache: uint8 [num_blocks, block_size, 1, D+4] strided over the case's block stride, NORMAL;
* what DeepGEMM supports (block size 64, 32 or 64 heads, next_n 1 or 2, 16-byte strides, lengths
  that do not fall with n, ...) is its envelope, cases/data/envelopes/deepgemm.json;
* context_lens: always 2-D [B, N] int32. A 1-D case is converted exactly per spec §1.2
  (E[b][n] = context_lens[b] - N + n + 1, rows with E <= 0 stored as 0) -- the one conversion the
  convention itself prescribes;
* schedule: from the module's metadata function (default: get_paged_mqa_logits_metadata in the op's
  module; --metadata-fn to name another) with the device's SM count (--num-sms to override);
* the returned logits may have a padded row stride (DeepGEMM aligns rows); the runner reads them
  through their strides.

Contract valid-only: without clean_logits DeepGEMM leaves garbage past E_r.
"""

from __future__ import annotations

from pmqa.cases import CaseFile

from ..backend import Backend
from .base import Convention
from .common import Invocation, RunOptions, check_output, lens_2d_from_1d


class DeepGemm(Convention):
    name = "deepgemm"
    owns_output = True
    contract = "valid-only"
    tolerance = "matrix-unit"
    nan = "relu-clamp"  # relu is max(x, 0) on the tensor cores: a NaN term counts 0
    signature = ("op(q_fp8, kv_cache, weights, context_lens[B, N], block_table, schedule_meta, max_model_len) "
                 "-> logits; schedule_meta = metadata_fn(context_lens[B, N], block_size, num_sms)")

    def build(self, cf: CaseFile, backend: Backend, options: RunOptions) -> Invocation:
        if options.metadata_fn is None:
            raise ValueError("deepgemm needs a schedule-metadata function (--metadata-fn)")
        x = self.common_inputs(cf, backend)
        lens = cf.context_lens if cf.context_lens_2d else lens_2d_from_1d(cf.context_lens, cf.next_n)
        lens_t = backend.tensor(lens)
        num_sms = backend.num_sms()
        schedule = options.metadata_fn(lens_t, cf.block_size, num_sms)
        args = (x["q"], x["kv_cache"], x["weights"], lens_t, x["block_table"], schedule, cf.max_model_len)
        rows, cols = cf.rows, cf.max_model_len
        return Invocation(args=args, kwargs=self.merged_kwargs({}, options), inputs=dict(x, context_lens=lens_t),
                          collect=lambda result: check_output(backend, result, rows, cols, "the returned logits"),
                          notes={"num_sms": str(num_sms),
                                 "context_lens_passed": "2-D (as stored)" if cf.context_lens_2d
                                 else "2-D, built from the 1-D lengths per spec §1.2"})
