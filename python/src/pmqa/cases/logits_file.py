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
strict (cases/include/pmqa/cases/logits_file.hpp is the C++ side).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Union

import numpy as np

from .atomic_file import describe_os_error, write_atomically
from .case_file import (CONTRACTS, FORMAT_VERSION, INT32_MAX, MAX_HEADER_BYTES, CaseFileError, _check_encodable,
                        _check_printable, _key_text, _quoted, _Reader, _type_name, first_control_character,
                        read_regular_file)

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


def _fail(src: str, fld: str, problem: str):
    raise CaseFileError(src, fld, problem)


def _check(lf: LogitsFile, src: str) -> np.ndarray:
    """The fields' rules, shared by the writer and the reader (the C++ reader applies the same)."""
    a = lf.logits
    if not isinstance(a, np.ndarray) or a.dtype.kind != "f" or a.dtype.itemsize != 4 or a.ndim != 2:
        _fail(src, "logits", "expected a float32 [B*N, max_model_len] array")
    for key in ("batch", "next_n", "max_model_len"):
        v = getattr(lf, key)
        low = 1 if key == "next_n" else 0
        if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= INT32_MAX:
            _fail(src, f"__metadata__.{key}", f"{v!r} is outside [{low}, {INT32_MAX}]")
    if tuple(a.shape) != (lf.batch * lf.next_n, lf.max_model_len):
        _fail(src, "logits", f"shape {list(a.shape)} disagrees with B*N = {lf.batch * lf.next_n}, max_model_len = "
                             f"{lf.max_model_len}")
    for key in ("name", "producer", "input_file", "input_sha256", "contract"):
        v = getattr(lf, key)
        if not isinstance(v, str):
            _fail(src, f"__metadata__.{key}", f"is a {type(v).__name__}, expected a string")
        _check_encodable(v, src, f"__metadata__.{key}")
    _check_printable(lf.name, src, "__metadata__.name")
    if lf.contract not in CONTRACTS:
        _fail(src, "__metadata__.contract", f"{_quoted(lf.contract)} is not one of {' or '.join(CONTRACTS)}")
    if len(lf.input_sha256) != 64 or any(c not in "0123456789abcdef" for c in lf.input_sha256):
        _fail(src, "__metadata__.input_sha256", "expected 64 lowercase hex digits")
    f = lf.input_file
    if (not f or f in (".", "..") or "/" in f or "\\" in f or first_control_character(f) is not None):
        _fail(src, "__metadata__.input_file", f"{_quoted(f)} must be a file name (no folder, no control character)")
    for k, v in lf.extra.items():
        if not isinstance(k, str) or not isinstance(v, str):
            _fail(src, f"extra key {k!r}", "keys and values must be strings")
        if k in RESERVED_LOGITS_KEYS:
            _fail(src, f"extra key {k}", "is reserved for the format's own metadata")
        _check_encodable(k, src, f"extra key {_quoted(k)}")
        _check_encodable(v, src, f"extra key {_quoted(k)}")
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


def write_logits_file(path: Union[str, os.PathLike], lf: LogitsFile) -> str:
    """Writes atomically (pmqa.cases.atomic_file: a unique temporary file, synced, renamed into place);
    returns the SHA-256 of the file written."""
    path = Path(path)
    data = serialize_logits_file(lf, str(path))
    try:
        return write_atomically(path, [data])
    except OSError as e:
        raise CaseFileError(str(path), "file", f"cannot write: {describe_os_error(e)}", e.errno) from None


