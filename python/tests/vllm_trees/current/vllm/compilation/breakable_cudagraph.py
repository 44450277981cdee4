"""Marks ops that run eagerly, outside a captured CUDA graph."""
import functools


def eager_break_during_capture(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper
