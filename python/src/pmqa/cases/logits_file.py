"""Logits-only result files: a kernel's output without a copy of its inputs.

A runner that stores only what the kernel computed (``pmqa-run --logits-only``) writes, per case,
a safetensors file holding one tensor, ``logits`` F32 [B*N, max_model_len], and metadata that names
the input case file and its SHA-256:

    format_version "1", content "logits-only", name, producer, contract ("clean" | "valid-only"),
    input_file (the case file's name, e.g. "deepseek-8k-n1.safetensors"), input_sha256 (64 lowercase
    hex digits of the input file's bytes), batch, next_n, max_model_len, and any other string
    (the runner's tolerance, nan, bench_ms, ...).

``pmqa verify OUT --cases CASES`` finds each input in CASES by name, checks the hash (a mismatch is
invalid input, exit 2) and judges the logits against it. The writer is deterministic; the reader is
strict (fixtures/include/pmqa/fixtures/logits_file.hpp is the C++ side).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Union

import numpy as np

from .case_file import CONTRACTS, FORMAT_VERSION, MAX_HEADER_BYTES, CaseFileError

CONTENT = "logits-only"
RESERVED_LOGITS_KEYS = frozenset({"format_version", "content", "name", "producer", "contract", "input_file",
                                  "input_sha256", "batch", "next_n", "max_model_len"})


def sha256_file(path: Union[str, os.PathLike]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


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


def _check(lf: LogitsFile, src: str) -> np.ndarray:
    def fail(fld, problem):
        raise CaseFileError(src, fld, problem)

    a = lf.logits
    if not isinstance(a, np.ndarray) or a.dtype.kind != "f" or a.dtype.itemsize != 4 or a.ndim != 2:
        fail("logits", "expected a float32 [B*N, max_model_len] array")
    if tuple(a.shape) != (lf.batch * lf.next_n, lf.max_model_len):
        fail("logits", f"shape {list(a.shape)} disagrees with B*N = {lf.batch * lf.next_n}, max_model_len = "
                       f"{lf.max_model_len}")
    if lf.contract not in CONTRACTS:
        fail("contract", f"{lf.contract!r} is not one of {' or '.join(CONTRACTS)}")
    if len(lf.input_sha256) != 64 or any(c not in "0123456789abcdef" for c in lf.input_sha256):
        fail("input_sha256", "expected 64 lowercase hex digits")
    if not lf.input_file or "/" in lf.input_file or "\\" in lf.input_file:
        fail("input_file", f"{lf.input_file!r} must be a file name (no folder)")
    for k, v in lf.extra.items():
        if not isinstance(k, str) or not isinstance(v, str):
            fail(f"extra key {k!r}", "keys and values must be strings")
        if k in RESERVED_LOGITS_KEYS:
            fail(f"extra key {k}", "is reserved for the format's own metadata")
    return np.ascontiguousarray(a, dtype="<f4")


def serialize_logits_file(lf: LogitsFile, src: str = "<memory>") -> bytes:
    a = _check(lf, src)
    meta = dict(lf.extra)
    meta.update({"format_version": FORMAT_VERSION, "content": CONTENT, "name": lf.name, "producer": lf.producer,
                 "contract": lf.contract, "input_file": lf.input_file, "input_sha256": lf.input_sha256,
                 "batch": str(lf.batch), "next_n": str(lf.next_n), "max_model_len": str(lf.max_model_len)})
    header = {"__metadata__": meta,
              "logits": {"dtype": "F32", "shape": [int(x) for x in a.shape], "data_offsets": [0, a.nbytes]}}
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return len(text).to_bytes(8, "little") + text + a.tobytes()


def write_logits_file(path: Union[str, os.PathLike], lf: LogitsFile) -> None:
    """Writes through a temporary file renamed into place."""
    path = Path(path)
    data = serialize_logits_file(lf, str(path))
    tmp = path.with_name(path.name + ".partial")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise CaseFileError(str(path), "file", f"cannot write: {e.strerror or e}") from None


def is_logits_file(path: Union[str, os.PathLike]) -> bool:
    """True when the file's metadata says content "logits-only" (reads the header only)."""
    try:
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            if n < 2 or n > MAX_HEADER_BYTES:
                return False
            meta = json.loads(f.read(n).decode("utf-8")).get("__metadata__", {})
    except (OSError, ValueError, AttributeError, UnicodeDecodeError):
        return False
    return isinstance(meta, dict) and meta.get("content") == CONTENT


def read_logits_file(path: Union[str, os.PathLike]) -> LogitsFile:
    src = str(path)

    def fail(fld, problem):
        raise CaseFileError(src, fld, problem)

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise CaseFileError(src, "file", f"cannot read: {e.strerror or e}") from None
    if len(data) < 8:
        fail("header length", "the file is too short for the 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if n < 2 or n > min(MAX_HEADER_BYTES, len(data) - 8):
        fail("header length", f"{n} bytes does not fit the file")
    try:
        root = json.loads(data[8:8 + n].decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        fail("header", f"is not valid JSON: {e}")
    if not isinstance(root, dict) or set(root) != {"__metadata__", "logits"}:
        fail("header", "a logits-only file holds exactly the tensor logits and __metadata__")
    meta = root["__metadata__"]
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        fail("__metadata__", "expected an object of string values")
    md = dict(meta)
    for key in RESERVED_LOGITS_KEYS:
        if key not in md:
            fail(f"__metadata__.{key}", "missing")
    if md.pop("format_version") != FORMAT_VERSION or md.pop("content") != CONTENT:
        fail("__metadata__", f"not a logits-only file of format version {FORMAT_VERSION}")
    nums = {}
    for key in ("batch", "next_n", "max_model_len"):
        text = md.pop(key)
        if not text.isdigit() or (len(text) > 1 and text[0] == "0"):
            fail(f"__metadata__.{key}", f"{text!r} is not a non-negative decimal integer")
        nums[key] = int(text)
    t = root["logits"]
    if not isinstance(t, dict) or t.get("dtype") != "F32" or set(t) != {"dtype", "shape", "data_offsets"}:
        fail("tensor logits", "expected {dtype: F32, shape, data_offsets}")
    rows, cols = nums["batch"] * nums["next_n"], nums["max_model_len"]
    if t["shape"] != [rows, cols] or t["data_offsets"] != [0, 4 * rows * cols] or len(data) - 8 - n != 4 * rows * cols:
        fail("tensor logits", f"expected shape [{rows}, {cols}] filling the data section")
    logits = np.frombuffer(data, dtype="<f4", count=rows * cols, offset=8 + n).reshape(rows, cols).copy()
    lf = LogitsFile(logits=logits, name=md.pop("name"), input_file=md.pop("input_file"),
                    input_sha256=md.pop("input_sha256"), contract=md.pop("contract"), producer=md.pop("producer"),
                    extra=md, **nums)
    _check(lf, src)
    return lf
