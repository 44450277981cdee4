"""Case files: one FP8 paged MQA logits case per file, in the safetensors format.

The same format as pmqa's C++ reader/writer (cases/include/pmqa/cases/case_file.hpp):

* bytes [0, 8): header length L, unsigned 64-bit little-endian;
* bytes [8, 8 + L): a UTF-8 JSON object, one entry per tensor
  ``{"dtype": ..., "shape": [...], "data_offsets": [begin, end]}`` (offsets relative to the data
  section) and ``"__metadata__"`` (string values only); the writer pads it with spaces so the data
  section starts at a multiple of 8;
* bytes [8 + L, end): the tensors, little-endian, row-major, in the writer's order weights,
  context_lens, block_table, logits (optional), q, kv_cache.

The writer is deterministic and byte-identical to the C++ writer for the same case. The reader is
strict: every problem raises :class:`CaseFileError`, whose message names the file, the field and
the problem. Only numpy is needed.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Union

import numpy as np

from .atomic_file import describe_os_error, write_atomically
from .strict_json import duplicate_key_hook

FORMAT_VERSION = "1"
MAX_HEADER_BYTES = 16 << 20  # the largest JSON header the reader accepts
# Metadata that names things in reports, JUnit and file names: no control characters.
PRINTABLE_KEYS = ("name", "suite")
MAX_JSON_DEPTH = 8
MAX_JSON_VALUES = 65536
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1

FP8_FORMATS = ("e4m3fn", "e4m3fnuz")
KV_LAYOUTS = ("normal", "shuffle")
CONTRACTS = ("clean", "valid-only")

# (name, required, accepted dtypes (the first is what the writer emits), numpy dtype, dims text)
_TENSORS = (
    ("weights", True, ("F32",), "<f4", "[B*N, H]"),
    ("context_lens", True, ("I32",), "<i4", "[B] or [B, N]"),
    ("block_table", True, ("I32",), "<i4", "[B, max_blocks_per_seq]"),
    ("logits", False, ("F32",), "<f4", "[B*N, max_model_len]"),
    ("q", True, ("U8", "F8_E4M3", "F8_E4M3FNUZ"), "u1", "[B, N, H, D]"),
    ("kv_cache", True, ("U8",), "u1", "[num_blocks, block_stride]"),
)
_TENSOR_NAMES = tuple(t[0] for t in _TENSORS)
_SPEC = {t[0]: t for t in _TENSORS}

RESERVED_KEYS = frozenset({
    "format_version", "name", "suite", "seed", "producer", "fp8_format", "kv_layout", "contract",
    "batch", "next_n", "heads", "head_dim", "block_size", "max_model_len", "__metadata__",
})


class CaseFileError(ValueError):
    """An unreadable, inconsistent or invalid case file (or a case that cannot be written)."""

    def __init__(self, file: str, field: str, problem: str, os_errno: Optional[int] = None):
        super().__init__(f"{file}: {field}: {problem}")
        self.file = file
        self.field = field
        self.problem = problem
        self.os_errno = os_errno  # a write that the system refused: its errno (ENOSPC, EROFS, ...)


@dataclass(eq=False)
class CaseFile:
    """One case: its buffers (numpy arrays), the metadata, and optionally a kernel's logits.

    Shapes: q [B, N, H, D] uint8 fp8 codes; kv_cache [num_blocks, block_stride] uint8 (spec §2);
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
    fp8_format: str = "e4m3fn"
    kv_layout: str = "normal"
    contract: str = "clean"
    name: str = ""
    suite: str = ""
    seed: int = 0
    producer: str = ""
    logits: Optional[np.ndarray] = None
    extra: Dict[str, str] = field(default_factory=dict)

    # ---- shape accessors
    @property
    def batch(self) -> int:
        return int(self.q.shape[0])

    @property
    def next_n(self) -> int:
        return int(self.q.shape[1])

    @property
    def heads(self) -> int:
        return int(self.q.shape[2])

    @property
    def head_dim(self) -> int:
        return int(self.q.shape[3])

    @property
    def rows(self) -> int:
        return self.batch * self.next_n

    @property
    def num_blocks(self) -> int:
        return int(self.kv_cache.shape[0])

    @property
    def block_stride(self) -> int:
        return int(self.kv_cache.shape[1])

    @property
    def max_blocks_per_seq(self) -> int:
        return int(self.block_table.shape[1])

    @property
    def context_lens_2d(self) -> bool:
        return self.context_lens.ndim == 2

    def valid_keys(self) -> np.ndarray:
        """E_r for every row r = b*N + n (spec §1.2), as int64 [B*N]; may be <= 0."""
        lens = self.context_lens.astype(np.int64)
        if self.context_lens_2d:
            return lens.reshape(-1)
        n = np.arange(self.next_n, dtype=np.int64)
        return (lens[:, None] - self.next_n + n[None, :] + 1).reshape(-1)

    def scales(self) -> np.ndarray:
        """The per-token fp32 scales of every physical block, [num_blocks, block_size] float32."""
        begin = self.block_size * self.head_dim
        raw = np.ascontiguousarray(self.kv_cache[:, begin:begin + 4 * self.block_size])
        return raw.view("<f4").reshape(self.num_blocks, self.block_size)

    def describe(self) -> str:
        return (f"{self.name + ': ' if self.name else ''}B={self.batch} N={self.next_n} H={self.heads} "
                f"D={self.head_dim} block_size={self.block_size} blocks={self.num_blocks} "
                f"stride={self.block_stride} max_model_len={self.max_model_len} fp8={self.fp8_format} "
                f"layout={self.kv_layout} context_lens={'2-D' if self.context_lens_2d else '1-D'} "
                f"seed={self.seed}")


