#!/usr/bin/env bash
# The README's install figures (issue 46), each from a fresh clone of REPO (default: this checkout's
# committed HEAD), an empty build cache, a fresh HOME and no compiler cache:
#   1. the source install: a venv and `pip install -v --no-build-isolation ./python` (the wheel's build is
#      the same build: `pip wheel` differs only in not installing);
#   2. `./quickstart check` to its table (on a machine with the packages installed: apt-get is not timed).
# Run it on a quiet machine of the CI kind (2 cores); it prints the load average before and after each.
#
#     python/tests/measure_install.sh [REPO] [WORK]        # WORK: default /tmp/pmqa-measure (emptied)
set -euo pipefail
repo=${1:-$(git -C "$(dirname "$0")" rev-parse --show-toplevel)}
work=${2:-/tmp/pmqa-measure}
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_BUILD_PARALLEL_LEVEL PMQA_BUILD_BASE PYTHONDONTWRITEBYTECODE XDG_CACHE_HOME
export CCACHE_DISABLE=1
rm -rf "$work"
mkdir -p "$work"
load() { cut -d' ' -f1-3 /proc/loadavg; }
timed() {  # timed LOG COMMAND...: wall seconds (and CPU seconds where GNU time is installed)
  local log=$1; shift
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -o "$log.time" -f "%e s wall, %U+%S s CPU" "$@" >"$log" 2>&1
    cat "$log.time"
  else
    local s=$SECONDS; "$@" >"$log" 2>&1; echo "$((SECONDS - s)) s wall"
  fi
}
echo "cores: $(nproc); load before: $(load)"
git clone -q "$repo" "$work/install"
cd "$work/install"
echo "source install: $(HOME="$work/home-install" timed "$work/install.log" bash -c \
  '/usr/bin/python3 -m venv --system-site-packages .venv && . .venv/bin/activate && pip install -v --no-build-isolation ./python')"
grep -o "pmqa: the C++ build took.*" "$work/install.log" || true
echo "  load after: $(load); warnings printed: $(grep -ciE '\bwarning\b' "$work/install.log" || true)"
git clone -q "$repo" "$work/check"
cd "$work/check"
echo "./quickstart check: $(HOME="$work/home-check" timed "$work/check.log" ./quickstart check)"
grep -E "^== built in|^pmqa check --suite quick:" "$work/check.log" || true
echo "  load after: $(load); warnings printed: $(grep -ciE '\bwarning\b' "$work/check.log" || true)"
