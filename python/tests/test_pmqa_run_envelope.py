"""pmqa.cases.envelope: the C++ envelopes as Python sees them: the builtin files (compiled in), the
C++ reader's refusals raised as EnvelopeError, overlays, and the traits of a pmqa.cases.CaseFile."""

from __future__ import annotations

import json
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import run_standins as si  # noqa: E402
from pmqa.cases import envelope as env  # noqa: E402

FULL = {"schema": "pmqa-envelope/1", "convention": "x", "calls": "c", "sources": "s",
        "platforms": {"cuda": {"note": "n", "limits": []}}}


def error_of(doc) -> str:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    try:
        env.parse_envelope(text, "t.json")
    except env.EnvelopeError as e:
        return str(e)
    return ""


def with_limit(*limits):
    return dict(FULL, limits=list(limits))


class Files(unittest.TestCase):
    def test_the_builtin_files_and_every_limit_has_a_reason(self):
        names = env.envelope_conventions()
        self.assertEqual(names, ["aiter-fused", "aiter-stage1", "deepgemm", "eager", "vllm-rocm"])
        for name in names:
            f = env.builtin_envelope_file(name)
            for lim in f.common + [x for s in f.platforms.values() for x in s]:
                self.assertTrue(lim.reason.strip(), f"{name} {lim.id}")
        self.assertEqual(sorted(env.builtin_envelope_file("deepgemm").platforms), ["cuda"])
        overlay = env.read_envelope_file(Path(__file__).resolve().parents[2] / "cases" / "data" / "envelopes" /
                                         "overlays" / "vllm-eager.json")
        self.assertTrue(overlay.overlay)

    def test_strict_like_the_cpp_reader(self):
        ok = {"id": "a", "field": "heads", "in": [64], "reason": "r"}
        self.assertEqual(error_of(with_limit(ok)), "")
        cases = [
            ({"id": "a", "field": "heads", "in": [64]}, "reason: missing"),
            ({"id": "a", "field": "heads", "in": [64], "reason": " "}, "is empty"),
            (dict(ok, why=1), 'unknown key "why"'),
            (dict(ok, field="nheads"), "unknown field"),
            (dict(ok, **{"in": ["64"]}), "takes integers"),
            (dict(ok, **{"in": [True]}), "takes integers"),
            ({"id": "a", "field": "kv_layout", "in": ["tiled"], "reason": "r"}, "not a value"),
            ({"id": "a", "field": "heads", "min": 1, "max": 2, "reason": "r"}, "more than one predicate"),
            ({"id": "a", "field": "heads", "reason": "r"}, "no predicate"),
            ({"id": "a", "field": "kv_layout", "min": 1, "reason": "r"}, "not an integer"),
            ({"id": "a", "field": "heads", "multiple_of": 0, "reason": "r"}, "at least 1"),
            ({"id": "A b", "field": "heads", "min": 1, "reason": "r"}, "a-z"),
            ({"id": "a", "field": "heads", "min": 1, "when": {"field": "next_n"}, "reason": "r"}, "no predicate"),
        ]
        for limit, needle in cases:
            with self.subTest(needle=needle):
                self.assertIn(needle, error_of(with_limit(limit)))
        self.assertIn("appears twice", error_of(with_limit(ok, dict(ok, field="batch"))))
        self.assertIn("appears twice", error_of('{"schema": "pmqa-envelope/1", "schema": "pmqa-envelope/1"}'))
        self.assertIn("schema", error_of({"schema": "pmqa-envelope/2"}))
        self.assertIn('unknown key "extra"', error_of(dict(with_limit(), extra=1)))
        self.assertIn("unknown platform", error_of(dict(with_limit(), platforms={"tpu": {"note": "n", "limits": []}})))
        self.assertIn("note: missing", error_of(dict(with_limit(), platforms={"cuda": {"limits": []}})))
        self.assertIn("calls: missing", error_of({k: v for k, v in with_limit().items() if k != "calls"}))

    def test_overlays_replace_add_and_drop(self):
        o = env.parse_envelope(json.dumps({
            "schema": "pmqa-envelope-overlay/1", "convention": "deepgemm", "calls": "c", "sources": "s",
            "platforms": {"cuda": {"limits": [
                {"id": "heads", "field": "heads", "in": [32, 64, 128], "reason": "128 heads now"},
                {"id": "next-n", "drop": True, "reason": "any next_n now"},
                {"id": "max-len", "field": "max_model_len", "max": 100000, "reason": "new"}]}}}), "o.json")
        base = env.make_envelope("deepgemm", "cuda")
        e = env.make_envelope("deepgemm", "cuda", [o])
        self.assertEqual(len(e.limits), len(base.limits))
        self.assertEqual(e.origins[-1], "o.json")
        cf = si.make_case(heads=128, head_dim=128, block_size=64, next_n=5, max_blocks=2, num_blocks=4,
                          max_model_len=100)
        t = env.traits_of(cf)
        self.assertIsNotNone(base.refusal(t))
        self.assertIsNone(e.refusal(t))
        bad = env.parse_envelope(json.dumps({"schema": "pmqa-envelope-overlay/1", "convention": "deepgemm",
                                             "calls": "c", "sources": "s",
                                             "limits": [{"id": "nothing", "drop": True, "reason": "r"}]}), "d.json")
        with self.assertRaisesRegex(env.EnvelopeError, "which has none"):
            env.make_envelope("deepgemm", "cuda", [bad])
        with self.assertRaisesRegex(env.EnvelopeError, "not deepgemm"):
            env.make_envelope("deepgemm", "cuda", [env.parse_envelope(json.dumps(
                {"schema": "pmqa-envelope-overlay/1", "convention": "eager", "calls": "c", "sources": "s"}), "e")])
        with self.assertRaisesRegex(env.EnvelopeError, "choose one"):
            env.make_envelope("aiter-fused", None)
        self.assertFalse(env.make_envelope("deepgemm", "rocm").platform_listed)

