"""The case files a run takes: finding them under --cases, reading a case's name, suite and work
from its header alone, --case selection, and the names pmqa-run refuses to carry."""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from pmqa._native import core
from pmqa.cases.case_file import file_kind, first_control_character
from pmqa.cases.shard import shard_work

from .options import UsageError


def find_case_files(paths: List[str]) -> List[Path]:
    """The case files named (absolute paths): files as given, *.safetensors entries of folders. An entry
    that is not a regular file (a FIFO, a dangling link, a link loop) is kept, so the run reports it instead of
    skipping it or hanging on it."""
    files: List[Path] = []
    for p in paths:
        path = Path(os.path.abspath(p))
        try:
            mode = os.stat(path).st_mode
        except OSError as e:
            raise UsageError(f"--cases {p}: {_missing(path, e)}") from None
        if stat.S_ISDIR(mode):
            try:
                found = sorted(x for x in path.iterdir() if x.name.endswith(".safetensors"))
            except OSError as e:
                raise UsageError(f"--cases {p}: cannot list the directory: {e.strerror or e}") from None
            if not found:
                raise UsageError(f"--cases {p}: the directory holds no *.safetensors files")
            files.extend(found)
        elif stat.S_ISREG(mode):
            files.append(path)
        else:
            raise UsageError(f"--cases {p}: is {file_kind(mode)}, not a case file or a directory of them")
    names: Dict[str, Path] = {}
    for f in files:
        if f.name in names and names[f.name].resolve() != f.resolve():
            raise UsageError(f"--cases: {names[f.name]} and {f} would both be written to --out as {f.name}")
        names[f.name] = f
    return list(dict.fromkeys(files))


def _missing(path: Path, e: OSError) -> str:
    """Why a --cases path cannot be taken, in the words pmqa verify uses for a link."""
    if e.errno == errno.ELOOP:
        return "is a symbolic link loop"  # ln -s a b; ln -s b a
    if os.path.islink(path):
        return "is a symbolic link to nothing (it dangles)"
    return "no such file or directory" if e.errno == errno.ENOENT else (e.strerror or str(e))


def name_problem(name: str, what: str = "its name") -> Optional[str]:
    """Why a file name or path cannot be used (it would reach reports, JUnit, the terminal and the
    run record, which other tools read as UTF-8 JSON), or None."""
    if first_control_character(name) is not None:
        return f"{what} holds a control character"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return f"{what} is not valid UTF-8"
    return None


def _header_metadata(path: Path) -> Dict[str, str]:
    """The header's string metadata, the file not read whole (the C++ lenient header read: {} when
    unreadable or not a regular file, which is never opened: a FIFO would block)."""
    return core.read_header_metadata(path)


def _name_and_suite(meta: Dict[str, Any]) -> Tuple[Optional[str], str]:
    name, suite = meta.get("name"), meta.get("suite", "")
    if not isinstance(name, str) or first_control_character(name) is not None:
        return None, ""
    return name, suite if isinstance(suite, str) and first_control_character(suite) is None else ""


def _work(meta: Dict[str, Any]) -> int:
    """shard_work of the shape the header states (pmqa verify --shard reads the same fields); 1 when
    it states no whole shape (the case is still in exactly one shard, where it is reported)."""
    dims = [meta.get(k) for k in ("batch", "next_n", "heads", "head_dim", "max_model_len")]
    if not all(isinstance(d, str) and d.isascii() and d.isdigit() and len(d) <= 12 for d in dims):
        return 1
    return shard_work(*(int(d) for d in dims))


def case_header_and_work(path: Path) -> Tuple[Optional[str], str, int]:
    """The case's name and suite from its header ((None, "") when unreadable or not a regular file), and
    its work (what --shard and --devices balance by)."""
    meta = _header_metadata(path)
    return (*_name_and_suite(meta), _work(meta))


def selected(name: str, stem: str, globs: List[str]) -> bool:
    """--case GLOB matches the case's name or its file name without .safetensors."""
    return not globs or any(fnmatch.fnmatchcase(name, g) or fnmatch.fnmatchcase(stem, g) for g in globs)
