"""Issue 43 item 1, "the run's verdict travels with its files" (label faults): a pmqa-run whose gates
failed writes every result file and exits 1; whatever reads those files afterwards must reach the
same verdict. Before, `pmqa verify` on the folder of a run with every speed gate failed printed PASS
for each file and exited 0.

On the CPU (numpy backend, run_standins' eager op over the quick suite):
- every speed gate failed (--max-floor-ratio 0.001 --floor-min-mb 0): pmqa verify exits 1, each file
  FAIL naming the speed gate in its line, the JUnit and the JSON, the summary counting 28 failed by a
  gate and 0 by the judge; pmqa.read_case + pmqa.verify fail naming the gate, and so does the pytest
  plugin (--pmqa-results DIR);
- every path gate failed (--expect-path two-stage on an eager op, --logits-only): the same, the inputs
  joined with --cases / cases= / --pmqa-cases;
- the gates passed (R = 1e12): PASS everywhere, so the failures above are the gates' and nothing else.
Each check asserts the exit status or verdict a gate-blind reader would get wrong.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import pmqa  # noqa: E402

try:
    import pytest  # noqa: F401  (the plugin's checks run under it)
    HAVE_PYTEST = True
except ImportError:  # the plugin's checks are then reported as not run; the others still run
    HAVE_PYTEST = False

PMQA = os.environ.get("PMQA_BIN", "")
PYTHONPATH = os.pathsep.join([str(HERE.parent / "src"), str(HERE)])
QUICK_IN_EAGER = 28  # the quick suite's 32 cases, 4 outside the eager envelope (SHUFFLE)

PLUGIN_TEST = '''
import pmqa


def test_result(pmqa_result):
    pmqa.assert_matches(pmqa_result, pmqa_result.logits)
'''


def report(line: str) -> None:
    print(f"[gates travel] {line}", flush=True)


@unittest.skipUnless(PMQA, "needs the built pmqa command (PMQA_BIN)")
class GatesTravel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="pmqa_gates_travel_")
        cls.root = Path(cls.tmp.name)
        cls.cases = cls.root / "cases"
        subprocess.run([PMQA, "gen", "--suite", "quick", "--out", str(cls.cases)], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def pmqa_run(self, out: Path, *extra: str):
        p = subprocess.run([sys.executable, "-m", "pmqa.run", "--backend", "numpy", "--convention", "eager",
                            "--op", "run_standins:eager_ok", "--cases", str(self.cases), "--out", str(out),
                            "--skip-unsupported", *extra], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, PYTHONPATH=PYTHONPATH, PYTHONDONTWRITEBYTECODE="1"))
        return p.returncode, p.stdout + p.stderr

    def verify(self, *args):
        p = subprocess.run([PMQA, "verify", *map(str, args)], capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout + p.stderr

    def plugin(self, *args):
        """pytest over PLUGIN_TEST with the plugin: (exit status, output, {test id: failure message or None});
        None without pytest."""
        if not HAVE_PYTEST:
            report("pytest is not installed: the plugin's checks did not run")
            return None
        work = Path(tempfile.mkdtemp(dir=self.root))
        (work / "test_results.py").write_text(PLUGIN_TEST)
        p = subprocess.run([sys.executable, "-m", "pytest", "-p", "pmqa.pytest_plugin", "-p", "no:cacheprovider", "-q",
                            f"--junitxml={work / 'junit.xml'}", "test_results.py", *map(str, args)],
                           capture_output=True, text=True, timeout=600, cwd=work,
                           env=dict(os.environ, PYTHONPATH=PYTHONPATH, PYTHONDONTWRITEBYTECODE="1"))
        verdicts = {}
        for tc in ET.parse(work / "junit.xml").getroot().iter("testcase"):
            failure = tc.find("failure")
            verdicts[tc.get("name")] = None if failure is None else failure.get("message") or ""
        return p.returncode, p.stdout + p.stderr, verdicts

    def files(self, out: Path):
        found = sorted(out.glob("*.safetensors"))
        self.assertEqual(len(found), QUICK_IN_EAGER)
        return found

    # ---- the speed gate
    def test_every_speed_gate_failed(self):
        out = self.root / "slow"
        rc, text = self.pmqa_run(out, "--bench", "--iters", "1", "--warmup", "0", "--max-floor-ratio", "0.001",
                                 "--floor-min-mb", "0")
        self.assertEqual(rc, 1, text)
        self.assertIn(f"0 written, {QUICK_IN_EAGER} failed", text)

        rc, text = self.verify(out, "--junit", self.root / "slow.xml", "--json", self.root / "slow.json")
        report(f"pmqa verify after every speed gate failed: exit {rc}; "
               + next(ln for ln in text.splitlines() if ln.startswith("pmqa verify:")))
        self.assertEqual(rc, 1, text)  # a verify blind to the gates exits 0 here
        fails = [ln for ln in text.splitlines() if ln.startswith("FAIL ")]
        self.assertEqual(len(fails), QUICK_IN_EAGER, text)
        self.assertTrue(all("[speed gate failed]" in ln for ln in fails), text)
        self.assertEqual(text.count("speed gate (--max-floor-ratio): fail: kernel time"), QUICK_IN_EAGER, text)
        self.assertIn(f"0 passed, {QUICK_IN_EAGER} failed, 0 invalid, 4 skipped; of {QUICK_IN_EAGER} written: "
                      f"0 failed by the judge, {QUICK_IN_EAGER} failed by a gate", text)
        junit = [tc.find("failure") for tc in ET.parse(self.root / "slow.xml").getroot().iter("testcase")]
        failures = [f.get("message") for f in junit if f is not None]
        self.assertEqual(len(failures), QUICK_IN_EAGER)
        self.assertTrue(all(m.startswith("speed gate failed: kernel time") for m in failures), failures[:2])
        results = json.loads((self.root / "slow.json").read_text())["results"]
        self.assertEqual(sum(not r["passed"] and r["report"].get("failed_gates") == ["speed"] for r in results),
                         QUICK_IN_EAGER)

        for path in self.files(out):  # the Python API: a result file read, its own logits judged
            case = pmqa.read_case(path)
            r = pmqa.verify(case, case.logits)
            self.assertFalse(r.passed, path)  # a verify blind to the gates passes these numbers
            self.assertTrue(r._r.passed, path)  # (they are right: the gate is what fails)
            self.assertEqual(r.run_gates.failed, ["speed"])
            self.assertEqual([(g.gate, g.outcome) for g in r.run_gates.gates], [("speed", "fail")])
            self.assertIn("speed gate failed: kernel time", str(r))
            self.assertIn("FAIL (speed gate)", repr(r))
            self.assertEqual(r.to_json()["failed_gates"], ["speed"])
            with self.assertRaisesRegex(AssertionError, "speed gate failed: kernel time .* above --max-floor-ratio"):
                pmqa.assert_matches(case, case.logits)
        report(f"pmqa.verify: {QUICK_IN_EAGER} of {QUICK_IN_EAGER} result files FAIL naming the speed gate")

        if not (got := self.plugin("--pmqa-results", out)):
            return
        rc, text, verdicts = got
        report(f"pytest --pmqa-results: exit {rc}; {sum(v is not None for v in verdicts.values())} failed")
        self.assertEqual(rc, 1, text)
        self.assertEqual(len(verdicts), QUICK_IN_EAGER, text)
        self.assertTrue(all(v is not None and v.startswith("AssertionError: FAIL: speed gate failed")
                            for v in verdicts.values()), verdicts)

    # ---- the path gate, on logits-only files
    def test_every_path_gate_failed(self):
        out = self.root / "path"
        rc, text = self.pmqa_run(out, "--expect-path", "two-stage", "--logits-only")
        self.assertEqual(rc, 1, text)
        self.assertIn("expected the two-stage path, the op took the eager path", text)

        rc, text = self.verify(out, "--cases", self.cases)
        report(f"pmqa verify after every path gate failed: exit {rc}; "
               + next(ln for ln in text.splitlines() if ln.startswith("pmqa verify:")))
        self.assertEqual(rc, 1, text)
        self.assertEqual(len(re.findall(r"^FAIL .*\[path gate failed\]", text, re.M)), QUICK_IN_EAGER, text)
        self.assertIn(f"0 failed by the judge, {QUICK_IN_EAGER} failed by a gate", text)
        self.assertIn("path gate (--expect-path): fail: expected the two-stage path, the op took the eager path", text)

        for path in self.files(out):
            r = pmqa.verify(case := pmqa.read_case(path, cases=self.cases), case.logits)
            self.assertFalse(r.passed, path)
            self.assertEqual(r.run_gates.failed, ["path"])

        if not (got := self.plugin("--pmqa-results", out, "--pmqa-cases", self.cases)):
            return
        rc, text, verdicts = got
        self.assertEqual(rc, 1, text)
        self.assertEqual(len(verdicts), QUICK_IN_EAGER, text)
        self.assertTrue(all(v and "path gate failed: expected the two-stage path" in v for v in verdicts.values()),
                        verdicts)

    # ---- the control: gates that passed
    def test_gates_that_passed_pass_everywhere(self):
        out = self.root / "fast"
        # --floor-min-mb 1e-6 (one byte): empty-batch's floor of 0 bytes is not gated, every other case is.
        rc, text = self.pmqa_run(out, "--bench", "--iters", "1", "--warmup", "0", "--max-floor-ratio", "1e12",
                                 "--floor-min-mb", "1e-6", "--expect-path", "eager")
        self.assertEqual(rc, 0, text)
        rc, text = self.verify(out)
        self.assertEqual(rc, 0, text)
        self.assertIn(f"of {QUICK_IN_EAGER} written: 0 failed by the judge, 0 failed by a gate", text)
        for path in self.files(out):
            r = pmqa.verify(case := pmqa.read_case(path), case.logits)
            self.assertTrue(r.passed, str(r))
            speed = "not gated" if case.name == "empty-batch" else "pass"
            self.assertEqual([(g.gate, g.outcome) for g in r.run_gates.gates], [("speed", speed), ("path", "pass")])
        if not (got := self.plugin("--pmqa-results", out)):
            return
        rc, text, verdicts = got
        self.assertEqual(rc, 0, text)
        self.assertEqual(list(verdicts.values()), [None] * QUICK_IN_EAGER)



@unittest.skipUnless(PMQA, "needs the built pmqa command (PMQA_BIN)")
class ForgedRecord(unittest.TestCase):
    """The run record's path rule serves pmqa-run --resume as it serves pmqa verify (one C++ reader): a
    record naming a result outside its folder is refused by both, before any file is touched."""

    def test_resume_and_verify_refuse_a_result_outside_the_folder(self):
        import run_standins as si
        with tempfile.TemporaryDirectory(prefix="pmqa_forged_record_") as tmp:
            root = Path(tmp)
            (root / "cases").mkdir()
            pmqa.cases.write_case_file(root / "cases" / "a.safetensors", si.make_case(seed=1, name="a"))
            env = dict(os.environ, PYTHONPATH=PYTHONPATH, PYTHONDONTWRITEBYTECODE="1")
            out = root / "out"
            run = [sys.executable, "-m", "pmqa.run", "--backend", "numpy", "--convention", "eager", "--op",
                   "run_standins:eager_ok", "--cases", str(root / "cases"), "--out", str(out)]
            self.assertEqual(subprocess.run(run, capture_output=True, env=env, timeout=300).returncode, 0)
            record = json.loads((out / "pmqa-run.json").read_text())
            record["complete"] = False  # an interrupted run, --resume's to finish
            record["cases"][0].update(status="pending", written=False, sha256="", result="../victim.safetensors")
            (out / "pmqa-run.json").write_text(json.dumps(record, indent=1))
            (root / "victim.safetensors").write_bytes(b"not pmqa-run's to remove")
            p = subprocess.run([sys.executable, "-m", "pmqa.run", "--resume", "--out", str(out)], capture_output=True,
                               text=True, env=env, timeout=300)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn('result "../victim.safetensors" is not a file name in the folder', p.stderr)
            self.assertTrue((root / "victim.safetensors").exists())  # a resume that trusted it would remove it
            rc = subprocess.run([PMQA, "verify", str(out)], capture_output=True, text=True, timeout=300)
            self.assertEqual(rc.returncode, 2, rc.stdout)
            self.assertIn('result "../victim.safetensors" is not a file name in the folder', rc.stdout)
            report("a record naming ../victim.safetensors: pmqa-run --resume exit 2, pmqa verify exit 2, the file kept")


if __name__ == "__main__":
    unittest.main()
