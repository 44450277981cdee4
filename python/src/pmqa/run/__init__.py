"""pmqa-run: run a Python-callable FP8 paged MQA logits op on pmqa case files, for `pmqa verify`.

    pmqa gen --suite quick --out cases/
    python3 -m pmqa.run --op MODULE:FUNCTION --convention aiter-fused|aiter-stage1|deepgemm|eager|vllm-rocm \\
        --cases cases/ --out out/ [--bench] [--logits-only] [--expect-path fused] [--max-floor-ratio]
    pmqa verify out/

Argument building lives in pmqa.run.conventions (one module per calling convention) and goes through
a tensor backend (pmqa.run.backend): numpy for stand-in ops in CI, torch on GPUs (imported only
then). What each library supports is its envelope (pmqa.cases.envelope); each case runs in a worker
process (pmqa.run.worker); --expect-path reads the kernels launched (pmqa.run.kernel_names) and
--max-floor-ratio the time over the byte floor (pmqa.run.floor). pmqa.run.eager_torch is a torch
implementation of the op for the ``eager`` convention.
"""

from .backend import SENTINEL_BITS, Backend, Fp8Tensor, NumpyBackend, make_backend
from .cli import EXIT_INVALID, EXIT_OK, EXIT_OP_FAILED, main
from .conventions import CONVENTIONS, RunOptions

__all__ = ["SENTINEL_BITS", "Backend", "Fp8Tensor", "NumpyBackend", "make_backend", "EXIT_INVALID", "EXIT_OK",
           "EXIT_OP_FAILED", "main", "CONVENTIONS", "RunOptions"]
