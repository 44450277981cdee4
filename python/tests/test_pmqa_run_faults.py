"""pmqa-run and pmqa verify under faults, concurrency and hostile input (issue 34): one class per
numbered item, each a fault the tools must survive, injected and checked from outside.

Every run here is a real `python3 -m pmqa.run` process (its own stdout, signals and workers) on
three small cases, "a", "b" (next_n 3: where fault_ops misbehave) and "c"; `pmqa verify` is the
built command (PMQA_BIN), the C++ logits-only reader the case-file tool (PMQA_CASE_FILE_TOOL).
The counts each test sees are printed, so `ctest -L faults --verbose` shows them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import pmqa.cases  # noqa: E402
import run_standins as si  # noqa: E402
from fault_ops import pid_alive  # noqa: E402

PMQA = os.environ.get("PMQA_BIN", "")
TOOL = os.environ.get("PMQA_CASE_FILE_TOOL", "")
PYTHONPATH = os.pathsep.join([str(HERE.parent / "src"), str(HERE)])


def report(text: str) -> None:
    print(f"[faults] {text}", flush=True)


def junit_cases(path: Path):
    """(status, message) per testcase name, parsed strictly (ElementTree refuses invalid XML)."""
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    out = {}
    for tc in suite.iter("testcase"):
        status, message = "ok", ""
        for tag in ("failure", "error", "skipped"):
            el = tc.find(tag)
            if el is not None:
                status, message = tag, el.get("message", "")
        out[tc.get("name")] = (status, message)
    return suite, out


@unittest.skipUnless(PMQA and TOOL, "needs the built pmqa and pmqa_case_file_tool (PMQA_BIN, PMQA_CASE_FILE_TOOL): "
                                   "CTest's faults tests set them")
class _Faults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="pmqa_faults_")
        self.addCleanup(self.tmp.cleanup)  # registered first, so it runs after every later cleanup (umount)
        self.root = Path(self.tmp.name)
        self.cases = self.root / "cases"
        self.cases.mkdir()
        self.out = self.root / "out"
        self.traces = self.root / "traces"
        self.traces.mkdir()
        for seed, next_n, name in ((1, 1, "a"), (2, 3, "b"), (3, 2, "c")):
            pmqa.cases.write_case_file(self.cases / f"{name}.safetensors",
                                       si.make_case(seed=seed, next_n=next_n, name=name))

    def env(self, **extra):
        env = dict(os.environ, PYTHONPATH=PYTHONPATH, PMQA_FAULT_DIR=str(self.traces), PMQA_TEST_OUT=str(self.out),
                   PYTHONDONTWRITEBYTECODE="1")
        env.update(extra)
        return env

    def argv(self, op, *extra, out=None, junit=None):
        argv = [sys.executable, "-m", "pmqa.run", "--backend", "numpy", "--convention", "eager",
                "--op", f"fault_ops:{op}", "--cases", str(self.cases), "--out", str(out or self.out)]
        if junit:
            argv += ["--junit", str(junit)]
        return argv + list(extra)

    def pmqa_run(self, op, *extra, out=None, junit=None, timeout=120, env=None, cwd=None):
        p = subprocess.run(self.argv(op, *extra, out=out, junit=junit), capture_output=True, timeout=timeout,
                           env=env or self.env(), cwd=cwd)
        return p.returncode, p.stdout.decode("utf-8") + p.stderr.decode("utf-8"), p.stdout + p.stderr

    def verify(self, *args, timeout=120):
        self.assertTrue(PMQA, "PMQA_BIN must name the built pmqa command")
        p = subprocess.run([PMQA, "verify", *map(str, args)], capture_output=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr

    def no_partials(self, *folders):
        left = [p for folder in folders for p in Path(folder).rglob("*") if ".partial" in p.name]
        self.assertEqual(left, [], "temporary files were left behind")

    def mount_tmpfs(self, where: Path, options: str) -> bool:
        """A real tmpfs where the machine allows it (root, and mount permitted); PMQA_FAULTS_NO_MOUNT=1
        takes the emulated folder instead (what CI without mount permission runs)."""
        where.mkdir(exist_ok=True)
        if os.environ.get("PMQA_FAULTS_NO_MOUNT") or os.geteuid() != 0 or not shutil.which("mount"):
            return False
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
        if p.returncode != 0:
            return False
        self.addCleanup(subprocess.run, ["umount", "-l", str(where)], capture_output=True)
        return True


class Item01SurrogateInMessage(_Faults):
    """1. A lone surrogate in an op's exception message: the run goes on, the JUnit is written."""

    def test_the_run_goes_on_and_the_junit_is_valid(self):
        junit = self.root / "run.xml"
        rc, text, raw = self.pmqa_run("raises_surrogate", junit=junit)
        report(f"surrogate: exit {rc}; " + " | ".join(ln for ln in text.splitlines() if ln.startswith("pmqa-run: 3")))
        self.assertEqual(rc, 1, text)
        self.assertIn("2 written, 1 failed", text)
        raw.decode("utf-8")  # the runner's output is valid UTF-8 (strict)
        suite, cases = junit_cases(junit)
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("errors")), ("3", "1", "0"))
        self.assertEqual(cases["b"][0], "failure")
        self.assertIn("device said \\udcff\\udcfe bad", cases["b"][1])
        self.assertEqual(cases["c"][0], "ok")
        self.no_partials(self.root)


class Item02ControlCharacters(_Faults):
    """2. ESC, form feed and NUL in an op's message: valid XML, nothing raw on the terminal."""

    def test_controls_are_escaped_everywhere(self):
        junit = self.root / "run.xml"
        rc, text, raw = self.pmqa_run("raises_controls", junit=junit)
        self.assertEqual(rc, 1, text)
        for byte in (b"\x1b", b"\x0c", b"\x00"):
            self.assertNotIn(byte, raw)
        suite, cases = junit_cases(junit)
        self.assertIn("colour \\x1b[31mred\\x1b[0m, form feed \\x0c, nul \\x00 here", cases["b"][1])
        # The forged summary inside the message stays indented under its FAIL line.
        self.assertEqual([ln for ln in text.splitlines() if ln.startswith("pmqa-run: 3 case(s)")],
                         ["pmqa-run: 3 case(s): 2 written, 1 failed, 0 unsupported (refused), 0 invalid (exit 1)"])
        record = json.loads((self.out / "pmqa-run.json").read_text())
        self.assertIn("\\x00", [c for c in record["cases"] if c["name"] == "b"][0]["message"])
        report(f"controls: exit {rc}, JUnit parses, no raw ESC/FF/NUL in {len(raw)} bytes of output")


