"""PYTHONPATH for the interpreters a test starts, keeping the torch-hidden world the test runs in.

CTest runs the torch-sensitive tests a second time with hide_torch/ first on PYTHONPATH (the
``.no_torch`` twins); a child started with a PYTHONPATH of its own must stay in that world.
"""
import os
import sys
from pathlib import Path

HIDE_TORCH = Path(__file__).resolve().parent / "hide_torch"


def torch_hidden() -> bool:
    return getattr(sys.modules.get("sitecustomize"), "HIDDEN", None) is not None


def child_pythonpath(*entries) -> str:
    keep = [str(HIDE_TORCH)] if torch_hidden() else []
    return os.pathsep.join(keep + [str(e) for e in entries])
