"""vLLM: `rocm_fp8_paged_mqa_logits` in vllm/v1/attention/ops/rocm_aiter_mla_sparse.py.

How the arch reaches it: vllm/platforms/rocm.py resolves the device's gcnArchName once, at import
(amdsmi's asic info first, torch.cuda.get_device_properties().gcnArchName when amdsmi fails), and
derives its _ON_GFX942 / _ON_GFX950 flags and get_cdna_version() from it; the entry module imports
the flags, and `vllm._aiter_ops.rocm_aiter_ops` says whether AITER may be used (the library is
importable, the arch is one AITER supports, VLLM_ROCM_USE_AITER is on). The entry finds AITER's
paged-MQA-logits module by import path (aiter.ops.triton.pa_mqa_logits, then
aiter.ops.triton.attention.pa_mqa_logits), takes output buffers from vLLM's workspace manager, and
sends DeepSeek-V4 C4A caches (compress_ratio=4) on gfx942/gfx950 to vLLM's own Triton kernel, or
to the eager op for page sizes that are not a multiple of 64.

Which call means which path: AITER's deepgemm_fp8_paged_mqa_logits is the fused path (its
Preshuffle keyword says SHUFFLE, KVBlockSize must be the cache's block_size);
deepgemm_fp8_paged_mqa_logits_stage1 (then a sum over heads) is the two-stage path, NORMAL;
vLLM's fp8_paged_mqa_logits_torch is the eager reference; rocm_fp8_paged_mqa_logits_triton is
vLLM's own fused Triton kernel (block-flat, NORMAL).

Only ROCm rows: on NVIDIA, vLLM's indexer calls DeepGEMM directly from
vllm/model_executor/layers/sparse_attn_indexer.py once the attention backend is chosen; there is no
arch decision in an entry the probe could call on its own.
"""
from __future__ import annotations

import importlib
import logging
import os
import sys

from .. import stubs, triton_standin
from . import Adapter, Entry, Library

# --- modules the probe supplies in --source mode


def _engine_log_root() -> logging.Logger:
    """The parent of the engine's loggers. Without a handler of its own, Python's last-resort handler
    would print the engine's warnings (vLLM's _aiter_ops warns that it cannot find PyTorch's HIP
    runtime, which the stand-in does not have) into the child's stderr, whose tail is what the probe
    shows when a child fails; so they go nowhere unless PMQA_PROBE_VERBOSE is set."""
    root = logging.getLogger("pmqa.probe.engine")
    if not getattr(root, "_pmqa_configured", False):
        root.propagate = False
        if os.environ.get("PMQA_PROBE_VERBOSE"):
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("engine %(levelname)s %(name)s: %(message)s"))
            root.addHandler(handler)
            root.setLevel(logging.DEBUG)
        else:
            root.addHandler(logging.NullHandler())
        root._pmqa_configured = True
    return root


class _EngineLogger:
    """vllm.logger's loggers: the *_once variants included; quiet unless PMQA_PROBE_VERBOSE is set."""

    def __init__(self, name):
        _engine_log_root()
        self._log = logging.getLogger("pmqa.probe.engine." + name)

    def __getattr__(self, level):
        base = level[:-5] if level.endswith("_once") else level
        method = getattr(self._log, base)
        return lambda msg, *args, **kwargs: method(msg, *args)


def _logger_module(name):
    return stubs.provided_module(name, {"init_logger": _EngineLogger, "logger": _EngineLogger("vllm")})


def _triton_utils_module(name):
    try:
        triton = importlib.import_module("triton")
        tl = importlib.import_module("triton.language")
    except ImportError:
        triton, tl = triton_standin.modules()
        stubs.install_module("triton", triton, package=True)
        stubs.install_module("triton.language", tl, package=True)
    return stubs.provided_module(name, {"triton": triton, "tl": tl, "HAS_TRITON": True}, package=True)


class _PlatformsPackage(stubs.StubModule):
    """vllm.platforms without its plugin discovery: current_platform is the tree's own RocmPlatform."""

    def __getattr__(self, name):
        if name == "current_platform":
            rocm = importlib.import_module(self.__name__ + ".rocm")
            value = rocm.RocmPlatform()
            self.__dict__["current_platform"] = value
            return value
        return super().__getattr__(name)


def _platforms_module(name):
    module = _PlatformsPackage(name)
    module.__path__ = []
    return module


# --- names placed in the entry module (both modes)


class _Workspace:
    """vLLM's workspace manager as the entry uses it: buffers of the requested shapes and dtypes."""

    def __init__(self, log):
        self._log = log

    def get_simultaneous(self, *specs):
        torch = sys.modules["torch"]
        out = []
        for shape, dtype in specs:
            self._log.workspace.append({"shape": [int(s) for s in shape], "dtype": str(dtype).replace("torch.", "")})
            out.append(torch.empty(tuple(shape), dtype=dtype))
        return tuple(out)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise stubs.StubUsedError(f"the entry used the workspace manager's {name}(), which the probe does not provide")


