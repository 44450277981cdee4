"""Builds the pmqa wheel from the repository this folder sits in: the extension pmqa._core and the
`pmqa` command (both with CMake); pmqa's reviewed data is compiled into them.

    /usr/bin/python3 -m pip wheel --no-build-isolation --no-deps ./python -w dist/   # a binary wheel
    python3 -m venv --system-site-packages VENV && . VENV/bin/activate
    pip install -v --no-build-isolation ./python        # or build into VENV; -v: CMake's [n/N] progress

The wheel is binary and portable: x86-64 baseline code (PMQA_NATIVE=OFF), Boost.Context linked in
(PMQA_STATIC_BOOST), so its binaries need only glibc, libstdc++ and libgcc_s at run time, and no
-dev package where it is installed. Its tags are the interpreter's (cp3XX) and linux_x86_64: it
needs the glibc and libstdc++ it was built against or newer (python/tests/wheel_check.py prints
them; Debian 12's: glibc 2.34, GLIBCXX_3.4.30).

--no-build-isolation: the build uses the setuptools, wheel and pybind11 of the interpreter (Debian's
python3-setuptools, python3-wheel, pybind11-dev) instead of fetching them from a registry. The C++
build needs a C++20 compiler, CMake >= 3.25 and the Debian packages pmqa's libraries and command
build with (the README's list).

Nothing is written into the source tree: setuptools' build/ and egg-info and the CMake build go
under PMQA_BUILD_BASE, by default ~/.cache/pmqa/build/<hash of this checkout's path>, which a
second install reuses (only what changed is rebuilt). CMAKE_BUILD_PARALLEL_LEVEL sets the compile
jobs (default: the CPU count).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.egg_info import egg_info

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _build_base() -> Path:
    given = os.environ.get("PMQA_BUILD_BASE")
    if given:
        return Path(given).resolve()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "pmqa" / "build" / hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]


BUILD_BASE = _build_base()


def project_version() -> str:
    """The version of CMakeLists.txt's project(pmqa VERSION X): the one version of pmqa (the wheel's,
    pmqa._core's and so pmqa.__version__, `pmqa --version`'s)."""
    text = (ROOT / "CMakeLists.txt").read_text()
    found = re.search(r"^project\(pmqa VERSION ([0-9][0-9.]*)[ )]", text, re.M)
    if not found:
        raise SystemExit(f"pmqa: {ROOT / 'CMakeLists.txt'} has no project(pmqa VERSION X): build from a pmqa checkout")
    return found.group(1)

# The C++ targets the wheel carries: CMake target -> (file in the build tree, destination in the wheel).
NATIVE = {"pmqa_python_core": None,  # the extension: build_ext places it
          "pmqa": ("cli/pmqa", "pmqa/_bin/pmqa")}


def say(text: str) -> None:
    print(f"pmqa: {text}", file=sys.stderr, flush=True)


class Build(build):
    def initialize_options(self):
        super().initialize_options()
        self.build_base = str(BUILD_BASE / "setuptools")


class EggInfo(egg_info):
    def initialize_options(self):
        super().initialize_options()
        BUILD_BASE.mkdir(parents=True, exist_ok=True)
        self.egg_base = os.path.relpath(BUILD_BASE, HERE)


class CMakeBuild(build_ext):
    """pmqa._core is the CMake target pmqa_python_core (python/bindings); the command is target pmqa."""

    def build_extension(self, ext):
        build_dir = BUILD_BASE / "cmake"
        generator = ["-G", "Ninja"] if shutil.which("ninja") and not (build_dir / "Makefile").exists() else []
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
            "-DCMAKE_BUILD_TYPE=Release",
            "-DPMQA_NATIVE=OFF",            # a wheel runs on other machines than the one it was built on
            "-DPMQA_BUILD_TESTS=OFF", "-DPMQA_BUILD_BENCH=OFF", "-DPMQA_BUILD_CLI=ON",
            "-DPMQA_GPU=OFF", "-DPMQA_AMD_ISA_CHECK=OFF",
            "-DPMQA_STATIC_BOOST=ON",        # the command needs no Boost where the wheel is installed
            "-DPMQA_PYTHON_EXTENSION=ON", f"-DPMQA_PYTHON={sys.executable}",
        ]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        cache = "reusing its build cache" if (build_dir / "CMakeCache.txt").exists() else "an empty build cache"
        start = time.monotonic()
        say(f"configuring the C++ build in {build_dir}")
        subprocess.check_call(configure)
        say(f"building {', '.join(NATIVE)} with {jobs} job(s): CMake prints [n/N] as it goes (pip shows it with -v)")
        subprocess.check_call(["cmake", "--build", str(build_dir), "-j", jobs, "--target", *NATIVE])
        say(f"the C++ build took {time.monotonic() - start:.0f} s ({jobs} job(s), {cache})")
        built = [p for p in sorted((build_dir / "python" / "bindings").glob("_core*")) if p.suffix in (".so", ".pyd")]
        if len(built) != 1:
            raise SystemExit(f"pmqa: expected one built _core module in {build_dir / 'python' / 'bindings'}, found {built}")
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], dest)
        for target, placed in NATIVE.items():
            if placed is None:
                continue
            src, where = build_dir / placed[0], Path(self.build_lib) / placed[1]
            if not src.is_file():
                raise SystemExit(f"pmqa: the CMake target {target} did not produce {src}")
            where.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, where)  # keeps the executable bit, which the wheel records


setup(
    version=project_version(),
    # src layout: a checkout's python/ folder holds no importable pmqa, so it never shadows the installed one
    package_dir={"": "src"},
    packages=["pmqa", "pmqa.cases", "pmqa.run", "pmqa.run.conventions", "pmqa.probe", "pmqa.probe.adapters"],
    ext_modules=[Extension("pmqa._core", sources=[])],
    cmdclass={"build": Build, "egg_info": EggInfo, "build_ext": CMakeBuild},
)
