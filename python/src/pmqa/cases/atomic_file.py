"""Writing a file so that a reader sees the old file or the whole new one, never a part of either.

Each write goes to its own temporary file in the target's folder, ``NAME.<pid>-<random>.partial``,
created with O_EXCL so no other writer (another thread, process or pmqa-run) ever opens it; the
bytes are flushed to the disk (fsync), the file is renamed over the target (atomic within one
file system) and the folder is synced so the rename survives a crash. Two writers of one path
therefore leave one writer's whole file, never one's header with the other's data. A write that
fails removes its temporary file and raises OSError with the system's errno (ENOSPC for a full
disk, EROFS for a read-only folder), so the caller can tell "cannot write here" from other faults.

The bytes go through os.write on a raw descriptor: nothing is buffered where a failure could hide.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
from pathlib import Path
from typing import Iterable, Union

# errno values that mean "this folder takes no more writes" (not a fault of the data being written).
CANNOT_WRITE_HERE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG})


def temporary_name(path: Path) -> Path:
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(6)}.partial")


def _write_all(fd: int, part, digest) -> None:
    view = memoryview(part).cast("B")
    digest.update(view)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def sync_folder(folder: Path) -> None:
    """fsync a folder (after a rename into it); file systems that cannot are skipped silently."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomically(path: Union[str, os.PathLike], parts: Iterable) -> str:
    """Writes the concatenation of parts (bytes-like objects) to path, atomically (see the module).
    Returns the SHA-256 (lowercase hex) of the bytes written."""
    path = Path(path)
    while True:
        tmp = temporary_name(path)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
            break
        except FileExistsError:  # another writer drew the same 48 random bits: draw again
            continue
    digest = hashlib.sha256()
    try:
        try:
            for part in parts:
                _write_all(fd, part, digest)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    sync_folder(path.parent)
    return digest.hexdigest()


def describe_os_error(e: OSError) -> str:
    """The system's words for an OSError, without the file name Python appends (callers name the file)."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{e.strerror} (the disk or quota is full)"
    return e.strerror or str(e)


__all__ = ["CANNOT_WRITE_HERE", "describe_os_error", "sync_folder", "temporary_name", "write_atomically"]
