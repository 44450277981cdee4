"""pmqa-run: run a Python-callable FP8 paged MQA logits op on pmqa case files, for `pmqa verify`.

    pmqa gen --suite quick --out cases/
    python3 -m pmqa.run --op MODULE:FUNCTION --convention aiter-fused|aiter-stage1|deepgemm|eager|vllm-rocm \\
        --cases cases/ --out out/ [--bench] [--logits-only] [--expect-path fused] [--max-floor-ratio]
    pmqa verify out/

Argument building lives in pmqa.run.conventions (one module per calling convention) and goes through
a tensor backend (pmqa.run.backend): numpy for stand-in ops in CI, torch on GPUs (imported only
then). What each library supports is its envelope (pmqa.cases.envelope); each case runs in a worker
process (pmqa.run.worker); --expect-path reads the kernels launched (pmqa.run.kernel_names) and
--max-floor-ratio the time over the byte floor (pmqa.run.floor). python/examples/eager_torch_op.py is
a torch implementation of the op for the ``eager`` convention. The command itself: pmqa.run.cli's main(),
over options and option_checks (the command line), case_files and plan (the cases), runner (the
run), report (what it prints and the JUnit), and backend_registry (--backend).
"""

from typing import Any, List

# Every name loads on first use (PEP 562): `python3 -m pmqa.run` and the pmqa-run command import this
# package before main() runs, and numpy, the backends and the runner must import under main()'s
# Ctrl-C guard (pmqa.run.cli), not here.
_NAMES = {"SENTINEL_BITS": "backend", "Backend": "backend", "Fp8Tensor": "backend", "NumpyBackend": "backend",
          "make_backend": "backend_registry", "CONVENTIONS": "conventions", "RunOptions": "conventions",
          "EXIT_INVALID": "options", "EXIT_OK": "options", "EXIT_OP_FAILED": "options", "main": "cli"}

__all__ = ["SENTINEL_BITS", "Backend", "Fp8Tensor", "NumpyBackend", "make_backend", "EXIT_INVALID", "EXIT_OK",
           "EXIT_OP_FAILED", "main", "CONVENTIONS", "RunOptions"]


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(list(globals()) + __all__)
