"""Loads pmqa._core, the C++ extension (python/bindings).

An installed package has it beside this file. In a build tree (CTest, a developer's build) the
extension sits in the CMake build folder: PMQA_CORE_DIR names the folder that holds
``_core*.so`` and is searched first.
"""
from __future__ import annotations

import os

from . import __path__ as _package_path

_dir = os.environ.get("PMQA_CORE_DIR")
if _dir and _dir not in _package_path:
    _package_path.insert(0, _dir)

try:
    from . import _core as core  # noqa: F401  (re-exported)
except ImportError as exc:
    where = f"PMQA_CORE_DIR={_dir}" if _dir else "beside the package (PMQA_CORE_DIR is not set)"
    raise ImportError(
        f"pmqa's C++ extension (pmqa._core) could not be loaded, looked {where}: {exc}. "
        "Install the package with `pip install --no-build-isolation ./python` (it builds the extension "
        "with CMake), or build the CMake target pmqa_python_core and set PMQA_CORE_DIR to the folder "
        "holding _core*.so (build/python/bindings)") from exc
