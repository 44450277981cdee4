"""Case files: one FP8 paged MQA logits case per file, in the safetensors format.

The format and every rule of it are the C++ library's (cases/include/pmqa/cases/case_file.hpp):
reading, writing and validating go through pmqa._core, so a file is valid here exactly when
`pmqa verify` can read it, and a bad one raises the C++ reader's own CaseFileError (a ValueError
with ``file``, ``field``, ``problem`` and, for a refused write, ``os_errno``). A file is read once,
into buffers the arrays of the CaseFile view.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Dict, Optional, Union

import numpy as np

from .._native import core

CaseFileError = core.CaseFileError
FORMAT_VERSION = core.FORMAT_VERSION
MAX_HEADER_BYTES = core.MAX_HEADER_BYTES
RESERVED_KEYS = frozenset(core.case_file_reserved_keys())
FP8_FORMATS = tuple(core.fp8_format_names())
VALUE_FORMATS = tuple(core.value_format_names())
KV_LAYOUTS = tuple(core.kv_layout_names())
CONTRACTS = tuple(core.contract_names())

PathLike = Union[str, os.PathLike]


@dataclass(eq=False)
class CaseFile:
    """One case: its buffers (numpy arrays), the metadata, and optionally a kernel's logits.

    Shapes: q [B, N, H, D] uint8 fp8 codes, or for e2m1 [B, N, H, D/2] (two values a byte) with
    q_scales [B, N, H, 4] uint8 UE8M0; kv_cache [num_blocks, block_stride] uint8 (spec §2);
    weights [B*N, H] float32; context_lens [B] or [B, N] int32; block_table [B, max_blocks] int32;
    logits [B*N, max_model_len] float32 or None.
    """

    q: np.ndarray
    kv_cache: np.ndarray
    weights: np.ndarray
    context_lens: np.ndarray
    block_table: np.ndarray
    block_size: int
    max_model_len: int
    value_format: str = "e4m3fn"  # e4m3fn, e4m3fnuz or e2m1
    kv_layout: str = "normal"
    contract: str = "clean"
    name: str = ""
    suite: str = ""
    seed: int = 0
    producer: str = ""
    logits: Optional[np.ndarray] = None
    extra: Dict[str, str] = field(default_factory=dict)
    q_scales: Optional[np.ndarray] = None

    batch = property(lambda self: int(self.q.shape[0]))
    next_n = property(lambda self: int(self.q.shape[1]))
    heads = property(lambda self: int(self.q.shape[2]))
    head_dim = property(lambda self: int(self.q.shape[3]) * (2 if self.value_format == "e2m1" else 1))
    fp8_format = property(lambda self: self.value_format)  # the name before e2m1: any value format
    rows = property(lambda self: self.batch * self.next_n)
    num_blocks = property(lambda self: int(self.kv_cache.shape[0]))
    block_stride = property(lambda self: int(self.kv_cache.shape[1]))
    max_blocks_per_seq = property(lambda self: int(self.block_table.shape[1]))
    context_lens_2d = property(lambda self: self.context_lens.ndim == 2)

    def valid_keys(self) -> np.ndarray:
        """E_r for every row r = b*N + n (spec §1.2), as int64 [B*N]; may be <= 0."""
        lens = self.context_lens.astype(np.int64)
        if self.context_lens_2d:
            return lens.reshape(-1)
        n = np.arange(self.next_n, dtype=np.int64)
        return (lens[:, None] - self.next_n + n[None, :] + 1).reshape(-1)

    def scales(self) -> np.ndarray:
        """The per-token fp32 scales of every physical block, [num_blocks, block_size] float32 (fp8 cases)."""
        begin = self.block_size * self.head_dim
        raw = np.ascontiguousarray(self.kv_cache[:, begin:begin + 4 * self.block_size])
        return raw.view("<f4").reshape(self.num_blocks, self.block_size)

    def describe(self) -> str:
        return (f"{self.name + ': ' if self.name else ''}B={self.batch} N={self.next_n} H={self.heads} "
                f"D={self.head_dim} block_size={self.block_size} blocks={self.num_blocks} "
                f"stride={self.block_stride} max_model_len={self.max_model_len} format={self.value_format} "
                f"layout={self.kv_layout} context_lens={'2-D' if self.context_lens_2d else '1-D'} "
                f"seed={self.seed}")


def read_case_file(path: PathLike) -> CaseFile:
    """Reads and checks a case file (the C++ reader: strict, then validate())."""
    return CaseFile(**core.read_case_file(path))


def parse_case_file(data, source_name: str = "<memory>") -> CaseFile:
    """Parses a file's bytes (any buffer); the arrays own their memory."""
    return CaseFile(**core.parse_case_file(data, source_name))


def serialize_case_file(cf: CaseFile) -> bytes:
    """The whole file as bytes (the C++ writer's: deterministic, checked as the reader checks)."""
    return core.serialize_case_file(cf)


def write_case_file(path: PathLike, cf: CaseFile) -> str:
    """Writes the case atomically (a temporary file, synced, renamed into place); returns the SHA-256
    of the file written."""
    return core.write_case_file(path, cf)


def validate(cf: CaseFile) -> None:
    """The case invariants a kernel may rely on (the C++ validate()); CaseFileError, field "case"."""
    core.validate_case(cf)


def first_control_character(text: str) -> Optional[int]:
    """Index of the first control character in text (C0, DEL or C1: what a terminal or an XML report
    would act on or refuse), or None: the rule the C++ readers apply to names."""
    return next((i for i, ch in enumerate(text) if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F), None)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO", "a directory", ...)."""
    for test, words in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "a special file"
