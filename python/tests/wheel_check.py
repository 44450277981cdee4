"""Checks a built pmqa wheel as a user's machine meets it (CTest's python.wheel.* tests; ./quickstart test
builds the wheel once and hands it to CMake as PMQA_WHEEL).

    wheel_check.py contents WHEEL --python PY      its tags, and every binary in it: what it needs at run
                                                   time (readelf -d) and portable x86-64 code only
    wheel_check.py haswell WHEEL                   its pmqa command's `check --suite quick` on a CPU without
                                                   AVX-512 (qemu-x86_64 -cpu Haswell, Debian's qemu-user)
    wheel_check.py install WHEEL --python PY --venv DIR   a fresh venv (--system-site-packages) and the
                                                   wheel installed into it, timed; what it installed checked
    wheel_check.py first-test --venv DIR --repo ROOT      the README's first test, run with the venv's
                                                   interpreter (no PYTHONPATH, no build tree)

Each prints what it checked and exits non-zero on the first thing that is wrong.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

# What a binary in the wheel may need at run time: the C and C++ runtimes, the loader, and (for an
# extension linked against it) the Python it was built for. Nothing a -dev package brings.
ALLOWED_NEEDED = re.compile(r"^(libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|ld-linux-x86-64\.so\.2|"
                            r"libpython3\.\d+\.so\.1(\.0)?)$")
# Registers no baseline x86-64 CPU has: AVX (ymm) and AVX-512 (zmm, the mask registers k1..k7). The
# wheel is built with PMQA_NATIVE=OFF: its code is SSE2 (x86-64 baseline) and runs on any x86-64 CPU.
WIDE_REGISTER = re.compile(r"%(ymm|zmm)\d+|%k[1-7]\b")


def clean_env(**extra) -> dict:
    """The environment a user's shell has: none of the build tree's PYTHONPATH or PMQA_* settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMQA_", "PYTHON", "VIRTUAL_ENV", "PIP_")) and k != "LD_LIBRARY_PATH"}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore",
               PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def fail(text: str) -> None:
    print(f"FAIL: {text}", flush=True)
    sys.exit(1)


def interpreter_tag(python: str) -> str:
    return subprocess.run([python, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"],
                          capture_output=True, text=True, check=True).stdout.strip()


def unpack(wheel: Path, dest: Path) -> list:
    """Extracts the wheel (keeping the executable bits it records); returns its ELF files."""
    elves = []
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            path = Path(z.extract(info, dest))
            mode = info.external_attr >> 16
            if mode:
                path.chmod(stat.S_IMODE(mode) | stat.S_IRUSR)
            if path.is_file() and path.read_bytes()[:4] == b"\x7fELF":
                elves.append(path)
    return elves


def contents(args) -> None:
    wheel = Path(args.wheel)
    tag = interpreter_tag(args.python)
    name = re.fullmatch(r"pmqa-([^-]+)-(cp\d+)-(cp\d+)-([\w.]+)\.whl", wheel.name)
    if not name:
        fail(f"{wheel.name} is not named as a binary pmqa wheel (pmqa-VERSION-cpXY-cpXY-PLATFORM.whl)")
    _, python_tag, abi_tag, platform = name.groups()
    if (python_tag, abi_tag) != (tag, tag):
        fail(f"{wheel.name}: tagged {python_tag}-{abi_tag}, but its extension is for {args.python} ({tag})")
    if platform != "linux_x86_64":
        fail(f"{wheel.name}: platform tag {platform}; the wheel claims only linux_x86_64 (no manylinux audit)")
    print(f"tags: {python_tag}-{abi_tag}-{platform} (the interpreter {args.python} is {tag})")
    with tempfile.TemporaryDirectory(prefix="pmqa-wheel-") as tmp:
        elves = unpack(wheel, Path(tmp))
        names = sorted(str(e.relative_to(tmp)) for e in elves)
        expected = {"pmqa/_bin/pmqa"}
        if not expected <= set(names) or not any(n.startswith("pmqa/_core.") for n in names):
            fail(f"the wheel's binaries are {names}: expected pmqa/_bin/pmqa and pmqa/_core.*.so")
        if not os.access(Path(tmp) / "pmqa/_bin/pmqa", os.X_OK):
            fail("pmqa/_bin/pmqa is not executable as the wheel records it")
        glibc, glibcxx = set(), set()
        for elf in elves:
            rel = elf.relative_to(tmp)
            dynamic = subprocess.run(["readelf", "-d", "-W", str(elf)], capture_output=True, text=True, check=True).stdout
            needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
            extra = [n for n in needed if not ALLOWED_NEEDED.match(n)]
            if extra:
                fail(f"{rel} needs {extra} at run time (only the C and C++ runtimes, the loader and libpython may be)")
            if "(RPATH)" in dynamic or "(RUNPATH)" in dynamic:
                fail(f"{rel} carries an RPATH/RUNPATH: it would look for libraries on the build machine")
            code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(elf)], capture_output=True, text=True,
                                  check=True).stdout
            wide = [line.strip() for line in code.splitlines() if WIDE_REGISTER.search(line)]
            if wide:
                fail(f"{rel}: {len(wide)} instructions on AVX/AVX-512 registers (built with -march=native?), "
                     f"e.g. {wide[0]}")
            symbols = subprocess.run(["objdump", "-T", str(elf)], capture_output=True, text=True, check=True).stdout
            glibc.update(re.findall(r"\bGLIBC_(\d+\.\d+(?:\.\d+)?)", symbols))
            glibcxx.update(re.findall(r"\bGLIBCXX_(\d+\.\d+(?:\.\d+)?)", symbols))
            print(f"{rel}: {os.path.getsize(elf)} bytes, NEEDED {' '.join(needed)}; no AVX/AVX-512 instruction")

        def newest(versions):
            return max(versions, key=lambda v: tuple(int(x) for x in v.split("."))) if versions else "-"

        print(f"needs at run time: glibc >= {newest(glibc)}, libstdc++ with GLIBCXX_{newest(glibcxx)}")
    print(f"{len(elves)} binaries checked: ok")


