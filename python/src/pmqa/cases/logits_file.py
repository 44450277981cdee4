"""Logits-only result files: a kernel's output without a copy of its inputs.

A runner that stores only what the kernel computed (``pmqa-run --logits-only``) writes, per case,
a safetensors file holding one tensor, ``logits`` F32 [B*N, max_model_len], and metadata naming
the input case file and its SHA-256 (cases/include/pmqa/cases/logits_file.hpp: the format, and
the one reader and writer, reached through pmqa._core). ``pmqa verify OUT --cases CASES`` finds
each input by name, checks the hash and judges the logits against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict

import numpy as np

from .._native import core
from .case_file import PathLike

RESERVED_LOGITS_KEYS = frozenset(core.logits_file_reserved_keys())


@dataclass(eq=False)
class LogitsFile:
    logits: np.ndarray     # float32 [B*N, max_model_len]
    name: str
    input_file: str
    input_sha256: str
    batch: int
    next_n: int
    max_model_len: int
    contract: str = "clean"
    producer: str = ""
    extra: Dict[str, str] = field(default_factory=dict)


def sha256_file(path: PathLike) -> str:
    return core.sha256_file(path)


def serialize_logits_file(lf: LogitsFile) -> bytes:
    return core.serialize_logits_file(lf)


def write_logits_file(path: PathLike, lf: LogitsFile) -> str:
    """Writes atomically; returns the SHA-256 of the file written."""
    return core.write_logits_file(path, lf)


def is_logits_file(path: PathLike) -> bool:
    """True when the file's metadata says content "logits-only" (reads the header only; False for
    anything unreadable or not a regular file, which the case-file reader then reports)."""
    return core.is_logits_file(path)


def read_logits_file(path: PathLike) -> LogitsFile:
    """Reads and checks a logits-only file; every problem is a CaseFileError naming the field."""
    return LogitsFile(**core.read_logits_file(path))


def parse_logits_file(data, source_name: str = "<memory>") -> LogitsFile:
    return LogitsFile(**core.parse_logits_file(data, source_name))