class Traits(unittest.TestCase):
    def test_fields_of_a_case(self):
        cf = si.make_case(seed=3, next_n=3, lens2d=True, pad=6, heads=12)
        t = env.traits_of(cf, chunk_q=8, arch="gfx942")
        self.assertEqual(set(t), set(env.FIELDS))
        self.assertEqual(t["block_stride"], cf.block_size * (cf.head_dim + 4) + 6)
        self.assertEqual(t["stride_pad"], 6)
        self.assertEqual((t["chunk_q"], t["heads_mod_chunk_q"], t["arch"]), (8, 4, "gfx942"))
        e = cf.valid_keys().reshape(cf.batch, cf.next_n)
        self.assertEqual(t["last_row_longest"], bool((e <= e[:, -1:]).all()))
        rising = si.make_case(seed=3, next_n=3)  # 1-D lengths: E_r rises with n
        self.assertTrue(env.traits_of(rising)["last_row_longest"])

    def test_blocks_past_max_model_len(self):
        cf = si.make_case(seed=1, block_size=16, max_model_len=40, max_blocks=3)
        cf.context_lens = np.array([33, 0], dtype=np.int32)  # 33 keys: 3 blocks end at 48 > 40
        self.assertTrue(env.traits_of(cf)["blocks_past_max_model_len"])
        cf.context_lens = np.array([32, 0], dtype=np.int32)
        self.assertFalse(env.traits_of(cf)["blocks_past_max_model_len"])

    def test_a_refusal_names_its_limit(self):
        cf = si.make_case(seed=2, block_size=16)
        limit, message = env.make_envelope("deepgemm", "cuda").refusal(env.traits_of(cf))
        self.assertEqual(limit, "block-size")
        self.assertIn("limit block-size: block_size is 16, not one of 64", message)
        self.assertEqual(env.make_envelope("deepgemm", "rocm").refusal(env.traits_of(cf))[0], "platform")


if __name__ == "__main__":
    unittest.main()
