"""pmqa.cases through the C++ core: numpy arrays in and out of the one reader and writer, and every
error the C++ reader's own (the same text `pmqa verify` prints for the same file)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import pmqa.cases as pc
from case_file_sample import sample_case_file
from pmqa.cases.case_file import CaseFileError

# The exact header of the interop sample (the C++ test HeaderLayout holds the same string).
SAMPLE_HEADER = (
    '{"__metadata__":{"batch":"2","bench_ms":"1.25","block_size":"16","contract":"valid-only",'
    '"format_version":"1","fp8_format":"e4m3fnuz","head_dim":"16","heads":"3","kv_layout":"shuffle",'
    '"max_model_len":"40","name":"interop-sample","next_n":"2","note":"h\u00e9llo \u2713",'
    '"producer":"interop-sample","seed":"12345678901234567890","suite":"interop"},'
    '"block_table":{"data_offsets":[56,80],"dtype":"I32","shape":[2,3]},'
    '"context_lens":{"data_offsets":[48,56],"dtype":"I32","shape":[2]},'
    '"kv_cache":{"data_offsets":[912,2572],"dtype":"U8","shape":[5,332]},'
    '"logits":{"data_offsets":[80,720],"dtype":"F32","shape":[4,40]},'
    '"q":{"data_offsets":[720,912],"dtype":"U8","shape":[2,2,3,16]},'
    '"weights":{"data_offsets":[0,48],"dtype":"F32","shape":[4,3]}}'
)


def random_case(seed: int, batch=2, next_n=2, heads=2, head_dim=16, block_size=16, num_blocks=4, max_blocks=3,
                max_model_len=48, ctx2d=False, fp8="e4m3fn", layout="normal", logits=True, pad=0) -> pc.CaseFile:
    rng = np.random.default_rng(seed)
    rows = batch * next_n
    stride = block_size * (head_dim + 4) + pad
    q = rng.integers(0, 0x7F, size=(batch, next_n, heads, head_dim), dtype=np.uint8)
    kv = rng.integers(0, 0x7F, size=(num_blocks, stride), dtype=np.uint8)
    scales = np.ldexp(np.float32(1) + rng.integers(0, 8, size=(num_blocks, block_size)).astype(np.float32) / 8,
                      rng.integers(-12, 4, size=(num_blocks, block_size))).astype("<f4")
    kv[:, block_size * head_dim:block_size * (head_dim + 4)] = scales.view(np.uint8).reshape(num_blocks, 4 * block_size)
    weights = rng.standard_normal((rows, heads)).astype(np.float32)
    limit = 0 if num_blocks == 0 else min(max_model_len, max_blocks * block_size)
    lens = rng.integers(0, limit + 1, size=(batch, next_n) if ctx2d else (batch,), dtype=np.int32)
    table = np.full((batch, max_blocks), -1, dtype=np.int32)
    if num_blocks:
        table[:] = rng.integers(0, num_blocks, size=(batch, max_blocks), dtype=np.int32)
    cf = pc.CaseFile(q=q, kv_cache=kv, weights=weights, context_lens=lens, block_table=table, block_size=block_size,
                     max_model_len=max_model_len, value_format=fp8, kv_layout=layout, name=f"py-{seed}",
                     suite="python-unit", seed=seed, producer="test_case_file.py", extra={"bench_ms": "0.5"})
    if logits:
        cf.logits = rng.standard_normal((rows, max_model_len)).astype(np.float32)
    return cf


def same(a: pc.CaseFile, b: pc.CaseFile) -> bool:
    arrays = ("q", "kv_cache", "weights", "context_lens", "block_table")
    for name in arrays:
        x, y = getattr(a, name), getattr(b, name)
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            return False
    if (a.logits is None) != (b.logits is None):
        return False
    if a.logits is not None and a.logits.tobytes() != b.logits.tobytes():
        return False
    scalars = ("block_size", "max_model_len", "fp8_format", "kv_layout", "contract", "name", "suite", "seed",
               "producer", "extra")
    return all(getattr(a, s) == getattr(b, s) for s in scalars)


def split(data: bytes):
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + n]), data[8 + n:]


def join(header, body: bytes) -> bytes:
    text = (header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))).encode("utf-8")
    return len(text).to_bytes(8, "little") + text + body


def edit(data: bytes, fn) -> bytes:
    header, body = split(data)
    fn(header)
    return join(header, body)


class RoundTrip(unittest.TestCase):
    def test_sample_header_is_the_documented_one(self):
        data = pc.serialize_case_file(sample_case_file())
        n = int.from_bytes(data[:8], "little")
        self.assertEqual((8 + n) % 8, 0)
        self.assertEqual(data[8:8 + n].decode("utf-8").rstrip(" "), SAMPLE_HEADER)
        self.assertEqual(len(data), 8 + n + 2572)

    def test_round_trips_are_byte_identical(self):
        variants = [dict(), dict(batch=0), dict(batch=0, num_blocks=0, max_blocks=0, max_model_len=0, logits=False),
                    dict(ctx2d=True, next_n=3), dict(fp8="e4m3fnuz", layout="shuffle", pad=20, heads=3, head_dim=32),
                    dict(num_blocks=0), dict(max_model_len=0), dict(block_size=1, max_blocks=40, max_model_len=40)]
        for i, v in enumerate(variants):
            for seed in (1, 2):
                with self.subTest(variant=i, seed=seed):
                    cf = random_case(seed, **v)
                    pc.validate(cf)
                    data = pc.serialize_case_file(cf)
                    back = pc.parse_case_file(data, "mem")
                    self.assertTrue(same(cf, back))
                    self.assertEqual(pc.serialize_case_file(back), data)

    def test_files_on_disk(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sample.safetensors")
            pc.write_case_file(path, sample_case_file())
            self.assertFalse(os.path.exists(path + ".partial"))
            with open(path, "rb") as f:
                self.assertEqual(f.read(), pc.serialize_case_file(sample_case_file()))
            back = pc.read_case_file(path)
            self.assertTrue(same(back, sample_case_file()))
            self.assertTrue(back.q.flags.writeable)
            self.assertTrue(np.isnan(back.logits.reshape(-1)[45]))
            self.assertEqual(back.logits.reshape(-1).view(np.uint32)[45], 0x7FC00000)
            self.assertEqual(back.extra, {"bench_ms": "1.25", "note": "h\u00e9llo \u2713"})
            self.assertEqual(back.seed, 12345678901234567890)

    def test_planted_differences_are_detected(self):
        ref = sample_case_file()
        data = pc.serialize_case_file(ref)

        def plant_q(c): c.q[0, 0, 0, 5] ^= 1
        def plant_kv(c): c.kv_cache[-1, -1] ^= 0x10
        def plant_weights(c): c.weights[1, 0] = np.nextafter(c.weights[1, 0], np.float32(10))
        def plant_logits(c): c.logits.reshape(-1).view(np.uint32)[45] = 0x7FC00001
        def plant_extra(c): c.extra["bench_ms"] = "1.26"
        def plant_seed(c): c.seed += 1

        for plant in (plant_q, plant_kv, plant_weights, plant_logits, plant_extra, plant_seed):
            with self.subTest(plant=plant.__name__):
                c = pc.parse_case_file(data)
                plant(c)
                self.assertFalse(same(ref, c))
                self.assertNotEqual(pc.serialize_case_file(c), data)

    def test_f8_dtypes_accepted_for_q(self):
        data = pc.serialize_case_file(sample_case_file())
        fnuz = edit(data, lambda h: h["q"].__setitem__("dtype", "F8_E4M3FNUZ"))
        self.assertEqual(pc.serialize_case_file(pc.parse_case_file(fnuz)), data)
        with self.assertRaisesRegex(CaseFileError, r"tensor q\.dtype: dtype F8_E4M3 disagrees with the metadata"):
            pc.parse_case_file(edit(data, lambda h: h["q"].__setitem__("dtype", "F8_E4M3")))

    def test_valid_keys(self):
        cf = sample_case_file()
        self.assertEqual(cf.valid_keys().tolist(), [32, 33, 6, 7])
        self.assertEqual(cf.scales()[2, 3], np.float32(1 + 0.75 + 2))


class Errors(unittest.TestCase):
    def setUp(self):
        self.data = pc.serialize_case_file(sample_case_file())

    def error(self, data) -> str:
        with self.assertRaises(CaseFileError) as ctx:
            pc.parse_case_file(data, "bad.safetensors")
        return str(ctx.exception)

    def test_truncated(self):
        self.assertIn("bad.safetensors: header length: the file is 5 bytes", self.error(self.data[:5]))
        self.assertIn("bad.safetensors: header length:", self.error(self.data[:100]))
        self.assertIn("tensor kv_cache.data_offsets: [912, 2572] run past the end of the data section (2571 bytes)",
                      self.error(self.data[:-1]))

    def test_header_length_larger_than_file(self):
        bad = bytearray(self.data)
        bad[5] = 1
        self.assertIn("header length: 1099511628", self.error(bytes(bad)))

    def test_overlap_and_gap(self):
        m = self.error(edit(self.data, lambda h: h["context_lens"].__setitem__("data_offsets", [40, 48])))
        self.assertIn("tensor context_lens.data_offsets: [40, 48] overlap tensor weights's [0, 48]", m)
        self.assertIn("data section: bytes [2572, 2575) belong to no tensor", self.error(self.data + b"\0\0\0"))

    def test_wrong_and_unknown_dtype(self):
        m = self.error(edit(self.data, lambda h: h["weights"].__setitem__("dtype", "I32")))
        self.assertIn('tensor weights.dtype: dtype "I32" of tensor weights is not supported here; expected F32', m)
        m = self.error(edit(self.data, lambda h: h["q"].__setitem__("dtype", "BF16")))
        self.assertIn('dtype "BF16" of tensor q is not supported here; expected U8, F8_E4M3 or F8_E4M3FNUZ', m)

    def test_shape_disagrees_with_metadata(self):
        m = self.error(edit(self.data, lambda h: h["__metadata__"].__setitem__("next_n", "1")))
        self.assertIn("tensor q.shape: [2, 2, 3, 16] ([B, N, H, D]) disagrees with the metadata: next_n is 1", m)
        m = self.error(edit(self.data, lambda h: h["weights"].__setitem__("shape", [3, 4])))
        self.assertIn("tensor weights.shape: [3, 4] disagrees with q's shape and the metadata", m)

    def test_block_table_out_of_range(self):
        cf = sample_case_file()
        cf.block_table[0, 1] = 5
        m = self.error(pc.serialize_case_file(cf))  # the writer does not validate
        self.assertIn("bad.safetensors: case: block_table[0][1] = 5 is outside [0, 5)", m)

    def test_missing_tensor_and_metadata(self):
        self.assertIn("tensor kv_cache: missing", self.error(edit(self.data, lambda h: h.pop("kv_cache"))))
        self.assertIn("__metadata__.block_size: missing",
                      self.error(edit(self.data, lambda h: h["__metadata__"].pop("block_size"))))

    def test_non_string_and_bad_metadata(self):
        m = self.error(edit(self.data, lambda h: h["__metadata__"].__setitem__("block_size", 16)))
        self.assertIn("__metadata__.block_size: value is a number, expected a string", m)
        for value, expected in (("-16", "is negative"), ("16.0", "is not a non-negative decimal integer"),
                                ("016", "has a leading zero"), ("9" * 5000, "is too large")):
            with self.subTest(value=value[:10]):
                m = self.error(edit(self.data, lambda h: h["__metadata__"].__setitem__("block_size", value)))
                self.assertIn("__metadata__.block_size: ", m)
                self.assertIn(expected, m)

    def test_json_problems(self):
        _, body = split(self.data)
        self.assertIn('JSON has duplicate key "q"', self.error(join('{"q":1,"q":2}', body)))
        self.assertIn("does not start with '{'", self.error(join("[1]", body)))
        self.assertIn("nesting deeper than 8", self.error(join('{"x":' + "[" * 20 + "]" * 20 + "}", body)))
        self.assertIn("nesting deeper than 8", self.error(join('{"x":' + "[" * 100000 + "]" * 100000 + "}", body)))
        self.assertIn("is not valid JSON", self.error(join('{"x":NaN}', body)))
        self.assertIn("surrogate U+D800", self.error(join('{"__metadata__":{"a":"\\ud800"}}', body)))
        bad = len(b'{"a":"\xc3\x28"}').to_bytes(8, "little") + b'{"a":"\xc3\x28"}' + body
        self.assertIn("byte 6 of the JSON header (0xc3) is not valid UTF-8", self.error(bad))
        self.assertIn("tensor bias: unknown tensor", self.error(edit(self.data, lambda h: h.__setitem__("bias", 1))))

    def test_overflowing_shapes(self):
        m = self.error(edit(self.data, lambda h: h["q"].__setitem__("shape", [2**62, 4, 0, 0])))
        self.assertIn("tensor q.shape: [4611686018427387904, 4, 0, 0] of U8 is too large", m)
        m = self.error(edit(self.data, lambda h: h["q"]["shape"].__setitem__(0, 2**64 - 1)))
        self.assertIn("tensor q.shape[0]: 18446744073709551615 is too large", m)

    def test_writer_rejects_inconsistent_input(self):
        cf = sample_case_file()
        cf.weights = cf.weights.astype(np.float64)
        with self.assertRaisesRegex(CaseFileError, "weights: has dtype float64, expected float32"):
            pc.serialize_case_file(cf)
        cf = sample_case_file()
        cf.extra["seed"] = "1"
        with self.assertRaisesRegex(CaseFileError, "extra key seed: is reserved"):
            pc.serialize_case_file(cf)
        cf = sample_case_file()
        cf.logits = cf.logits[:, :39]
        with self.assertRaisesRegex(CaseFileError, r"logits: shape \[4, 39\] disagrees"):
            pc.serialize_case_file(cf)


class SameAsVerify(unittest.TestCase):
    """A file pmqa.cases refuses is one `pmqa verify` refuses, with the same words (one reader)."""

    def test_refusals_match_pmqa_verify(self):
        pmqa_bin = os.environ.get("PMQA_BIN")
        if not pmqa_bin:
            self.skipTest("PMQA_BIN (a built pmqa command) is not set")
        data = pc.serialize_case_file(sample_case_file())
        meta = lambda key, value: edit(data, lambda h: h["__metadata__"].__setitem__(key, value))  # noqa: E731
        bad = {
            "unknown-nan": meta("nan", "clamp"),
            "unknown-tolerance": meta("tolerance", "fp16"),
            "contract": meta("contract", "exact"),
            "truncated": data[:-1],
            "dtype": edit(data, lambda h: h["weights"].__setitem__("dtype", "I32")),
            "json": data[:8] + b"[" + data[9:],
        }
        with tempfile.TemporaryDirectory() as d:
            for name, content in bad.items():
                with self.subTest(name=name):
                    path = os.path.join(d, name + ".safetensors")
                    with open(path, "wb") as f:
                        f.write(content)
                    with self.assertRaises(CaseFileError) as ctx:
                        pc.read_case_file(path)
                    out = subprocess.run([pmqa_bin, "verify", path], capture_output=True, text=True)
                    self.assertEqual(out.returncode, 2, out.stdout + out.stderr)
                    self.assertIn(f"ERROR {ctx.exception}\n", out.stdout)
        self.assertEqual(ctx.exception.field, "header")

    def test_unknown_judging_names_are_refused_on_write_too(self):
        for key, value in (("nan", "clamp"), ("tolerance", "fp16")):
            cf = sample_case_file()
            cf.extra[key] = value
            with self.assertRaisesRegex(CaseFileError, rf"__metadata__\.{key}: \"{value}\" is not one of"):
                pc.serialize_case_file(cf)


class NoSecondCopy(unittest.TestCase):
    """A file is read once, into the buffers the arrays view: reading the nightly decode case (71 MB)
    adds its size to the peak RSS and no more than 10 % beside (a second copy would double it)."""

    def test_reading_the_decode_case_costs_one_file(self):
        pmqa_bin = os.environ.get("PMQA_BIN")
        if not pmqa_bin or not os.path.exists("/proc/self/status"):
            self.skipTest("needs PMQA_BIN (to write the case) and Linux's /proc")
        with tempfile.TemporaryDirectory() as d:
            out = subprocess.run([pmqa_bin, "gen", "--suite", "nightly", "--case", "deepseek-8k-n2", "--out", d],
                                 capture_output=True, text=True, timeout=600)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            path = os.path.join(d, "deepseek-8k-n2.safetensors")
            run = subprocess.run([sys.executable, "-B", os.path.join(os.path.dirname(__file__), "rss_of_read.py"), path],
                                 capture_output=True, text=True, timeout=600)
            self.assertEqual(run.returncode, 0, run.stderr)
            added, size = int(run.stdout), os.path.getsize(path)
            print(f"reading {size} bytes added {added} bytes to the peak RSS ({added / size:.3f} x the file)")
            self.assertLessEqual(added, 1.10 * size)
            self.assertGreaterEqual(added, 0.9 * size)  # the measure sees the read at all


class WithoutTheExtension(unittest.TestCase):
    """No extension for this interpreter: pmqa does not import, and says why in one line."""

    def test_import_fails_with_one_line(self):
        with tempfile.TemporaryDirectory() as empty:
            env = dict(os.environ, PMQA_CORE_DIR=empty)
            for code in ("import pmqa", "import pmqa.cases", "import pmqa.run.cli", "import pmqa.pytest_plugin"):
                with self.subTest(code=code):
                    out = subprocess.run([sys.executable, "-B", "-c", code], env=env, capture_output=True, text=True)
                    self.assertNotEqual(out.returncode, 0)
                    last = out.stderr.strip().splitlines()[-1]
                    self.assertTrue(last.startswith("ImportError: pmqa: its C++ extension pmqa._core does not load"),
                                    out.stderr)
                    self.assertIn(f"PMQA_CORE_DIR={empty}", last)
                    self.assertIn("build_python_ext.sh", last)
                    self.assertNotIn("During handling", out.stderr)  # one error, not a chain


class Corpus(unittest.TestCase):
    """A small corrupted-file corpus: only CaseFileError, never another exception."""

    def check(self, data: bytes, what: str):
        try:
            cf = pc.parse_case_file(data, "corpus")
        except CaseFileError:
            return
        except Exception as e:  # noqa: BLE001 - any other exception is the failure we look for
            self.fail(f"{what}: {type(e).__name__}: {e}")
        again = pc.serialize_case_file(cf)
        self.assertEqual(pc.serialize_case_file(pc.parse_case_file(again)), again, what)

    def test_corpus(self):
        bases = [pc.serialize_case_file(sample_case_file()),
                 pc.serialize_case_file(random_case(5, batch=0)),
                 pc.serialize_case_file(random_case(6, ctx2d=True, next_n=3, logits=False))]
        rng = random.Random(20240601)
        for k, data in enumerate(bases):
            n = int.from_bytes(data[:8], "little")
            for cut in range(0, len(data), 7):
                self.check(data[:cut], f"file {k} cut {cut}")
            for i in range(8 + n):
                for v in (0x00, 0x22, 0x30, 0x2D, 0x7B, 0x5D, 0xFF):
                    if data[i] != v:
                        self.check(data[:i] + bytes([v]) + data[i + 1:], f"file {k} byte {i}={v}")
            for r in range(500):
                b = bytearray(data)
                for _ in range(rng.randint(1, 4)):
                    b[rng.randrange(len(b))] = rng.randrange(256)
                self.check(bytes(b), f"file {k} random {r}")
            header, body = split(data)
            for name in [t for t in header if t != "__metadata__"]:
                for value in (-1, 2**63, 2**64, 1.5, "3", None, [1], 10**30):
                    for key in ("shape", "data_offsets"):
                        for idx in range(len(header[name][key])):
                            def fn(h, name=name, key=key, idx=idx, value=value):
                                h[name][key][idx] = value
                            self.check(edit(data, fn), f"file {k} {name}.{key}[{idx}]={value}")


if __name__ == "__main__":
    unittest.main()
