"""pytest plugin: a test that takes ``pmqa_case`` runs once per case of a pmqa suite.

Installed pmqa registers this module under pytest's ``pytest11`` entry point, so pytest loads it by
itself; from a source tree, ``-p pmqa.pytest_plugin``. Options:

  --pmqa-suite NAME          quick (default), standard, nightly
  --pmqa-fit CONVENTION[:PLATFORM]
                             the suite drawn inside the envelope of the library behind a calling
                             convention (aiter-fused, aiter-stage1, deepgemm, eager, vllm-rocm;
                             platform cuda, rocm or none where the envelope lists several), as
                             `pmqa gen --fit`
  --pmqa-skip-outside CONVENTION[:PLATFORM]
                             the suite's own cases, those outside that envelope skipped with the
                             limit they break
  --pmqa-overlay FILE        an envelope overlay (`pmqa gen --envelope FILE`), repeatable
  --pmqa-case NAME           only these cases (repeatable; a name the suite lacks lists the close ones)
  --pmqa-device DEVICE       inputs as torch tensors on DEVICE (cuda, cuda:1, cpu); default numpy.
                             A device that is absent skips every case with the reason.
  --pmqa-include-large       also the gigabyte cases (skipped otherwise, with the reason)
  --pmqa-artifacts DIR       where a failing case leaves the case file with the kernel's logits and
                             its error map (SVG), one folder per test; default: the test's tmp_path
  --pmqa-shard K/N           only shard K of N of the suite (the split pmqa gen/check/verify and
                             pmqa-run --shard make: N CI jobs together run every case once)
  --pmqa-results DIR         a test that takes ``pmqa_result`` runs once per result file (*.safetensors)
                             in DIR, e.g. a pmqa-run's --out: the file read as a pmqa.Case holding the
                             kernel's logits and the gates its run recorded
  --pmqa-cases DIR           the input case files of logits-only result files (pmqa-run --logits-only)

A test module or function may carry ``@pytest.mark.pmqa(suite=..., fit=..., skip_outside=...,
cases=[...], device=...)`` for the defaults it needs; a command-line option wins. Test ids are the case
names, e.g. ``test_kernel[edge-lengths-1d]``. ``pmqa.assert_matches(case, logits)`` fails with pmqa's
report and its text map as the message; the message ends with the one command that reproduces the
verdict from the artifacts (``pmqa verify FILE``), the test's node id and the command that runs the
test again (``python -m pytest PATH::TEST[CASE]`` with this session's options, run as printed from
the directory pytest ran in).

A run's result files are judged as `pmqa verify` judges them, numbers and the run's gates (a file
whose run failed --max-floor-ratio or --expect-path fails, naming the gate)::

    def test_run(pmqa_result):
        pmqa.assert_matches(pmqa_result, pmqa_result.logits)

Under pytest-xdist (``-n N``) each worker sees one GPU: worker i gets visible device i mod the count
(CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES), so ``--pmqa-device cuda`` spreads a suite over the
GPUs of a machine. In JUnit (``--junitxml``) a pmqa case's testcase has the shape of ``pmqa-run``'s
and ``pmqa verify``'s: classname the producer of the logits (here the test, module.function),
name the case.
"""
from __future__ import annotations

import difflib
import os
import shlex
import shutil
import sys
from typing import Any, Dict, List, Optional, Tuple

import pytest

_MARKER_KEYS = {"suite", "fit", "skip_outside", "cases", "device"}
_VISIBLE = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")


