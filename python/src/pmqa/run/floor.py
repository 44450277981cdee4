"""The byte floor of a case: what any implementation of the op must move, and the time that takes at
the device's copy bandwidth (measured in the same process, on the same device, or stated with
--copy-gbps).

    q               B*N*H*D bytes (fp8)
    kv_cache        block_size*(D+4) bytes for each distinct physical block a valid key lies in
                    (the partial last block counts whole; pages shared between sequences once)
    weights         B*N*H*4
    block_table     4 bytes for each logical block a sequence reads (ceil(max_n E_r / block_size))
    context_lens    4 bytes per entry ([B] or [B, N])
    output          4 bytes per cell the contract needs written: every cell of [B*N, max_model_len]
                    under "clean", the valid cells (sum of min(E_r, max_model_len) over rows E_r > 0)
                    under "valid-only"

`--max-floor-ratio R` fails a case whose median kernel time is more than R times its floor. The
kernel time is what the call's GPU work took on the device: every kernel, memset and copy it
launched, their durations summed from the profiler's activity records (a two-stage path counts
its fill, stage 1 and head sum). It leaves out the host: an op whose Python wrapper takes longer to
launch than the GPU work queued before a start event would otherwise have that launch inside its
time (the flake that made the first gate on wall time fail AITER's correct fused kernel in 14 of
33 decode-shape case-runs on an H200). The wall time's ratio is recorded beside it. The floor
ignores launch latency, which dominates small cases: the gate applies only to cases whose floor is
at least `--floor-min-mb` (16 MB: the decode shape has about 74 MB); smaller ones get the ratio
printed, not judged.

The default R, from bench/h200/speed_gate.py on an H200 (bench/results/2026-12-02-h200-speed-gate.md:
kernel time over the floor at deepseek-8k-n1, -n2 and deepseek-32k, 20 fresh processes per path):
pmqa's fused-mma 1.66 to 1.87, a fused Triton kernel 2.26 to 4.81, AITER's plain Triton fused kernel
at most 5.5 (its wall time through the runner, an upper bound of its kernel time); the two-stage
paths from 8.86 (a Triton stage 1 with torch's fill and head sum) up, AITER's composite above 11 in
every run seen. R = 7 sits near the geometric middle of the closest pair (5.5 and 8.86): 1.27x
above the slowest fused kernel and 1.27x below the fastest two-stage run (R = 8 left that side
only 1.11x).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_MAX_FLOOR_RATIO = 7.0
DEFAULT_FLOOR_MIN_MB = 16.0


@dataclass(frozen=True)
class FloorBytes:
    q: int
    kv: int
    weights: int
    block_table: int
    context_lens: int
    output: int

    @property
    def total(self) -> int:
        return self.q + self.kv + self.weights + self.block_table + self.context_lens + self.output

    def describe(self) -> str:
        return (f"{self.total / 1e6:.2f} MB (q {self.q}, kv {self.kv}, weights {self.weights}, block table "
                f"{self.block_table}, lengths {self.context_lens}, output {self.output} bytes)")


def floor_bytes(cf: Any, contract: str) -> FloorBytes:
    """The bytes of a pmqa.cases.CaseFile that the op must move (module docstring)."""
    b, n, h, d, bs = cf.batch, cf.next_n, cf.heads, cf.head_dim, cf.block_size
    e = np.maximum(cf.valid_keys(), 0).reshape(b, n) if b else np.zeros((0, n), dtype=np.int64)
    longest = e.max(axis=1) if b else np.zeros(0, dtype=np.int64)
    blocks = (longest + bs - 1) // bs
    pages = set()
    for seq in range(b):
        pages.update(int(p) for p in cf.block_table[seq, :int(blocks[seq])])
    if contract == "clean":
        out_cells = b * n * cf.max_model_len
    else:
        out_cells = int(np.minimum(e, cf.max_model_len).sum())
    return FloorBytes(q=b * n * h * d, kv=len(pages) * bs * (d + 4), weights=b * n * h * 4,
                      block_table=int(blocks.sum()) * 4, context_lens=int(cf.context_lens.size) * 4,
                      output=out_cells * 4)


def floor_ms(total_bytes: int, bandwidth_bytes_per_s: float) -> float:
    return total_bytes / bandwidth_bytes_per_s * 1e3
