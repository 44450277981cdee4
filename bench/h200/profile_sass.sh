#!/usr/bin/env bash
# Per-instruction profile of fused-mma's first launch (wgmma kernel unless PMQA_PROFILE_KERNEL says) at the DeepSeek-V3.2 decode shape (next_n 1):
# Nsight Compute's source page as SASS with each instruction's executed count and stall samples,
# as CSV in $OUT/fused_mma_sass.csv (or ./h200-out). Builds nothing.
#   bench/h200/profile_sass.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
out=${OUT:-h200-out}
mkdir -p "$out"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "ncu not found"; exit 2; }
"$ncu" --clock-control none -k "regex:${PMQA_PROFILE_KERNEL:-fused_wgmma_kernel}" --launch-count 1 --section SourceCounters \
  --section WarpStateStats --import-source no --page source --print-source sass --csv \
  "$build/bench/pmqa_bench_gpu" --reps 3 --no-scaling >"$out/fused_mma_sass.csv" 2>&1
echo "wrote $out/fused_mma_sass.csv ($(wc -l <"$out/fused_mma_sass.csv") lines)"
