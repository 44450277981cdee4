#!/usr/bin/env bash
# Packs what bench/h200/run.sh needs from a build.sh build into one xz tarball, the binaries stripped
# (about 25 MB instead of 110), for carrying to the GPU machine; unpack it there into a folder and
# pass that folder to run.sh. With --bench-only it packs just the benchmark (an A/B baseline).
#
#   bench/h200/pack.sh BUILD_DIR OUT.tar.xz [--bench-only]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/h200/pack.sh BUILD_DIR OUT.tar.xz [--bench-only]" >&2; exit 2; }
build=$1 out=$2
bins=(bench/pmqa_bench_gpu)
if [ "${3:-}" != --bench-only ]; then
  bins+=(cli/pmqa kernels/tests/pmqa_kernels_gpu_test property_tests/kernels/pmqa_kernel_property_test
         property_tests/arch_matrix_numeric/pmqa_arch_matrix_numeric_test bench/pmqa_probe_evict_first
         bench/pmqa_probe_timeline bench/pmqa_probe_launch_floor bench/pmqa_probe_stream_floor)
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for b in "${bins[@]}"; do
  [ -x "$build/$b" ] || { echo "pack.sh: $build/$b is missing (run bench/h200/build.sh $build)" >&2; exit 1; }
  mkdir -p "$stage/$(dirname "$b")"
  strip -o "$stage/$b" "$build/$b"
done
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cJf "$out" .
echo "packed ${#bins[@]} binaries from $build into $out ($(du -h "$out" | cut -f1))"