def _workspace_manager(log):
    manager = _Workspace(log)
    return lambda: manager


# --- the call


def _fp8_dtype():
    return sys.modules["vllm.platforms"].current_platform.fp8_dtype()


def _inputs(torch, fp8, row):
    """A tiny decode batch in the shapes vLLM's indexer passes: q [B, next_n, H, 128] in the
    platform's fp8 dtype, the cache [blocks, block_size, 1, 132] bytes, weights [B*next_n, H] fp32,
    context lengths [B], a block table, schedule metadata and max_model_len. Also the shape the
    entry must return, [B*next_n, max_model_len]."""
    b, n, h, d = 2, row["next_n"], row["heads"], 128
    bs = row["block_size"]
    max_model_len = 4 * max(bs, 64)
    blocks_per_seq = -(-max_model_len // bs)
    args = (
        torch.empty((b, n, h, d), dtype=fp8),
        torch.empty((b * blocks_per_seq, bs, 1, d + 4), dtype=torch.uint8),
        torch.empty((b * n, h), dtype=torch.float32),
        torch.empty((b,), dtype=torch.int32),
        torch.empty((b, blocks_per_seq), dtype=torch.int32),
        torch.empty((305, 2), dtype=torch.int32),
        max_model_len,
    )
    return args, dict(row.get("entry_kwargs") or {}), (b * n, max_model_len)


def _environment(present: bool, enabled: bool):
    # With AITER absent the switch stays on: absence alone must send vLLM to its eager op.
    return {"VLLM_ROCM_USE_AITER": "1" if (enabled or not present) else "0"}


ADAPTER = Adapter(
    name="vllm",
    title="vLLM",
    vendors=("amd",),
    not_expressed={"nvidia": "rocm_fp8_paged_mqa_logits is vLLM's ROCm entry; on NVIDIA vLLM's indexer calls "
                             "DeepGEMM from sparse_attn_indexer.py with no arch decision of its own to probe"},
    entry_module="vllm.v1.attention.ops.rocm_aiter_mla_sparse",
    entry="rocm_fp8_paged_mqa_logits",
    arch_reaches_engine="vllm/platforms/rocm.py reads gcnArchName once at import (amdsmi first, torch's device "
                        "properties as the fallback) and derives _ON_GFX942/_ON_GFX950 and get_cdna_version()",
    package="vllm",
    real_modules=("vllm.v1.attention.ops.rocm_aiter_mla_sparse", "vllm.platforms.rocm", "vllm.platforms.interface",
                  "vllm._aiter_ops", "vllm.envs"),
    preimport=("vllm.platforms.rocm", "vllm._aiter_ops"),
    provided_modules={"vllm.logger": _logger_module, "vllm.triton_utils": _triton_utils_module,
                      "vllm.platforms": _platforms_module},
    third_party_stubs=("psutil", "cloudpickle", "msgspec", "zmq", "pydantic", "transformers", "huggingface_hub",
                       "einops", "cachetools", "filelock", "tqdm", "packaging", "typing_extensions", "numba",
                       "safetensors", "prometheus_client", "openai", "triton_kernels"),
    third_party_aliases={"regex": "re"},
    libraries=(
        Library("AITER", "amd", "aiter", ("aiter.ops.triton.pa_mqa_logits", "aiter.ops.triton.attention.pa_mqa_logits"), (
            Entry("aiter-fused", "deepgemm_fp8_paged_mqa_logits", "fused", layout_kwarg="Preshuffle",
                  block_kwarg="KVBlockSize", out_arg=3),
            Entry("aiter-stage1", "deepgemm_fp8_paged_mqa_logits_stage1", "two-stage", out_arg=3,
                  out_shape="heads_rows"),
        )),
        Library("DeepGEMM", "nvidia", "deep_gemm", ("deep_gemm",), (
            Entry("deepgemm", "fp8_paged_mqa_logits", "fused", returns=True),
        )),
    ),
    engine_entries=(
        Entry("vllm-eager", "fp8_paged_mqa_logits_torch", "reference-fallback", kind="engine", returns=True, len_arg=5),
        Entry("vllm-triton", "rocm_fp8_paged_mqa_logits_triton", "fused", kind="engine", returns=True, len_arg=5,
              required=False),
    ),
    kernels={"_fp8_paged_mqa_logits_decode_kernel": "vllm-triton", "_fp8_paged_mqa_logits_kernel": "vllm-triton"},
    default_entry={"fused": "aiter-fused", "two-stage": "aiter-stage1", "reference-fallback": "vllm-eager"},
    entry_kwargs=("compress_ratio",),
    environment=_environment,
    entry_globals={"current_workspace_manager": _workspace_manager},
    fp8_dtype=_fp8_dtype,
    inputs=_inputs,
    # vllm/platforms/rocm.py and the entry name both fp8 dtypes at import (torch >= 2.2 has both)
    torch_needs=("float8_e4m3fn", "float8_e4m3fnuz"),
)
