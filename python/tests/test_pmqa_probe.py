"""pmqa-probe against stand-in vLLM trees (tests/vllm_trees): the engine after vLLM PR 42062 passes,
and each historical or planted dispatch bug fails exactly the rows it affects, with the exit status
the probe promises. numpy-free and torch-free: the probe's torch stand-in is used.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from child_env import child_pythonpath  # python/tests

HERE = Path(__file__).resolve().parent
PYTHON_DIR = HERE.parent
SRC_DIR = PYTHON_DIR / "src"  # the folder holding the pmqa package
TREES = HERE / "vllm_trees"
ENTRY = "vllm/v1/attention/ops/rocm_aiter_mla_sparse.py"
ROCM = "vllm/platforms/rocm.py"

# Versions of the engine made from current/ by exact edits (file, old text, new text); each old
# text must occur once, so an edit cannot silently miss.
EDITS = {
    # vLLM before PR 42062: the fused guard named gfx942 only.
    "before_42062": [(ENTRY, "    if _ON_GFX942 or _ON_GFX950:\n        (logits,)", "    if _ON_GFX942:\n        (logits,)")],
    # A platform file that reads HIP's full gcnArchName and compares it whole.
    "full_name_guard": [
        (ROCM, "_GCN_ARCH = _resolve_gcn_arch()", '_GCN_ARCH = torch.cuda.get_device_properties("cuda").gcnArchName'),
        (ROCM, '_ON_GFX942 = "gfx942" in _GCN_ARCH', '_ON_GFX942 = _GCN_ARCH == "gfx942"'),
        (ROCM, '_ON_GFX950 = "gfx950" in _GCN_ARCH', '_ON_GFX950 = _GCN_ARCH == "gfx950"'),
    ],
    # An arch the platform does not know is assumed CDNA3, so AITER's kernels take it.
    "unknown_arch_to_kernel": [(ROCM, "        return 5\n    return 0\n", "        return 5\n    return 3\n")],
    # Without AITER the entry falls back to vLLM's Triton kernel instead of the eager op.
    "fallback_not_eager": [(ENTRY, "        # No AITER (or switched off): the eager reference.\n        return fp8_paged_mqa_logits_torch(",
                            "        # No AITER (or switched off): the eager reference.\n        return rocm_fp8_paged_mqa_logits_triton(")],
    "entry_renamed": [(ENTRY, "def rocm_fp8_paged_mqa_logits(\n", "def rocm_fp8_paged_mqa_logits_v2(\n")],
    "entry_raises": [(ENTRY, "    from vllm._aiter_ops import rocm_aiter_ops\n\n    batch, next_n, heads, _ = q_fp8.shape",
                      "    from vllm._aiter_ops import rocm_aiter_ops\n\n    raise RuntimeError('planted: the entry fails')\n"
                      "    batch, next_n, heads, _ = q_fp8.shape")],
}


def require_probe_runs(cls):
    """The classes that run the probe over whole matrices (about 2 s each): ctest runs them as
    python.pmqa.probe.<Class> with PMQA_PROBE_TESTS=1; a plain `unittest discover` skips them."""
    if os.environ.get("PMQA_PROBE_TESTS") != "1":
        raise unittest.SkipTest("set PMQA_PROBE_TESTS=1 (ctest runs these as python.pmqa.probe.*)")


def build_tree(name: str, dest: Path) -> Path:
    """current/, then the version's overlay folder, then its edits."""
    shutil.copytree(TREES / "current", dest)
    overlay = TREES / name
    if overlay.is_dir():
        shutil.copytree(overlay, dest, dirs_exist_ok=True)
    for rel, old, new in EDITS.get(name, []):
        path = dest / rel
        text = path.read_text()
        if text.count(old) != 1:
            raise AssertionError(f"{name}: {rel} holds {text.count(old)} copies of the text to edit")
        path.write_text(text.replace(old, new))
    return dest