def is_logits_file(path: Union[str, os.PathLike]) -> bool:
    """True when the file's metadata says content "logits-only" (reads the header only; False for
    anything unreadable or not a regular file, which the case-file reader then reports)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return False
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            if n < 2 or n > MAX_HEADER_BYTES:
                return False
            meta = json.loads(f.read(n).decode("utf-8")).get("__metadata__", {})
    except (OSError, ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(meta, dict) and meta.get("content") == CONTENT


def read_logits_file(path: Union[str, os.PathLike]) -> LogitsFile:
    """Reads and checks a logits-only file; every problem is a CaseFileError naming the field."""
    src = str(path)
    return parse_logits_file(read_regular_file(path, src), src)


def parse_logits_file(data, src: str = "<memory>") -> LogitsFile:
    """Parses a logits-only file's bytes, as strictly as the case-file reader: the same JSON rules
    (no duplicate key, no NaN constant, no lone surrogate, bounded depth), canonical ASCII decimals,
    integer shapes and offsets, a printable name, a plain input file name."""
    data = memoryview(data).cast("B")
    size = len(data)
    if size < 8:
        _fail(src, "header length", f"the file is {size} bytes, too short for the 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if n > size - 8:
        _fail(src, "header length", f"{n} bytes is larger than the {size - 8} bytes that follow the length field")
    if n > MAX_HEADER_BYTES:
        _fail(src, "header length", f"{n} bytes is over the limit of {MAX_HEADER_BYTES} bytes")
    if n < 2:
        _fail(src, "header length", f"{n} bytes cannot hold a JSON object")
    r = _Reader(src, size - 8 - n)
    root = r.parse_header(bytes(data[8:8 + n]))
    if set(root) != {"__metadata__", "logits"}:
        extra = sorted(set(root) - {"__metadata__", "logits"})
        _fail(src, f"tensor {_quoted(extra[0])}" if extra else "header",
              "a logits-only file holds exactly the tensor logits and __metadata__")
    meta = root["__metadata__"]
    if not isinstance(meta, dict):
        _fail(src, "__metadata__", f"is a {_type_name(meta)}, expected an object of string values")
    for key, value in meta.items():
        if not isinstance(value, str):
            _fail(src, f"__metadata__.{_key_text(key)}", f"value is a {_type_name(value)}, expected a string")
    md = dict(meta)
    for key in sorted(RESERVED_LOGITS_KEYS):
        if key not in md:
            _fail(src, f"__metadata__.{key}", "missing")
    if md.pop("content") != CONTENT:
        _fail(src, "__metadata__.content", f'is not "{CONTENT}"')
    version = md.pop("format_version")
    if version != FORMAT_VERSION:
        _fail(src, "__metadata__.format_version", f"{_quoted(version)} is not supported")
    nums = {key: r.number(md, key, INT32_MAX) for key in ("batch", "next_n", "max_model_len")}
    if nums["next_n"] < 1:
        _fail(src, "__metadata__.next_n", '"0" is not allowed: must be at least 1')
    t = root["logits"]
    rows, cols = nums["batch"] * nums["next_n"], nums["max_model_len"]
    want = f"expected {{dtype F32, shape [{rows}, {cols}], data_offsets [0, {4 * rows * cols}]}}"
    if not isinstance(t, dict) or set(t) != {"dtype", "shape", "data_offsets"} or t["dtype"] != "F32":
        _fail(src, "tensor logits", want)
    for key in ("shape", "data_offsets"):
        if not isinstance(t[key], list) or len(t[key]) != 2:
            _fail(src, f"tensor logits.{key}", want)
    shape = [r.non_negative(f"tensor logits.shape[{i}]", d) for i, d in enumerate(t["shape"])]
    offsets = [r.non_negative(f"tensor logits.data_offsets[{i}]", d) for i, d in enumerate(t["data_offsets"])]
    if shape != [rows, cols] or offsets != [0, 4 * rows * cols]:
        _fail(src, "tensor logits", want)
    if size - 8 - n != 4 * rows * cols:
        _fail(src, "data section", f"is {size - 8 - n} bytes, the logits need {4 * rows * cols}")
    logits = np.frombuffer(data, dtype="<f4", count=rows * cols, offset=8 + n).reshape(rows, cols).copy()
    lf = LogitsFile(logits=logits, name=md.pop("name"), input_file=md.pop("input_file"),
                    input_sha256=md.pop("input_sha256"), contract=md.pop("contract"), producer=md.pop("producer"),
                    extra=md, **nums)
    _check(lf, src)
    return lf