class Item03ConcurrentRuns(_Faults):
    """3. Two writers of one file, and two runs into one --out: never a lost or a mixed file."""

    TRIALS = 20

    def test_two_writers_of_one_file_leave_one_whole_file(self):
        target = self.root / "race.safetensors"
        script = (
            "import sys, numpy as np, pmqa.cases as c\n"
            "who = int(sys.argv[2]); a = np.full((2, 64), float(who), np.float32)\n"
            "lf = c.LogitsFile(logits=a, name=f'writer-{who}', input_file='x.safetensors', input_sha256='0'*64,\n"
            "                  batch=1, next_n=2, max_model_len=64)\n"
            "for _ in range(int(sys.argv[3])): c.write_logits_file(sys.argv[1], lf)\n")
        rounds = 200
        procs = [subprocess.Popen([sys.executable, "-c", script, str(target), str(who), str(rounds)], env=self.env())
                 for who in (1, 2)]
        reads = mixed = 0
        while any(p.poll() is None for p in procs):
            if target.exists():
                lf = pmqa.cases.read_logits_file(target)  # raises on a torn file
                who = int(lf.name.split("-")[1])
                reads += 1
                mixed += int(not np.all(lf.logits == who))
        for p in procs:
            self.assertEqual(p.wait(), 0)
        lf = pmqa.cases.read_logits_file(target)
        mixed += int(not np.all(lf.logits == int(lf.name.split("-")[1])))
        report(f"library race: 2 writers x {rounds} writes of one file, {reads} reads between them: {mixed} mixed")
        self.assertEqual(mixed, 0)
        self.no_partials(self.root)

    def test_two_runs_into_one_folder(self):
        refused = sequential = lost = mixed = 0
        for trial in range(self.TRIALS):
            out = self.root / f"out-{trial}"
            env = self.env(PMQA_FAULT_SLEEP="0.15")
            procs = {op: subprocess.Popen(self.argv(op, "--producer", op, out=out), stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, env=env)
                     for op in ("slow_ok", "slow_negated")}
            done = {}
            for op, p in procs.items():
                text = p.communicate(timeout=120)[0].decode()
                done[op] = (p.returncode, text)
            winners = [op for op, (rc, _) in done.items() if rc == 0]
            losers = [op for op, (rc, _) in done.items() if rc != 0]
            for op in losers:
                self.assertIn("is in use by another pmqa-run", done[op][1], done[op][1])
                self.assertEqual(done[op][0], 2)
            refused += len(losers)
            sequential += int(len(winners) == 2)
            record = json.loads((out / "pmqa-run.json").read_text())
            self.assertIn(record["producer"], winners)
            sign = 1.0 if record["producer"] == "slow_ok" else -1.0
            for case in record["cases"]:
                path = out / case["result"]
                if not path.is_file() or pmqa.cases.sha256_file(path) != case["sha256"]:
                    lost += 1
                    continue
                cf = pmqa.cases.read_case_file(path)
                want = sign * si.eager_ok(*_eager_args(pmqa.cases.read_case_file(self.cases / case["result"])))
                same = np.array_equal(cf.logits, want.astype(np.float32), equal_nan=True)
                mixed += int(cf.producer != record["producer"] or cf.extra.get("run_id") != record["run_id"]
                             or not same)
            self.no_partials(out)
        report(f"two runs into one --out: {self.TRIALS} trials, {refused} refused by the lock, {sequential} ran one "
               f"after the other; {lost} lost, {mixed} mixed files")
        self.assertEqual((lost, mixed), (0, 0))
        self.assertEqual(refused + sequential, self.TRIALS)


def _eager_args(cf):
    """What the eager convention hands an op, built here from the case (numpy backend's shapes)."""
    from pmqa.run import NumpyBackend
    from pmqa.run.conventions import CONVENTIONS, RunOptions
    inv = CONVENTIONS["eager"].build(cf, NumpyBackend(), RunOptions())
    return inv.args


class Item04StaleResults(_Faults):
    """4. A result left by an earlier run never passes for the latest run's."""

    def test_a_failing_rerun_leaves_nothing_that_passes(self):
        rc, text, _ = self.pmqa_run("counts_calls")
        self.assertEqual(rc, 0, text)
        vrc, vtext = self.verify(self.out)
        self.assertEqual(vrc, 0, vtext)
        rc, text, _ = self.pmqa_run("fails_all")
        self.assertEqual(rc, 1, text)
        vrc, vtext = self.verify(self.out)
        vtext = vtext.decode()
        report("after a run that failed every case: " + vtext.strip().splitlines()[-1])
        self.assertEqual(vrc, 1, vtext)
        self.assertIn("0 passed, 3 failed", vtext)
        self.assertIn("no result: the op failed in pmqa-run", vtext)

    def test_files_the_latest_run_did_not_write_are_stale(self):
        rc, text, _ = self.pmqa_run("counts_calls")
        self.assertEqual(rc, 0, text)
        rc, text, _ = self.pmqa_run("counts_calls", "--case", "a")
        self.assertEqual(rc, 0, text)
        self.assertIn("2 file(s) in --out are not this run's", text)
        vrc, vtext = self.verify(self.out)
        vtext = vtext.decode()
        report("after a rerun of case a only: " + vtext.strip().splitlines()[-1])
        self.assertEqual(vrc, 2, vtext)
        self.assertIn("1 passed, 0 failed, 2 invalid", vtext)
        self.assertRegex(vtext, r"ERROR .*b\.safetensors: stale: the latest run into this folder, run \S+ .*did not "
                                r"write it")
        # Named on its own, a stale file is still judged against its folder's record.
        vrc, vtext = self.verify(self.out / "c.safetensors")
        self.assertEqual(vrc, 2, vtext)
        self.assertIn(b"stale", vtext)

    def test_a_file_changed_after_the_run_is_not_judged(self):
        rc, text, _ = self.pmqa_run("counts_calls")
        self.assertEqual(rc, 0, text)
        cf = pmqa.cases.read_case_file(self.out / "a.safetensors")
        pmqa.cases.write_case_file(self.out / "a.safetensors", cf)  # same content, rewritten: same bytes
        vrc, _ = self.verify(self.out)
        self.assertEqual(vrc, 0)
        cf.extra["edited"] = "by hand"
        pmqa.cases.write_case_file(self.out / "a.safetensors", cf)
        vrc, vtext = self.verify(self.out)
        self.assertEqual(vrc, 2, vtext)
        self.assertIn(b"changed since run", vtext)


