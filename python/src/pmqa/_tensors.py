"""numpy arrays in, numpy arrays or torch tensors out: the only place pmqa touches a tensor library.

torch is optional: it is imported when a device is asked for or a torch tensor is passed, never at
``import pmqa``. What comes back to the judge is always a host float32 numpy array with the
caller's strides, its bits as the kernel wrote them (so pmqa's sentinel NaN still reads as never
written); bfloat16 and float16 outputs are widened exactly.
"""
from __future__ import annotations

import sys
import warnings
from typing import Any, Optional

import numpy as np

from . import _fp8_torch


class Fp8CodesWarning(UserWarning):
    """q is handed as uint8 codes: the installed torch has no dtype for the case's fp8 format."""


def torch_module():
    """torch, imported on first use, with the reason when it is missing."""
    try:
        import torch  # noqa: WPS433 (optional dependency)
    except ImportError as exc:
        raise ImportError(f"torch tensors need torch, which is not installed for {sys.executable} ({exc}); "
                          "without it pmqa works on numpy arrays (device=None)") from None
    return torch


def is_torch_tensor(obj: Any) -> bool:
    mod = sys.modules.get("torch")
    return mod is not None and isinstance(obj, mod.Tensor)


def to_device(array: np.ndarray, device: Optional[str], fp8: Optional[str] = None) -> Any:
    """A numpy input as the caller wants it: the array itself (device None) or a torch tensor on
    the device; q's uint8 codes become the torch fp8 dtype of the case's format (the same bytes,
    relabelled: no value is converted). A torch without that dtype gets the uint8 codes and an
    Fp8CodesWarning naming the format and the torch release that has the dtype."""
    if device is None:
        return array
    torch = torch_module()
    t = torch.from_numpy(np.array(array, order="C", copy=True)).to(device)
    if fp8 is not None:
        dtype = _fp8_torch.torch_dtype(torch, fp8)
        if dtype is None:
            warnings.warn(_fp8_torch.codes_note(torch, fp8) + " (the case's fp8 field names it)", Fp8CodesWarning,
                          stacklevel=3)
            return t
        t = t.view(dtype)
    return t


def kv_blocks_view(kv: Any, block_size: int, head_dim: int) -> Any:
    """[num_blocks, block_stride] bytes as the frameworks view a cache: uint8
    [num_blocks, block_size, 1, D+4] with strides (block_stride, D+4, D+4, 1), padding kept. Only
    block_size 1 makes the last dimension one token's values and scale (spec §2)."""
    num_blocks, stride = (int(x) for x in kv.shape)
    row = head_dim + 4
    if is_torch_tensor(kv):
        return kv.as_strided((num_blocks, block_size, 1, row), (stride, row, row, 1))
    return np.lib.stride_tricks.as_strided(kv, shape=(num_blocks, block_size, 1, row), strides=(stride, row, row, 1),
                                           writeable=False)


def dtype_name(logits: Any) -> str:
    """"float32", "bfloat16", "float16", ... for a numpy array or a torch tensor; "" for anything else."""
    if is_torch_tensor(logits):
        return str(logits.dtype).replace("torch.", "")
    if isinstance(logits, np.ndarray):
        return str(logits.dtype)
    return ""


def host_float32(logits: Any) -> np.ndarray:
    """The kernel's logits as a host float32 numpy array, strides kept where the array has them."""
    if is_torch_tensor(logits):
        torch = sys.modules["torch"]
        t = logits.detach()
        if t.dtype in (torch.bfloat16, torch.float16):
            t = t.to(torch.float32)  # exact: every bfloat16 and float16 is a float32
        elif t.dtype != torch.float32:
            raise TypeError(f"logits are torch.{str(t.dtype).replace('torch.', '')}: pmqa judges float32, "
                            "bfloat16 or float16 logits")
        return t.cpu().numpy()
    if isinstance(logits, np.ndarray):
        if logits.dtype == np.float32:
            return logits
        if logits.dtype == np.float16:
            return logits.astype(np.float32)
        raise TypeError(f"logits are numpy {logits.dtype}: pmqa judges float32 (or float16) logits; "
                        "a float64 result is not a kernel's output -- cast it on purpose with .astype(np.float32)")
    raise TypeError(f"logits of type {type(logits).__name__}: expected a numpy array or a torch tensor")
