#!/usr/bin/env bash
# On a GPU machine with python3 + torch + numpy: validate eager_torch_op (the torch eager op)
# through pmqa-run's `eager` convention on the quick and standard suites, and print a short table.
#
#   bench/h200/eager_run.sh PMQA_BIN [OUT_DIR]
#
# PMQA_BIN: a built `pmqa` command (e.g. build-gpu/cli/pmqa from bench/h200/build.sh). OUT_DIR
# (default ./pmqa_run_h200) receives, per row, cases/ (pmqa gen), out/ (pmqa-run), run.log, run.rc,
# verify.log, verify.json, verify.rc, and table.md with the table. Steps:
#   1. python/tests/test_pmqa_run_torch.py: the torch backend and the eager op against the numpy
#      stand-in, on cpu and cuda;
#   2. quick suite on the cpu (no timing): the op also works on CPU torch;
#   3. quick and standard suites on cuda with --bench (bench_ms per case);
# each as `pmqa gen` -> `python3 -m pmqa.run ... --skip-unsupported` -> `pmqa verify`. SHUFFLE cases
# are skipped (the eager convention reads NORMAL only) and counted in the table.
# Needs this repository's python/ folder (put on PYTHONPATH here), PMQA_BIN, and pmqa's extension for
# the interpreter in PMQA_CORE_DIR (bench/README.md, "Python on the GPU machine"); works from a copy of
# the tree. PYTHON overrides the interpreter (default python3).
# Exit status: 0 when the torch tests pass and every row's run and verify exit 0, else 1; 2 on usage.
# For testing the script without torch (CI): PMQA_RUN_OP=MODULE:FUNCTION, PMQA_RUN_EXTRA="--backend
# numpy ...", PMQA_RUN_GPU_DEVICE=cpu and PMQA_RUN_NO_TORCH=1 (skips the torch import and tests).
set -u -o pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
if [ ! -x "$1" ] || [ -d "$1" ]; then
  echo "eager_run.sh: $1 is not an executable pmqa" >&2
  exit 2
fi
pmqa=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # bench/h200
pydir=$(cd "$here/../../python" && pwd)              # python/
srcdir=$pydir/src                                    # the folder holding the pmqa package
out=${2:-$PWD/pmqa_run_h200}
PY=${PYTHON:-python3}
export PYTHONPATH="$srcdir:$pydir/tests:$pydir/examples:$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
op=${PMQA_RUN_OP:-eager_torch_op:fp8_paged_mqa_logits}
gpu=${PMQA_RUN_GPU_DEVICE:-cuda}
read -r -a extra <<< "${PMQA_RUN_EXTRA:-}"
no_torch=${PMQA_RUN_NO_TORCH:-0}

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

status=0
if [ "$no_torch" != 1 ]; then
  "$PY" -c 'import sys, numpy, torch
print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__,
      "cuda", torch.cuda.is_available() and torch.cuda.get_device_name(0))' || {
    echo "eager_run.sh: $PY cannot import numpy and torch" >&2
    exit 2
  }
  echo "== torch tests: python/tests/test_pmqa_run_torch.py (log: $out/torch_tests.log)"
  if (cd "$pydir/tests" && "$PY" -B -m unittest -v test_pmqa_run_torch) > "$out/torch_tests.log" 2>&1; then
    tail -n 3 "$out/torch_tests.log"
  else
    tail -n 40 "$out/torch_tests.log"
    status=1
  fi
fi

# run_row NAME SUITE DEVICE [pmqa-run options...]
run_row() {
  local name=$1 suite=$2 device=$3
  shift 3
  local d=$out/$name
  mkdir -p "$d"
  echo "== $name: pmqa gen --suite $suite; pmqa-run on $device $*; pmqa verify"
  if ! "$pmqa" gen --suite "$suite" --out "$d/cases" > "$d/gen.log" 2>&1; then
    tail -n 5 "$d/gen.log"
    echo 2 > "$d/run.rc"
    echo 2 > "$d/verify.rc"
    status=1
    return
  fi
  "$PY" -B -m pmqa.run --op "$op" --convention eager --cases "$d/cases" --out "$d/out" --device "$device" \
    --skip-unsupported ${extra[@]+"${extra[@]}"} "$@" > "$d/run.log" 2>&1
  echo $? > "$d/run.rc"
  tail -n 1 "$d/run.log"
  grep -E '^(FAIL|ERROR|REFUSED) ' "$d/run.log" | head -n 10
  if [ -d "$d/out" ] && ls "$d/out"/*.safetensors > /dev/null 2>&1; then
    "$pmqa" verify "$d/out" --json "$d/verify.json" > "$d/verify.log" 2>&1
    echo $? > "$d/verify.rc"
  else
    echo "no output files" > "$d/verify.log"
    echo 2 > "$d/verify.rc"
  fi
  tail -n 1 "$d/verify.log"
  grep -E '^(FAIL|ERROR) ' "$d/verify.log" | head -n 10
}

run_row quick-cpu quick cpu
run_row quick quick "$gpu" --bench
run_row standard standard "$gpu" --bench

echo
"$PY" -B "$here/eager_table.py" "$out" quick-cpu quick standard | tee "$out/table.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo
echo "eager_run.sh: exit $status (outputs in $out)"
exit $status
