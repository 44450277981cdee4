"""The model's names as the numpy-only side spells them, in one place.

The C++ model (model/) owns these spellings; pmqa._api takes its lists from the extension, but the
readers here and pmqa-run must work without it, so they use these copies.
python/tests/test_cases_names.py asserts each equals what the C++ model gives (pmqa._core), so a
name added there and not here fails a test instead of going missing from a help text.
"""
from __future__ import annotations

from .case_file import CONTRACTS, FP8_FORMATS, KV_LAYOUTS  # noqa: F401 - the case file's own, re-exported

TOLERANCES = ("fp32", "matrix-unit", "bf16-output", "matrix-unit-bf16")  # Tolerance::names()
NAN_RULES = ("propagate", "relu-clamp")  # NanRule's spellings