def _conventions() -> str:
    """The conventions with a builtin envelope, for the help (from the data, so none goes missing)."""
    from pmqa.cases.envelope import EnvelopeError, envelope_conventions
    try:
        return ", ".join(envelope_conventions())
    except EnvelopeError:  # no data folder: the help still works
        return "pmqa gen --help lists them"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("pmqa", "pmqa: FP8 paged MQA logits cases")
    conventions = _conventions()
    group.addoption("--pmqa-suite", default=None, metavar="NAME",
                    help="the pmqa suite the pmqa_case fixture runs over: quick (default), standard, nightly")
    group.addoption("--pmqa-fit", default=None, metavar="CONVENTION[:PLATFORM]",
                    help=f"the suite drawn inside this calling convention's envelope (as pmqa gen --fit; {conventions})")
    group.addoption("--pmqa-skip-outside", default=None, metavar="CONVENTION[:PLATFORM]",
                    help=f"the suite's own cases; those outside this convention's envelope ({conventions}) are skipped "
                         "with the reason")
    group.addoption("--pmqa-overlay", action="append", default=[], metavar="FILE",
                    help="an envelope overlay file adding, replacing or dropping limits (repeatable)")
    group.addoption("--pmqa-case", action="append", default=[], metavar="NAME",
                    help="only this case of the suite (repeatable)")
    group.addoption("--pmqa-device", default=None, metavar="DEVICE",
                    help="hand the inputs as torch tensors on DEVICE (default: numpy arrays); absent: skipped")
    group.addoption("--pmqa-include-large", action="store_true", default=False,
                    help="also run the gigabyte cases")
    group.addoption("--pmqa-shard", default=None, metavar="K/N",
                    help="only shard K of N of the suite (a stable split balanced by work, as pmqa gen --shard)")
    group.addoption("--pmqa-results", default=None, metavar="DIR",
                    help="run a test that takes pmqa_result once per result file (*.safetensors) in DIR, e.g. a "
                         "pmqa-run's --out; judged with the gates its run recorded")
    group.addoption("--pmqa-cases", default=None, metavar="DIR",
                    help="the input case files of logits-only result files (pmqa-run --logits-only)")
    group.addoption("--pmqa-artifacts", default=None, metavar="DIR",
                    help="where a failing case leaves its case file with the logits and its error map "
                         "(default: the test's tmp_path)")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "pmqa(suite=None, fit=None, skip_outside=None, cases=None, device=None): the "
                                       "pmqa cases a test that takes pmqa_case runs over")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistController(), "pmqa-xdist")
    _pin_worker_gpu(config)


# ---- pytest-xdist: one GPU per worker

def _visible_gpus() -> List[str]:
    """The GPUs this process may use, as the ids CUDA_VISIBLE_DEVICES takes: the list already set,
    else every device torch counts (none without torch)."""
    for var in _VISIBLE:
        if os.environ.get(var):
            return [g.strip() for g in os.environ[var].split(",") if g.strip()]
    try:
        import torch
    except ImportError:
        return []
    try:
        return [str(i) for i in range(torch.cuda.device_count())]
    except Exception:  # a broken driver counts as no GPU: the tests then skip with torch's reason
        return []


