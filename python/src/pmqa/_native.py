"""Loads pmqa._core, the C++ extension (python/bindings): every rule pmqa applies lives there.

An installed package has it beside this file. In a build tree (CTest, a developer's build) the
extension sits in the CMake build folder: PMQA_CORE_DIR names the folder that holds
``_core*.so`` and is searched first. Without the extension pmqa does not import at all (one line
says why and what to do), rather than half-work.
"""
from __future__ import annotations

import os
import sys

from . import __path__ as _package_path

_dir = os.environ.get("PMQA_CORE_DIR")
if _dir and _dir not in _package_path:
    _package_path.insert(0, _dir)

try:
    from . import _core as core  # noqa: F401  (re-exported)
except ImportError as exc:
    where = f"PMQA_CORE_DIR={_dir}" if _dir else "beside the package (PMQA_CORE_DIR is not set)"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    # Python words a missing module as a "circular import"; say plainly that none was found.
    why = "none built for it was found" if "cannot import name" in str(exc) else str(exc)
    raise ImportError(
        f"pmqa: its C++ extension pmqa._core does not load into this Python ({version}, {sys.executable}; looked "
        f"{where}: {why}): install pmqa for this interpreter (`pip install --no-build-isolation ./python`, or a "
        f"pmqa wheel built for Python {version}), or build the extension for it (bench/h200/build_python_ext.sh) "
        "and set PMQA_CORE_DIR to the folder holding _core*.so") from None
