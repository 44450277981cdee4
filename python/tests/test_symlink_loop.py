"""A symbolic link loop among case files (ln -s a b; ln -s b a; a link to itself) is named as a
loop wherever a case file is taken: pmqa verify (a folder, a file named), pmqa-run (--cases FOLDER,
--cases FILE) and pmqa.read_case. A dangling link is still a link to nothing. No tool hangs on one.

    PMQA_BIN=build/cli/pmqa PMQA_CORE_DIR=build/python/bindings PYTHONPATH=python/src:python/tests \\
        python3 -m unittest -v test_symlink_loop       # from python/tests
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import pmqa

PMQA = os.environ.get("PMQA_BIN", "")
LOOPS = ("a", "b", "self")


@unittest.skipUnless(PMQA, "needs the built pmqa (PMQA_BIN)")
class SymbolicLinkLoops(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="pmqa-loop-"))
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        self.cases = self.root / "cases"
        gen = subprocess.run([PMQA, "gen", "--suite", "quick", "--case", "edge-lengths-1d", "--with-reference",
                              "--out", str(self.cases)], capture_output=True, text=True, timeout=120)
        self.assertEqual(gen.returncode, 0, gen.stdout + gen.stderr)
        os.symlink("b.safetensors", self.cases / "a.safetensors")        # ln -s b a
        os.symlink("a.safetensors", self.cases / "b.safetensors")        # ln -s a b
        os.symlink("self.safetensors", self.cases / "self.safetensors")  # ln -s self self
        os.symlink("nowhere", self.cases / "dangling.safetensors")

    def run_cmd(self, argv):
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout + p.stderr

    def assert_loops_named(self, text, suffix=""):
        for name in LOOPS:
            self.assertIn(f"{self.cases / name}.safetensors: file: is a symbolic link loop{suffix}", text)
        self.assertIn(f"{self.cases / 'dangling'}.safetensors: file: is a symbolic link to nothing (it dangles)", text)
        self.assertEqual(text.count("dangles"), 1, text)

    def test_pmqa_verify(self):
        rc, text = self.run_cmd([PMQA, "verify", str(self.cases)])
        self.assertEqual(rc, 2, text)
        self.assert_loops_named(text)
        self.assertIn("5 file(s): 1 passed, 0 failed, 4 invalid", text)
        rc, text = self.run_cmd([PMQA, "verify", str(self.cases / "a.safetensors")])
        self.assertEqual(rc, 2, text)
        self.assertIn(f"{self.cases / 'a'}.safetensors: file: is a symbolic link loop", text)
        self.assertNotIn("dangles", text)

    def test_pmqa_run(self):
        run = [sys.executable, "-m", "pmqa.run", "--op", "run_standins:eager_ok", "--convention", "eager",
               "--backend", "numpy"]
        rc, text = self.run_cmd([*run, "--cases", str(self.cases), "--out", str(self.root / "out")])
        self.assertEqual(rc, 2, text)
        self.assert_loops_named(text, ", not a regular file")
        self.assertIn("1 written, 0 failed, 0 unsupported (refused), 4 invalid", text)
        rc, text = self.run_cmd([*run, "--cases", str(self.cases / "a.safetensors"), "--out", str(self.root / "out2")])
        self.assertEqual(rc, 2, text)
        self.assertIn(f"--cases {self.cases / 'a.safetensors'}: is a symbolic link loop", text)
        rc, text = self.run_cmd([*run, "--cases", str(self.cases / "dangling.safetensors"),
                                 "--out", str(self.root / "out3")])
        self.assertEqual(rc, 2, text)
        self.assertIn(f"--cases {self.cases / 'dangling.safetensors'}: is a symbolic link to nothing", text)

    def test_read_case(self):
        for name in LOOPS:
            with self.assertRaises(pmqa.CaseFileError) as caught:
                pmqa.read_case(str(self.cases / f"{name}.safetensors"))
            self.assertIn("is a symbolic link loop", str(caught.exception))
        with self.assertRaises(pmqa.CaseFileError) as caught:
            pmqa.read_case(str(self.cases / "dangling.safetensors"))
        self.assertIn("is a symbolic link to nothing", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