class _XdistController:
    """Registered only when pytest-xdist is loaded (its hook is unknown to pytest otherwise)."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if not hasattr(self, "gpus"):
            self.gpus = _visible_gpus()  # the controller counts once; workers must not touch CUDA first
        node.workerinput["pmqa_gpus"] = list(self.gpus)


def _pin_worker_gpu(config: Any) -> None:
    inputs = getattr(config, "workerinput", None)
    if not inputs or not inputs.get("pmqa_gpus"):
        return
    gpus = inputs["pmqa_gpus"]
    worker = int(str(inputs.get("workerid", "gw0")).lstrip("gw") or 0)
    gpu = gpus[worker % len(gpus)]
    for var in _VISIBLE:
        os.environ[var] = gpu
    config.stash[_PINNED] = f"worker {inputs.get('workerid')} pinned to GPU {gpu} of {','.join(gpus)}"


_PINNED = pytest.StashKey[str]()


# ---- which cases a test runs over

def _choice(metafunc: Any) -> Dict[str, Any]:
    opt = metafunc.config.getoption
    marker = metafunc.definition.get_closest_marker("pmqa")
    kw = dict(marker.kwargs) if marker else {}
    unknown = set(kw) - _MARKER_KEYS
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.pmqa: unknown argument(s) {sorted(unknown)}")
    return {"suite": opt("--pmqa-suite") or kw.get("suite") or "quick",
            "fit": opt("--pmqa-fit") or kw.get("fit"),
            "skip_outside": opt("--pmqa-skip-outside") or kw.get("skip_outside"),
            "overlays": tuple(opt("--pmqa-overlay")),
            "cases": list(opt("--pmqa-case")) or list(kw.get("cases") or []),
            "device": opt("--pmqa-device") or kw.get("device"),
            "include_large": bool(opt("--pmqa-include-large")),
            "shard": opt("--pmqa-shard")}


_SUITES: Dict[Tuple[Any, ...], List[Any]] = {}


def _suite(choice: Dict[str, Any]) -> List[Any]:
    import pmqa  # the extension is loaded when a test asks for a case, not when pytest starts

    key = tuple(choice[k] for k in ("suite", "fit", "skip_outside", "overlays", "device"))
    if key not in _SUITES:
        _SUITES[key] = list(pmqa.cases(choice["suite"], fit=choice["fit"], device=choice["device"], include_large=True,
                                       envelope=choice["skip_outside"], overlays=choice["overlays"]))
    return _SUITES[key]


_DEVICES: Dict[str, Optional[str]] = {}


def device_absent(device: Optional[str]) -> Optional[str]:
    """Why the inputs cannot go to this device here (torch missing, no such GPU), or None."""
    if device is None:
        return None
    if device not in _DEVICES:
        _DEVICES[device] = _why_absent(device)
    return _DEVICES[device]


def _why_absent(device: str) -> Optional[str]:
    try:
        import torch
    except ImportError:
        return f"--pmqa-device {device}: torch is not installed"
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError) as exc:
        raise pytest.UsageError(f"pmqa: --pmqa-device {device}: {exc}") from None
    if dev.type == "cpu":
        return None
    if dev.type != "cuda":
        return f"--pmqa-device {device}: pmqa hands inputs to cpu or cuda (CUDA/ROCm) devices"
    if not torch.cuda.is_available():
        return f"--pmqa-device {device}: no CUDA/ROCm device here (torch {torch.__version__}: torch.cuda.is_available() is False)"
    count = torch.cuda.device_count()
    if dev.index is not None and dev.index >= count:
        return f"--pmqa-device {device}: this process sees {count} device(s)"
    return None


def _unknown_cases(asked: List[str], names: List[str], choice: Dict[str, Any]) -> str:
    """One line: the names the suite lacks, each with the close ones, and the command that lists them."""
    said = []
    for n in asked:
        close = difflib.get_close_matches(n, names, n=4, cutoff=0.5)
        said.append(n + (f" (close: {', '.join(close)})" if close else ""))
    listing = f"pmqa gen --list --suite {choice['suite']}" + (f" --fit {choice['fit']}" if choice["fit"] else "")
    return f"pmqa: suite {choice['suite']} has no case(s) named {', '.join(said)}; `{listing}` lists its {len(names)} cases"


# A value the plugin cannot use, found while pytest collects: raised from pytest_collection_modifyitems
# (below), where pytest prints a UsageError as one line ("ERROR: pmqa: ...", exit 4). Raised inside
# pytest_generate_tests, pytest reports it as a collection error with a traceback through its hooks.
# A pytest-xdist worker cannot stop the session that way (its controller calls the crash an internal
# error): there the module's collection fails with the message alone (CollectError: no traceback).
_USAGE = pytest.StashKey[str]()


def _result_params(metafunc: Any) -> List[Any]:
    """One parameter per result file of --pmqa-results, in name order (a test without the option is
    skipped, saying so: the files are the run's, not the plugin's to choose)."""
    folder = metafunc.config.getoption("--pmqa-results")
    if not folder:
        return [pytest.param(None, id="no-results", marks=pytest.mark.skip(
            reason="pmqa: pmqa_result runs over a run's result files: give --pmqa-results DIR"))]
    if not os.path.isdir(folder):
        raise pytest.UsageError(f"pmqa: --pmqa-results {folder}: not a directory")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".safetensors"))
    if not files:  # a folder with nothing to judge must not read as a pass
        raise pytest.UsageError(f"pmqa: --pmqa-results {folder}: holds no *.safetensors files")
    return [pytest.param(f, id=os.path.basename(f)[:-len(".safetensors")]) for f in files]


def pytest_generate_tests(metafunc: Any) -> None:
    if "pmqa_result" in metafunc.fixturenames:
        metafunc.parametrize("pmqa_result", _result_params(metafunc), indirect=True)
    if "pmqa_case" not in metafunc.fixturenames:
        return
    try:
        _parametrize(metafunc)
    except pytest.UsageError as exc:
        if hasattr(metafunc.config, "workerinput"):
            raise pytest.Collector.CollectError(str(exc)) from None
        metafunc.config.stash.setdefault(_USAGE, str(exc))  # the first one; the test is left unparametrized


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: Any) -> None:
    if _USAGE in config.stash:
        raise pytest.UsageError(config.stash[_USAGE])


def _parametrize(metafunc: Any) -> None:
    choice = _choice(metafunc)
    try:
        found = _suite(choice)
    except (ValueError, OSError) as exc:
        raise pytest.UsageError(f"pmqa: {exc}") from None
    if choice["cases"]:
        names = [c.name for c in found]
        missing = [n for n in choice["cases"] if n not in names]
        if missing:
            raise pytest.UsageError(_unknown_cases(missing, names, choice))
        found = [c for c in found if c.name in choice["cases"]]
    if choice["shard"]:
        from pmqa.cases.shard import in_shard, parse_shard
        try:
            shard = parse_shard(choice["shard"])
        except ValueError as exc:
            raise pytest.UsageError(f"pmqa: {str(exc).replace('--shard', '--pmqa-shard')}") from None
        # The split gen --shard makes: over the cases that run, the large ones only with
        # --pmqa-include-large; a large case skipped without it is reported by shard 1 alone.
        runs = [c for c in found if choice["include_large"] or not c.large]
        taken = {id(c) for c, keep in zip(runs, in_shard([(c.name, c._h.shard_work) for c in runs], shard)) if keep}
        found = [c for c in found if id(c) in taken or (c.large and not choice["include_large"] and shard[0] == 1)]
    absent = device_absent(choice["device"])
    params = []
    for case in found:
        reason = absent or case.outside or (case.skip_reason if not choice["include_large"] else None)
        marks = [pytest.mark.skip(reason=f"pmqa: {reason}")] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    metafunc.parametrize("pmqa_case", params, indirect=True)


# ---- around each test

# Options of the session that the command running a test again keeps (they choose the plugins, the
# configuration and the rootdir; paths in them are relative to the invocation directory, where the
# command runs too). pmqa's own options are taken from the parsed configuration below.
_KEPT_WITH_VALUE = ("-p", "-c", "--config-file", "--rootdir", "-o", "--override-ini", "--import-mode", "--confcutdir")


def _kept_invocation_args(args: Any) -> List[str]:
    kept: List[str] = []
    args = [str(a) for a in args]
    i = 0
    while i < len(args):
        a = args[i]
        if a in _KEPT_WITH_VALUE and i + 1 < len(args):
            kept += [a, args[i + 1]]
            i += 1
        elif a.startswith(tuple(o + "=" for o in _KEPT_WITH_VALUE if o.startswith("--"))) or \
                (len(a) > 2 and a[:2] in ("-p", "-c", "-o") and not a.startswith("--")):
            kept.append(a)
        i += 1
    return kept


def _interpreter() -> str:
    """The Python running this session, as a shell word: `python`/`python3` when that is what PATH
    gives (the same file by the same path: an activated virtual environment), else its full path."""
    exe = sys.executable or "python3"
    for name in ("python", "python3"):
        found = shutil.which(name)
        if found and os.path.abspath(found) == os.path.abspath(exe):
            return name
    return exe


def _rerun_command(request: Any) -> str:
    """The node id, and the command that runs it again with this session's pmqa options: run from
    the directory pytest was run in (the test's path relative to it, not to pytest's rootdir), with
    this interpreter (python -m pytest) and the session's -p plugins and configuration options."""
    cfg = request.config
    node = request.node
    invocation = cfg.invocation_params
    path = os.path.relpath(str(getattr(node, "path", None) or node.fspath), str(invocation.dir))
    within = node.nodeid.split("::", 1)[1] if "::" in node.nodeid else ""
    args = [_interpreter(), "-m", "pytest", *_kept_invocation_args(invocation.args),
            f"{path}::{within}" if within else path]
    for opt in ("--pmqa-suite", "--pmqa-fit", "--pmqa-skip-outside", "--pmqa-device", "--pmqa-shard", "--pmqa-results",
                "--pmqa-cases"):
        if cfg.getoption(opt):
            args += [opt, str(cfg.getoption(opt))]
    for path in cfg.getoption("--pmqa-overlay"):
        args += ["--pmqa-overlay", path]
    if cfg.getoption("--pmqa-include-large"):
        args.append("--pmqa-include-large")
    where = f" ({cfg.stash[_PINNED]})" if _PINNED in cfg.stash else ""
    return f"{request.node.nodeid}{where}; again: {shlex.join(args)}"


