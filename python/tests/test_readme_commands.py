"""The README's "Validating a kernel drop" pipeline, run as written: its first sh block, in a fresh
folder holding build/cli/pmqa (the built binary, PMQA_BIN) and python/ (this tree), with a python3
first on PATH that has numpy (the interpreter running this test)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PMQA = os.environ.get("PMQA_BIN", "")


def readme_block(heading: str) -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


class ValidatingAKernelDrop(unittest.TestCase):
    def test_the_commands_run_as_written(self):
        if not PMQA:
            self.skipTest("PMQA_BIN is not set")
        block = readme_block("Validating a kernel drop")
        self.assertIn("--fit deepgemm", block)
        self.assertIn("--logits-only", block)
        self.assertIn("--cases cases/", block)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "build" / "cli").mkdir(parents=True)
            (work / "build" / "cli" / "pmqa").symlink_to(PMQA)
            (work / "python").symlink_to(ROOT / "python")
            (work / "bin").mkdir()
            (work / "bin" / "python3").symlink_to(sys.executable)
            env = dict(os.environ, PATH=f"{work / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                       PYTHONDONTWRITEBYTECODE="1")
            env.pop("PYTHONPATH", None)
            p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=work, env=env,
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout[-4000:] + p.stderr[-2000:])
            self.assertIn("0 failed", p.stdout)
            self.assertRegex(p.stdout, r"pmqa verify: (\d+) file\(s\): \1 passed, 0 failed, 0 invalid")
            self.assertTrue((work / "pmqa_run.xml").is_file() and (work / "pmqa_verify.xml").is_file())


if __name__ == "__main__":
    unittest.main()
