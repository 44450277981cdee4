"""One JUnit shape for pmqa-run and pmqa verify (issue 33 item 5): the same cases, run by pmqa-run
and judged by pmqa verify, read with Debian's junitparser, give the same (classname, name) pairs
and the same outcome kind; each file has one <testsuite> named for its producer ("pmqa-run eager",
"pmqa verify"); classname is the case file's suite, name the case's name."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

try:
    from junitparser import JUnitXml
except ImportError:  # unittest discovery elsewhere imports this module too; CTest registers it only with junitparser
    JUnitXml = None

HERE = Path(__file__).resolve().parent
PMQA = os.environ.get("PMQA_BIN", "")
CASES = ("edge-lengths-1d", "one-head", "shuffle-bs16-e4m3fn", "fnuz-max-224")  # the shuffle one is unsupported


def read(path: Path):
    """{(classname, name): outcome} and the testsuite names, through junitparser."""
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml) if not hasattr(xml, "classname") else [xml]
    out = {}
    for suite in suites:
        for case in suite:
            kinds = [type(r).__name__.lower() for r in case.result]
            out[(case.classname, case.name)] = kinds[0] if kinds else "passed"
    return [s.name for s in suites], out


@unittest.skipUnless(PMQA and JUnitXml, "needs the built pmqa command (PMQA_BIN) and junitparser")
class OneShape(unittest.TestCase):
    def test_pmqa_run_and_pmqa_verify_agree(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            cases, out = tmp / "cases", tmp / "out"
            for name in CASES:
                subprocess.run([PMQA, "gen", "--suite", "quick", "--case", name, "--out", str(cases)], check=True,
                               capture_output=True)
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent / "src"), str(HERE)]))
            run = subprocess.run([sys.executable, "-m", "pmqa.run", "--backend", "numpy", "--convention", "eager",
                                  "--op", "run_standins:eager_ok", "--cases", str(cases), "--out", str(out),
                                  "--logits-only", "--skip-unsupported", "--junit", str(tmp / "run.xml")],
                                 capture_output=True, text=True, env=env)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            verify = subprocess.run([PMQA, "verify", str(out), "--cases", str(cases), "--junit", str(tmp / "verify.xml")],
                                    capture_output=True, text=True)
            self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
            run_suites, run_cases = read(tmp / "run.xml")
            verify_suites, verify_cases = read(tmp / "verify.xml")
        self.assertEqual(run_suites, ["pmqa-run eager"])
        self.assertEqual(verify_suites, ["pmqa verify"])
        self.assertEqual(set(run_cases), {("quick", name) for name in CASES})
        self.assertEqual(run_cases, verify_cases)
        self.assertEqual(run_cases[("quick", "shuffle-bs16-e4m3fn")], "skipped")
        print(f"[junit] pmqa-run and pmqa verify: the same {len(run_cases)} (classname, name) pairs and outcomes")


if __name__ == "__main__":
    unittest.main()
