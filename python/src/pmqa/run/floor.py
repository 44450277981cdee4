"""The byte floor of a case: what any implementation of the op must move, and the time that takes at
the device's copy bandwidth (measured in the same process, on the same device, or stated with
--copy-gbps). The definition is the C++ one (cases/include/pmqa/cases/byte_floor.hpp: q, the KV
blocks valid keys touch, each once, weights, the block-table entries read, the lengths, the output
cells the contract needs), which pmqa verify recomputes when it re-judges a run's speed gate.

`--max-floor-ratio R` fails a case whose median kernel time is more than R times its floor; the
judgment is cases/run_gates.hpp's (pmqa._core.speed_gate), the one pmqa verify re-applies to the
file. The kernel time is what the call's GPU work took on the device: every kernel, memset and copy
it launched, their durations summed from the profiler's activity records (a two-stage path counts
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

from .._native import core

DEFAULT_MAX_FLOOR_RATIO = core.DEFAULT_MAX_FLOOR_RATIO
DEFAULT_FLOOR_MIN_MB = core.DEFAULT_FLOOR_MIN_MB

#: q, kv, weights, block_table, context_lens, output (bytes), .total and .describe().
FloorBytes = core.FloorBytes
#: floor_bytes(case_file, contract) -> FloorBytes, for a pmqa.cases.CaseFile.
floor_bytes = core.floor_bytes
#: floor_ms(total_bytes, bytes_per_s) -> milliseconds.
floor_ms = core.floor_ms

__all__ = ["DEFAULT_FLOOR_MIN_MB", "DEFAULT_MAX_FLOOR_RATIO", "FloorBytes", "floor_bytes", "floor_ms"]
