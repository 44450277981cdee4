"""What a refused write means, in the words of the C++ writer every file goes through.

The C++ writer (cases/include/pmqa/cases/atomic_file.hpp, through pmqa._core) writes each file so
that a reader sees the old file or the whole new one, never a part of either: each write goes to its
own temporary file in the target's folder, ``NAME.<pid>-<random>.partial`` (O_EXCL, so no other writer
ever opens it), is synced, renamed over the target and the folder synced. A write that fails removes
its temporary file and raises OSError with the system's errno (ENOSPC for a full disk, EROFS for a
read-only folder), so the caller can tell "cannot write here" from other faults.
"""

from __future__ import annotations

from .._native import core

# errno values that mean "this folder takes no more writes" (not a fault of the data being written).
CANNOT_WRITE_HERE = frozenset(core.no_more_writes_errnos())


def describe_os_error(e: OSError) -> str:
    """The system's words for an OSError, without the file name Python appends (callers name the file)."""
    return core.describe_write_error(e.errno) if e.errno else str(e)


__all__ = ["CANNOT_WRITE_HERE", "describe_os_error"]
