"""Builds pmqa._core with CMake from the repository this folder sits in, and copies pmqa's reviewed
data (the arch matrix, the arch table) into the packages that read them.

    pip install --no-build-isolation ./python            # Debian's setuptools and wheel, no registry
    pip wheel --no-build-isolation --no-deps -w dist ./python

The extension needs a C++20 compiler, CMake >= 3.25, Ninja or make, and the Debian packages pmqa's
libraries build with (libeigen3-dev nlohmann-json3-dev libboost-context-dev) plus pybind11-dev and
python3-dev. Environment: PMQA_BUILD_BASE puts every build product (setuptools' build/ and
egg-info, the CMake build) under that folder instead of this one; CMAKE_BUILD_PARALLEL_LEVEL sets
the compile jobs (default: the CPU count).
"""
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
BUILD_BASE = os.environ.get("PMQA_BUILD_BASE")

# Package data taken from the source tree: destination folder in a package -> files or folders
# (copied whole) of the repository. pmqa.probe.data.data_file and pmqa.run.data.data_path
# look in their package's data/ folder before the source tree.
DATA = {
    "pmqa/probe/data": ["fixtures/arch_matrix.json", "dispatch/data/arch_table.json"],
    "pmqa/run/data": ["fixtures/data/envelopes"],
}


class Build(build):
    def initialize_options(self):
        super().initialize_options()
        if BUILD_BASE:
            self.build_base = str(Path(BUILD_BASE) / "build")


class EggInfo(egg_info):
    def initialize_options(self):
        super().initialize_options()
        if BUILD_BASE:
            Path(BUILD_BASE).mkdir(parents=True, exist_ok=True)
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
    """pmqa._core is the CMake target pmqa_python_core (python/bindings)."""

    def build_extension(self, ext):
        build_dir = (Path(BUILD_BASE) / "cmake" if BUILD_BASE else Path(self.build_temp).resolve() / "cmake")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
            "-DCMAKE_BUILD_TYPE=Release",
            "-DPMQA_NATIVE=OFF",            # a wheel runs on other machines than the one it was built on
            "-DPMQA_BUILD_TESTS=OFF", "-DPMQA_BUILD_BENCH=OFF", "-DPMQA_BUILD_CLI=OFF",
            "-DPMQA_GPU=OFF", "-DPMQA_AMD_ISA_CHECK=OFF",
            "-DPMQA_PYTHON_EXTENSION=ON", f"-DPMQA_PYTHON={sys.executable}",
        ]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "pmqa_python_core", "-j", jobs])
        built = sorted((build_dir / "python" / "bindings").glob("_core*"))
        built = [p for p in built if p.suffix in (".so", ".pyd")]
        if len(built) != 1:
            raise SystemExit(f"pmqa: expected one built _core module in {build_dir / 'python' / 'bindings'}, found {built}")
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], dest)


setup(
    ext_modules=[Extension("pmqa._core", sources=[])],
    cmdclass={"build": Build, "egg_info": EggInfo, "build_py": BuildPy, "build_ext": CMakeBuild},
)
