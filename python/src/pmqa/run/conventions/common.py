"""What every calling convention shares: the invocation record, refusals, caller-owned output
buffers with guard cells, and the checks on what an op hands back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from ..backend import SENTINEL_BITS, Backend


class OpOutputError(Exception):
    """The op handed back something that is not the convention's output (wrong shape, dtype, device)."""


@dataclass
class RunOptions:
    """The runner's settings a convention reads when it builds a call."""

    op_kwargs: Dict[str, Any] = field(default_factory=dict)  # --op-kwarg KEY=VALUE, passed through
    out_row_pad: int = 32             # extra float32 cells after each row of a caller-owned output buffer
    metadata_fn: Optional[Callable[..., Any]] = None  # deepgemm: the module's schedule-metadata function


@dataclass
class Invocation:
    """One call of the op, ready to run: ``result = op(*args, **kwargs)``.

    collect(result) returns the logits [B*N, max_model_len] as a backend array (possibly a strided
    view); reset() puts caller-owned buffers back to their initial contents before a relaunch;
    guard_problem() says whether the op wrote outside its output rows (None when it did not, or when
    the op owns its output and there is nothing to check).
    """

    args: Tuple[Any, ...]
    kwargs: Dict[str, Any]
    collect: Callable[[Any], Any]
    reset: Callable[[], None] = lambda: None
    guard_problem: Callable[[], Optional[str]] = lambda: None
    notes: Dict[str, str] = field(default_factory=dict)  # extra metadata for the output file
    inputs: Dict[str, Any] = field(default_factory=dict)  # q, kv_cache, weights, context_lens, block_table as passed


class GuardedBuffer:
    """A caller-owned float32 output buffer [*lead, rows, cols] with guard cells around it.

    The allocation is [*lead, rows + 2, cols + pad]: one guard row before the first row and one after
    the last, and ``pad`` guard columns after each row, so the view handed to the op has a row stride
    of cols + pad (an op that ignores the stride misplaces its rows). Guard cells hold pmqa's sentinel
    (0x7FF0CAFE) and must keep it (spec §1.3: nothing may be written outside [0, max_model_len) of a
    row). The cells of the view start as the sentinel ("every valid cell written" is then checked by
    pmqa verify) or as -inf (AITER's stage-1 convention: the caller pre-fills with -inf).
    """

    def __init__(self, backend: Backend, lead: Tuple[int, ...], rows: int, cols: int, pad: int,
                 inner: str = "sentinel"):
        if inner not in ("sentinel", "-inf"):
            raise ValueError(inner)
        self.backend = backend
        self.lead = tuple(lead)
        self.rows, self.cols, self.pad = rows, cols, pad
        self.inner = inner
        self.base = backend.full_bits(self.lead + (rows + 2, cols + pad), SENTINEL_BITS)
        self._index = (slice(None),) * len(self.lead) + (slice(1, rows + 1), slice(0, cols))
        self.view = self.base[self._index]
        self.reset()

    @property
    def row_stride(self) -> int:
        return self.cols + self.pad

    def reset(self) -> None:
        self.backend.fill_bits(self.base, SENTINEL_BITS)
        if self.inner == "-inf":
            self.backend.fill(self.view, float("-inf"))

    def guard_problem(self) -> Optional[str]:
        bits = self.backend.to_numpy(self.base).view(np.uint32)
        guard = np.ones(bits.shape, dtype=bool)
        guard[self._index] = False
        bad = guard & (bits != SENTINEL_BITS)
        count = int(bad.sum())
        if count == 0:
            return None
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        *lead, row, col = first
        where = "".join(f"[{i}]" for i in lead)
        if row == 0:
            place = f"the guard row before row 0{' of head ' + where if lead else ''}"
        elif row == self.rows + 1:
            place = f"the guard row after row {self.rows - 1}{' of head ' + where if lead else ''}"
        else:
            place = (f"row {row - 1}{' of head ' + where if lead else ''}, column {col} "
                     f"(max_model_len {self.cols}, row stride {self.row_stride})")
        value = bits[first]
        return (f"wrote {count} cell(s) outside its output rows; first at {place}: "
                f"0x{int(value):08X} ({np.uint32(value).view(np.float32)!r})")


def check_output(backend: Backend, result: Any, rows: int, cols: int, what: str) -> Any:
    """The op's logits as it handed them back, after checking type, shape, dtype and device."""
    if not backend.is_array(result):
        raise OpOutputError(f"{what} is a {type(result).__name__}, expected a {backend.name} array "
                            f"[B*N, max_model_len] = [{rows}, {cols}]")
    shape = backend.shape(result)
    if shape != (rows, cols):
        raise OpOutputError(f"{what} has shape {list(shape)}, expected [B*N, max_model_len] = [{rows}, {cols}]")
    dtype = backend.dtype_name(result)
    if dtype not in ("float32", "bfloat16"):
        raise OpOutputError(f"{what} has dtype {dtype}, expected float32 (or bfloat16)")
    problem = backend.placement_problem(result)
    if problem:
        raise OpOutputError(f"{what}: {problem}")
    return result


def lens_2d_from_1d(context_lens: np.ndarray, next_n: int) -> np.ndarray:
    """Spec §1.2: 1-D lengths [B] as the equivalent 2-D [B, N], E[b][n] = context_lens[b] - N + n + 1.

    A row with E <= 0 has no valid key; it is stored as 0 (the same meaning, and a length a kernel
    can take without special-casing negatives).
    """
    lens = np.asarray(context_lens, dtype=np.int64)
    n = np.arange(next_n, dtype=np.int64)
    e = lens[:, None] - next_n + n[None, :] + 1
    return np.maximum(e, 0).astype(np.int32)
