"""Envelopes: what the library behind a calling convention supports (reviewed data, one reason per limit).

The data is pmqa's, shared with the C++ library (cases/include/pmqa/cases/envelope.hpp says
the format; `pmqa gen --fit` draws cases inside it): one file per convention,
``<convention>.json``, and overlays (``--envelope FILE``) that add, replace or drop limits for a new
drop; `envelope_dir` finds them (pmqa.cases.data, the one lookup of pmqa's data). The checks here and the C++
ones compute the same fields the same way; a test compares them on every case of a suite.

A case outside the envelope is refused before the op is called: "unsupported", with the limit's id
and reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .data import DataError, data_path
from .strict_json import duplicate_key_hook

SCHEMA = "pmqa-envelope/1"
OVERLAY_SCHEMA = "pmqa-envelope-overlay/1"
PLATFORMS = ("cuda", "rocm")

# field -> (type, the values a case can have for text fields)
FIELDS: Dict[str, Tuple[type, Tuple[str, ...]]] = {
    "batch": (int, ()), "next_n": (int, ()), "heads": (int, ()), "head_dim": (int, ()), "block_size": (int, ()),
    "max_model_len": (int, ()), "block_stride": (int, ()), "stride_pad": (int, ()),
    "fp8_format": (str, ("e4m3fn", "e4m3fnuz")), "kv_layout": (str, ("normal", "shuffle")),
    "context_lens": (str, ("1-d", "2-d")), "last_row_longest": (bool, ()), "blocks_past_max_model_len": (bool, ()),
    "chunk_q": (int, ()), "heads_mod_chunk_q": (int, ()), "arch": (str, ()),
}
PREDICATES = ("in", "not_in", "min", "max", "multiple_of", "power_of_two", "equals")


class EnvelopeError(Exception):
    """A missing, unreadable or invalid envelope file; the message names the file and the place."""


def envelope_dir() -> Path:
    """The envelope files (cases/data/envelopes): the package's own data/envelopes (an installed
    package) first, then the source tree this package sits in."""
    try:
        return data_path("envelopes")
    except DataError as e:
        raise EnvelopeError(str(e)) from None


# ============================================================================ the fields of a case

def traits_of(cf: Any, chunk_q: Optional[int] = None, arch: str = "") -> Dict[str, Any]:
    """The fields a limit can name, for a pmqa.cases.CaseFile (the C++ traits_of, field for field)."""
    b, n, bs = cf.batch, cf.next_n, cf.block_size
    e = cf.valid_keys().reshape(b, n) if b else np.zeros((0, n), dtype=np.int64)
    last_row_longest = bool((e <= e[:, -1:]).all()) if b else True
    longest = np.maximum(e.max(axis=1), 0) if b else np.zeros(0, dtype=np.int64)
    past = bool(((longest + bs - 1) // bs * bs > cf.max_model_len).any()) if b else False
    cq = int(chunk_q or 0)
    return {
        "batch": b, "next_n": n, "heads": cf.heads, "head_dim": cf.head_dim, "block_size": bs,
        "max_model_len": cf.max_model_len, "block_stride": cf.block_stride,
        "stride_pad": cf.block_stride - bs * (cf.head_dim + 4), "fp8_format": cf.fp8_format,
        "kv_layout": cf.kv_layout, "context_lens": "2-d" if cf.context_lens_2d else "1-d",
        "last_row_longest": last_row_longest, "blocks_past_max_model_len": past,
        "chunk_q": cq, "heads_mod_chunk_q": cf.heads % cq if cq > 0 else 0, "arch": arch,
    }


# ============================================================================ limits

@dataclass
class Predicate:
    kind: str
    value: Any

    def holds(self, v: Any) -> bool:
        k = self.kind
        if k == "in":
            return any(_same(v, x) for x in self.value)
        if k == "not_in":
            return not any(_same(v, x) for x in self.value)
        if k == "equals":
            return _same(v, self.value)
        if k == "min":
            return v >= self.value
        if k == "max":
            return v <= self.value
        if k == "multiple_of":
            return v % self.value == 0
        if k == "power_of_two":
            return v > 0 and v & (v - 1) == 0
        raise AssertionError(k)

    def describe(self) -> str:
        text = lambda x: ("true" if x else "false") if isinstance(x, bool) else str(x)  # noqa: E731
        k = self.kind
        if k in ("in", "not_in"):
            return ("one of " if k == "in" else "none of ") + ", ".join(text(x) for x in self.value)
        return {"equals": text(self.value), "min": f"at least {self.value}", "max": f"at most {self.value}",
                "multiple_of": f"a multiple of {self.value}", "power_of_two": "a power of two"}[k]


def _same(a: Any, b: Any) -> bool:
    # True == 1 in Python; a bool field never equals an int value, as in C++'s variant.
    return type(a) is type(b) and a == b


def _text(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


@dataclass
class Limit:
    id: str
    field: str
    predicate: Predicate
    reason: str
    section: str
    origin: str
    when_field: Optional[str] = None
    when: Optional[Predicate] = None
    drop: bool = False

    def describe(self) -> str:
        text = f"{self.field} {self.predicate.describe()}"
        if self.when:
            text += f" when {self.when_field} is {self.when.describe()}"
        return text


@dataclass
class Breach:
    limit: Limit
    value: Any

    def message(self) -> str:
        l = self.limit
        when = f" (when {l.when_field} is {l.when.describe()})" if l.when else ""
        return f"limit {l.id}: {l.field} is {_text(self.value)}, not {l.predicate.describe()}{when}: {l.reason}"


@dataclass
class EnvelopeFile:
    overlay: bool
    convention: str
    calls: str
    sources: str
    origin: str
    common: List[Limit]
    platforms: Dict[str, List[Limit]]
    notes: Dict[str, str]


@dataclass
class Envelope:
    convention: str
    platform: str          # cuda, rocm or none (the convention's own limits only)
    platform_listed: bool  # False: the library does not run on this platform at all
    calls: str
    limits: List[Limit]
    origins: List[str] = field(default_factory=list)

    def applies(self, l: Limit, t: Dict[str, Any]) -> bool:
        return l.when is None or l.when.holds(t[l.when_field])

    def breaches(self, t: Dict[str, Any]) -> List[Breach]:
        return [Breach(l, t[l.field]) for l in self.limits if self.applies(l, t) and not l.predicate.holds(t[l.field])]

    def refusal(self, t: Dict[str, Any]) -> Optional[Tuple[str, str]]:
        """(limit id, message) for a case outside, None inside."""
        if not self.platform_listed:
            return ("platform", f"platform {self.platform}: {self.convention}'s library does not run there (its "
                                f"envelope lists no {self.platform} section)")
        b = self.breaches(t)
        if not b:
            return None
        also = f" (also outside: {', '.join(x.limit.id for x in b[1:])})" if len(b) > 1 else ""
        return (b[0].limit.id, b[0].message() + also)

    def describe(self) -> str:
        lines = [f"{self.convention} on {self.platform}"
                 f"{'' if self.platform_listed else ' (not a platform the library runs on)'}: {self.calls}"]
        for l in self.limits:
            lines.append(f"  {l.id} [{l.section}]  {l.describe()}")
            lines.append(f"      {l.reason}")
        lines.extend(f"  from {o}" for o in self.origins)
        return "\n".join(lines)


# ============================================================================ strict parsing

def _fail(origin: str, where: str, problem: str):
    raise EnvelopeError(f"{origin}: {where}: {problem}")


_no_duplicates = duplicate_key_hook(EnvelopeError)  # 'key "k" appears twice in one object'


def _only_keys(j: Any, keys: Sequence[str], origin: str, where: str) -> None:
    if not isinstance(j, dict):
        _fail(origin, where, "expected an object")
    for k in j:
        if k not in keys:
            _fail(origin, where, f"unknown key \"{k}\" (known: {', '.join(keys)})")


def _str(j: dict, key: str, origin: str, where: str, required: bool) -> str:
    if key not in j:
        if required:
            _fail(origin, f"{where}.{key}", "missing")
        return ""
    v = j[key]
    if not isinstance(v, str):
        _fail(origin, f"{where}.{key}", "expected a string")
    if required and not v.strip():
        _fail(origin, f"{where}.{key}", "is empty")
    return v


def _typed(v: Any, name: str, origin: str, where: str) -> Any:
    typ, choices = FIELDS[name]
    if typ is int and (isinstance(v, bool) or not isinstance(v, int)):
        _fail(origin, where, f"field {name} takes integers")
    if typ is bool and not isinstance(v, bool):
        _fail(origin, where, f"field {name} takes true or false")
    if typ is str:
        if not isinstance(v, str):
            _fail(origin, where, f"field {name} takes strings")
        if choices and v not in choices:
            _fail(origin, where, f"\"{v}\" is not a value of {name} ({', '.join(choices)})")
    return v


def _predicate(j: dict, name: str, origin: str, where: str) -> Predicate:
    present = [k for k in PREDICATES if k in j]
    if len(present) != 1:
        _fail(origin, where, f"no predicate (one of {', '.join(PREDICATES)})" if not present else
              f"more than one predicate ({present[0]}, {present[1]}): one per limit")
    k = present[0]
    v = j[k]
    at = f"{where}.{k}"
    typ = FIELDS[name][0]
    if k in ("in", "not_in"):
        if not isinstance(v, list) or not v:
            _fail(origin, at, "expected a non-empty array")
        return Predicate(k, [_typed(x, name, origin, at) for x in v])
    if k == "equals":
        return Predicate(k, _typed(v, name, origin, at))
    if typ is not int:
        _fail(origin, at, f"field {name} is not an integer")
    if k == "power_of_two":
        if v is not True:
            _fail(origin, at, "expected true")
        return Predicate(k, True)
    if isinstance(v, bool) or not isinstance(v, int):
        _fail(origin, at, "expected an integer")
    if k == "multiple_of" and v < 1:
        _fail(origin, at, "must be at least 1")
    return Predicate(k, v)


def _limit(j: Any, origin: str, where: str, section: str, overlay: bool) -> Limit:
    if not isinstance(j, dict):
        _fail(origin, where, "expected an object")
    lid = _str(j, "id", origin, where, True)
    if any(c not in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in lid):
        _fail(origin, f"{where}.id", f"\"{lid}\" must use a-z, 0-9 and '-' only")
    here = f"{where} ({lid})"
    reason = _str(j, "reason", origin, here, True)
    if overlay and "drop" in j:
        _only_keys(j, ("id", "drop", "reason"), origin, here)
        if j["drop"] is not True:
            _fail(origin, f"{where}.drop", "expected true")
        return Limit(lid, "", Predicate("equals", None), reason, section, origin, drop=True)
    _only_keys(j, ("id", "field") + PREDICATES + ("when", "reason"), origin, here)
    name = _str(j, "field", origin, here, True)
    if name not in FIELDS:
        _fail(origin, f"{here}.field", f"unknown field \"{name}\" (known: {', '.join(FIELDS)})")
    lim = Limit(lid, name, _predicate(j, name, origin, here), reason, section, origin)
    if "when" in j:
        w = j["when"]
        at = f"{here}.when"
        _only_keys(w, ("field",) + PREDICATES, origin, at)
        wname = _str(w, "field", origin, at, True)
        if wname not in FIELDS:
            _fail(origin, f"{at}.field", f"unknown field \"{wname}\"")
        lim.when_field, lim.when = wname, _predicate(w, wname, origin, at)
    return lim


def _section(j: Any, origin: str, where: str, section: str, overlay: bool) -> List[Limit]:
    if not isinstance(j, list):
        _fail(origin, where, "expected an array of limits")
    out: List[Limit] = []
    for i, x in enumerate(j):
        lim = _limit(x, origin, f"{where}[{i}]", section, overlay)
        if any(o.id == lim.id for o in out):
            _fail(origin, where, f"limit id \"{lim.id}\" appears twice")
        out.append(lim)
    return out


def parse_envelope(text: str, origin: str) -> EnvelopeFile:
    try:
        j = json.loads(text, object_pairs_hook=_no_duplicates)
    except EnvelopeError as e:
        _fail(origin, "JSON", str(e))
    except ValueError as e:
        _fail(origin, "JSON", str(e))
    if not isinstance(j, dict):
        _fail(origin, "top level", "expected an object")
    schema = j.get("schema") if isinstance(j.get("schema"), str) else ""
    if schema not in (SCHEMA, OVERLAY_SCHEMA):
        _fail(origin, "schema", f"expected \"{SCHEMA}\" or \"{OVERLAY_SCHEMA}\", got "
                                f"{'none' if not schema else repr(schema)}")
    overlay = schema == OVERLAY_SCHEMA
    _only_keys(j, ("schema", "convention", "calls", "sources", "limits", "platforms"), origin, "top level")
    convention = _str(j, "convention", origin, "top level", True)
    calls = _str(j, "calls", origin, "top level", True)
    sources = _str(j, "sources", origin, "top level", True)
    if not overlay and "limits" not in j:
        _fail(origin, "limits", "missing (an empty array when the convention has none)")
    if not overlay and "platforms" not in j:
        _fail(origin, "platforms", "missing")
    common = _section(j["limits"], origin, "limits", "common", overlay) if "limits" in j else []
    platforms: Dict[str, List[Limit]] = {}
    notes: Dict[str, str] = {}
    if "platforms" in j:
        p = j["platforms"]
        if not isinstance(p, dict) or (not overlay and not p):
            _fail(origin, "platforms", "expected an object of platforms")
        for name, sec in p.items():
            if name not in PLATFORMS:
                _fail(origin, "platforms", f"unknown platform \"{name}\" (known: {', '.join(PLATFORMS)})")
            where = f"platforms.{name}"
            _only_keys(sec, ("note", "limits"), origin, where)
            if "limits" in sec:
                limits = _section(sec["limits"], origin, f"{where}.limits", name, overlay)
            elif not overlay:
                _fail(origin, f"{where}.limits", "missing (an empty array when the platform adds none)")
            else:
                limits = []
            notes[name] = _str(sec, "note", origin, where, not overlay)
            for lim in limits:
                if any(c.id == lim.id for c in common):
                    _fail(origin, where, f"limit id \"{lim.id}\" is also a common limit")
            platforms[name] = limits
    return EnvelopeFile(overlay, convention, calls, sources, origin, common, platforms, notes)


def read_envelope_file(path) -> EnvelopeFile:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise EnvelopeError(f"{path}: cannot read the envelope file: {e}") from None
    return parse_envelope(text, str(path))


_BUILTIN: Dict[str, EnvelopeFile] = {}


def envelope_conventions() -> List[str]:
    """The conventions with a builtin envelope, sorted (the C++ envelope_conventions; help texts list these)."""
    return sorted(p.stem for p in envelope_dir().glob("*.json"))


def builtin_envelope_file(convention: str) -> EnvelopeFile:
    if convention not in _BUILTIN:
        path = envelope_dir() / f"{convention}.json"
        if not path.is_file():
            known = envelope_conventions()
            raise EnvelopeError(f"no envelope for convention \"{convention}\" (known: {', '.join(known)})")
        f = read_envelope_file(path)
        if f.overlay or f.convention != convention:
            raise EnvelopeError(f"{path}: expected the full envelope of {convention}")
        _BUILTIN[convention] = f
    return _BUILTIN[convention]


def _apply(limits: List[Limit], section: List[Limit], name: str, origin: str) -> None:
    for lim in section:
        at = next((i for i, x in enumerate(limits) if x.id == lim.id and x.section == name), None)
        if lim.drop:
            if at is None:
                raise EnvelopeError(f"{origin}: drops limit \"{lim.id}\" of section {name}, which has none")
            del limits[at]
        elif at is None:
            limits.append(lim)
        else:
            limits[at] = lim


def make_envelope(convention: str, platform: Optional[str], overlays: Sequence[EnvelopeFile] = ()) -> Envelope:
    """The builtin envelope with the overlays applied in order; platform None: the only one listed."""
    base = builtin_envelope_file(convention)
    for o in overlays:
        if not o.overlay:
            raise EnvelopeError(f"{o.origin}: is a full envelope ({SCHEMA}); --envelope takes an overlay ({OVERLAY_SCHEMA})")
        if o.convention != base.convention:
            raise EnvelopeError(f"{o.origin}: is an overlay for {o.convention}, not {base.convention}")
    listed = sorted(set(base.platforms) | {p for o in overlays for p in o.platforms})
    if platform is None:
        if len(listed) != 1:
            raise EnvelopeError(f"{convention} runs on {', '.join(listed)}: choose one (--platform cuda|rocm|none)")
        platform = listed[0]
    if platform not in PLATFORMS + ("none",):
        raise EnvelopeError(f"unknown platform \"{platform}\" (cuda, rocm or none)")
    limits: List[Limit] = []
    origins = [base.origin]
    for f in (base,) + tuple(overlays):
        if f is not base:
            origins.append(f.origin)
        _apply(limits, f.common, "common", f.origin)
        if platform in f.platforms:
            _apply(limits, f.platforms[platform], platform, f.origin)
    return Envelope(convention, platform, platform == "none" or platform in listed, base.calls, limits, origins)
