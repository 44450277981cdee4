"""Whether an op wrote into its inputs: host copies of q, kv_cache, weights, context_lens and
block_table taken before the first call, compared byte for byte after it.

An op that corrupts its inputs in place gives the next launch different data, so under --bench its
relaunches differ; without this check that reads as a race. Works for the numpy backend's arrays
and fp8 codes and for torch tensors on any device (fp8 dtypes compared as their bytes).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from .backend import Fp8Tensor


def host_bytes(obj: Any) -> Optional[np.ndarray]:
    """The object's elements as a host uint8 array (a copy), None for what is not an array."""
    if isinstance(obj, Fp8Tensor):
        a = obj.codes
    elif isinstance(obj, np.ndarray):
        a = obj
    elif hasattr(obj, "detach") and hasattr(obj, "cpu") and hasattr(obj, "element_size"):  # a torch tensor
        t = obj.detach()
        if "float8" in str(t.dtype):
            import torch  # already imported by whoever made the tensor
            t = t.view(torch.uint8)
        a = t.cpu().numpy()
    else:
        return None
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8).copy()


def snapshot(inputs: Dict[str, Any]) -> Dict[str, np.ndarray]:
    out = {}
    for name, obj in inputs.items():
        b = host_bytes(obj)
        if b is not None:
            out[name] = b
    return out


def changed_inputs(before: Dict[str, np.ndarray], inputs: Dict[str, Any]) -> Optional[str]:
    """None when every input holds the bytes it held before; else which changed, and how much."""
    changes = []
    for name, old in before.items():
        now = host_bytes(inputs[name])
        if now is None or now.shape != old.shape:
            changes.append(f"{name} (replaced)")
            continue
        differ = int((now != old).sum())
        if differ:
            changes.append(f"{name} ({differ} of {old.size} bytes, first at byte {int(np.argmax(now != old))})")
    if not changes:
        return None
    return ("the op wrote into its inputs: " + ", ".join(changes) + " changed in place (an op must leave q, "
            "kv_cache, weights, context_lens and block_table as it found them)")


__all__ = ["changed_inputs", "host_bytes", "snapshot"]
