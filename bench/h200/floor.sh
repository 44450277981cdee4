#!/usr/bin/env bash
# The floor under fused-mma's decode launch, from a build made by bench/h200/build.sh (it builds
# nothing): the launch and the prologue's cold round trips alone (pmqa_bench_launch), and the
# wgmma kernel's own duration under Nsight Compute (no launch, no events) in two L2 states:
# after the benchmark's memset flush (dirty lines, the basis of DeepGEMM's published 0.029 ms:
# kernel time after a zero-fill) and after the profiler's own flush (clean lines).
#
#   bench/h200/floor.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
"$build/bench/pmqa_bench_launch" --reps 200
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "ncu not found: no kernel durations"; exit 0; }

# durations ROWS CACHE: the wgmma kernel's duration (us) over every Faithful launch of ROWS query
# rows (64: next_n 1, 128: next_n 2) in a short benchmark run; CACHE is ncu's --cache-control.
durations() {
  "$ncu" --clock-control none --cache-control "$2" --kernel-name-base demangled \
    -k "regex:fused_wgmma_kernel<Faithful, $1, (1|true)>" --metrics gpu__time_duration.sum --csv --print-units base \
    "$build/bench/pmqa_bench_gpu" --reps 30 --no-scaling 2>/dev/null |
    python3 -c '
import csv, statistics, sys
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\"")) if r[-3:-2] == ["gpu__time_duration.sum"]]
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
us = sorted(float(r[-1].replace(",", "")) * scale.get(r[-2], float("nan")) for r in rows)
if not us: print("no launches profiled"); sys.exit()
q = lambda f: us[min(len(us) - 1, int(f * (len(us) - 1) + 0.5))]
print("%4d launches  min %6.2f  p50 %6.2f  p90 %6.2f  max %6.2f us" % (len(us), us[0], q(0.5), q(0.9), us[-1]))'
}
echo
echo "fused-mma wgmma kernel, duration under Nsight Compute (gpu__time_duration, clocks left alone):"
printf '  %-48s ' "next_n 1, after the benchmark's memset flush"; durations 64 none
printf '  %-48s ' "next_n 1, after the profiler's flush (clean L2)"; durations 64 all
printf '  %-48s ' "next_n 2, after the benchmark's memset flush"; durations 128 none
printf '  %-48s ' "next_n 2, after the profiler's flush (clean L2)"; durations 128 all
