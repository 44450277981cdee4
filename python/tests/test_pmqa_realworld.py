"""The extension judges real kernels' outputs as `pmqa verify` does: every file of ../shared/realworld.

CTest unpacks the corpus (outputs.tar.xz) first and sets PMQA_REALWORLD_OUTPUTS to the unpacked
outputs/ folder, PMQA_REALWORLD_EXPECTED to expected.json, and PMQA_BIN. For every file the verdict
and the whole JSON report of pmqa.verify(case, case.logits) must equal `pmqa verify --json`'s.
"""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import pmqa

OUTPUTS = os.environ.get("PMQA_REALWORLD_OUTPUTS")
EXPECTED = os.environ.get("PMQA_REALWORLD_EXPECTED")
PMQA_BIN = os.environ.get("PMQA_BIN")

pytestmark = pytest.mark.skipif(not (OUTPUTS and PMQA_BIN and Path(OUTPUTS).is_dir()),
                                reason="the unpacked real-world corpus (PMQA_REALWORLD_OUTPUTS) and PMQA_BIN are needed")


def test_verdicts_equal_pmqa_verify_on_every_file(tmp_path):
    files = sorted(Path(OUTPUTS).rglob("*.safetensors"))
    if EXPECTED:
        listed = json.loads(Path(EXPECTED).read_text())["files"]
        assert len(files) == len(listed), f"{len(files)} files unpacked, expected.json lists {len(listed)}"
    t0 = time.monotonic()
    cli = subprocess.run([PMQA_BIN, "verify", "--json", str(tmp_path / "verify.json"), *map(str, files)],
                         capture_output=True, text=True, timeout=1500)
    assert cli.returncode in (0, 1), cli.stdout[-4000:] + cli.stderr[-4000:]
    t_cli = time.monotonic() - t0
    by_file = {r["report"]["file"]: r for r in json.loads((tmp_path / "verify.json").read_text())["results"]}
    assert len(by_file) == len(files)

    t0 = time.monotonic()
    agree, differ, failed = 0, [], 0
    for f in files:
        case = pmqa.read_case(str(f))
        report = pmqa.verify(case, case.logits).to_json()
        theirs = dict(by_file[str(f)]["report"])
        theirs.pop("file")
        theirs.pop("bench_ms", None)
        failed += not report["passed"]
        if report == theirs and report["passed"] == by_file[str(f)]["passed"]:
            agree += 1
        else:
            keys = sorted(k for k in set(report) | set(theirs) if report.get(k) != theirs.get(k))
            differ.append(f"{f}: {', '.join(keys)}")
        case.release()
    t_ext = time.monotonic() - t0
    print(f"\nextension vs pmqa verify: {agree} of {len(files)} files agree (verdict and the whole JSON report); "
          f"{failed} fail, {len(files) - failed} pass; pmqa verify {t_cli:.0f} s, the extension {t_ext:.0f} s")
    assert not differ, "\n".join(differ[:20])
