"""The README's user-facing command blocks, run as written, as a new user runs them.

Each block marked ``<!-- verbatim: NAME -->`` in README.md runs in a copy of the clone (the files git
tracks or would track, no build folder), one block after the other as in one terminal: the
environment a block leaves (the activated virtual environment) is the next block's. HOME is a fresh
folder, so the virtual environment, pip's cache and pmqa's build cache start empty: the wheel's build
is the source build from an empty cache, and it and the wheel's install are timed (the README's
figures). What each block must do is below; a block the README gains without an entry here fails
the test, so no documented command goes untested.

    python3 -m unittest -v test_readme_user_commands      # from python/tests; minutes (a whole build)
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MARK = re.compile(r"<!-- verbatim: ([\w-]+) -->\n```sh\n(.*?)```", re.S)


def blocks():
    """[(name, text)] of the README's marked blocks, in order."""
    return MARK.findall(README.read_text())


def clone_copy(dest: Path) -> None:
    """The clone as a fresh `git clone` has it, uncommitted edits included: the tracked files and the
    untracked ones git does not ignore (no build folders, no caches)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():  # a file deleted but not yet committed is listed and absent
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel, follow_symlinks=False)


def quickstart_packages() -> set:
    text = (ROOT / "quickstart").read_text()
    found = set()
    for body in re.findall(r"packages(?:\+)?=\(\s*(.*?)\)", text, re.S):
        found.update(re.sub(r"#.*", "", body).split())
    return found


def packages_listed(text: str) -> list:
    """The packages the packages block installs: the words after `apt-get install` that are no option."""
    words = text.replace("\\\n", " ").split()
    return [w for w in words[words.index("install") + 1:] if not w.startswith("-")]


class ReadmeBlocks(unittest.TestCase):
    """What can be checked of the blocks in seconds (CTest readme.blocks): the blocks known, the
    package list, the packages block run as root without sudo and as a user with it (apt-get a stand-
    in), and the README's own paths (.venv/, failed/) ignored by git."""

    @classmethod
    def setUpClass(cls):
        cls.blocks = blocks()
        cls.names = [n for n, _ in cls.blocks]

    def test_every_marked_block_is_known(self):
        self.assertEqual(self.names, ["packages", "wheel", "wheel-install", "install", "first-test", "first-failure",
                                      "kernel-drop"])

    def test_the_package_list_is_what_quickstart_installs(self):
        listed = set(packages_listed(dict(self.blocks)["packages"]))
        self.assertIn("build-essential", listed)
        self.assertFalse(listed - quickstart_packages(), "README packages ./quickstart does not install")

    def test_the_packages_block_runs_with_and_without_sudo(self):
        """As written: as root where there is no sudo (a container), apt-get itself; where sudo is
        installed (a user's machine), through sudo. apt-get and sudo are stand-ins recording their
        arguments; PATH holds nothing else."""
        text = dict(self.blocks)["packages"]
        bash = shutil.which("bash")
        self.assertTrue(bash, "bash is needed to run the block")
        packages = packages_listed(text)
        for with_sudo in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                bin_, log = Path(tmp) / "bin", Path(tmp) / "calls"
                bin_.mkdir()
                stand_ins = {"apt-get": f'printf "%s\\n" apt-get "$@" >> {shlex.quote(str(log))}\n'}
                if with_sudo:
                    stand_ins["sudo"] = f'printf "%s\\n" sudo >> {shlex.quote(str(log))}\nexec "$@"\n'
                for name, body in stand_ins.items():
                    (bin_ / name).write_text("#!/bin/sh\n" + body)
                    (bin_ / name).chmod(0o755)
                p = subprocess.run([bash, "-e", "-o", "pipefail", "-c", text], env={"PATH": str(bin_)},
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, f"sudo {'installed' if with_sudo else 'absent'}: {p.stdout}{p.stderr}")
                calls = log.read_text().split("\n")[:-1]
                sudo = ["sudo"] if with_sudo else []
                self.assertEqual(calls, [*sudo, "apt-get", "update", *sudo, "apt-get", "install", "-y", *packages])

    def test_the_readmes_own_paths_are_ignored(self):
        """The clone's virtual environment (.venv/) and the first failure's artifacts (failed/), which
        the blocks create in the clone, are not files git offers to commit."""
        if shutil.which("git") is None or not (ROOT / ".git").exists():
            self.skipTest("not a git checkout")
        for path in (".venv/", ".venv/bin/python", "failed/", "failed/test_x_case_/case.safetensors"):
            p = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, timeout=60)
            self.assertEqual(p.returncode, 0, f"git does not ignore {path}")
        for path in ("python/.venv/x", "cases/failed/x"):
            p = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, timeout=60)
            self.assertEqual(p.returncode, 1, f"{path}: only the clone's own .venv/ and failed/ are ignored")


class ReadmeUserCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.blocks = blocks()
        cls.names = [n for n, _ in cls.blocks]

    def test_the_blocks_run_as_written(self):
        if shutil.which("git") is None or not (ROOT / ".git").exists():
            self.skipTest("not a git checkout: the clone cannot be copied as git would")
        work = Path(tempfile.mkdtemp(prefix="pmqa-readme-"))
        try:
            self._run_blocks(work)
        finally:
            if os.environ.get("PMQA_KEEP_README_RUN") != "1":
                shutil.rmtree(work, ignore_errors=True)

    def _run_blocks(self, work: Path):
        clone, home = work / "pmqa", work / "home"
        clone.mkdir()
        home.mkdir()
        clone_copy(clone)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PMQA_", "PYTHON", "VIRTUAL_ENV", "PIP_", "CMAKE_"))}
        env.update(HOME=str(home), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        env.pop("XDG_CACHE_HOME", None)
        runs = {}
        for name, text in self.blocks:
            if name == "packages":
                continue  # apt-get: ./quickstart installs the same list (the test above)
            start = time.monotonic()
            rc, out, env = run_in_terminal(text, clone, env, work / f"{name}.env")
            runs[name] = (rc, out, time.monotonic() - start)
            print(f"== block {name}: exit {rc} in {runs[name][2]:.0f} s", flush=True)
            getattr(self, "check_" + name.replace("-", "_"))(rc, out, clone, env)
        print(f"the wheel: built in {runs['wheel'][2]:.0f} s from an empty build cache, installed in "
              f"{runs['wheel-install'][2]:.0f} s (the venv made); the source install after it: {runs['install'][2]:.0f} s "
              "(reusing the build cache)")

    # ---- what each block must do

    def check_wheel(self, rc, out, clone, env):
        self.assertEqual(rc, 0, out[-6000:])
        wheels = sorted((clone / "dist").glob("pmqa-*.whl"))
        self.assertEqual(len(wheels), 1, f"one wheel in dist/: {wheels}")
        self.assertRegex(wheels[0].name, r"^pmqa-[^-]+-cp3\d+-cp3\d+-linux_x86_64\.whl$")
        self.assertRegex(out, r"\[\d+/\d+\] ", "the build shows CMake's progress")
        self.assertRegex(out, r"pmqa: the C\+\+ build took \d+ s \(\d+ job\(s\), an empty build cache\)")
        self.assertNotRegex(out, r"(?i)\bwarning\b", "the build prints no warning (compiler, CMake, setuptools)")
        self.assertEqual(self._leftovers(clone), [], "the build wrote into the clone's python/")

    def check_wheel_install(self, rc, out, clone, env):
        self.assertEqual(rc, 0, out[-6000:])
        venv = clone / ".venv"
        self.assertEqual(env.get("VIRTUAL_ENV"), str(venv), "the block leaves the environment activated")
        where = out.strip().splitlines()[-3:]
        self.assertEqual(where, [str(venv / "bin" / c) for c in ("pmqa", "pmqa-run", "pmqa-probe")], out[-2000:])
        self.assertNotRegex(out, r"\[\d+/\d+\] |pmqa: the C\+\+ build", "installing the wheel builds nothing")
        self._check_installed(clone, env)

    def check_install(self, rc, out, clone, env):
        self.assertEqual(rc, 0, out[-6000:])
        self.assertIn("pmqa: the C++ build took", out, "the source install runs the C++ build (reusing the cache)")
        self.assertEqual(self._leftovers(clone), [], "the build wrote into the clone's python/")
        self._check_installed(clone, env)

    @staticmethod
    def _leftovers(clone):
        return [p for p in (clone / "python").rglob("*") if p.name in ("build", "dist") or p.suffix == ".egg-info"]

    def _check_installed(self, clone, env):
        checks = '''
import importlib.metadata as md, json, sys
from pathlib import Path
venv = Path(sys.prefix)
import pmqa, pmqa.cases, pmqa.run, pmqa.probe
for mod in (pmqa, pmqa.cases, pmqa.run, pmqa.probe):
    assert venv in Path(mod.__file__).resolve().parents, f"{mod.__name__} from {mod.__file__}"
assert len(pmqa.cases("quick")) > 0  # loads the extension
core = Path(sys.modules["pmqa._core"].__file__)
assert venv in core.resolve().parents, core  # the reviewed data (envelopes, tables) is compiled into it
eps = [e.value for e in md.entry_points(group="pytest11") if e.name == "pmqa"]
assert eps == ["pmqa.pytest_plugin"], eps
print("package checks: ok")
'''
        ran = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-c", checks], env=env, cwd=str(clone / "python"),
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(ran.returncode, 0, "run from python/, the installed package must win:\n" + ran.stdout + ran.stderr)
        ran = subprocess.run(["pmqa", "dispatch", "--arch", "gfx950"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(ran.returncode, 0, ran.stderr)
        self.assertIn("fused", ran.stdout)

    def check_first_test(self, rc, out, clone, env):
        self.assertEqual(rc, 0, out[-6000:])
        self.assertRegex(out, r"\b\d+ passed\b")
        self.assertNotRegex(out, r"\bfailed\b|\berror\b")

    def check_first_failure(self, rc, out, clone, env):
        self.assertEqual(rc, 1, out[-6000:])
        m = re.search(r"(\d+) failed, (\d+) passed", out)
        self.assertTrue(m and int(m.group(1)) > 0 and int(m.group(2)) > 0, out[-3000:])
        # Each failure's message ends with the command and the test (the report above names the command too).
        endings = re.findall(r"^E\s+reproduce: (pmqa verify .+)\nE\s+test: (\S+)[^;\n]*;", out, re.M)
        self.assertEqual(len(endings), int(m.group(1)), "one reproduce command and test per failure")
        commands = [c for c, _ in endings]
        ran = subprocess.run(shlex.split(commands[0]), env=env, cwd=str(clone), capture_output=True, text=True,
                             timeout=300)
        self.assertEqual(ran.returncode, 1, "the printed command reproduces the failure\n" + ran.stdout + ran.stderr)
        self.assertTrue(ran.stdout.startswith("FAIL"), ran.stdout[:500])
        # "again:" runs that one test, as printed, from where pytest ran (the clone), in the same terminal.
        again = re.search(r"^E\s+test: \S+[^;\n]*; again: (.+)$", out, re.M).group(1)
        rc, rerun, _ = run_in_terminal(again, clone, env, clone.parent / "again.env")
        self.assertEqual(rc, 1, again + "\n" + rerun[-3000:])
        self.assertRegex(rerun, r"\b1 failed in\b", again)

    def check_kernel_drop(self, rc, out, clone, env):
        self.assertEqual(rc, 0, out[-6000:])
        self.assertIn("0 failed", out)
        self.assertRegex(out, r"pmqa verify: (\d+) file\(s\): \1 passed, 0 failed, 0 invalid")
        for junit in ("pmqa-run.xml", "pmqa-verify.xml"):
            ET.parse(clone / junit)


def run_in_terminal(text: str, cwd: Path, env: dict, state: Path):
    """Runs a block under bash -e -o pipefail in env; returns (exit status, output, the environment the
    block leaves), as the next command typed into the same terminal would see it."""
    script = f"{text}\nenv -0 > {shlex.quote(str(state))}\n"
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=str(cwd), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=3600)
    after = dict(env)
    if proc.returncode == 0 and state.is_file():
        after = dict(kv.split("=", 1) for kv in state.read_text().split("\0") if "=" in kv)
    sys.stdout.write(proc.stdout[-20000:])
    return proc.returncode, proc.stdout, after


if __name__ == "__main__":
    unittest.main()
