#!/usr/bin/env bash
# Runs pmqa's GPU tests, `pmqa check --executor gpu`, the GPU benchmark and the probes
# (bench/probes/: fused-mma's evict-first A/B and timeline, the launch floor, the stream floor) from a
# build made by bench/h200/build.sh on another machine (it builds nothing), then prints a short
# table. Logs and JUnit/JSON files go to $OUT (or ./h200-out when OUT is unset).
#
#   PMQA_COMMIT=<sha> bench/h200/run.sh [BUILD_DIR]   (the commit is printed; a copied tree may lack .git)
#   PMQA_BASELINE=<dir holding bench/pmqa_bench_gpu>: also an A/B of the benchmark, the baseline's
#   binary and this build's in alternation (two rounds each), in the same run
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
  "$build/property_tests/kernels/pmqa_kernel_property_test" --gtest_filter='*gpu*:*Gpu*' --gtest_output="xml:$out/property.xml"
step "arch matrix, numeric half (gpu)" matrix.log \
  "$build/property_tests/arch_matrix_numeric/pmqa_arch_matrix_numeric_test" --gtest_output="xml:$out/matrix.xml"
# On NVIDIA the device's own arch is claimed, so the table gains the decided column: each case as
# the dispatch policy decides it for this arch, run through run_decision.
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
expect=()
[ -n "$cc" ] && expect=(--expect-arch "sm_$cc")
step "pmqa check --executor gpu standard" check.log \
  "$build/cli/pmqa" check --suite standard --executor gpu "${expect[@]}" --junit "$out/check.xml"
step "gpu benchmark" bench.log "$build/bench/pmqa_bench_gpu" --json "$out/bench.json"
if [ -n "${PMQA_BASELINE:-}" ]; then
  for round in 1 2; do
    step "A/B round $round: baseline" "ab-a$round.log" "$PMQA_BASELINE/bench/pmqa_bench_gpu" --no-scaling
    step "A/B round $round: this build" "ab-b$round.log" "$build/bench/pmqa_bench_gpu" --no-scaling
  done
fi
step "probe: fused-mma evict-first" evict_first.log "$build/bench/pmqa_probe_evict_first"
step "probe: fused-mma timeline" timeline.log "$build/bench/pmqa_probe_timeline"
step "probe: launch floor" launch.log "$build/bench/pmqa_probe_launch_floor"
step "probe: stream floor (bytes alone)" stream.log "$build/bench/pmqa_probe_stream_floor"

echo
printf '%-34s %4s %6s %6s %7s %7s\n' step rc passed failed skipped time
for line in "${summary[@]}"; do echo "$line"; done
echo
sed -n '/^device:/p;/^kernel /,/^$/p' "$out/bench.log"
grep -A30 'on the GPU at the decode shape' "$out/gpu_test.log" | sed -n '1,6p'
if [ -n "${PMQA_BASELINE:-}" ]; then
  echo "A/B (fused-mma median ms at next_n 1 and 2; baseline $PMQA_BASELINE against $build):"
  for f in "$out"/ab-a1.log "$out"/ab-b1.log "$out"/ab-a2.log "$out"/ab-b2.log; do
    printf '  %-10s %s\n' "$(basename "$f" .log)" "$(grep -E '^fused-mma ' "$f" | awk '{printf "%s ", $3}')"
  done
fi
sed -n '/key copies/,+1p' "$out/evict_first.log"
grep -E '^(empty kernel|decode|one sequence)' "$out/timeline.log"
sed -n '/what runs/,$p' "$out/launch.log"
sed -n '/^decode shape/,$p' "$out/stream.log"