def run_probe(tree=None, installed_path=None, extra=()):
    """(exit status, stdout, JSON report) of `python3 -m pmqa.probe --engine vllm ...`."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        junit = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-B", "-m", "pmqa.probe", "--engine", "vllm", "--json", str(report),
               "--junit", str(junit), "--jobs", "2"]
        env = dict(os.environ, PYTHONPATH=child_pythonpath(SRC_DIR), PYTHONDONTWRITEBYTECODE="1")
        if installed_path is not None:
            cmd.append("--installed")
            env["PYTHONPATH"] = child_pythonpath(SRC_DIR, installed_path)
        else:
            cmd += ["--source", str(tree)]
        proc = subprocess.run(cmd + list(extra), env=env, capture_output=True, text=True, timeout=300)
        doc = json.loads(report.read_text()) if report.is_file() else None
        junit_xml = ET.parse(junit) if junit.is_file() else None
    return proc.returncode, proc.stdout + proc.stderr, doc, junit_xml


def target(row) -> str:
    return row["arch"].split(":")[0]


def ids(rows) -> set:
    return {r["id"] for r in rows}


class ProbeCase(unittest.TestCase):
    version = "current"
    _cache = {}

    @classmethod
    def setUpClass(cls):
        require_probe_runs(cls)
        cls._tmp = tempfile.TemporaryDirectory()
        tree = build_tree(cls.version, Path(cls._tmp.name) / "tree")
        start = time.monotonic()
        cls.rc, cls.out, cls.doc, cls.junit = run_probe(tree)
        cls.wall = time.monotonic() - start
        cls.tree = tree

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def rows(self, **where):
        return [r for r in self.doc["rows"] if all(r.get(k) == v for k, v in where.items())]

    def failed(self):
        return [r for r in self.doc["rows"] if r["verdict"] == "mismatch"]

    def expecting(self, entry, rows=None):
        return [r for r in (rows or self.doc["rows"]) if r["expected"] and r["expected"]["entry"] == entry]


class FixedEngine(ProbeCase):
    """vLLM after PR 42062: every row the entry can express matches the matrix."""

    def test_exit_zero_every_rocm_row_probed(self):
        self.assertEqual(self.rc, 0, self.out)
        probed = [r for r in self.doc["rows"] if r["verdict"] != "skipped"]
        self.assertGreaterEqual(len(probed), 150)
        self.assertTrue(all(r["verdict"] == "ok" for r in probed), self.out)
        self.assertEqual({target(r) for r in probed if r["kind"] == "policy"},
                         {"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1200",
                          "gfx1201", "gfx1250", "gfx1300", "gfx908"})
        self.assertIn("158 ok", self.out)

    def test_pre_production_mi300_runs_the_eager_op_with_aiter_installed(self):
        # gfx940/gfx941 are named by no branch of get_cdna_version(), so AITER counts as unsupported.
        rows = [r for r in self.doc["rows"] if target(r) in ("gfx940", "gfx941")
                and r["configuration"]["kernels"] == "present"]
        self.assertEqual(len(rows), 24)
        replaced = [r for r in rows if r["kind"] == "policy"]
        self.assertTrue(replaced and all(r["verdict"] == "skipped" for r in replaced))
        engine = [r for r in rows if r["kind"] == "engine"]
        self.assertEqual(len(engine), 12)
        for r in engine:
            self.assertEqual(r["verdict"], "ok", r["message"])
            self.assertEqual([c["entry"] for c in r["calls"]], ["vllm-eager"], r["message"])

    def test_fused_rows_name_the_kernel_arguments(self):
        gfx950 = [r for r in self.expecting("aiter-fused") if r["arch"] == "gfx950" and r["kind"] == "policy"]
        self.assertGreaterEqual(len(gfx950), 6)
        for r in gfx950:
            (call,) = r["calls"]
            self.assertEqual(call["function"], "deepgemm_fp8_paged_mqa_logits")
            self.assertEqual(call["kwargs"]["KVBlockSize"], r["configuration"]["block_size"])
            self.assertEqual(call["kwargs"]["Preshuffle"], r["configuration"]["block_size"] > 1)
            self.assertEqual(call["args"][0]["dtype"], "float8_e4m3fn")
            self.assertEqual(r["workspace"], [{"shape": [2 * r["configuration"]["next_n"], call["args"][6]],
                                               "dtype": "float32"}])
            self.assertEqual(call["module"], "aiter.ops.triton.pa_mqa_logits")

    def test_aiter_absent_gives_the_eager_op(self):
        absent = [r for r in self.doc["rows"] if r["configuration"]["kernels"] == "absent"
                  and r["verdict"] != "skipped" and not r["configuration"]["entry_kwargs"]]
        self.assertGreaterEqual(len(absent), 60)
        for r in absent:
            self.assertEqual([c["entry"] for c in r["calls"]], ["vllm-eager"], r["message"])
        off = [r for r in self.doc["rows"] if not r["configuration"]["kernels_enabled"]
               and not r["configuration"]["entry_kwargs"]]
        self.assertEqual(len(off), 5)
        self.assertTrue(all(r["observed"].endswith("by vllm-eager") for r in off))

    def test_compress_ratio_rows(self):
        c4a = [r for r in self.doc["rows"] if r["configuration"]["entry_kwargs"].get("compress_ratio") == 4]
        self.assertGreaterEqual(len(c4a), 10)
        triton = [r for r in c4a if r["expected"]["entry"] == "vllm-triton"]
        self.assertGreaterEqual(len(triton), 6)
        for r in triton:
            self.assertEqual([c["function"] for c in r["calls"]], ["rocm_fp8_paged_mqa_logits_triton"])

    def test_nvidia_and_malformed_rows_are_skipped_with_a_reason(self):
        sm = [r for r in self.doc["rows"] if r["arch"] in ("sm_89", "sm_90", "sm_100")]
        self.assertTrue(sm and all(r["verdict"] == "skipped" and "DeepGEMM" in r["message"] for r in sm))
        self.assertTrue(all(r["verdict"] == "skipped" for r in self.doc["rows"] if r["arch"] in ("", "gfx", "gfx942:")))

    def test_junit_and_json(self):
        suite = self.junit.getroot().find("testsuite")
        self.assertEqual(int(suite.get("failures")), 0)
        self.assertEqual(int(suite.get("tests")), len(self.doc["rows"]))
        self.assertEqual(self.doc["schema"], "pmqa_probe/1")
        self.assertEqual(self.doc["exit"], 0)

    def test_all_rows_within_30_seconds_on_2_cores(self):
        # One interpreter per arch (17), two at a time.
        self.assertEqual(self.doc["interpreters"], len({r["arch"] for r in self.doc["rows"] if r["verdict"] != "skipped"}))
        self.assertLess(self.wall, 30.0, f"the whole matrix took {self.wall:.1f} s")

    def test_installed_mode_imports_the_tree_as_a_package(self):
        rc, out, doc, _ = run_probe(installed_path=self.tree)
        self.assertEqual(rc, 0, out)
        self.assertEqual(doc["mode"], "installed")
        self.assertEqual(doc["summary"].get("ok"), sum(1 for r in self.doc["rows"] if r["verdict"] == "ok"))


class BeforePr42062(ProbeCase):
    """The guard before vLLM PR 42062 (gfx942 only) fails exactly the gfx950 rows that need AITER's fused kernel."""
    version = "before_42062"

    def test_fails_exactly_the_gfx950_fused_rows(self):
        self.assertEqual(self.rc, 1, self.out)
        want = [r for r in self.expecting("aiter-fused") if target(r) == "gfx950"]
        self.assertGreaterEqual(len(want), 10)
        self.assertEqual(ids(self.failed()), ids(want))
        for r in self.failed():
            self.assertIn("MI355X", r["message"])
            self.assertIn("expected fused", r["message"])
            self.assertIn("deepgemm_fp8_paged_mqa_logits_stage1", r["message"])
        self.assertIn("MISMATCH P48 (an engine regression, or a matrix row to review): gfx950 (MI350X/MI355X), "
                      "AITER present, block_size 1, next_n 1: expected fused, e4m3fn, NORMAL by aiter-fused", self.out)