class Item05KilledRun(_Faults):
    """5. A crashed run leaves a JUnit that reads as failed and a record --resume finishes."""

    def test_a_crash_in_process_then_resume(self):
        junit = self.root / "run.xml"
        rc, text, _ = self.pmqa_run("segfaults_once", "--in-process", junit=junit)
        self.assertEqual(rc, -signal.SIGSEGV, text)
        suite, cases = junit_cases(junit)
        report(f"killed by SIGSEGV: JUnit tests={suite.get('tests')} failures={suite.get('failures')} "
               f"errors={suite.get('errors')}")
        self.assertEqual((suite.get("tests"), suite.get("errors")), ("3", "2"))
        self.assertEqual(cases["a"][0], "ok")
        self.assertTrue(all(cases[n][0] == "error" and "not run" in cases[n][1] for n in "bc"), cases)
        record = json.loads((self.out / "pmqa-run.json").read_text())
        self.assertFalse(record["complete"])
        vrc, vtext = self.verify(self.out)
        self.assertEqual(vrc, 2, vtext)
        self.assertIn(b"is incomplete: 2 of 3 case(s) not run", vtext)
        kept = (self.out / "a.safetensors").stat()

        p = subprocess.run([sys.executable, "-m", "pmqa.run", "--resume", "--out", str(self.out)],
                           capture_output=True, env=self.env(), timeout=120)
        text = (p.stdout + p.stderr).decode()
        report("resume: " + " | ".join(ln for ln in text.splitlines() if ln.startswith("pmqa-run: res")))
        self.assertEqual(p.returncode, 0, text)
        self.assertIn("resuming run " + record["run_id"] + ": 1 finished case(s) kept, 2 to run", text)
        self.assertEqual((self.out / "a.safetensors").stat().st_mtime_ns, kept.st_mtime_ns, "the kept file is untouched")
        suite, cases = junit_cases(junit)
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("errors")), ("3", "0", "0"))
        record = json.loads((self.out / "pmqa-run.json").read_text())
        self.assertTrue(record["complete"])
        vrc, vtext = self.verify(self.out)
        self.assertEqual(vrc, 0, vtext)
        self.assertIn(b"3 passed", vtext)

    def test_resume_runs_again_a_case_whose_file_changed(self):
        rc, text, _ = self.pmqa_run("segfaults_once", "--in-process")
        self.assertEqual(rc, -signal.SIGSEGV, text)
        (self.out / "a.safetensors").write_bytes(b"not what the run wrote")
        p = subprocess.run([sys.executable, "-m", "pmqa.run", "--resume", "--out", str(self.out)],
                           capture_output=True, env=self.env(), timeout=120)
        text = (p.stdout + p.stderr).decode()
        self.assertEqual(p.returncode, 0, text)
        self.assertIn("a.safetensors: the file is gone or changed since run", text)
        self.assertIn("0 finished case(s) kept, 3 to run (1 again)", text)
        vrc, vtext = self.verify(self.out)
        self.assertEqual(vrc, 0, vtext)

    def test_resume_takes_no_other_settings(self):
        rc, _, _ = self.pmqa_run("segfaults_once", "--in-process")
        p = subprocess.run([sys.executable, "-m", "pmqa.run", "--resume", "--out", str(self.out), "--op", "x:y"],
                           capture_output=True, env=self.env(), timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"--resume takes every setting from the run's record", p.stderr)


class Item06ForkHidesDeath(_Faults):
    """6. An op that leaves a child holding the worker's pipe, then exits: named at once, child ended."""

    def test_the_exit_is_seen_and_the_child_ended(self):
        t0 = time.monotonic()
        rc, text, _ = self.pmqa_run("forks_then_exits", "--timeout-s", "60")
        seconds = time.monotonic() - t0
        child = int((self.traces / "children").read_text().split()[0])
        report(f"fork then os._exit(3): reported after {seconds:.1f} s (--timeout-s 60); child alive: "
               f"{pid_alive(child)}")
        self.assertEqual(rc, 1, text)
        self.assertIn("died while running the case (exited with status 3)", text)
        self.assertLess(seconds, 30)
        self.assertIn("2 written, 1 failed", text)
        deadline = time.monotonic() + 10
        while pid_alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertFalse(pid_alive(child), "the op's child outlived its worker")


class Item07KillDashNine(_Faults):
    """7. kill -9 of pmqa-run while an op hangs: the worker and the op's child go too."""

    def test_the_worker_dies_with_the_runner(self):
        junit = self.root / "run.xml"
        proc = subprocess.Popen(self.argv("hangs_with_child", junit=junit), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=self.env())
        pids_file = self.traces / "pids"
        deadline = time.monotonic() + 60
        while not pids_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(pids_file.exists(), "the op never started")
        time.sleep(0.2)
        worker, child = (int(x) for x in pids_file.read_text().split())
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while (pid_alive(worker) or pid_alive(child)) and time.monotonic() < deadline:
            time.sleep(0.05)
        report(f"kill -9 of pmqa-run: worker alive {pid_alive(worker)}, op's child alive {pid_alive(child)}")
        self.assertFalse(pid_alive(worker), "the worker outlived pmqa-run")
        self.assertFalse(pid_alive(child), "the op's child outlived pmqa-run")
        suite, cases = junit_cases(junit)
        self.assertEqual((suite.get("tests"), suite.get("errors")), ("3", "2"))
        self.assertIn("not run", cases["b"][1])


    def test_sigterm_ends_the_group_and_keeps_the_record(self):
        junit = self.root / "run.xml"
        proc = subprocess.Popen(self.argv("hangs_with_child", junit=junit), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=self.env())
        pids_file = self.traces / "pids"
        deadline = time.monotonic() + 60
        while not pids_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        worker, child = (int(x) for x in pids_file.read_text().split())
        proc.send_signal(signal.SIGTERM)
        text = proc.communicate(timeout=60)[0].decode()
        report(f"SIGTERM to pmqa-run: exit {proc.returncode}; worker alive {pid_alive(worker)}, child alive "
               f"{pid_alive(child)}")
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, text)
        self.assertIn("stopping: pmqa-run was stopped by SIGTERM", text)
        self.assertFalse(pid_alive(worker) or pid_alive(child))
        record = json.loads((self.out / "pmqa-run.json").read_text())
        self.assertEqual((record["complete"], record["stopped"]), (False, "pmqa-run was stopped by SIGTERM"))
        suite, cases = junit_cases(junit)
        self.assertIn("not run: the run stopped before this case: pmqa-run was stopped by SIGTERM", cases["b"][1])


class Item08StartupTimeout(_Faults):
    """8. An op module that hangs at import: the start-up timeout names it, the JUnit lists the cases."""

    def test_a_hang_at_import(self):
        junit = self.root / "run.xml"
        argv = self.argv("op", "--startup-timeout-s", "3", junit=junit)
        argv[argv.index("fault_ops:op")] = "fault_hangs_at_import:op"
        t0 = time.monotonic()
        p = subprocess.run(argv, capture_output=True, env=self.env(), timeout=120)
        seconds = time.monotonic() - t0
        text = (p.stdout + p.stderr).decode()
        report(f"hang at import: exit {p.returncode} after {seconds:.1f} s")
        self.assertEqual(p.returncode, 2, text)
        self.assertLess(seconds, 30)
        self.assertIn("did not start within --startup-timeout-s 3 s: it was importing the op's module "
                      "(fault_hangs_at_import)", text)
        suite, cases = junit_cases(junit)
        self.assertEqual((suite.get("tests"), suite.get("errors")), ("3", "3"))
        self.assertTrue(all("no worker could be started" in m for _, m in cases.values()), cases)


