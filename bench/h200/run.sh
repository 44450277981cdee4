#!/usr/bin/env bash
# Runs pmqa's GPU tests, the GPU benchmark, the fused-mma timeline, its tuning step, the launch
# floor (bench/gpu_launch_floor.cu) and the stream floor (bench/gpu_stream_floor.cu) from a build
# made by bench/h200/build.sh on another machine (it builds nothing), then prints a short table.
# Logs and JUnit/JSON files go to $OUT (or ./h200-out when OUT is unset).
#
#   PMQA_COMMIT=<sha> bench/h200/run.sh [BUILD_DIR]   (the commit is printed; a copied tree may lack .git)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
out=${OUT:-h200-out}
mkdir -p "$out"
commit=${PMQA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "pmqa GPU run: $(date -u +%Y-%m-%dT%H:%MZ), commit $commit, GPU: ${gpu:-none found}"

declare -a summary
step() {  # step NAME LOGFILE COMMAND...: runs it, records its status and its test counts
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  "$@" >"$out/$log" 2>&1
  local rc=$?
  local passed failed skipped
  passed=$(grep -c '^\[       OK \]' "$out/$log")
  failed=$(grep -c '^\[  FAILED  \].*(' "$out/$log")
  skipped=$(grep -c '^\[  SKIPPED \].*(' "$out/$log")
  # pmqa's own summary line ("N passed, M failed, K skipped") when the step is not a gtest binary
  local summary_line
  summary_line=$(grep -oE '[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$out/$log" | tail -1)
  if [ -n "$summary_line" ]; then
    read -r passed _ failed _ skipped _ <<<"${summary_line//,/}"
  fi
  summary+=("$(printf '%-34s %4s %6s %6s %7s %6ss' "$name" "$rc" "$passed" "$failed" "$skipped" $((SECONDS - t0)))")
  tail -n 3 "$out/$log"
}

step "gpu tests (suites, relaunch, 2^31)" gpu_test.log \
  "$build/kernels/tests/pmqa_kernels_gpu_test" --gtest_output="xml:$out/gpu_test.xml"
step "kernel properties (gpu)" property.log \
  "$build/property_tests/kernels/pmqa_kernel_property_test" --gtest_filter='*gpu*' --gtest_output="xml:$out/property.xml"
step "arch matrix, numeric half (gpu)" matrix.log \
  "$build/property_tests/arch_matrix_numeric/pmqa_arch_matrix_numeric_test" --gtest_output="xml:$out/matrix.xml"
step "pmqa check --executor gpu standard" check.log \
  "$build/cli/pmqa" check --suite standard --executor gpu --junit "$out/check.xml"
step "gpu benchmark" bench.log "$build/bench/pmqa_bench_gpu" --json "$out/bench.json"
step "fused-mma timeline" timeline.log "$build/bench/pmqa_bench_timeline"
step "wgmma tuning (kTry variants)" tuning.log "$build/bench/pmqa_bench_gpu" --tuning --reps 40
step "launch floor" launch.log "$build/bench/pmqa_bench_launch"
step "stream floor (bytes alone)" stream.log "$build/bench/pmqa_bench_stream_floor"

echo
printf '%-34s %4s %6s %6s %7s %7s\n' step rc passed failed skipped time
for line in "${summary[@]}"; do echo "$line"; done
echo
sed -n '/^device:/p;/^kernel /,/^$/p;/ablations/,+1p' "$out/bench.log"
grep -E '^(empty kernel|decode|one sequence)' "$out/timeline.log"
sed -n '/tuning experiments/,$p' "$out/tuning.log"
sed -n '/what runs/,$p' "$out/launch.log"
sed -n '/^decode shape/,$p' "$out/stream.log"
