#!/usr/bin/env bash
# Builds the GPU binaries on a CPU machine (nvcc + HIP's NVIDIA headers) for a run on an NVIDIA
# GPU machine: portable x86 code (no -march=native), static Boost, sm_90a code (Hopper's wgmma, which
# fused-mma issues there; a plain sm_90 build runs its mma.sync kernel instead).
#
#   bench/h200/build.sh [BUILD_DIR]      default build-gpu/ (ignored by git: carry it to the GPU machine)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPMQA_NATIVE=OFF -DPMQA_GPU=ON -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DBoost_USE_STATIC_LIBS=ON -DPMQA_BUILD_BENCH=ON -DPMQA_AMD_ISA_CHECK=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target pmqa pmqa_kernels_gpu_test pmqa_kernel_property_test pmqa_arch_matrix_numeric_test \
  pmqa_bench_gpu pmqa_probe_evict_first pmqa_probe_timeline pmqa_probe_launch_floor pmqa_probe_stream_floor
echo "built into $build/; run on the GPU machine: bench/h200/run.sh $build"
