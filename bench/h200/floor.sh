#!/usr/bin/env bash
# The floor under fused-mma's decode launch, from a build made by bench/h200/build.sh (it builds
# nothing): the launch and the prologue's cold round trips alone (pmqa_probe_launch_floor), the
# decode launch's bytes read and written with a free schedule and nothing computed
# (pmqa_probe_stream_floor), and the wgmma kernel's own duration under Nsight Compute (no launch,
# no events) in two L2 states: after the benchmark's memset flush (dirty lines, the basis of
# DeepGEMM's published 0.029 ms: kernel time after a zero-fill) and after the profiler's own flush
# (clean lines).
#
#   bench/h200/floor.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
"$build/bench/pmqa_probe_launch_floor" --reps 200
echo
"$build/bench/pmqa_probe_stream_floor" --reps 200
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "ncu not found: no kernel durations"; exit 0; }

# durations CACHE: every wgmma kernel launch of a short benchmark run under ncu (CACHE is its
# --cache-control), then per production kernel (Faithful hooks; 64 query rows at next_n 1, 128 at
# next_n 2) the spread of their durations in us.
durations() {
  "$ncu" --clock-control none --cache-control "$1" -k regex:fused_wgmma_kernel --metrics gpu__time_duration.sum --csv \
    "$build/bench/pmqa_bench_gpu" --reps 30 --no-scaling 2>/dev/null |
    python3 -c '
import csv, sys
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
by = {}
for r in csv.reader(l for l in sys.stdin if l.startswith("\"")):
    if len(r) < 5 or r[-3] != "gpu__time_duration.sum":
        continue
    name = next((f for f in r if "fused_wgmma_kernel" in f), "")
    by.setdefault(name, []).append(float(r[-1].replace(",", "")) * scale.get(r[-2], float("nan")))
for rows, label in ((64, "next_n 1"), (128, "next_n 2")):
    us = sorted(v for name, vs in by.items() if "Faithful" in name and ", %d," % rows in name for v in vs)
    if not us:
        print("    %s: no launches profiled (kernels seen: %s)" % (label, "; ".join(by) or "none"))
        continue
    q = lambda f: us[min(len(us) - 1, int(f * (len(us) - 1) + 0.5))]
    print("    %s: %4d launches  min %6.2f  p50 %6.2f  p90 %6.2f  max %6.2f us" % (label, len(us), us[0], q(0.5), q(0.9), us[-1]))'
}
echo
echo "fused-mma wgmma kernel, duration under Nsight Compute (gpu__time_duration, clocks left alone):"
echo "  after the benchmark's memset flush (L2 dirty; DeepGEMM's tests flush by a zero-fill too):"
durations none
echo "  after the profiler's own flush (L2 clean):"
durations all
