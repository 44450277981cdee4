#!/usr/bin/env python3
"""Fuzz the one logits-only reader (pmqa::cases::read_logits_file) from both of its ends: from Python
(pmqa.cases.read_logits_file, through pmqa._core) and from C++ (`pmqa_case_file_tool read-logits`).

Mutated files are made from valid ones (several shapes, extra metadata) by byte-level mutations
(flips, insertions, deletions, truncation, a wrong length field) and JSON-level ones (values
replaced by other JSON types, hostile strings: control characters, lone surrogate escapes, non-ASCII
digits, "..", deep nesting, duplicate keys, NaN constants, floats and booleans for integers,
leading zeros, huge numbers, missing and extra keys, data sections of the wrong size). Each file is
read both ways; the run fails on an escape (Python raising anything but CaseFileError, as a binding
that cannot carry a message would; C++ anything but CaseFileError, or dying) or on any difference
between the two verdicts, message included. Files that fail are kept in --keep DIR. Deterministic
for a seed.

    python3 python/tests/fuzz_logits_readers.py --seconds 600 --seed 1 \\
        --tool build/cases/tests/pmqa_case_file_tool          # the 10-minute run
CTest runs a 15-second one (python.pmqa.logits_fuzz.short).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np  # noqa: E402

import pmqa.cases as pc  # noqa: E402

BATCH = 400  # files per round (one C++ process reads a round)

HOSTILE_STRINGS = [
    "", ".", "..", "/", "a/b", "a\\b", "\x00", "a\x00b", "\x1b[31m", "\x7f", "\u0085", "\u009b", "\ud800", "\udc80",
    "\ud83d\ude00", "\ufeff", "\ufffe", "\uffff", "0", "00", "01", "-1", "-0", "+1", "1e3", "1.0", " 1", "1 ",
    "\u0661\u0662", "\u00b3", "\uff11", "2147483647", "2147483648", "4294967296", "9" * 30, "clean", "valid-only",
    "logits-only", "1", "F32", "0" * 64, "f" * 64, "F" * 64, "g" * 64, "in.safetensors",
]
KEYS = ["format_version", "content", "name", "producer", "contract", "input_file", "input_sha256", "batch",
        "next_n", "max_model_len", "extra", "__metadata__", "logits", "dtype", "shape", "data_offsets", "q", ""]


def valid_files(rng: random.Random):
    """A few valid logits-only files: (header dict, data bytes)."""
    out = []
    for batch, next_n, cols, extra in ((1, 2, 3, {}), (0, 1, 5, {"bench_ms": "0.5"}), (2, 3, 0, {"k": "v"}),
                                       (3, 1, 7, {"tolerance": "fp32", "nan": "propagate", "x\u00e9": "\u00e9"})):
        a = np.arange(batch * next_n * cols, dtype=np.float32).reshape(batch * next_n, cols)
        lf = pc.LogitsFile(logits=a, name=f"case-{batch}{next_n}{cols}", input_file="in.safetensors",
                           input_sha256="%064x" % rng.getrandbits(256), batch=batch, next_n=next_n, max_model_len=cols,
                           contract=rng.choice(["clean", "valid-only"]), producer="fuzz", extra=extra)
        raw = pc.serialize_logits_file(lf)
        n = int.from_bytes(raw[:8], "little")
        out.append((json.loads(raw[8:8 + n]), raw[8 + n:]))
    return out


def assemble(header_text: bytes, data: bytes, pad: bool = True) -> bytes:
    if pad:
        header_text += b" " * ((8 - len(header_text) % 8) % 8)
    return len(header_text).to_bytes(8, "little") + header_text + data


def random_json(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice([0, 1, -1, 2, 3, 24, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63)])
    if kind == 1:
        return rng.choice([0.0, 1.0, 2.0, -0.0, 1e300, 0.5])
    if kind == 2:
        return rng.choice([True, False, None])
    if kind in (3, 4, 5):
        return rng.choice(HOSTILE_STRINGS)
    if kind == 6:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS): random_json(rng, depth + 1) for _ in range(rng.randrange(4))}


def mutate_json(rng: random.Random, header: dict, data: bytes) -> bytes:
    h = json.loads(json.dumps(header))
    meta, t = h["__metadata__"], h["logits"]
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(12)
        if not isinstance(meta, dict):
            break
        if op == 0:
            meta[rng.choice(KEYS)] = random_json(rng)
        elif op == 1 and meta:
            del meta[rng.choice(sorted(meta))]
        elif op == 2 and isinstance(t, dict):
            t[rng.choice(["dtype", "shape", "data_offsets", "extra"])] = random_json(rng)
        elif op == 3:
            i = rng.randrange(2)
            key = rng.choice(["shape", "data_offsets"])
            if isinstance(t, dict) and isinstance(t.get(key), list) and len(t[key]) > i and \
                    type(t[key][i]) is int:
                v = t[key][i]
                t[key][i] = rng.choice([v + 1, v - 1, float(v), True, str(v), None, -v])
        elif op == 4:
            h[rng.choice(KEYS)] = random_json(rng)
        elif op == 5:
            key = rng.choice(["batch", "next_n", "max_model_len"])
            meta[key] = rng.choice(["0", "00", "01", "-1", "1.0", " 1", "\u0661", "\u00b2", str(rng.randrange(5)),
                                    "2147483648", "99999999999999999999999"])
        elif op == 6:
            meta[rng.choice(["name", "input_file", "producer", "contract", "content", "format_version"])] = \
                rng.choice(HOSTILE_STRINGS)
        elif op == 7:
            meta["input_sha256"] = rng.choice(HOSTILE_STRINGS)
        elif op == 8:
            nest = rng.randrange(1, 12)
            h[rng.choice(KEYS)] = json.loads("[" * nest + "1" + "]" * nest)
        elif op == 9:
            data = data[:max(0, len(data) - rng.randrange(1, 9))] if data else b"\0" * rng.randrange(1, 9)
        elif op == 10:
            data = data + b"\0" * rng.randrange(1, 9)
        else:
            meta[f"k{rng.randrange(3)}"] = rng.choice(HOSTILE_STRINGS)
    text = json.dumps(h, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    r = rng.random()
    if r < 0.1:  # a key twice, textually
        key = rng.choice([b'"logits"', b'"__metadata__"', b'"batch"', b'"name"', b'"shape"'])
        i = text.find(key)
        if i >= 0:
            j = text.find(b",", i)
            if j > 0:
                text = text[:j] + b"," + text[i:j] + text[j:]
    elif r < 0.15:
        text = text[:-1] + b',"c":' + rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"01", b"-"]) + b"}"
    elif r < 0.2:
        text = text[:-1] + b',"d":' + b"[" * rng.randrange(8, 3000) + b"]" * rng.randrange(0, 3000) + b"}"
    elif r < 0.25:
        text = rng.choice([b" ", b"\n", b"\xef\xbb\xbf", b"[", b""]) + text
    return assemble(text, data, pad=rng.random() < 0.9)


def mutate_bytes(rng: random.Random, raw: bytes) -> bytes:
    b = bytearray(raw)
    for _ in range(rng.randrange(1, 6)):
        op = rng.randrange(6)
        if op == 0 and b:
            i = rng.randrange(min(len(b), 8 + int.from_bytes(b[:8], "little") + 8))
            b[i] = rng.randrange(256)
        elif op == 1:
            i = rng.randrange(len(b) + 1)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4)))
        elif op == 2 and len(b) > 8:
            i = rng.randrange(8, len(b))
            del b[i:i + rng.randrange(1, 4)]
        elif op == 3:
            del b[rng.randrange(len(b) + 1):]
        elif op == 4 and len(b) >= 8:
            n = int.from_bytes(b[:8], "little") + rng.choice([-8, -1, 1, 8, 2**32, 2**63])
            b[:8] = (n % 2**64).to_bytes(8, "little")
        elif op == 5 and len(b) > 8:
            i = rng.randrange(8, len(b))
            b[i] = rng.choice(b"\x00\x1b\"\\{}[],:0123456789-.eE \xc2\x80\xed\xa0\x80\xff")
    return bytes(b)


def python_verdict(path: str) -> str:
    try:
        pc.read_logits_file(path)
        return "valid"
    except pc.CaseFileError as e:
        return "invalid " + str(e).replace("\n", " ")
    except BaseException as e:  # noqa: BLE001 - what the fuzz is for
        return f"escape {type(e).__name__}: {e}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=15.0, help="how long to fuzz (default 15)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tool", default=os.environ.get("PMQA_CASE_FILE_TOOL", ""),
                    help="the built pmqa_case_file_tool (default: $PMQA_CASE_FILE_TOOL)")
    ap.add_argument("--keep", default=None, metavar="DIR", help="copy every escaping or disputed file here")
    args = ap.parse_args(argv)
    if not args.tool or not os.access(args.tool, os.X_OK):
        print("fuzz_logits_readers: --tool (or PMQA_CASE_FILE_TOOL) must name the built pmqa_case_file_tool",
              file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    seeds = valid_files(rng)
    counts: Counter = Counter()
    kinds: Counter = Counter()
    problems = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pmqa_logits_fuzz_") as tmp:
        rounds = 0
        while time.monotonic() - t0 < args.seconds:
            paths = []
            for i in range(BATCH):
                header, data = rng.choice(seeds)
                raw = mutate_json(rng, header, data) if rng.random() < 0.6 else \
                    mutate_bytes(rng, assemble(json.dumps(header).encode(), data))
                path = os.path.join(tmp, f"{rounds}-{i}.safetensors")
                with open(path, "wb") as f:
                    f.write(raw)
                paths.append(path)
            py = [python_verdict(p) for p in paths]
            proc = subprocess.run([args.tool, "read-logits"], input="\n".join(paths) + "\n", capture_output=True,
                                  text=True, errors="backslashreplace", timeout=600)
            cpp = proc.stdout.splitlines()
            if proc.returncode != 0 or len(cpp) != len(paths):
                cpp += [f"escape the C++ reader died (status {proc.returncode})"] * (len(paths) - len(cpp))
            for path, p, c in zip(paths, py, cpp):
                pk, ck = p.split(" ", 1)[0], c.split(" ", 1)[0]
                counts["files"] += 1
                counts[f"python {pk}"] += 1
                counts[f"c++ {ck}"] += 1
                if pk == "invalid":
                    kinds[p.split(": ", 2)[1] if p.count(": ") >= 2 else p] += 1
                bad = "escape" in (pk, ck) or p != c
                if bad:
                    problems.append((path, p, c))
                    if args.keep:
                        os.makedirs(args.keep, exist_ok=True)
                        shutil.copy(path, args.keep)
            for p in paths:
                os.unlink(p)
            rounds += 1
    seconds = time.monotonic() - t0
    escapes = counts["python escape"] + counts["c++ escape"]
    disagree = sum(1 for _, p, c in problems if p != c)
    print(f"fuzz_logits_readers: seed {args.seed}, {seconds:.0f} s, {counts['files']} files: "
          f"{counts['python valid']} valid and {counts['python invalid']} invalid for Python, "
          f"{counts['c++ valid']} valid and {counts['c++ invalid']} invalid for C++; "
          f"{escapes} escapes, {disagree} disagreements")
    print("fields refused most (Python's words): " +
          ", ".join(f"{k} {n}" for k, n in kinds.most_common(8)))
    for path, p, c in problems[:20]:
        print(f"  {os.path.basename(path)}\n    python: {p[:300]}\n    c++:    {c[:300]}")
    print(f"rerun: python3 python/tests/fuzz_logits_readers.py --seconds {args.seconds:g} --seed {args.seed} "
          f"--tool {args.tool}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
