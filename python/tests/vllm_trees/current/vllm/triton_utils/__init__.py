"""Triton when installed; otherwise placeholders that let kernel definitions import (a launch fails)."""
try:
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:
    HAS_TRITON = False

    class _Kernel:
        def __init__(self, fn):
            self.fn = fn
            self.__name__ = fn.__name__

        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                raise RuntimeError(f"Triton is not installed: cannot launch {self.__name__}")

            return launch

    class _TritonPlaceholder:
        __version__ = "0.0.0"

        @staticmethod
        def jit(fn=None, **options):
            return _Kernel(fn) if fn is not None else _Kernel

        @staticmethod
        def cdiv(a, b):
            return -(-a // b)

        @staticmethod
        def next_power_of_2(n):
            return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()

    class _LanguagePlaceholder:
        class constexpr:
            def __init__(self, value=None):
                self.value = value

        def __getattr__(self, name):
            raise RuntimeError(f"Triton is not installed: tl.{name} is only for kernel bodies")

    triton = _TritonPlaceholder()
    tl = _LanguagePlaceholder()

__all__ = ["HAS_TRITON", "tl", "triton"]
