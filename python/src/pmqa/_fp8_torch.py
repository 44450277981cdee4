"""Which torch dtype carries each fp8 format, and what to say when the installed torch has none.

torch grew its fp8 dtypes late: torch.float8_e4m3fn in 2.1, torch.float8_e4m3fnuz in 2.2 (Debian 12
ships 1.13). pmqa runs on any torch from 1.13: where the dtype is missing, q is handed as its uint8
codes and the format is named, so a kernel (or python/examples/eager_torch_op.py) can decode the codes itself.
"""
from __future__ import annotations

from typing import Any, Optional

# format -> (torch attribute, first torch release that has it)
TORCH_FP8 = {"e4m3fn": ("float8_e4m3fn", "2.1"), "e4m3fnuz": ("float8_e4m3fnuz", "2.2")}


def torch_dtype(torch: Any, fmt: str) -> Optional[Any]:
    """The torch dtype of an fp8 format, or None when this torch has none."""
    return getattr(torch, TORCH_FP8[fmt][0], None)


def codes_note(torch: Any, fmt: str) -> str:
    """Why q comes as uint8 codes on this torch, and which torch would give the fp8 dtype."""
    name, since = TORCH_FP8[fmt]
    return (f"torch {getattr(torch, '__version__', '?')} has no torch.{name} (torch >= {since} has it): q is "
            f"handed as its uint8 codes, format {fmt}")