# ============================================================================ helpers

def _quoted(text: str, max_chars: int = 64) -> str:
    """An untrusted string made safe to print (the C++ reader's quoting, on code points)."""
    out = []
    for ch in text[:max_chars]:
        o = ord(ch)
        if o < 0x20 or o == 0x7F or ch in '"\\':
            out.append(f"\\x{o:02x}")
        elif o >= 0x80:
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
    s = '"' + "".join(out) + '"'
    if len(text) > max_chars:
        s += f"... ({len(text.encode('utf-8', 'surrogatepass'))} bytes)"
    return s


def first_control_character(text: str) -> Optional[int]:
    """Index of the first control character in text (C0, DEL or C1: what a terminal or an XML report
    would act on or refuse), or None. Names may not hold one (NUL cut reports short; ESC drives the
    terminal)."""
    for i, ch in enumerate(text):
        o = ord(ch)
        if o < 0x20 or 0x7F <= o <= 0x9F:
            return i
    return None


def _check_printable(text: str, src: str, fld: str) -> None:
    if first_control_character(text) is not None:
        raise CaseFileError(src, fld, f"{_quoted(text)} holds a control character (names must be printable)")


def _key_text(key: str) -> str:
    ok = 0 < len(key) <= 64 and all(c.isascii() and (c.isalnum() or c in "_-.") for c in key)
    return key if ok else _quoted(key)


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _byte_size(elem_size: int, shape) -> Optional[int]:
    """elem_size * product(shape), or None when elem_size times the product of the non-zero
    dimensions passes 2^63 - 1 (numpy's own limit; the C++ reader applies the same rule)."""
    acc = elem_size
    for d in shape:
        if d:
            acc *= int(d)
            if acc > INT64_MAX:
                return None
    return 0 if any(d == 0 for d in shape) else acc


# ============================================================================ writer