def _with_metadata(path: Path, dest: Path, **changes) -> None:
    """Copies a case or logits-only file with its __metadata__ changed (the header rebuilt), so the
    writers' own checks cannot stop a hostile value reaching a reader."""
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    header["__metadata__"].update(changes)
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    dest.write_bytes(len(text).to_bytes(8, "little") + text + data[8 + n:])


class Item09NamesInVerify(_Faults):
    """9. NUL and ESC in names and metadata: refused or escaped, the report whole."""

    def setUp(self):
        super().setUp()
        self.assertTrue(PMQA)
        self.files = self.root / "files"
        self.files.mkdir()
        subprocess.run([PMQA, "gen", "--suite", "quick", "--case", "edge-lengths-1d", "--with-reference",
                        "--out", str(self.files)], check=True, capture_output=True)
        self.good = self.files / "edge-lengths-1d.safetensors"

    def test_a_nul_in_a_case_name_is_refused_whole(self):
        _with_metadata(self.good, self.files / "nul.safetensors", name="edge\x00lengths\x1b[31m")
        rc, text = self.verify(self.files / "nul.safetensors")
        self.assertEqual(rc, 2, text)
        self.assertNotIn(b"\x00", text)
        self.assertNotIn(b"\x1b", text)
        self.assertIn(b'__metadata__.name: "edge\\x00lengths\\x1b[31m" holds a control character', text)

    def test_odd_metadata_and_file_names_reach_the_terminal_escaped(self):
        cf = pmqa.cases.read_case_file(self.good)
        cf.logits[15, 37] *= 2  # a failing cell (row 15 has 48 valid keys): the full report must print
        cf.extra["bench_ms"] = "\x1b[2J0.1"
        odd = self.files / "odd\x1b[31m name.safetensors"
        pmqa.cases.write_case_file(odd, cf)
        rc, text = self.verify(odd)
        lines = text.decode().splitlines()
        report(f"failing file with ESC in its name and metadata: exit {rc}, {len(lines)} lines, no raw ESC")
        self.assertEqual(rc, 1, text)
        self.assertNotIn(b"\x1b", text)
        self.assertIn(b"odd\\x1b[31m name.safetensors", text)
        self.assertTrue(any("reproduce: pmqa verify" in ln for ln in lines), text)
        self.assertGreater(len(lines), 10)

    def test_pmqa_run_refuses_such_names_early(self):
        _with_metadata(self.cases / "a.safetensors", self.cases / "d.safetensors", name="d\x1b]0;title\x07")
        os.rename(self.cases / "c.safetensors", self.cases / "c\x1b[2J.safetensors")
        rc, text, raw = self.pmqa_run("counts_calls")
        self.assertEqual(rc, 2, text)
        self.assertNotIn(b"\x1b", raw)
        self.assertIn("file: refused: its name holds a control character", text)
        self.assertIn("holds a control character (names must be printable)", text)
        self.assertIn("2 written, 0 failed, 0 unsupported (refused), 2 invalid", text)


class Item10StrictLogitsReaders(_Faults):
    """10. The logits-only readers (Python and C++) refuse what the case readers refuse; no traceback."""

    def hostile(self):
        """(label, bytes) of hostile logits-only files, each built from a valid one."""
        lf = pmqa.cases.LogitsFile(logits=np.zeros((2, 3), np.float32), name="ok", input_file="in.safetensors",
                                   input_sha256="0" * 64, batch=1, next_n=2, max_model_len=3, producer="p")
        good = pmqa.cases.serialize_logits_file(lf)
        n = int.from_bytes(good[:8], "little")
        header = good[8:8 + n].decode().rstrip()
        body = good[8 + n:]

        def build(text):
            raw = text.encode("utf-8", "surrogatepass")
            raw += b" " * ((8 - len(raw) % 8) % 8)
            return len(raw).to_bytes(8, "little") + raw + body

        def meta(**kv):
            doc = json.loads(header)
            doc["__metadata__"].update(kv)
            return build(json.dumps(doc))

        yield "valid", good
        yield "deep nesting", build(header[:-1] + ',"x":' + "[" * 2000 + "]" * 2000 + "}")
        yield "duplicate key", build(header[:-1] + ',"logits":' + json.dumps(json.loads(header)["logits"]) + "}")
        yield "non-ASCII digits", meta(batch="\u0661")
        yield "superscript digit", meta(max_model_len="\u00b3")
        yield "input_file ..", meta(input_file="..")
        yield "input_file with NUL", meta(input_file="in\x00.safetensors")
        yield "lone surrogate", build(header.replace('"ok"', '"\\udc80"'))
        yield "NUL in name", meta(name="a\x00b")
        yield "float shape", build(header.replace('"shape":[2,3]', '"shape":[2.0,3]'))
        yield "bool shape", build(header.replace('"shape":[2,3]', '"shape":[2,true]'))
        yield "NaN constant", build(header[:-1] + ',"x":NaN}')
        yield "leading zero", meta(next_n="02")
        yield "next_n 0", meta(next_n="0", batch="0")
        yield "offsets as floats", build(header.replace('"data_offsets":[0,24]', '"data_offsets":[0,24.0]'))
        yield "wrong content", meta(content="case")
        yield "extra tensor", build(header[:-1] + ',"q":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}')
        yield "short data", good[:-4]
        yield "NUL after the object", build(header + " \x00")  # nlohmann stopped there (the fuzz found it)

    def test_both_readers_refuse_each_and_agree(self):
        self.assertTrue(TOOL, "PMQA_CASE_FILE_TOOL must name the built pmqa_case_file_tool")
        folder = self.root / "hostile"
        folder.mkdir()
        labels = []
        for i, (label, data) in enumerate(self.hostile()):
            (folder / f"{i:02d}.safetensors").write_bytes(data)
            labels.append(label)
        paths = [str(folder / f"{i:02d}.safetensors") for i in range(len(labels))]
        cpp = subprocess.run([TOOL, "read-logits"], input="\n".join(paths) + "\n", capture_output=True, text=True,
                             timeout=60).stdout.splitlines()
        self.assertEqual(len(cpp), len(paths))
        for label, path, cpp_line in zip(labels, paths, cpp):
            try:
                pmqa.cases.read_logits_file(path)
                py = "valid"
            except pmqa.cases.CaseFileError as e:
                py = "invalid " + str(e)
            want = "valid" if label == "valid" else "invalid"
            with self.subTest(label):
                self.assertEqual(py.split()[0], want, py)
                self.assertEqual(cpp_line.split()[0], want, cpp_line)
        report(f"{len(labels) - 1} hostile logits-only files: refused by both readers, no traceback; the valid one read")

    def test_is_logits_file_never_raises(self):
        path = self.root / "deep.safetensors"
        text = ('{"__metadata__":' + "[" * 5000 + "]" * 5000 + "}").encode()
        path.write_bytes(len(text).to_bytes(8, "little") + text)
        self.assertFalse(pmqa.cases.is_logits_file(path))


