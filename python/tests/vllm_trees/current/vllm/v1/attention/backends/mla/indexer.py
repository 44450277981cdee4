"""Per-layer metadata of the sparse-attention indexer."""
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class DeepseekV32IndexerMetadata:
    slot_mapping: Any
    num_decodes: int = 0
    num_prefills: int = 0
    num_decode_tokens: int = 0
    decode: Optional[Any] = None
    prefill: Optional[Any] = None