def _check_for_write(cf: CaseFile, src: str):
    """The writer's structural checks (the bounds the reader enforces); returns the arrays to write."""

    def fail(fld: str, problem: str):
        raise CaseFileError(src, fld, problem)

    def array(name: str, value, dtype: str, ndim) -> np.ndarray:
        if not isinstance(value, np.ndarray):
            fail(name, f"is a {type(value).__name__}, expected a numpy array")
        want = np.dtype(dtype)
        if value.dtype.kind != want.kind or value.dtype.itemsize != want.itemsize:
            fail(name, f"has dtype {value.dtype}, expected {want.name}")
        if value.ndim not in ndim:
            fail(name, f"has {value.ndim} dimensions {_shape_text(value.shape)}, expected {_SPEC[name][4]}")
        return np.ascontiguousarray(value, dtype=want)

    q = array("q", cf.q, "u1", (4,))
    kv = array("kv_cache", cf.kv_cache, "u1", (2,))
    weights = array("weights", cf.weights, "<f4", (2,))
    lens = array("context_lens", cf.context_lens, "<i4", (1, 2))
    table = array("block_table", cf.block_table, "<i4", (2,))
    logits = None if cf.logits is None else array("logits", cf.logits, "<f4", (2,))

    b, n, h, d = (int(x) for x in q.shape)
    for name, v in (("next_n", n), ("heads", h), ("head_dim", d), ("block_size", cf.block_size)):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= INT32_MAX:
            fail(name, f"{v!r} is outside [1, {INT32_MAX}]")
    for name, v in (("batch", b), ("max_model_len", cf.max_model_len)):
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= INT32_MAX:
            fail(name, f"{v!r} is outside [0, {INT32_MAX}]")
    if not isinstance(cf.seed, int) or isinstance(cf.seed, bool) or not 0 <= cf.seed <= UINT64_MAX:
        fail("seed", f"{cf.seed!r} is not an integer in [0, 2^64)")
    if kv.shape[1] < cf.block_size * (d + 4):
        fail("block_stride", f"{kv.shape[1]} is below block_size*(head_dim+4) = {cf.block_size * (d + 4)}")
    rows = b * n
    expect = {
        "weights": (rows, h),
        "context_lens": (b, n) if lens.ndim == 2 else (b,),
        "block_table": (b, table.shape[1]),
        "logits": (rows, cf.max_model_len),
    }
    for name, arr in (("weights", weights), ("context_lens", lens), ("block_table", table), ("logits", logits)):
        if arr is not None and tuple(arr.shape) != expect[name]:
            fail(name, f"shape {_shape_text(arr.shape)} disagrees with q's shape {_shape_text(q.shape)}: "
                       f"expected {_SPEC[name][4]} = {_shape_text(expect[name])}")
    for name, value, options in (("fp8_format", cf.fp8_format, FP8_FORMATS),
                                 ("kv_layout", cf.kv_layout, KV_LAYOUTS),
                                 ("contract", cf.contract, CONTRACTS)):
        if value not in options:
            fail(name, f"{value!r} is not one of {' or '.join(options)}")
    for name in ("name", "suite", "producer"):
        value = getattr(cf, name)
        if not isinstance(value, str):
            fail(name, f"is a {type(value).__name__}, expected a string")
        _check_encodable(value, src, name)
        if name in PRINTABLE_KEYS:
            _check_printable(value, src, name)
    for key, value in cf.extra.items():
        if not isinstance(key, str) or not isinstance(value, str):
            fail(f"extra key {key!r}", "keys and values must be strings")
        _check_encodable(key, src, f"extra key {_quoted(key)}")
        if key in RESERVED_KEYS:
            fail(f"extra key {_key_text(key)}", "is reserved for the format's own metadata")
        _check_encodable(value, src, f"extra key {_key_text(key)}")
    return {"weights": weights, "context_lens": lens, "block_table": table, "logits": logits, "q": q,
            "kv_cache": kv}


def _check_encodable(text: str, src: str, fld: str):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise CaseFileError(src, fld, f"is not valid UTF-8: {_quoted(text)}") from None


def serialize_case_file(cf: CaseFile) -> bytes:
    """The whole file as bytes (byte-identical to the C++ writer's output for the same case)."""
    return b"".join(_as_bytes(p) for p in _serialize_parts(cf, "<memory>"))


def _as_bytes(part) -> memoryview:
    """A part of the file (bytes, or a C-contiguous array) as a flat byte view, without a copy."""
    if isinstance(part, np.ndarray):
        return memoryview(part.reshape(-1).view(np.uint8))
    return memoryview(part)