class Item11SmallerFaults(_Faults):
    """11. Read-only and full output folders, wrong causes, chdir, inputs changed in place, forged
    output, and special files: refused early and clearly, never a hang, nothing left behind."""

    def test_a_read_only_out_is_refused_before_any_call(self):
        ro = self.root / "ro"
        env = self.env()
        if self.mount_tmpfs(ro, "ro,size=1m"):
            how = "a read-only tmpfs"
        else:
            how = "an injected EROFS (tests/fault_injection/sitecustomize.py)"
            env = self.env(PYTHONPATH=os.pathsep.join([str(HERE / "fault_injection"), PYTHONPATH]),
                           PMQA_TEST_READ_ONLY_DIR=str(ro))
        rc, text, _ = self.pmqa_run("counts_calls", out=ro, env=env)
        report(f"read-only --out ({how}): exit {rc}; calls of the op: "
               f"{len((self.traces / 'calls').read_text().split()) if (self.traces / 'calls').exists() else 0}")
        self.assertEqual(rc, 2, text)
        self.assertIn("cannot write there", text)
        self.assertIn("no case was run, 0 results kept", text)
        self.assertFalse((self.traces / "calls").exists(), "the op was called")

    def test_a_full_out_stops_the_run_with_the_count_kept(self):
        for i in range(4):
            pmqa.cases.write_case_file(self.cases / f"d{i}.safetensors",
                                       si.make_case(seed=10 + i, next_n=2, name=f"d{i}", max_model_len=4096,
                                                    max_blocks=3))
        full = self.root / "full"
        limit = 96 * 1024  # the record (about 5 KiB, twice while it is replaced) and two results of 67 KiB do not fit
        if self.mount_tmpfs(full, f"size={limit}"):
            how, env = "a tmpfs of 96 KiB", self.env()
        else:
            full.mkdir(exist_ok=True)
            how = "an injected ENOSPC past 96 KiB (tests/fault_injection/sitecustomize.py)"
            env = self.env(PYTHONPATH=os.pathsep.join([str(HERE / "fault_injection"), PYTHONPATH]),
                           PMQA_TEST_FULL_DIR=str(full), PMQA_TEST_FULL_BYTES=str(limit))
        junit = self.root / "run.xml"
        rc, text, _ = self.pmqa_run("counts_calls", "--case", "d*", out=full, junit=junit, env=env)
        kept = sorted(p.name for p in full.glob("*.safetensors"))
        report(f"full --out ({how}): exit {rc}; results kept {len(kept)}; "
               + " | ".join(ln for ln in text.splitlines() if "stopped early" in ln))
        self.assertEqual(rc, 2, text)
        self.assertIn("takes no more writes: No space left on device", text)
        self.assertIn(f"{len(kept)} result file(s) kept", text)
        self.assertGreaterEqual(len(kept), 1)
        self.no_partials(full, self.root)
        suite, cases = junit_cases(junit)
        self.assertEqual(suite.get("tests"), "4")
        self.assertTrue(any("not run: the run stopped before this case" in m for _, m in cases.values()), cases)
        for name in kept:
            pmqa.cases.read_case_file(full / name)  # every file kept is whole

    def test_a_removed_out_is_named_as_the_cause(self):
        rc, text, _ = self.pmqa_run("removes_out")
        self.assertEqual(rc, 2, text)
        self.assertIn("is gone (removed during the run?)", text)
        self.assertNotRegex(text, r"cannot write (\S+): \1")  # the file is named once

    def test_an_ops_chdir_changes_nothing(self):
        rc, text, _ = self.pmqa_run("changes_folder", "--cases", "cases", "--out", "out", cwd=self.root,
                                    env=self.env(PMQA_FAULT_CHDIR=str(self.traces)))
        # --cases and --out given twice: argparse keeps the last (relative) ones
        self.assertEqual(rc, 0, text)
        self.assertIn("3 written, 0 failed", text)
        self.assertEqual(sorted(p.name for p in (self.root / "out").glob("*.safetensors")),
                         ["a.safetensors", "b.safetensors", "c.safetensors"])
        rc, text, _ = self.pmqa_run("changes_folder", "--cases", "cases", "--out", "out2", "--in-process",
                                    cwd=self.root, env=self.env(PMQA_FAULT_CHDIR=str(self.traces)))
        self.assertEqual(rc, 0, text)

    def test_an_op_that_changes_its_inputs_is_named(self):
        rc, text, _ = self.pmqa_run("corrupts_weights", "--bench", "--iters", "2", "--warmup", "0")
        self.assertEqual(rc, 1, text)
        self.assertIn("the op wrote into its inputs: weights (", text)
        self.assertNotIn("(a race?)", text)

    def test_an_ops_output_cannot_forge_the_runners(self):
        rc, text, raw = self.pmqa_run("prints_forgery")
        self.assertEqual(rc, 0, text)
        self.assertNotIn(b"\x1b", raw)
        summary = [ln for ln in text.splitlines() if ln.startswith("pmqa-run: 3 case(s)")]
        self.assertEqual(len(summary), 1, text)
        self.assertIn("  op> pmqa-run: 3 case(s): 3 written", text)
        self.assertIn("  op> pmqa-run: forged from C", text)
        self.assertIn("  op> \\x1b[2Jcleared your screen", text)

    def test_special_files_are_reported_never_opened(self):
        folder = self.root / "results"
        folder.mkdir()
        shutil.copy(self.cases / "a.safetensors", folder / "a.safetensors")
        os.mkfifo(folder / "fifo.safetensors")
        os.symlink(self.root / "nowhere", folder / "dangling.safetensors")
        rc, text = self.verify(folder, timeout=60)
        self.assertEqual(rc, 2, text)
        self.assertIn(b"fifo.safetensors: file: is a FIFO, not a regular file", text)
        self.assertIn(b"dangling.safetensors: file: is a symbolic link to nothing", text)
        rc, text = self.verify(folder / "fifo.safetensors", timeout=60)
        self.assertEqual(rc, 2, text)
        os.mkfifo(self.cases / "z.safetensors")
        rc, text, _ = self.pmqa_run("counts_calls", timeout=60)
        self.assertEqual(rc, 2, text)
        self.assertIn("z.safetensors: file: is a FIFO, not a regular file", text)
        argv = self.argv("counts_calls")
        argv[argv.index(str(self.cases))] = str(self.cases / "z.safetensors")
        p = subprocess.run(argv, capture_output=True, env=self.env(), timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"is a FIFO, not a case file or a directory of them", p.stderr)
        report("FIFO and dangling link: reported by pmqa verify and pmqa-run, no hang")


# ---- Issue 43: faults reproduced on the landed package (items 12-17 here).

def record_of(out: Path) -> dict:
    return json.loads((out / "pmqa-run.json").read_text())


