#!/usr/bin/env bash
# Profiles fused-mma's first launch (its wgmma kernel; PMQA_PROFILE_KERNEL=fused_mma_kernel for
# the mma.sync one) at the DeepSeek-V3.2 decode shape (next_n 1) with Nsight
# Compute (clocks left as they are), from a build made by bench/h200/build.sh.
#   bench/h200/profile.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "ncu not found"; exit 2; }
"$ncu" --clock-control none -k "regex:${PMQA_PROFILE_KERNEL:-fused_wgmma_kernel}" --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats --section MemoryWorkloadAnalysis \
  "$build/bench/pmqa_bench_gpu" --reps 3 --no-scaling
