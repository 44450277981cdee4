"""The model's names, one list each, as the C++ model spells them (pmqa._core)."""
from __future__ import annotations

from .._native import core

CONTRACTS = tuple(core.contract_names())
FP8_FORMATS = tuple(core.fp8_format_names())
VALUE_FORMATS = tuple(core.value_format_names())
KV_LAYOUTS = tuple(core.kv_layout_names())
TOLERANCES = tuple(core.tolerance_names())
NAN_RULES = tuple(core.nan_rule_names())