class BeforePr40871(ProbeCase):
    """The entry before vLLM PR 40871 ran two-stage on every arch: the gfx942 and gfx950 fused rows fail."""
    version = "before_40871"

    def test_fails_the_gfx942_and_gfx950_fused_rows(self):
        self.assertEqual(self.rc, 1, self.out)
        want = [r for r in self.expecting("aiter-fused") if target(r) in ("gfx942", "gfx950")
                and not r["configuration"]["entry_kwargs"]]
        self.assertGreaterEqual(len(want), 20)
        self.assertEqual(ids(self.failed()), ids(want))
        self.assertEqual({target(r) for r in self.failed()}, {"gfx942", "gfx950"})
        for r in self.failed():
            self.assertIn("observed two-stage", r["message"])

    def test_compress_ratio_rows_are_not_expressed(self):
        kw = [r for r in self.doc["rows"] if r["configuration"]["entry_kwargs"]]
        self.assertTrue(kw)
        for r in kw:
            self.assertEqual(r["verdict"], "skipped")
            self.assertIn("takes no keyword 'compress_ratio'", r["message"])


class FullNameGuard(ProbeCase):
    """A guard comparing the whole gcnArchName misses gfx942:sramecc+:xnack- and its kin."""
    version = "full_name_guard"

    def test_fails_the_flagged_fused_rows(self):
        self.assertEqual(self.rc, 1, self.out)
        want = [r for r in self.doc["rows"] if ":" in r["arch"] and target(r) in ("gfx942", "gfx950")
                and r["expected"] and r["expected"]["entry"] in ("aiter-fused", "vllm-triton")]
        self.assertGreaterEqual(len(want), 7)
        self.assertEqual(ids(self.failed()), ids(want))
        self.assertIn("gfx942:sramecc+:xnack-", {r["arch"] for r in self.failed()})