class Item12NotWritten(_Faults):
    """12. A result the system refuses to store (a full disk, a read-only file system) is "not
    written", named with its cause and path, never the op's failure; --resume runs it again, and
    pmqa verify says "not written", not "op failed"."""

    def big_cases(self) -> Path:
        """a and c small, b (next_n 3) with a result of about 100 KiB."""
        cases = self.root / "big-cases"
        cases.mkdir()
        for seed, next_n, name, mml in ((1, 1, "a", 64), (2, 3, "b", 4096), (3, 2, "c", 64)):
            pmqa.cases.write_case_file(cases / f"{name}.safetensors",
                                       si.make_case(seed=seed, next_n=next_n, name=name, max_model_len=mml,
                                                    max_blocks=3))
        return cases

    def resume(self, out: Path):
        p = subprocess.run([sys.executable, "-m", "pmqa.run", "--resume", "--out", str(out)], capture_output=True,
                           env=self.env(PMQA_TEST_OUT=str(out)), timeout=120)
        return p.returncode, (p.stdout + p.stderr).decode()

    def test_a_full_disk_is_not_the_ops_failure(self):
        full = self.root / "full"
        if not self.mount_tmpfs(full, "size=64k"):
            self.skipTest("needs a tmpfs (root, mount allowed): the C++ writers' ENOSPC cannot be emulated in Python")
        cases, junit = self.big_cases(), self.root / "run.xml"
        rc, text, _ = self.pmqa_run("counts_calls", "--cases", str(cases), out=full, junit=junit)
        rec = record_of(full)
        status = {c["name"]: c["status"] for c in rec["cases"]}
        b = next(c for c in rec["cases"] if c["name"] == "b")
        report(f"full --out (tmpfs 64 KiB): exit {rc}; statuses {status}; b: {b['message'][:90]}...")
        self.assertEqual(rc, 2, text)
        self.assertEqual(status, {"a": "ok", "b": "not-written", "c": "pending"}, text)
        self.assertIn(f"not written: {full / 'b.safetensors'}: the file system is full (ENOSPC: No space left on "
                      f"device)", b["message"])
        self.assertIn("not the op's failure", b["message"])
        self.assertNotIn("FAIL ", text)
        self.assertIn("0 failed, 0 unsupported (refused), 0 invalid, 1 not written, 1 not run (exit 2)", text)
        self.no_partials(full)
        suite, jcases = junit_cases(junit)
        self.assertEqual((suite.get("failures"), suite.get("errors")), ("0", "2"))
        self.assertEqual(jcases["b"][0], "error")
        self.assertTrue(jcases["b"][1].startswith("not written: "), jcases["b"])
        vrc, vtext = self.verify(full)
        report("verify of the full --out: " + " | ".join(ln for ln in vtext.decode().splitlines() if "b.safe" in ln))
        self.assertEqual(vrc, 2, vtext)
        self.assertIn(b"b.safetensors: not written: ", vtext)
        self.assertNotIn(b"op failed", vtext)
        self.assertIn(b"1 of 3 case(s) not run, 1 not written", vtext)

        subprocess.run(["mount", "-o", "remount,size=1m", str(full)], check=True)  # space is freed
        rc, text = self.resume(full)
        report("resume after freeing space: " + " | ".join(ln for ln in text.splitlines() if "resum" in ln))
        self.assertEqual(rc, 0, text)
        self.assertIn("b.safetensors: run " + rec["run_id"] + " could not store its result (not written: ", text)
        self.assertIn("1 finished case(s) kept, 2 to run (1 again)", text)
        self.assertEqual({c["name"]: c["status"] for c in record_of(full)["cases"]}, dict.fromkeys("abc", "ok"))
        vrc, vtext = self.verify(full)
        self.assertEqual(vrc, 0, vtext)

    def test_a_read_only_file_system_is_named(self):
        ro = self.root / "ro"
        if not self.mount_tmpfs(ro, "size=1m"):
            self.skipTest("needs a tmpfs (root, mount allowed) to mount read-only during the run")
        self.addCleanup(subprocess.run, ["umount", str(ro)], capture_output=True)  # the op's read-only bind
        rc, text, _ = self.pmqa_run("binds_out_read_only", out=ro, env=self.env(PMQA_TEST_OUT=str(ro)))
        report(f"--out bind-mounted read-only during b: exit {rc}; "
               + " | ".join(ln for ln in text.splitlines() if "not written" in ln)[:200])
        self.assertEqual(rc, 2, text)
        self.assertIn(f"ERROR    case b ({self.cases / 'b.safetensors'}): not written: {ro / 'b.safetensors'}: the "
                      f"file system is read-only (EROFS: Read-only file system)", text)
        self.assertNotIn("FAIL ", text)
        subprocess.run(["umount", str(ro)], check=True)  # the read-only bind goes: the tmpfs takes writes
        # the record could not be saved on a read-only folder: b is pending there, and runs again
        rc, text = self.resume(ro)
        self.assertEqual(rc, 0, text)
        self.assertEqual({c["name"]: c["status"] for c in record_of(ro)["cases"]}, dict.fromkeys("abc", "ok"))

    def test_the_causes_in_words(self):
        import errno
        from pmqa.run.case_run import write_fault_words
        for err, words in ((errno.EDQUOT, "the disk quota is used up (EDQUOT: Disk quota exceeded)"),
                           (errno.ENOSPC, "the file system is full (ENOSPC: No space left on device)"),
                           (errno.EROFS, "the file system is read-only (EROFS: Read-only file system)")):
            self.assertEqual(write_fault_words(err, "the writer's words"), words)


class Item13OutOfMemory(_Faults):
    """13. A worker killed by SIGKILL while it held a lot of memory: "out of memory" is said, with
    the signal, the worker's peak RSS and the case file's size (the OOM killer is emulated: the op
    takes 256 MiB, then SIGKILL)."""

    def test_the_kill_says_out_of_memory(self):
        rc, text, _ = self.pmqa_run("balloons_then_killed", env=self.env(PMQA_FAULT_MIB="256"))
        b = next(c for c in record_of(self.out)["cases"] if c["name"] == "b")
        report(f"SIGKILL after 256 MiB: exit {rc}; b: {b['message']}")
        self.assertEqual(rc, 1, text)
        self.assertIn("died while running the case (killed by SIGKILL): out of memory", b["message"])
        import re
        m = re.search(r"the worker's peak RSS was ([0-9.]+) (MiB|GiB)", b["message"])
        self.assertIsNotNone(m, b["message"])
        mib = float(m.group(1)) * (1024 if m.group(2) == "GiB" else 1)
        self.assertGreaterEqual(mib, 256)
        size = (self.cases / "b.safetensors").stat().st_size
        self.assertIn(f"the case file is {size / 1024:.3g} KiB", b["message"])
        self.assertIn("2 written, 1 failed", text)


