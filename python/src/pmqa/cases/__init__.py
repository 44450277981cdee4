"""pmqa.cases: read and write pmqa case files and result files (safetensors) as numpy arrays.

    from pmqa.cases import read_case_file, write_case_file
    cf = read_case_file("case.safetensors")       # strict: raises CaseFileError on any problem
    cf.logits = my_kernel(cf.q, cf.kv_cache, ...)  # [B*N, max_model_len] float32
    cf.producer = "my-runner"; cf.extra["bench_ms"] = "0.42"
    write_case_file("out.safetensors", cf)         # then: pmqa verify out.safetensors

Logits-only result files (logits_file.py) hold a kernel's output and the name and SHA-256 of its
input case file: `pmqa verify OUT --cases CASES` judges them. Every format rule is the C++
library's (cases/), reached through pmqa._core: Python and `pmqa verify` read the same files the
same way.

Called, the module is the API's suite: ``pmqa.cases("quick", device="cuda")`` is
``pmqa._api.cases``. One name serves both because ``import pmqa.cases`` makes the package attribute
``pmqa.cases`` this module, which would otherwise hide the function users call.
"""
import sys as _sys
import types as _types

from .case_file import (
    CONTRACTS,
    FORMAT_VERSION,
    FP8_FORMATS,
    KV_LAYOUTS,
    MAX_HEADER_BYTES,
    RESERVED_KEYS,
    CaseFile,
    CaseFileError,
    parse_case_file,
    read_case_file,
    serialize_case_file,
    validate,
    write_case_file,
)
from .logits_file import (
    LogitsFile,
    is_logits_file,
    read_logits_file,
    serialize_logits_file,
    sha256_file,
    write_logits_file,
)

__all__ = [
    "CONTRACTS", "FORMAT_VERSION", "FP8_FORMATS", "KV_LAYOUTS", "MAX_HEADER_BYTES", "RESERVED_KEYS",
    "CaseFile", "CaseFileError", "parse_case_file", "read_case_file", "serialize_case_file", "validate",
    "write_case_file", "LogitsFile", "is_logits_file", "read_logits_file", "serialize_logits_file",
    "sha256_file", "write_logits_file",
]


class _CallableModule(_types.ModuleType):
    def __call__(self, *args, **kwargs):
        from .. import _api
        return _api.cases(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