class UnknownArchToKernel(ProbeCase):
    """An arch the table does not know, silently given AITER's kernels, fails."""
    version = "unknown_arch_to_kernel"

    def test_unknown_archs_sent_to_a_kernel_fail(self):
        self.assertEqual(self.rc, 1, self.out)
        unknown = [r for r in self.doc["rows"] if target(r) in ("gfx1300", "gfx908")
                   and r["configuration"]["kernels"] == "present"]
        self.assertEqual(len(unknown), 2)
        self.assertTrue(ids(unknown) <= ids(self.failed()))
        # gfx940/gfx941 are unnamed by get_cdna_version() too: the planted default sends them to
        # AITER's stage 1, against the engine rows that record vLLM's eager op there.
        pre_production = [r for r in self.failed() if target(r) in ("gfx940", "gfx941")]
        self.assertEqual(len(pre_production), 12)
        for r in pre_production:
            self.assertEqual((r["kind"], r["expected"]["entry"]), ("engine", "vllm-eager"), r["message"])
            self.assertIn("observed two-stage", r["message"])
        for r in self.failed():
            if r in pre_production:
                continue
            self.assertEqual(r["expected"]["kind"], "no-kernel", r["message"])
            self.assertIn("is a kernel path", r["message"])
        self.assertIn("an unknown arch must be an explicit error, never a silent kernel path", self.out)