def haswell(args) -> None:
    qemu = shutil.which("qemu-x86_64")
    if not qemu:
        fail("qemu-x86_64 is not installed (Debian: qemu-user)")
    with tempfile.TemporaryDirectory(prefix="pmqa-wheel-") as tmp:
        unpack(Path(args.wheel), Path(tmp))
        binary = Path(tmp) / "pmqa/_bin/pmqa"
        # Haswell: AVX2 and FMA, no AVX-512. An instruction the CPU lacks is SIGILL under qemu.
        command = [qemu, "-cpu", "Haswell", str(binary), "check", "--suite", "quick"]
        print("$ " + " ".join(command), flush=True)
        start = time.monotonic()
        ran = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, env=clean_env())
        took = time.monotonic() - start
        print(ran.stdout[-3000:] + ran.stderr[-3000:])
        if ran.returncode != 0:
            fail(f"pmqa check --suite quick exited {ran.returncode} on qemu's Haswell CPU")
        m = re.search(r"pmqa check --suite quick: (\d+) passed, 0 failed", ran.stdout)
        if not m or int(m.group(1)) == 0:
            fail("no passing summary line from pmqa check")
        print(f"on a Haswell CPU (qemu, no AVX-512): {m.group(1)} passed in {took:.0f} s")


def install(args) -> None:
    venv = Path(args.venv)
    shutil.rmtree(venv, ignore_errors=True)
    env = clean_env()
    start = time.monotonic()
    subprocess.run([args.python, "-m", "venv", "--system-site-packages", str(venv)], check=True, env=env)
    made = time.monotonic()
    ran = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "--no-index", str(Path(args.wheel).resolve())],
                         capture_output=True, text=True, env=env)
    done = time.monotonic()
    print(ran.stdout[-2000:] + ran.stderr[-2000:])
    if ran.returncode != 0:
        fail("pip install of the wheel failed")
    print(f"the wheel installed in {done - made:.1f} s (the venv made in {made - start:.1f} s)")
    checks = '''
import sys
from pathlib import Path
import pmqa, pmqa.cases
venv = Path(sys.prefix)
assert len(pmqa.cases("quick")) > 0
core = Path(sys.modules["pmqa._core"].__file__)
for p in (Path(pmqa.__file__), core):
    assert venv in p.resolve().parents, p
print("import pmqa from", Path(pmqa.__file__).parent, "with", core.name)
'''
    ran = subprocess.run([str(venv / "bin/python"), "-c", checks], capture_output=True, text=True, env=env,
                         cwd=str(venv))
    print(ran.stdout + ran.stderr)
    if ran.returncode != 0:
        fail("the installed package does not import from the venv")
    for command in ("pmqa", "pmqa-run", "pmqa-probe"):
        if not (venv / "bin" / command).exists():
            fail(f"{command} is not on the venv's PATH")
    ran = subprocess.run([str(venv / "bin/pmqa"), "dispatch", "--arch", "gfx950"], capture_output=True, text=True,
                         env=env)
    if ran.returncode != 0 or "fused" not in ran.stdout:
        fail(f"pmqa dispatch from the venv: exit {ran.returncode}\n{ran.stdout}{ran.stderr}")
    print("pmqa, pmqa-run, pmqa-probe on the venv's PATH; pmqa dispatch runs: ok")


def first_test(args) -> None:
    venv, repo = Path(args.venv), Path(args.repo)
    env = clean_env(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", VIRTUAL_ENV=str(venv))
    # The README's first test, from the clone's root as the README runs it (the src layout keeps the
    # checkout's python/ from shadowing the installed package).
    command = [str(venv / "bin/python"), "-B", "-m", "pytest", "-p", "no:cacheprovider", "python/examples/test_my_kernel.py"]
    print("$ " + " ".join(command), flush=True)
    ran = subprocess.run(command, cwd=str(repo), env=env, capture_output=True, text=True, timeout=600)
    print(ran.stdout[-4000:] + ran.stderr[-2000:])
    if ran.returncode != 0 or not re.search(r"\b\d+ passed\b", ran.stdout) or re.search(r"\bfailed\b", ran.stdout):
        fail(f"the README's first test from the installed wheel: exit {ran.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="job", required=True)
    p = sub.add_parser("contents")
    p.add_argument("wheel")
    p.add_argument("--python", required=True)
    p = sub.add_parser("haswell")
    p.add_argument("wheel")
    p.add_argument("--timeout", type=int, default=1200)
    p = sub.add_parser("install")
    p.add_argument("wheel")
    p.add_argument("--python", required=True)
    p.add_argument("--venv", required=True)
    p = sub.add_parser("first-test")
    p.add_argument("--venv", required=True)
    p.add_argument("--repo", required=True)
    args = parser.parse_args()
    {"contents": contents, "haswell": haswell, "install": install, "first-test": first_test}[args.job](args)


if __name__ == "__main__":
    main()
