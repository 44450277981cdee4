"""Builds the pmqa wheel from the repository this folder sits in: the extension pmqa._core and the
`pmqa` command (both with CMake), and pmqa's reviewed data as package data.

    python3 -m venv --system-site-packages VENV && . VENV/bin/activate
    pip install -v --no-build-isolation ./python        # -v: CMake's [n/N] progress lines

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
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
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

# Package data taken from the source tree: destination folder in the wheel -> files or folders
# (copied whole) of the repository. pmqa.cases.data.data_path looks there before the source tree.
DATA = {"pmqa/data": ["fixtures/arch_matrix.json", "dispatch/data/arch_table.json", "cases/data/envelopes",
                      "cases/data/kernel_names.json"]}
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


class BuildPy(build_py):
    def run(self):
        super().run()
        for dest, files in DATA.items():
            for name in files:
                src = ROOT / name
                target = Path(self.build_lib) / dest / src.name
                target.parent.mkdir(parents=True, exist_ok=True)
                if src.is_dir():
                    shutil.copytree(src, target, dirs_exist_ok=True)
                elif src.is_file():
                    shutil.copyfile(src, target)
                else:
                    raise SystemExit(f"pmqa: {src} is missing: build from a pmqa checkout")


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
            "-DPMQA_PYTHON_EXTENSION=ON", f"-DPMQA_PYTHON={sys.executable}",
        ]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        say(f"configuring the C++ build in {build_dir}")
        subprocess.check_call(configure)
        say(f"building {', '.join(NATIVE)} with {jobs} job(s): CMake prints [n/N] as it goes (pip shows it with -v)")
        subprocess.check_call(["cmake", "--build", str(build_dir), "-j", jobs, "--target", *NATIVE])
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
        say("the C++ build is done")


setup(
    ext_modules=[Extension("pmqa._core", sources=[])],
    cmdclass={"build": Build, "egg_info": EggInfo, "build_py": BuildPy, "build_ext": CMakeBuild},
)
