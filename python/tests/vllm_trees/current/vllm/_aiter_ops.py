"""Whether vLLM may call AITER, decided once per process from the environment and the platform.

`rocm_aiter_ops.is_enabled()` needs three things: ROCm, AITER importable on a CDNA3-or-newer arch
(checked by `if_aiter_supported`), and VLLM_ROCM_USE_AITER. RDNA4 has its own switch,
`is_rdna_aiter_enabled()`, because only AITER's Triton kernels exist there.
"""
import functools
from importlib.util import find_spec

import torch

import vllm.envs as envs
from vllm.logger import init_logger
from vllm.platforms import current_platform
from vllm.utils.torch_utils import direct_register_custom_op

# As in vLLM, this module imports the indexer from the entry's module at its top (to register it as
# an op below) while the entry imports this module lazily, inside the call: an import cycle that
# works only in that order, which the probe must keep.
from vllm.v1.attention.ops.rocm_aiter_mla_sparse import (
    rocm_aiter_sparse_attn_indexer,
    rocm_aiter_sparse_attn_indexer_fake,
)

logger = init_logger(__name__)

# Looked up once: find_spec is not something to call in a forward pass.
IS_AITER_FOUND = find_spec("aiter") is not None

FP8_DTYPE = current_platform.fp8_dtype()


def is_aiter_found_and_supported() -> bool:
    """AITER can run here (the library is importable, the arch is CDNA3 or newer); says nothing about
    whether the user asked for it."""
    if current_platform.is_rocm() and IS_AITER_FOUND:
        from vllm.platforms.rocm import get_cdna_version

        return get_cdna_version() > 2
    return False


def if_aiter_supported(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if is_aiter_found_and_supported():
            return func(*args, **kwargs)
        return None

    return wrapper


def _topk_softmax_impl(topk_weights: torch.Tensor, topk_indices: torch.Tensor, gating_output: torch.Tensor) -> None:
    from aiter import topk_softmax

    topk_softmax(topk_weights, topk_indices, gating_output)


def _topk_softmax_fake(topk_weights: torch.Tensor, topk_indices: torch.Tensor, gating_output: torch.Tensor) -> None:
    return None


class rocm_aiter_ops:
    """The switches, copied from the environment when this module is imported."""

    _AITER_ENABLED = envs.VLLM_ROCM_USE_AITER
    _MLA_ENABLED = envs.VLLM_ROCM_USE_AITER_MLA
    _ops_registered = False

    @classmethod
    def refresh_env_variables(cls) -> None:
        cls._AITER_ENABLED = envs.VLLM_ROCM_USE_AITER
        cls._MLA_ENABLED = envs.VLLM_ROCM_USE_AITER_MLA

    @classmethod
    @if_aiter_supported
    def is_enabled(cls) -> bool:
        return cls._AITER_ENABLED

    @classmethod
    @if_aiter_supported
    def is_mla_enabled(cls) -> bool:
        return cls._AITER_ENABLED and cls._MLA_ENABLED

    @classmethod
    def is_rdna_aiter_enabled(cls) -> bool:
        if not current_platform.is_rocm() or not IS_AITER_FOUND:
            return False
        from vllm.platforms.rocm import on_rdna4

        return on_rdna4() and cls._AITER_ENABLED

    @classmethod
    def register_ops_once(cls) -> None:
        if not cls._ops_registered:
            direct_register_custom_op(op_name="rocm_aiter_topk_softmax", op_func=_topk_softmax_impl,
                                      mutates_args=["topk_weights", "topk_indices"], fake_impl=_topk_softmax_fake)
            direct_register_custom_op(op_name="rocm_aiter_sparse_attn_indexer", op_func=rocm_aiter_sparse_attn_indexer,
                                      mutates_args=["topk_indices_buffer"],
                                      fake_impl=rocm_aiter_sparse_attn_indexer_fake)
            cls._ops_registered = True


rocm_aiter_ops.register_ops_once()