class FallbackNotEager(ProbeCase):
    """Without AITER the entry must run the eager op; a Triton fallback in its place fails those rows."""
    version = "fallback_not_eager"

    def test_every_eager_row_without_c4a_fails(self):
        self.assertEqual(self.rc, 1, self.out)
        eager = [r for r in self.doc["rows"] if r["verdict"] != "skipped" and not r["configuration"]["entry_kwargs"]
                 and (r["expected"]["entry"] == "vllm-eager" or r["expected"]["kind"] == "no-kernel")]
        self.assertGreaterEqual(len(eager), 70)
        self.assertEqual(ids(self.failed()) & ids(eager), ids(eager))
        for r in self.failed():
            self.assertIn("vllm-triton", r["observed"])


class EntryMoved(unittest.TestCase):
    """A module or entry the adapter expects and cannot find, or an entry that raises: exit 2, naming it."""

    @classmethod
    def setUpClass(cls):
        require_probe_runs(cls)

    def test_module_moved(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree = build_tree("current", Path(tmp) / "tree")
            moved = tree / "vllm/v1/attention/ops/rocm_sparse_indexer_ops.py"
            (tree / ENTRY).rename(moved)
            rc, out, doc, _ = run_probe(tree, extra=("--arch", "gfx950"))
        self.assertEqual(rc, 2, out)
        self.assertIn("has no vllm/v1/attention/ops/rocm_aiter_mla_sparse.py", out)
        self.assertTrue(all(r["verdict"] == "error" for r in doc["rows"] if r["verdict"] != "skipped"))

    def test_entry_renamed(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, out, doc, _ = run_probe(build_tree("entry_renamed", Path(tmp) / "tree"), extra=("--arch", "gfx942"))
        self.assertEqual(rc, 2, out)
        self.assertIn("vllm.v1.attention.ops.rocm_aiter_mla_sparse has no rocm_fp8_paged_mqa_logits", out)
        self.assertIn("COULD NOT RUN", out)

    def test_a_real_module_missing_is_named_as_the_file_to_add(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree = build_tree("current", Path(tmp) / "tree")
            (tree / ROCM).unlink()
            rc, out, doc, _ = run_probe(tree, extra=("--arch", "gfx942"))
        self.assertEqual(rc, 2, out)
        self.assertIn(f"the source tree {tree} lacks {ROCM}: the probe runs that module from the tree, so put it "
                      "there", out)
        self.assertNotIn("declare it in the adapter", out)

    def test_entry_raises(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, out, doc, _ = run_probe(build_tree("entry_raises", Path(tmp) / "tree"), extra=("--arch", "gfx942"))
        self.assertEqual(rc, 2, out)
        self.assertIn("the entry raised RuntimeError: planted: the entry fails", out)
        self.assertIn("Traceback", out)


class TorchChoice(unittest.TestCase):
    """The probe's verdicts do not depend on which torch is installed: one too old for the engine gives
    way to the stand-in, and the header says why (with torch hidden, the same as without torch)."""

    @classmethod
    def setUpClass(cls):
        require_probe_runs(cls)

    def test_verdicts_and_header(self):
        from pmqa.probe import runner
        mode, note = runner.choose_torch("auto", ("float8_e4m3fn", "float8_e4m3fnuz"))
        with tempfile.TemporaryDirectory() as tmp:
            tree = build_tree("current", Path(tmp) / "tree")
            rc, out, doc, _ = run_probe(tree, extra=("--arch", "gfx942", "--arch", "gfx950"))
            rc_fake, _, doc_fake, _ = run_probe(tree, extra=("--arch", "gfx942", "--arch", "gfx950", "--fake-torch"))
        self.assertEqual((rc, rc_fake), (0, 0), out)
        self.assertEqual([(r["id"], r["verdict"]) for r in doc["rows"]],
                         [(r["id"], r["verdict"]) for r in doc_fake["rows"]])
        self.assertIn(f"torch: {note}", out)
        try:
            import torch
        except ImportError:
            self.assertEqual((mode, note), ("stand-in", "the probe's stand-in (torch is not installed)"))
            return
        if not hasattr(torch, "float8_e4m3fnuz"):
            self.assertEqual(mode, "stand-in")
            self.assertIn(f"torch {torch.__version__} is too old for the engine (no torch.", note)
        else:
            self.assertEqual((mode, note), ("real", f"torch {torch.__version__}"))

    def test_real_torch_refuses_a_torch_too_old(self):
        from pmqa.probe import runner
        with self.assertRaisesRegex(RuntimeError, "--real-torch: "):
            runner.choose_torch("real", ("no_such_torch_attribute",))


class Unit(unittest.TestCase):
    """The probe's parts, in this process (no engine is imported here)."""

    @classmethod
    def setUpClass(cls):
        if str(SRC_DIR) not in sys.path:
            sys.path.insert(0, str(SRC_DIR))

    def test_the_data_is_the_cpp_loaders(self):
        # The builtin matrix and table are the C++ library's compiled-in copies of the reviewed
        # files, validated by its loaders; a file given instead is validated the same way.
        from pmqa.probe import data

        repo = PYTHON_DIR.parent
        matrix, table = data.load_matrix(), data.load_arch_table()
        self.assertIn("arch_matrix.json", matrix.source)
        on_disk = json.loads((repo / "fixtures" / "arch_matrix.json").read_text())
        self.assertEqual(len(matrix.rows), len(on_disk["rows"]))
        self.assertEqual(len(matrix.engine_rows), len(on_disk.get("engine_rows", [])))
        self.assertEqual(sorted(table.archs), sorted(a["target"] for a in json.loads(
            (repo / "dispatch" / "data" / "arch_table.json").read_text())["archs"]))
        self.assertEqual(data.load_matrix(repo / "fixtures" / "arch_matrix.json").rows[0], matrix.rows[0])
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "m.json"
            on_disk["rows"][0]["block_size"] = "64"
            bad.write_text(json.dumps(on_disk))
            with self.assertRaisesRegex(data.DataError, "m.json"):
                data.load_matrix(bad)

    def test_engine_rows_agree_with_the_arch_table_and_the_adapter(self):
        from pmqa.probe import adapters, data

        matrix, table = data.load_matrix(), data.load_arch_table()
        vllm = adapters.load("vllm")
        mine = [r for r in matrix.engine_rows if r.engine == "vllm"]
        self.assertGreaterEqual(len(mine), 15)
        for r in mine:
            info = table.find(r.arch.split(":")[0])
            self.assertIsNotNone(info, r)
            if r.path != "unsupported":
                self.assertEqual(r.fp8, info.fp8, r)
            self.assertTrue(set(r.entry_kwargs) <= set(vllm.entry_kwargs), r)
            if r.entry:
                self.assertIsNotNone(vllm.entry_named(r.entry), r)
        # Two page-size observations (gfx942 bs 8, gfx950 bs 24) and the twelve gfx940/gfx941 AITER
        # rows where vLLM's get_cdna_version() answers 0.
        self.assertEqual(sum(r.replaces_policy_row for r in mine), 14)
        pre_production = [r for r in mine if r.arch in ("gfx940", "gfx941")]
        self.assertEqual(len(pre_production), 12)
        self.assertTrue(all(r.replaces_policy_row and r.entry == "vllm-eager" for r in pre_production))

    def test_simulated_amdsmi_has_every_name_vllms_platform_file_imports(self):
        # vLLM's rocm.py binds these in one `from amdsmi import (...)`; one missing name would leave
        # all of them unbound on a real amdsmi, and in the probe would show up as a stub.
        from pmqa.probe import identity

        amdsmi = identity.amdsmi_module(identity.identity_for("gfx942"))
        for name in ("AmdSmiException", "AmdSmiMemoryType", "amdsmi_get_gpu_asic_info", "amdsmi_get_gpu_device_uuid",
                     "amdsmi_get_gpu_memory_total", "amdsmi_get_processor_handles", "amdsmi_init",
                     "amdsmi_shut_down", "amdsmi_topo_get_link_type", "amdsmi_topo_get_numa_node_number"):
            self.assertIn(name, vars(amdsmi), name)
        (handle,) = amdsmi.amdsmi_get_processor_handles()
        self.assertGreater(amdsmi.amdsmi_get_gpu_memory_total(handle, amdsmi.AmdSmiMemoryType.VRAM), 0)
        self.assertEqual(amdsmi.amdsmi_get_gpu_asic_info(handle)["target_graphics_version"], "gfx942")

    def test_stubs_import_but_refuse_use_inside_the_entry(self):
        from pmqa.probe import stubs

        decorator = stubs.make_stub("engine.compilation.eager_break")
        factory = stubs.make_stub("engine.utils.register")

        @decorator
        def f():
            return 1

        @factory("name", tags=())
        def g():
            return 2

        self.assertEqual((f(), g()), (1, 2))

        class Real(stubs.make_stub("engine.layers.CustomOp")):
            def __init__(self, x):
                self.x = x

        self.assertEqual(Real(3).x, 3)
        self.assertIsNotNone(stubs.make_stub("engine.Tensor") | None)
        with stubs.guarded():
            with self.assertRaisesRegex(stubs.StubUsedError, r"engine\.envs\.SWITCH"):
                bool(stubs.make_stub("engine.envs").SWITCH)
            with stubs.suspended():
                stubs.make_stub("engine.logger").warning("imports may use stubs")

    def test_top_level_constructs_of_engine_files_import_with_stubs(self):
        # What the published vLLM files do at their top level: a third-party import this interpreter
        # may lack (regex), torch submodules, annotations over torch types and stubs, Triton kernels
        # with and without options, ctypes probing of torch._C, stubbed decorators and registrations.
        module = """
import ctypes
import functools
from collections.abc import Callable
from importlib.util import find_spec

import regex as re
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch._ops import OpOverload
from torch.distributed import PrefixStore, ProcessGroup

import vllm.envs as envs
from vllm.compilation.breakable_cudagraph import eager_break_during_capture
from vllm.logger import init_logger
from vllm.triton_utils import tl, triton
from vllm.utils.torch_utils import LayerNameType, direct_register_custom_op

logger = init_logger(__name__)
FP8 = {d for d in (getattr(torch, "float8_e4m3fn", None), getattr(torch, "float8_e4m3fnuz", None)) if d is not None}


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p)]


def _hip_runtime():
    try:
        return ctypes.CDLL(torch._C.__file__)
    except (AttributeError, OSError, TypeError):
        logger.warning_once("no HIP runtime")
        return None


HIP = _hip_runtime()


@triton.jit
def kernel_a(x_ptr, n, BLOCK: tl.constexpr):
    pass


@triton.jit(do_not_specialize=["n"])
def kernel_b(x_ptr, n, BLOCK: tl.constexpr):
    pass


def f(x: torch.Tensor | None = None, dt: torch.dtype = torch.bfloat16, dev: torch.types.Device | None = None,
      name: LayerNameType = "") -> tuple[torch.Tensor, torch.Tensor] | None:
    return None


@eager_break_during_capture
def g(a: Callable[..., torch.Tensor] | None = None, group: ProcessGroup | None = None) -> OpOverload | None:
    return envs.VLLM_SOME_SWITCH


class Ops:
    _ON = envs.VLLM_SOME_SWITCH

    @classmethod
    @functools.cache
    def probe(cls) -> bool:
        return True


direct_register_custom_op(op_name="x", op_func=g, mutates_args=[], fake_impl=f)
RESULT = (callable(g) and g.__name__, re.match(r"gfx([0-9]+)", "gfx942").group(1), Ops.probe(), HIP,
          sorted(str(d) for d in FP8), type(kernel_b).__name__)
"""
        script = """
import sys
from pathlib import Path
from pmqa.probe import fake_torch, identity, stubs

ident = identity.identity_for("gfx950")
fake_torch.install(lambda: ident)
sys.meta_path.insert(0, stubs.EngineTreeFinder(Path(sys.argv[1]), "vllm", ["vllm.engine_mod"], {}))
sys.meta_path.append(stubs.FallbackStubFinder(["psutil"], {"regex": "re"}))
import vllm.engine_mod as m
print(repr(m.RESULT))
try:
    with stubs.guarded():
        m.g()
except stubs.StubUsedError as exc:
    print("refused:", exc)
"""
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "vllm").mkdir()
            (Path(tmp) / "vllm" / "engine_mod.py").write_text(module)
            env = dict(os.environ, PYTHONPATH=child_pythonpath(SRC_DIR), PYTHONDONTWRITEBYTECODE="1")
            out = subprocess.run([sys.executable, "-B", "-c", script, tmp], env=env, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual(lines[0], "('g', '942', True, None, ['torch.float8_e4m3fn', 'torch.float8_e4m3fnuz'], "
                                   "'function')", out.stdout)
        self.assertIn("refused: the entry used vllm.envs.VLLM_SOME_SWITCH", lines[1])

    def test_torch_stand_in_shapes(self):
        from pmqa.probe import fake_torch as ft, stubs

        kv = ft.Tensor((6, 64, 1, 132), ft.DTYPES["uint8"])
        flat = kv.reshape(6, -1)
        self.assertEqual(flat.shape, (6, 64 * 132))
        values = flat[:, : 64 * 128].view(ft.DTYPES["float8_e4m3fnuz"])
        self.assertEqual((values.shape, values.stride()), ((6, 64 * 128), (64 * 132, 1)))
        scales = flat[:, 64 * 128:].view(ft.DTYPES["float32"])
        self.assertEqual(scales.shape, (6, 64))
        self.assertFalse(scales.is_contiguous())
        per_head = ft.empty((64, 4, 256), dtype=ft.DTYPES["float32"])
        self.assertEqual(per_head.fill_(float("-inf")).sum(dim=0).shape, (4, 256))
        self.assertEqual(kv[1, :, 0].shape, (64, 132))
        with self.assertRaises(stubs.StubUsedError):
            per_head.item()
        self.assertFalse(hasattr(per_head, "masked_fill_"))

    def test_identity(self):
        from pmqa.probe import identity

        self.assertEqual(identity.hip_capability("gfx942"), (9, 4))
        self.assertEqual(identity.hip_capability("gfx90a"), (9, 0))
        self.assertEqual(identity.hip_capability("gfx1201"), (12, 0))
        self.assertEqual(identity.hip_capability("gfx1250"), (12, 5))
        ident = identity.identity_for("gfx942:sramecc+:xnack-", "MI300X")
        self.assertEqual((ident.vendor, ident.target, ident.flags), ("amd", "gfx942", ("sramecc+", "xnack-")))
        smi = identity.amdsmi_module(ident)
        (handle,) = smi.amdsmi_get_processor_handles()
        self.assertEqual(smi.amdsmi_get_gpu_asic_info(handle)["target_graphics_version"], "gfx942")
        self.assertEqual(identity.identity_for("sm_100").capability, (10, 0))

    def test_one_interpreter_per_arch_from_a_source_tree(self):
        from pmqa.probe import adapters, data, plan, runner

        rows = plan.build(data.load_matrix(), data.load_arch_table(), adapters.load("vllm"))
        source = runner.plans(rows, "vllm", "source", "/tree", "auto", {})
        archs = {r.row.arch for r in rows if not r.skip}
        self.assertEqual(len(source), len(archs))
        self.assertEqual(sorted(p["arch"] for p in source), sorted(archs))
        gfx942 = next(p for p in source if p["arch"] == "gfx942")
        self.assertEqual(sorted(c["key"] for c in gfx942["configs"]), ["absent", "off", "on"])
        installed = runner.plans(rows, "vllm", "installed", None, "auto", {})
        self.assertEqual(len(installed), sum(len(p["configs"]) for p in source))


if __name__ == "__main__":
    unittest.main()
