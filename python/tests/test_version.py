"""One version, from one place: CMakeLists.txt's project(pmqa VERSION X). `pmqa --version`,
`pmqa-run --version` and `pmqa-probe --version` each print it on one line (exit 0); pmqa.__version__,
pmqa.probe.__version__ and the extension's pmqa._core.__version__ are it; the wheel's metadata
(python/setup.py, pyproject.toml's version dynamic) is it.

    PMQA_BIN=build/cli/pmqa PMQA_CORE_DIR=build/python/bindings PYTHONPATH=python/src \\
        python3 -m unittest -v test_version       # from python/tests
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import pmqa
import pmqa.probe
from pmqa._native import core

ROOT = Path(__file__).resolve().parents[2]
PMQA = os.environ.get("PMQA_BIN", "")


def project_version() -> str:
    """The version in CMakeLists.txt's project() call: the one source."""
    m = re.search(r"^project\(pmqa VERSION ([0-9][0-9.]*)[ )]", (ROOT / "CMakeLists.txt").read_text(), re.M)
    assert m, "CMakeLists.txt has no project(pmqa VERSION X)"
    return m.group(1)


class OneVersion(unittest.TestCase):
    def setUp(self):
        self.version = project_version()

    def version_line(self, argv, prog):
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        self.assertEqual((p.returncode, p.stderr), (0, ""), f"{argv}: {p.stdout}{p.stderr}")
        self.assertEqual(p.stdout, f"{prog} {self.version}\n", argv)

    @unittest.skipUnless(PMQA, "needs the built pmqa (PMQA_BIN)")
    def test_pmqa(self):
        self.version_line([PMQA, "--version"], "pmqa")

    def test_pmqa_run(self):
        self.version_line([sys.executable, "-m", "pmqa.run", "--version"], "pmqa-run")

    def test_pmqa_probe(self):
        self.version_line([sys.executable, "-m", "pmqa.probe", "--version"], "pmqa-probe")

    def test_the_package_and_the_extension(self):
        self.assertEqual(getattr(core, "__version__", None), self.version)
        self.assertEqual(pmqa.__version__, self.version)
        self.assertEqual(pmqa.probe.__version__, self.version)

    def test_the_wheel_metadata(self):
        pyproject = (ROOT / "python" / "pyproject.toml").read_text()
        self.assertNotRegex(pyproject, r"(?m)^version\s*=", "pyproject.toml states no version of its own")
        self.assertRegex(pyproject, r'(?m)^dynamic = \["version"\]')
        with tempfile.TemporaryDirectory() as cache:
            p = subprocess.run([sys.executable, "setup.py", "--version"], cwd=ROOT / "python", capture_output=True,
                               text=True, timeout=120, env=dict(os.environ, PMQA_BUILD_BASE=cache))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.strip().splitlines()[-1], self.version, p.stdout)


if __name__ == "__main__":
    unittest.main()
