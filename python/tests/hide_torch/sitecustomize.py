"""Makes this interpreter (and every child that inherits PYTHONPATH) see no torch.

CI installs Debian's python3-torch and runs the torch-sensitive tests twice: as they are, and with
this folder first on PYTHONPATH, so the numpy-only world a user without torch has is tested on the
same machine. Hiding happens at the finder: ``import torch`` raises ModuleNotFoundError and
``importlib.util.find_spec("torch")`` answers None, exactly as when torch is not installed.
"""
import importlib.machinery
import sys

HIDDEN = ("torch", "triton")


class _PathFinderWithoutTorch(importlib.machinery.PathFinder):
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname.split(".")[0] in HIDDEN:
            return None
        return super().find_spec(fullname, path, target)


sys.meta_path[:] = [_PathFinderWithoutTorch if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
