#!/usr/bin/env bash
# The package as a user gets it: build pmqa's wheel (CMake builds pmqa._core), install it into a
# fresh virtual environment, and run the example test a kernel author copies, outside the source
# tree, with the plugin loaded by its entry point. No package registry is used.
#
#   install_in_venv.sh PYTHON SOURCE_DIR WORK_DIR
#
# PYTHON: a python3 with numpy, pytest, setuptools, wheel and venv (Debian's /usr/bin/python3 with
# python3-numpy python3-pytest python3-setuptools python3-wheel python3-venv python3-pip).
set -euo pipefail
py=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
unset PYTHONPATH PMQA_CORE_DIR
export PMQA_BUILD_BASE="$work/build" PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

echo "== pip wheel (builds pmqa._core with CMake under $PMQA_BUILD_BASE)"
"$py" -m pip wheel --no-build-isolation --no-deps -q -w "$work/dist" "$src/python"
wheel=$(ls "$work"/dist/pmqa-*.whl)
echo "built $(basename "$wheel")"
[ ! -e "$src/python/build" ] && [ -z "$(ls -d "$src"/python/*.egg-info 2>/dev/null)" ] ||
  { echo "FAIL: the build wrote into the source tree ($src/python)"; exit 1; }

echo "== a fresh virtual environment (system site packages: numpy, pytest), the wheel installed"
"$py" -m venv --system-site-packages "$work/venv"
vpy="$work/venv/bin/python"
"$vpy" -m pip install -q "$wheel"

cd "$work"
"$vpy" - "$work/venv" "$src" <<'PY'
import importlib.metadata as md, json, sys
from pathlib import Path
venv = Path(sys.argv[1]).resolve()
import pmqa, pmqa.cases, pmqa.run, pmqa.run.conventions, pmqa.probe
from pmqa.probe import data
for mod in (pmqa, pmqa.cases, pmqa.run, pmqa.probe):
    assert venv in Path(mod.__file__).resolve().parents, f"{mod.__name__} imported from {mod.__file__}, not the venv"
quick = pmqa.cases("quick")
core = Path(sys.modules["pmqa._core"].__file__).resolve()
assert venv in core.parents, f"the extension was loaded from {core}, not the venv"
for name in ("arch_matrix.json", "arch_table.json"):
    f = data.data_file(name)
    assert venv in f.resolve().parents, f"{name} found at {f}, not in the package data"
    json.loads(f.read_text())
site = Path(pmqa.run.__file__).resolve().parent
envelopes = sorted(p.relative_to(site / "data" / "envelopes").as_posix() for p in (site / "data" / "envelopes").rglob("*.json"))
in_tree = sorted(p.relative_to(Path(sys.argv[2]) / "fixtures" / "data" / "envelopes").as_posix()
                 for p in (Path(sys.argv[2]) / "fixtures" / "data" / "envelopes").rglob("*.json"))
assert envelopes == in_tree and envelopes, f"packaged envelopes {envelopes}, the tree has {in_tree}"
eps = [e for e in md.entry_points(group="pytest11") if e.name == "pmqa"]
assert eps and eps[0].value == "pmqa.pytest_plugin", eps
print("installed:", Path(pmqa.__file__).parent, "| data:", data.data_file("arch_matrix.json"),
      "| envelopes:", len(envelopes), "| pytest11 entry point:", eps[0].value, "|", len(quick), "quick cases")
PY

echo "== the example, copied out of the tree, run by the venv's pytest (plugin from the entry point)"
mkdir -p "$work/author"
cp "$src/python/examples/test_my_kernel.py" "$work/author/"
cd "$work/author"
"$vpy" -m pytest -q -p no:cacheprovider --pmqa-suite quick --junitxml="$work/author/junit.xml" test_my_kernel.py
grep -q 'testcase classname="test_my_kernel" name="test_my_kernel\[edge-lengths-1d\]"' junit.xml ||
  { echo "FAIL: the example's JUnit has no test_my_kernel[edge-lengths-1d]"; exit 1; }
"$vpy" -m pytest -q -p no:cacheprovider --pmqa-suite quick --pmqa-fit deepgemm test_my_kernel.py
echo "PASS: the wheel installs into a clean venv and the example passes there"
