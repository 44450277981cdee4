"""Calling conventions: one small module each (spec §1.4, §2, §4).

========  ============================================================  ===========
name      call                                                          contract
========  ============================================================  ===========
aiter-    op(q, kv, w, out, lens[B], table, L, Preshuffle=, KVBlock...  valid-only
fused
aiter-    op(q, kv, w, out_qk[H,B*N,L] = -inf, lens[B], table, L,       clean
stage1    ChunkQ=H); runner sums heads
deepgemm  op(q, kv, w, lens[B,N], table, meta, L) -> logits             valid-only
eager     op(q, kv, w, lens, table, L) -> logits                        clean
vllm-     op(q, kv, w, lens[B], table, meta, L) -> logits: vLLM's       valid-only
rocm      entry, its own dispatch (fused, two-stage or eager)
========  ============================================================  ===========

What each one's library supports, per platform, is its envelope (pmqa.cases.envelope,
cases/data/envelopes/<name>.json), not code here.
"""

from .aiter_fused import AiterFused
from .aiter_stage1 import AiterStage1
from .base import Convention
from .common import GuardedBuffer, Invocation, OpOutputError, RunOptions, check_output, lens_2d_from_1d
from .deepgemm import DeepGemm
from .eager import Eager
from .vllm_rocm import VllmRocm

CONVENTIONS = {c.name: c for c in (AiterFused(), AiterStage1(), DeepGemm(), Eager(), VllmRocm())}

__all__ = ["CONVENTIONS", "Convention", "GuardedBuffer", "Invocation", "OpOutputError", "RunOptions",
           "check_output", "lens_2d_from_1d", "AiterFused", "AiterStage1", "DeepGemm", "Eager", "VllmRocm"]