def _serialize_parts(cf: CaseFile, src: str):
    arrays = _check_for_write(cf, src)
    q = arrays["q"]
    meta = dict(cf.extra)
    meta.update({
        "format_version": FORMAT_VERSION,
        "name": cf.name,
        "suite": cf.suite,
        "seed": str(cf.seed),
        "producer": cf.producer,
        "fp8_format": cf.fp8_format,
        "kv_layout": cf.kv_layout,
        "contract": cf.contract,
        "batch": str(q.shape[0]),
        "next_n": str(q.shape[1]),
        "heads": str(q.shape[2]),
        "head_dim": str(q.shape[3]),
        "block_size": str(cf.block_size),
        "max_model_len": str(cf.max_model_len),
    })
    header: Dict[str, Any] = {"__metadata__": meta}
    blobs = []
    offset = 0
    for name, _, dtypes, _, _ in _TENSORS:
        arr = arrays[name]
        if arr is None:
            continue
        size = arr.nbytes
        header[name] = {"dtype": dtypes[0], "shape": [int(x) for x in arr.shape],
                        "data_offsets": [offset, offset + size]}
        blobs.append(arr)  # C-contiguous, little-endian (see _check_for_write)
        offset += size
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return [len(text).to_bytes(8, "little"), text] + blobs


def write_case_file(path: Union[str, os.PathLike], cf: CaseFile) -> str:
    """Writes the case to ``path`` atomically (pmqa.cases.atomic_file: a unique temporary file, synced,
    renamed into place); returns the SHA-256 of the file written."""
    path = Path(path)
    parts = _serialize_parts(cf, str(path))
    try:
        return write_atomically(path, (_as_bytes(p) for p in parts))
    except OSError as e:
        raise CaseFileError(str(path), "file", f"cannot write: {describe_os_error(e)}", e.errno) from None


# ============================================================================ reader

class _JsonProblem(Exception):
    pass


_no_duplicates = duplicate_key_hook(_JsonProblem, lambda k: f"duplicate key {_quoted(k)}")


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON value")


