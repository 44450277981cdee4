#!/usr/bin/env bash
# Builds pmqa's Python extension (pmqa._core) on a CPU machine for the GPU machine's interpreter, so
# the Python API, the pytest plugin and pmqa-run's judging run there from the source tree without
# building anything: a CPython extension loads only into the minor version it was built for.
#
#   bench/h200/build_python_ext.sh PYTHON [BUILD_DIR]
#
# PYTHON: an interpreter of the GPU machine's version with its headers (the H200's python3 is 3.12:
# e.g. pyenv's 3.12 here). BUILD_DIR (default build-py312/) then holds python/bindings/_core*.so: carry
# it and point PMQA_CORE_DIR there (bench/h200/plugin_on_gpu.py --core-dir).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:?usage: bench/h200/build_python_ext.sh PYTHON [BUILD_DIR]}
build=${2:-build-py312}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPMQA_NATIVE=OFF -DPMQA_BUILD_TESTS=OFF \
  -DPMQA_BUILD_BENCH=OFF -DPMQA_BUILD_CLI=OFF -DPMQA_GPU=OFF -DPMQA_AMD_ISA_CHECK=OFF \
  -DPMQA_PYTHON_EXTENSION=ON -DPMQA_EXTENSION_PYTHON="$py" >/dev/null
cmake --build "$build" -j "$(nproc)" --target pmqa_python_core
ls "$build"/python/bindings/_core*.so
