"""The Convention base class: what a calling convention declares and the inputs all of them share."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

from pmqa.cases import CaseFile

from ..backend import Backend
from .common import Invocation, RunOptions


def recorded_tolerance(convention_profile: str, dtype: str) -> str:
    """The profile a convention's output is judged under: bf16 logits add the bf16 roundings."""
    if dtype != "bfloat16":
        return convention_profile
    return "matrix-unit-bf16" if convention_profile == "matrix-unit" else "bf16-output"


class Convention:
    """A calling convention: how a case's buffers become an op's arguments, and its output contract.

    Subclasses set the class attributes and implement build(). What a convention can express and
    what its library supports is not code here: it is the convention's envelope
    (cases/data/envelopes/<name>.json, pmqa.cases.envelope), checked by the runner before anything
    is allocated. A case outside is refused as unsupported with the limit's reason, never converted
    behind the caller's back.
    """

    name = "?"
    contract = "clean"          # the output contract pmqa verify checks (spec §1.3)
    tolerance = "fp32"          # the default tolerance profile recorded in the output file
    nan = "propagate"           # what the library's relu does with NaN (spec §1.1), recorded for pmqa verify
    signature = "?"             # how the op is called, for --help and messages
    reserved_kwargs: Tuple[str, ...] = ()  # keyword arguments the convention derives from the case
    owns_output = False         # True: the op allocates the logits it returns (no caller buffer, no guards)

    def nan_for_path(self, path: Optional[str]) -> str:
        """The NaN behaviour of what ran (--expect-path knows the path; None: it was not recorded)."""
        return self.nan

    def judging(self, path: Optional[str], logits_dtype: str,
                given: Optional[Mapping[str, Optional[str]]] = None) -> Dict[str, str]:
        """The one judging value the result file records for what ran, as pmqa verify reads it
        back ({"contract", "tolerance", "nan"}, each by its name): a part given (the runner's
        --contract, --tolerance, --nan) wins; else the convention's contract, its profile with
        the bf16 roundings for bfloat16 logits, and the NaN rule of the path seen."""
        given = given or {}
        return {"contract": given.get("contract") or self.contract,
                "tolerance": given.get("tolerance") or recorded_tolerance(self.tolerance, logits_dtype),
                "nan": given.get("nan") or self.nan_for_path(path)}

    def chunk_q(self, cf: CaseFile, options: RunOptions) -> Optional[int]:
        """The ChunkQ the call passes (the envelope's chunk_q field), or None when it passes none."""
        return None

    def build(self, cf: CaseFile, backend: Backend, options: RunOptions) -> Invocation:
        raise NotImplementedError

    # ---- shared pieces
    @staticmethod
    def common_inputs(cf: CaseFile, backend: Backend) -> Dict[str, Any]:
        """q (fp8 of the case's format), kv_cache (uint8 [num_blocks, block_size, 1, D+4], strided
        over the case's block stride), weights [B*N, H] f32 and block_table [B, max_blocks] i32."""
        return {
            "q": backend.fp8(cf.q, cf.fp8_format),
            "kv_cache": backend.kv_view(cf.kv_cache, cf.block_size, cf.head_dim),
            "weights": backend.tensor(cf.weights),
            "block_table": backend.tensor(cf.block_table),
        }

    @staticmethod
    def merged_kwargs(defaults: Dict[str, Any], options: RunOptions) -> Dict[str, Any]:
        kwargs = dict(defaults)
        kwargs.update(options.op_kwargs)
        return kwargs