def _check_tree(root) -> None:
    """Depth, value count and lone surrogates (Python's json accepts them; UTF-8 cannot hold them)."""
    count = 0
    stack = [(root, 0)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise _JsonProblem(f"nesting deeper than {MAX_JSON_DEPTH} levels")
        count += 1
        if count > MAX_JSON_VALUES:
            raise _JsonProblem(f"more than {MAX_JSON_VALUES} values")
        if isinstance(v, dict):
            for k, x in v.items():
                _surrogate_free(k)
                stack.append((x, depth + 1))
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
        elif isinstance(v, str):
            _surrogate_free(v)


def _surrogate_free(s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise _JsonProblem(f"a string with a lone surrogate escape: {_quoted(s)}") from None


class _Reader:
    def __init__(self, src: str, data_size: int):
        self.src = src
        self.data_size = data_size

    def fail(self, fld: str, problem: str):
        raise CaseFileError(self.src, fld, problem)

    def parse_header(self, raw: bytes) -> Dict[str, Any]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail("header", f"byte {e.start} of the JSON header (0x{raw[e.start]:02x}) is not valid UTF-8")
        if not text.startswith("{"):
            self.fail("header", "does not start with '{' (a JSON object is expected right after the length field)")
        try:
            root = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
            _check_tree(root)
        except _JsonProblem as e:
            self.fail("header", f"JSON has {e}")
        except RecursionError:
            self.fail("header", f"JSON has nesting deeper than {MAX_JSON_DEPTH} levels")
        except ValueError as e:  # json.JSONDecodeError
            self.fail("header", f"is not valid JSON: {e}")
        if not isinstance(root, dict):
            self.fail("header", f"is a JSON {_type_name(root)}, expected an object")
        return root

    def non_negative(self, fld: str, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(fld, f"is a {_type_name(v)}, expected a non-negative integer")
        if isinstance(v, float):
            self.fail(fld, f"{v!r} is not an integer")
        if v < 0:
            self.fail(fld, f"{v} is negative")
        if v > INT64_MAX:
            self.fail(fld, f"{v} is too large")
        return v

    def entry(self, name: str, v: Any):
        spec = _SPEC[name]
        fld = f"tensor {name}"
        if not isinstance(v, dict):
            self.fail(fld, f"entry is a {_type_name(v)}, expected an object with dtype, shape and data_offsets")
        for key in v:
            if key not in ("dtype", "shape", "data_offsets"):
                self.fail(f"{fld}.{_key_text(key)}", "unknown field; expected dtype, shape or data_offsets")
        for key in ("dtype", "shape", "data_offsets"):
            if key not in v:
                self.fail(f"{fld}.{key}", "missing")
        dtype = v["dtype"]
        if not isinstance(dtype, str):
            self.fail(fld + ".dtype", f"is a {_type_name(dtype)}, expected a string")
        if dtype not in spec[2]:
            expected = spec[2][0] if len(spec[2]) == 1 else ", ".join(spec[2][:-1]) + " or " + spec[2][-1]
            self.fail(fld + ".dtype",
                      f"dtype {_quoted(dtype)} of tensor {name} is not supported here; expected {expected}")
        shape = v["shape"]
        if not isinstance(shape, list):
            self.fail(fld + ".shape", f"is a {_type_name(shape)}, expected an array")
        rank_ok = len(shape) in ((1, 2) if name == "context_lens" else (4,) if name == "q" else (2,))
        if not rank_ok:
            self.fail(fld + ".shape", f"has rank {len(shape)}, expected {spec[4]}")
        shape = [self.non_negative(f"{fld}.shape[{i}]", d) for i, d in enumerate(shape)]
        offsets = v["data_offsets"]
        if not isinstance(offsets, list) or len(offsets) != 2:
            what = f"an array of {len(offsets)}" if isinstance(offsets, list) else f"a {_type_name(offsets)}"
            self.fail(fld + ".data_offsets", f"is {what}, expected [begin, end]")
        begin = self.non_negative(fld + ".data_offsets[0]", offsets[0])
        end = self.non_negative(fld + ".data_offsets[1]", offsets[1])
        rng = f"[{begin}, {end}]"
        if begin > end:
            self.fail(fld + ".data_offsets", f"{rng} ends before it begins")
        if end > self.data_size:
            self.fail(fld + ".data_offsets",
                      f"{rng} run past the end of the data section ({self.data_size} bytes)")
        elem = np.dtype(spec[3]).itemsize
        size = _byte_size(elem, shape)
        if size is None:
            self.fail(fld + ".shape", f"{_shape_text(shape)} of {dtype} is too large: its non-zero dimensions need more than 2^63 - 1 bytes")
        if size != end - begin:
            self.fail(fld + ".data_offsets", f"{rng} span {end - begin} bytes but dtype {dtype} and shape "
                                             f"{_shape_text(shape)} need {size}")
        return {"dtype": dtype, "shape": shape, "begin": begin, "end": end}

    def coverage(self, entries: Dict[str, Dict[str, Any]]) -> None:
        order = sorted(entries, key=lambda n: (entries[n]["begin"], entries[n]["end"], _TENSOR_NAMES.index(n)))
        cursor = 0
        previous = None
        for name in order:
            e = entries[name]
            fld = f"tensor {name}.data_offsets"
            rng = f"[{e['begin']}, {e['end']}]"
            if e["begin"] < cursor:
                p = entries[previous]
                self.fail(fld, f"{rng} overlap tensor {previous}'s [{p['begin']}, {p['end']}]")
            if e["begin"] > cursor:
                self.fail(fld, f"{rng} leave a gap: bytes [{cursor}, {e['begin']}) of the data section "
                               f"belong to no tensor")
            if e["end"] > cursor:
                previous = name
            cursor = e["end"]
        if cursor != self.data_size:
            self.fail("data section", f"bytes [{cursor}, {self.data_size}) belong to no tensor")

    def number(self, md: Dict[str, str], key: str, maximum: int) -> int:
        fld = f"__metadata__.{key}"
        text = self.take(md, key)
        if len(text) > 1 and text[0] == "-" and all("0" <= c <= "9" for c in text[1:]):
            self.fail(fld, f"{_quoted(text)} is negative")
        if not text or not all("0" <= c <= "9" for c in text):
            self.fail(fld, f"{_quoted(text)} is not a non-negative decimal integer")
        if len(text) > 1 and text[0] == "0":
            self.fail(fld, f"{_quoted(text)} has a leading zero")
        if len(text) > 25 or int(text) > maximum:
            self.fail(fld, f"{_quoted(text)} is too large (at most {maximum})")
        return int(text)

    def take(self, md: Dict[str, str], key: str) -> str:
        if key not in md:
            self.fail(f"__metadata__.{key}", "missing")
        return md.pop(key)

    def printable(self, md: Dict[str, str], key: str) -> str:
        text = self.take(md, key)
        _check_printable(text, self.src, f"__metadata__.{key}")
        return text

    def choice(self, md: Dict[str, str], key: str, options) -> str:
        text = self.take(md, key)
        if text not in options:
            self.fail(f"__metadata__.{key}", f"{_quoted(text)} is not one of {' or '.join(options)}")
        return text

    def metadata(self, meta: Any) -> Dict[str, Any]:
        if meta is None:
            self.fail("__metadata__", "missing")
        if not isinstance(meta, dict):
            self.fail("__metadata__", f"is a {_type_name(meta)}, expected an object of string values")
        md = {}
        for key in sorted(meta, key=lambda k: k.encode("utf-8")):
            if not isinstance(meta[key], str):
                self.fail(f"__metadata__.{_key_text(key)}",
                          f"value is a {_type_name(meta[key])}, expected a string")
            md[key] = meta[key]
        version = self.take(md, "format_version")
        if version != FORMAT_VERSION:
            self.fail("__metadata__.format_version",
                      f"{_quoted(version)} is not supported; this reader reads version {_quoted(FORMAT_VERSION)}")
        out: Dict[str, Any] = {"name": self.printable(md, "name"), "suite": self.printable(md, "suite"),
                               "producer": self.take(md, "producer"), "seed": self.number(md, "seed", UINT64_MAX),
                               "fp8_format": self.choice(md, "fp8_format", FP8_FORMATS),
                               "kv_layout": self.choice(md, "kv_layout", KV_LAYOUTS),
                               "contract": self.choice(md, "contract", CONTRACTS)}
        for key in ("batch", "next_n", "heads", "head_dim", "block_size", "max_model_len"):
            out[key] = self.number(md, key, INT32_MAX)
        for key in ("next_n", "heads", "head_dim", "block_size"):
            if out[key] < 1:
                self.fail(f"__metadata__.{key}", '"0" is not allowed: must be at least 1')
        out["extra"] = md
        return out

    def consistency(self, entries, m) -> None:
        q = entries["q"]["shape"]
        for dim, key in enumerate(("batch", "next_n", "heads", "head_dim")):
            if q[dim] != m[key]:
                self.fail("tensor q.shape", f"{_shape_text(q)} ([B, N, H, D]) disagrees with the metadata: "
                                            f"{key} is {m[key]}")
        qd = entries["q"]["dtype"]
        if (qd == "F8_E4M3" and m["fp8_format"] != "e4m3fn") or (qd == "F8_E4M3FNUZ" and m["fp8_format"] != "e4m3fnuz"):
            self.fail("tensor q.dtype", f"dtype {qd} disagrees with the metadata: fp8_format is {m['fp8_format']}")
        b, n, h, _ = q
        rows = b * n

        def expect(name, want, why):
            got = entries[name]["shape"]
            if got != list(want):
                self.fail(f"tensor {name}.shape", f"{_shape_text(got)} disagrees with {why}: expected "
                                                  f"{_SPEC[name][4]} = {_shape_text(want)}")

        expect("weights", (rows, h), "q's shape and the metadata")
        lens = entries["context_lens"]["shape"]
        expect("context_lens", (b, n) if len(lens) == 2 else (b,), "q's shape")
        table = entries["block_table"]["shape"]
        if table[0] != b:
            self.fail("tensor block_table.shape", f"{_shape_text(table)} disagrees with q's shape {_shape_text(q)}: "
                                                  f"expected [B, max_blocks_per_seq] with B = {b}")
        kv = entries["kv_cache"]["shape"]
        min_stride = m["block_size"] * (m["head_dim"] + 4)
        if kv[1] < min_stride:
            self.fail("tensor kv_cache.shape", f"{_shape_text(kv)}: block stride {kv[1]} is below "
                                               f"block_size*(head_dim+4) = {min_stride} from the metadata")
        if "logits" in entries:
            expect("logits", (rows, m["max_model_len"]), "q's shape and max_model_len")


def parse_case_file(data, source_name: str = "<memory>", validate_case: bool = True) -> CaseFile:
    """Parses a file's bytes (bytes, bytearray or memoryview). The arrays own their memory."""
    return _parse(memoryview(data).cast("B"), source_name, copy=True, validate_case=validate_case)


def read_regular_file(path: Union[str, os.PathLike], src: str) -> bytearray:
    """A file's bytes, refusing anything but a regular file before reading from it: a FIFO, socket or
    device would block or never end (opened without blocking, checked with fstat)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise CaseFileError(src, "file", "is a directory") from None
    except OSError as e:
        raise CaseFileError(src, "file", f"cannot read: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CaseFileError(src, "file", f"is {file_kind(st.st_mode)}, not a regular file")
        size = st.st_size
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        while got < size:
            n = os.readv(fd, [view[got:]])
            if n == 0:
                break
            got += n
        if got != size or os.read(fd, 1):
            raise CaseFileError(src, "file", f"changed while being read ({got} of {size} bytes)")
        return buf
    except OSError as e:
        raise CaseFileError(src, "file", f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO", "a directory", ...)."""
    for test, words in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def read_case_file(path: Union[str, os.PathLike], validate_case: bool = True) -> CaseFile:
    """Reads and checks a case file. The arrays are views of one writable buffer holding the file."""
    src = str(path)
    buf = read_regular_file(path, src)
    return _parse(memoryview(buf), src, copy=False, validate_case=validate_case)


def _parse(buf: memoryview, src: str, copy: bool, validate_case: bool) -> CaseFile:
    size = len(buf)
    if size < 8:
        raise CaseFileError(src, "header length", f"the file is {size} bytes, too short for the 8-byte header length")
    length = int.from_bytes(buf[:8], "little")
    if length > size - 8:
        raise CaseFileError(src, "header length", f"{length} bytes is larger than the {size - 8} bytes that follow "
                                                  f"the length field (file is {size} bytes)")
    if length > MAX_HEADER_BYTES:
        raise CaseFileError(src, "header length", f"{length} bytes is over the limit of {MAX_HEADER_BYTES} bytes")
    if length < 2:
        raise CaseFileError(src, "header length", f"{length} bytes cannot hold a JSON object")
    data_begin = 8 + length
    r = _Reader(src, size - data_begin)
    root = r.parse_header(bytes(buf[8:data_begin]))

    entries: Dict[str, Dict[str, Any]] = {}
    for key in sorted(root, key=lambda k: k.encode("utf-8")):
        if key == "__metadata__":
            continue
        if key not in _SPEC:
            r.fail(f"tensor {_key_text(key)}",
                   "unknown tensor; expected weights, context_lens, block_table, logits, q or kv_cache")
        entries[key] = r.entry(key, root[key])
    for name, required, _, _, _ in _TENSORS:
        if required and name not in entries:
            r.fail(f"tensor {name}", "missing")
    r.coverage(entries)
    m = r.metadata(root.get("__metadata__"))
    r.consistency(entries, m)

    arrays = {}
    for name, e in entries.items():
        np_dtype = np.dtype(_SPEC[name][3])
        a = np.frombuffer(buf, dtype=np_dtype, count=(e["end"] - e["begin"]) // np_dtype.itemsize,
                          offset=data_begin + e["begin"]).reshape(e["shape"])
        arrays[name] = a.copy() if copy else a
    cf = CaseFile(q=arrays["q"], kv_cache=arrays["kv_cache"], weights=arrays["weights"],
                  context_lens=arrays["context_lens"], block_table=arrays["block_table"],
                  block_size=m["block_size"], max_model_len=m["max_model_len"], fp8_format=m["fp8_format"],
                  kv_layout=m["kv_layout"], contract=m["contract"], name=m["name"], suite=m["suite"],
                  seed=m["seed"], producer=m["producer"], logits=arrays.get("logits"), extra=m["extra"])
    if validate_case:
        try:
            validate(cf)
        except CaseFileError as e:
            raise CaseFileError(src, "case", e.problem) from None
    return cf


# ============================================================================ semantic checks

def validate(cf: CaseFile) -> None:
    """The case invariants a kernel may rely on (spec §1-§2; the C++ validate() checks the same).

    Raises CaseFileError with field "case" and a message naming the index and the value.
    """

    def fail(problem: str):
        raise CaseFileError("<case>", "case", problem)

    if cf.kv_layout == "shuffle" and (cf.block_size % 16 or cf.head_dim % 16):
        fail(f"layout shuffle needs block_size and head_dim multiples of 16 (block_size = {cf.block_size}, "
             f"head_dim = {cf.head_dim})")
    lens = cf.context_lens
    bad = np.argwhere(lens < 0)
    if bad.size:
        idx = tuple(int(i) for i in bad[0])
        fail(f"context_lens{''.join(f'[{i}]' for i in idx)} = {int(lens[idx])} is negative")
    w = np.asarray(cf.weights)
    bad = np.argwhere(~np.isfinite(w))
    if bad.size:
        r, h = (int(i) for i in bad[0])
        fail(f"weights[{r}][{h}] = {w[r, h]} is not finite")

    e_r = cf.valid_keys()
    if e_r.size and e_r.max() > cf.max_model_len:
        r = int(np.argmax(e_r > cf.max_model_len))
        fail(f"row {r} (b = {r // cf.next_n}, n = {r % cf.next_n}) has E_r = {int(e_r[r])} valid keys, above "
             f"max_model_len = {cf.max_model_len}")
    bs = cf.block_size
    blocks = np.where(e_r > 0, (e_r + bs - 1) // bs, 0)
    if blocks.size and blocks.max() > cf.max_blocks_per_seq:
        r = int(np.argmax(blocks > cf.max_blocks_per_seq))
        fail(f"row {r} reads {int(blocks[r])} logical blocks (E_r = {int(e_r[r])}, block_size = {bs}) but "
             f"block_table has {cf.max_blocks_per_seq} columns")
    if cf.rows == 0:
        return
    scales = cf.scales()
    # Rows of one sequence read prefixes of the same keys: check the longest prefix per sequence.
    keys_per_seq = np.maximum(e_r.reshape(cf.batch, cf.next_n).max(axis=1), 0)
    for b in range(cf.batch):
        e = int(keys_per_seq[b])
        if e == 0:
            continue
        nb = (e + bs - 1) // bs
        pages = cf.block_table[b, :nb].astype(np.int64)
        out = (pages < 0) | (pages >= cf.num_blocks)
        if out.any():
            i = int(np.argmax(out))
            fail(f"block_table[{b}][{i}] = {int(pages[i])} is outside [0, {cf.num_blocks}) (read by sequence {b}, "
                 f"{e} keys)")
        j = np.arange(e)
        s = scales[pages[j // bs], j % bs]
        bad = ~(np.isfinite(s) & (s > 0))
        if bad.any():
            k = int(np.argmax(bad))
            fail(f"kv_cache scale of physical block {int(pages[k // bs])}, token {k % bs} = {s[k]} is not finite "
                 f"and > 0 (read by sequence {b}, key {k})")
