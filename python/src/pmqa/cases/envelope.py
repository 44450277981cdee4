"""Envelopes: what the library behind a calling convention supports (reviewed data, one reason per limit).

The model, the strict reader and the builtin files (cases/data/envelopes, compiled in) are the C++
library's (cases/include/pmqa/cases/envelope.hpp says the format; `pmqa gen --fit` draws cases
inside it); this module hands them on from pmqa._core. A case outside the envelope is refused before
the op is called: "unsupported", with the limit's id and reason (``Envelope.refusal``).
"""
from __future__ import annotations

from .._native import core

EnvelopeError = core.EnvelopeError
Envelope = core.Envelope
EnvelopeFile = core.EnvelopeFile
FIELDS = tuple(core.trait_fields())
envelope_conventions = core.envelope_conventions
builtin_envelope_file = core.builtin_envelope_file
parse_envelope = core.parse_envelope        # (text, origin) -> EnvelopeFile
read_envelope_file = core.read_envelope_file  # (path) -> EnvelopeFile: an overlay (--envelope FILE)
make_envelope = core.make_envelope            # (convention, platform or None, overlays) -> Envelope
traits_of = core.traits_of                    # (case_file, chunk_q=None, arch="") -> CaseTraits, read like a dict