@pytest.fixture
def pmqa_case(request: Any, tmp_path_factory: Any) -> Any:
    """One case of the chosen suite (a pmqa.Case), its buffers freed after the test."""
    case = getattr(request, "param", None)
    if case is None:
        raise pytest.UsageError("pmqa_case is parametrized by the pmqa plugin: load it (-p pmqa.pytest_plugin)")
    from pmqa import _api

    root = request.config.getoption("--pmqa-artifacts")
    folder = (os.path.join(root, _api._file_stem(request.node.name)) if root
              else tmp_path_factory.mktemp(_api._file_stem(request.node.name)[:40], numbered=True))
    request.node.user_properties.append(("pmqa_case", case.name))
    if _only_case_parameter(request.node):
        request.node.user_properties.append(("pmqa_junit_name", case.name))
    saved, _api._sink = _api._sink, _api.ArtifactSink(folder, _rerun_command(request), request.node.nodeid)
    try:
        yield case
    finally:
        _api._sink = saved
        case.release()


@pytest.fixture
def pmqa_result(request: Any, tmp_path_factory: Any) -> Any:
    """One result file of --pmqa-results as a pmqa.Case (its logits: ``.logits``); reading it is as
    strict as pmqa verify's (a CaseFileError fails the test), and pmqa.verify re-applies its run's gates."""
    path = getattr(request, "param", None)
    if path is None:
        raise pytest.UsageError("pmqa_result is parametrized by the pmqa plugin: load it (-p pmqa.pytest_plugin)")
    import pmqa
    from pmqa import _api

    case = pmqa.read_case(path, cases=request.config.getoption("--pmqa-cases"))
    root = request.config.getoption("--pmqa-artifacts")
    folder = (os.path.join(root, _api._file_stem(request.node.name)) if root
              else tmp_path_factory.mktemp(_api._file_stem(request.node.name)[:40], numbered=True))
    request.node.user_properties.append(("pmqa_result", path))
    saved, _api._sink = _api._sink, _api.ArtifactSink(folder, _rerun_command(request), request.node.nodeid)
    try:
        yield case
    finally:
        _api._sink = saved
        case.release()


def _only_case_parameter(item: Any) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and set(callspec.params) == {"pmqa_case"}


# ---- JUnit: classname the producer of the logits (the test), name the case

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: Any) -> None:
    name = dict(report.user_properties).get("pmqa_junit_name")
    if not name:
        return
    try:
        from _pytest.junitxml import xml_key  # pytest's own writer; without it nothing is renamed
    except ImportError:
        return
    config = _CONFIG.get("config")
    xml = config.stash.get(xml_key, None) if config is not None else None
    if xml is None:
        return
    module, _, rest = report.nodeid.partition("::")
    function = rest.split("[", 1)[0].replace("::", ".")
    module = module[:-3] if module.endswith(".py") else module
    producer = ".".join([module.replace("/", "."), function]).strip(".")
    reporter = xml.node_reporter(report)
    reporter.add_attribute("classname", producer)
    reporter.add_attribute("name", name)


_CONFIG: Dict[str, Any] = {}


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: Any) -> None:
    _CONFIG["config"] = session.config
