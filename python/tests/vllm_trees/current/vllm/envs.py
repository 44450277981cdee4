"""Environment switches, read when an attribute is asked for (as vLLM's envs module does)."""
import os
from typing import Any, Callable


def _switch(name: str, default: str) -> Callable[[], bool]:
    return lambda: os.getenv(name, default).strip().lower() in ("1", "true")


environment_variables: dict[str, Callable[[], Any]] = {
    # AITER is off unless asked for.
    "VLLM_ROCM_USE_AITER": _switch("VLLM_ROCM_USE_AITER", "False"),
    "VLLM_ROCM_USE_AITER_MLA": _switch("VLLM_ROCM_USE_AITER_MLA", "True"),
    "VLLM_SPARSE_INDEXER_MAX_LOGITS_MB": lambda: int(os.getenv("VLLM_SPARSE_INDEXER_MAX_LOGITS_MB", "512")),
}


def __getattr__(name: str):
    if name in environment_variables:
        return environment_variables[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return list(environment_variables)