class Item14ForkingOp(_Faults):
    """14. An op that forks, its child returning instead of exiting: the child never speaks for the
    worker (every case gets one verdict, its own); an answer out of turn (a duplicate of an earlier
    answer, or one after the last case) fails the run and its JUnit, never a green one."""

    def check_each_case_once(self, out: Path, text: str):
        rec = record_of(out)
        self.assertEqual([(Path(c["file"]).stem, c["name"], c["status"]) for c in rec["cases"]],
                         [(n, n, "ok") for n in "abc"], text)
        for n in "abc":
            self.assertEqual(len([ln for ln in text.splitlines() if ln.startswith(f"ok       {n} ")]), 1, text)
        for n in "abc":
            cf = pmqa.cases.read_case_file(out / f"{n}.safetensors")
            self.assertEqual(cf.name, n)
            want = si.eager_ok(*_eager_args(pmqa.cases.read_case_file(self.cases / f"{n}.safetensors")))
            np.testing.assert_array_equal(cf.logits, want.astype(np.float32))
        self.assertTrue(rec["complete"])

    def children_gone(self):
        children = [int(x) for x in (self.traces / "forked").read_text().split()]
        deadline = time.monotonic() + 10
        while any(pid_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse([c for c in children if pid_alive(c)], "a forked child lived on")
        return children

    def test_a_child_that_returns_is_ended(self):
        for mode in ([], ["--devices", "0,1"], ["--in-process"]):
            with self.subTest(mode=mode):
                out = self.root / f"out{len(mode)}{''.join(mode)}"
                junit = Path(str(out) + ".xml")
                rc, text, _ = self.pmqa_run("forks_child_returns", *mode, out=out, junit=junit)
                children = self.children_gone()
                report(f"fork, child returns {' '.join(mode) or '(one worker)'}: exit {rc}; forked children "
                       f"{children} ended")
                self.assertEqual(rc, 0, text)
                self.check_each_case_once(out, text)
                self.assertIn("a child the op forked in process", text)
                self.assertIn("returned into pmqa-run's code instead of exiting; it exits here", text)
                self.assertEqual({n: s for n, (s, _) in junit_cases(junit)[1].items()}, dict.fromkeys("abc", "ok"))
                (self.traces / "forked").unlink()

    def test_a_duplicate_answer_fails_its_case_and_the_run(self):
        junit = self.root / "run.xml"
        rc, text, _ = self.pmqa_run("replays_an_answer", junit=junit)
        rec = record_of(self.out)
        verdicts = {c["name"]: c["status"] for c in rec["cases"]}
        report(f"a duplicate of a's answer during b: exit {rc}; {verdicts}")
        self.assertEqual(rc, 1, text)
        self.assertEqual([(Path(c["file"]).stem, c["name"]) for c in rec["cases"]], [(n, n) for n in "abc"])
        self.assertEqual(verdicts, {"a": "ok", "b": "failed", "c": "ok"}, text)
        b = next(c for c in rec["cases"] if c["name"] == "b")
        self.assertIn(f"the worker's answers cannot be trusted: worker", b["message"])
        self.assertIn(f"a case it had already answered for (a duplicate or late answer)", b["message"])
        self.assertIn(str(self.cases / "a.safetensors"), b["message"])
        self.assertIn("pmqa-run: error: 1 answer(s) out of turn from the worker", text)
        self.assertEqual(junit_cases(junit)[1]["b"][0], "failure")

    def test_a_late_answer_fails_the_run(self):
        junit = self.root / "run.xml"
        rc, text, _ = self.pmqa_run("replays_an_answer_at_exit", junit=junit)
        suite, cases = junit_cases(junit)
        report(f"an answer after the last case: exit {rc}; JUnit failures={suite.get('failures')} "
               f"errors={suite.get('errors')}")
        self.assertEqual(rc, 1, text)
        self.assertEqual({c["name"]: c["status"] for c in record_of(self.out)["cases"]}, dict.fromkeys("abc", "ok"))
        self.assertIn("(1 after its last case): the run fails", text)
        self.assertIn("after its last case, the worker process", text)
        self.assertIn("3 written, 0 failed, 0 unsupported (refused), 0 invalid (exit 1)", text)
        self.assertEqual(suite.get("errors"), "1")
        self.assertEqual(cases["pmqa-run worker answers"][0], "error")
        self.assertIn("a case it had already answered for", cases["pmqa-run worker answers"][1])


class Item15OutputOfAKilledProcess(_Faults):
    """15. A killed pmqa verify or pmqa-run whose output is piped leaves every line it printed:
    verify's notes before its first verdict (its stdout is line-buffered), pmqa-run's per-case lines
    (flushed one by one)."""

    def test_a_killed_verify_leaves_its_lines(self):
        rc, text, _ = self.pmqa_run("counts_calls")
        self.assertEqual(rc, 0, text)
        rec = record_of(self.out)  # made incomplete: verify notes it before the first verdict
        rec["complete"] = False
        c = next(c for c in rec["cases"] if c["name"] == "c")
        c.update(status="pending", written=False, sha256="")
        (self.out / "c.safetensors").unlink()
        (self.out / "pmqa-run.json").write_text(json.dumps(rec))
        # verify stops in its first file at a point the test holds: writing its --map into a FIFO
        maps = self.root / "maps"
        fifo = maps / (self.out / "a.svg").relative_to("/")
        fifo.parent.mkdir(parents=True)
        os.mkfifo(fifo)
        proc = subprocess.Popen([PMQA, "verify", str(self.out), "-j", "1", "--map", str(maps)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        reader = os.open(fifo, os.O_RDONLY)  # returns once verify opens the map: it is judging a.safetensors
        try:
            proc.kill()
            proc.wait(timeout=60)
        finally:
            os.close(reader)
        log = proc.stdout.read().decode()
        proc.stdout.close()
        report(f"pmqa verify killed in its first file: {len(log.splitlines())} line(s) left: {log.strip()[:120]}")
        self.assertIn("is incomplete: 1 of 3 case(s) not run", log)

    def test_a_killed_run_leaves_its_case_lines(self):
        proc = subprocess.Popen(self.argv("hangs_noting_pid"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=self.env(PMQA_FAULT_SLEEP="0"))
        hung = self.traces / "hung"
        deadline = time.monotonic() + 60
        while not hung.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(hung.exists(), "the op never hung on b")
        proc.kill()
        text = proc.communicate(timeout=60)[0].decode()
        self.assertIn(f"ok       a ", text)


class Item16EarlyCtrlC(_Faults):
    """16. Ctrl-C at any point of pmqa-run, not only while cases run: one line, exit 130 (or, after
    the last case, the run's own status), never a traceback, from pmqa-run or its worker. The
    Ctrl-C is sent to pmqa-run's process group (as a terminal sends it) at fixed points, met through
    audit hooks (tests/fault_injection/sitecustomize.py, PMQA_TEST_SIGINT_AT)."""

    def ctrl_c_at(self, where: str, *extra, out=None):
        out = out or self.root / ("out-" + where.replace(":", "-").replace("/", "_")[:60])
        p = subprocess.run(self.argv("counts_calls", *extra, out=out), capture_output=True, timeout=120,
                           env=self.env(PYTHONPATH=os.pathsep.join([str(HERE / "fault_injection"), PYTHONPATH]),
                                        PMQA_TEST_SIGINT_AT=where),
                           start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        text = (p.stdout + p.stderr).decode()
        report(f"Ctrl-C at {where}: exit {p.returncode}, {len(text.splitlines())} line(s), "
               f"{text.count('Traceback')} traceback(s)")
        self.assertNotIn("Traceback", text)
        self.assertNotIn("KeyboardInterrupt", text)
        return p.returncode, text, out

    def test_while_pmqa_run_imports(self):
        rc, text, out = self.ctrl_c_at("main:import:numpy")
        self.assertEqual(rc, 130, text)
        self.assertEqual(text, "pmqa-run: interrupted (SIGINT) before the run started: no case was run\n")
        self.assertFalse(out.exists())

    def test_while_numpys_c_extension_imports(self):
        # numpy's C extension imports datetime (PyCapsule_Import): a KeyboardInterrupt there comes out as
        # numpy's ImportError ("PyCapsule_Import could not import module datetime"), so it is held back
        rc, text, out = self.ctrl_c_at("main:import:datetime")
        self.assertEqual(rc, 130, text)
        self.assertEqual(text, "pmqa-run: interrupted (SIGINT) before the run started: no case was run\n")
        self.assertNotIn("ImportError", text)

    def test_while_it_takes_the_lock(self):
        out = self.root / "out-lock"
        rc, text, _ = self.ctrl_c_at(f"main:open:{out / 'pmqa-run.lock'}", out=out)
        self.assertEqual(rc, 130, text)
        self.assertEqual(text, "pmqa-run: interrupted (SIGINT) before the run started: no case was run\n")

    def test_while_the_worker_starts(self):
        rc, text, out = self.ctrl_c_at("worker:import:numpy")
        self.assertNotIn("SIGINT is not blocked", text)
        self.assertEqual(rc, 130, text)
        self.assertIn("stopping: pmqa-run was interrupted (SIGINT)", text)
        self.assertEqual(record_of(out)["stopped"], "pmqa-run was interrupted (SIGINT)")
        self.assertFalse((self.traces / "calls").exists(), "the op was called")

    def test_after_the_last_case(self):
        rc, text, out = self.ctrl_c_at("main:os.killpg:")  # the first killpg: the worker's end, after the last case
        self.assertEqual(rc, 0, text)
        self.assertIn("pmqa-run: SIGINT arrived after the last case, while the run wrote its record and JUnit: both "
                      "are whole; the exit status is the run's (0)", text)
        self.assertTrue(record_of(out)["complete"])


class Item17ImportHangShown(_Faults):
    """17. A worker whose op import hangs is shown while it waits: a line naming the stage, the op and
    --startup-timeout-s, repeated (PMQA_RUN_WAIT_NOTE_S sets when; 10 s by default), before the
    timeout names it."""

    def test_the_wait_is_shown(self):
        argv = self.argv("op", "--startup-timeout-s", "4")
        argv[argv.index("fault_ops:op")] = "fault_hangs_at_import:op"
        p = subprocess.run(argv, capture_output=True, env=self.env(PMQA_RUN_WAIT_NOTE_S="0.5"), timeout=120)
        text = (p.stdout + p.stderr).decode()
        notes = [ln for ln in p.stdout.decode().splitlines() if ln.startswith("pmqa-run: waiting for the worker")]
        report(f"hang at import, notes every 0.5 s then 3 s, --startup-timeout-s 4: exit {p.returncode}, "
               f"{len(notes)} note(s); first: {notes[0] if notes else None}")
        self.assertEqual(p.returncode, 2, text)
        self.assertGreaterEqual(len(notes), 1, text)
        for note in notes:
            self.assertRegex(note, r"^pmqa-run: waiting for the worker process \d+ to start: importing the op's module "
                                   r"\(fault_hangs_at_import\), \d+ s so far \(--op fault_hangs_at_import:op; \d+ s "
                                   r"since it was started; --startup-timeout-s 4 s ends the wait\)$")
        self.assertIn("did not start within --startup-timeout-s 4 s: it was importing the op's module", text)



class Item18ArtifactNames(_Faults):
    """18. A failing assert_matches leaves its artifacts under the case's whole name, made safe, never
    cut at its last dot ("deepseek-v3.2-decode" and "deepseek-v3.2-prefill" were both
    "deepseek-v3.safetensors", one overwriting the other); two names never share a file."""

    NAMES = ("deepseek-v3.2-decode", "deepseek-v3.2-prefill", "v1.0", "v1.5", "a/b", "a_b", "a:b", ".hidden",
             "long-" + "x" * 300, "ü")

    def test_each_case_its_own_files(self):
        import pmqa
        import re
        folder, saved = self.root / "artifacts", {}
        for i, name in enumerate(self.NAMES):
            path = self.root / f"named{i}.safetensors"
            pmqa.cases.write_case_file(path, si.make_case(seed=i + 1, name=name))
            case = pmqa.read_case(str(path))
            with self.assertRaises(AssertionError) as failure:
                pmqa.assert_matches(case, np.zeros((case.batch * case.next_n, case.max_model_len), np.float32),
                                    artifacts=folder)
            m = re.search(r"^  case with these logits: (.+)$", str(failure.exception), re.M)
            self.assertIsNotNone(m, str(failure.exception))
            saved[name] = folder / m.group(1)
        files = sorted(p.name for p in folder.glob("*.safetensors"))
        report(f"{len(self.NAMES)} failing cases, one artifacts folder: {len(files)} case files, "
               f"{len(list(folder.glob('*.svg')))} maps; e.g. {saved['deepseek-v3.2-decode'].name}, "
               f"{saved['a/b'].name}")
        self.assertEqual(len(set(saved.values())), len(self.NAMES), saved)
        self.assertEqual(len(files), len(self.NAMES), files)
        for name in ("deepseek-v3.2-decode", "deepseek-v3.2-prefill", "v1.0", "v1.5", "a_b"):
            self.assertEqual(saved[name].name, f"{name}.safetensors")
        for name, path in saved.items():
            self.assertLessEqual(len(path.name.encode()), 255)
            self.assertRegex(path.name, r"^[A-Za-z0-9_-][A-Za-z0-9._-]*\.safetensors$")
            self.assertEqual(pmqa.cases.read_case_file(path).name, name)  # each file holds its own case
            self.assertTrue(path.with_name(path.name[:-len(".safetensors")] + ".svg").is_file(), path)
        rc, text = self.verify(saved["deepseek-v3.2-decode"], saved["deepseek-v3.2-prefill"])
        self.assertEqual(rc, 1, text)
        self.assertIn(b"deepseek-v3.2-decode", text)
        self.assertIn(b"deepseek-v3.2-prefill", text)

if __name__ == "__main__":
    unittest.main()
