"""The pytest plugin, run as a kernel author runs it: pytest sessions over stand-in kernels (pytester).

The passing stand-in is the example a kernel author copies (python/examples/test_my_kernel.py); the
failing one is the same kernel with a planted bug. Each session's verdicts must be pmqa.verify's,
case by case, with the report (and its text map) as the failure message, in pytest's JUnit too.
Run with ``-p pytester``.
"""
import importlib.metadata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import pmqa

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "test_my_kernel.py"
# An installed pmqa (the wheel CTest installs) loads the plugin by its entry point, as a user's pytest
# does; a source tree (PYTHONPATH=python/src) has no entry point and names the plugin.
INSTALLED = any(e.name == "pmqa" for e in importlib.metadata.entry_points(group="pytest11"))
PLUGIN = () if INSTALLED else ("-p", "pmqa.pytest_plugin")

BROKEN = '''
import pmqa
from standin import my_kernel


def test_kernel(pmqa_case):
    c = pmqa_case
    # the planted bug: q and the keys always decoded as e4m3fn (spec §6 class 3 on gfx942)
    logits = my_kernel(c.q, c.kv_cache_blocks, c.weights, c.context_lens, c.block_table, c.max_model_len,
                       fp8="e4m3fn", layout=c.layout)
    pmqa.assert_matches(c, logits)
'''


def message_ending(message):
    """The last two lines of assert_matches's message inside pytest's failure text (its "E   " prefix
    stripped): the reproduce command and the test."""
    lines = [ln.lstrip()[1:].strip() if ln.lstrip().startswith("E ") else ln.strip() for ln in message.splitlines()]
    at = max(i for i, ln in enumerate(lines) if ln.startswith("reproduce: pmqa verify "))
    return lines[at], lines[at + 1]


def output(result):
    return "\n".join(result.outlines + result.errlines)


def junit_cases(path):
    """{case name: (outcome, message)} from pytest's JUnit file (a pmqa case's testcase is named by
    the case alone; other parametrized tests keep pytest's name[id])."""
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = tc.get("name")
        case = name[name.index("[") + 1:-1] if "[" in name else name
        failure, skipped = tc.find("failure"), tc.find("skipped")
        if failure is not None:
            out[case] = ("failed", (failure.get("message") or "") + "\n" + (failure.text or ""))
        elif skipped is not None:
            out[case] = ("skipped", skipped.get("message") or "")
        else:
            out[case] = ("passed", "")
    return out


@pytest.fixture
def standin(pytester):
    pytester.makepyfile(standin=EXAMPLE.read_text())
    return pytester


def test_the_example_passes_every_quick_case(pytester):
    pytester.makepyfile(test_my_kernel=EXAMPLE.read_text())
    quick = pmqa.cases("quick")
    result = pytester.runpytest_subprocess(*PLUGIN, "-v", "--junitxml=junit.xml")
    result.assert_outcomes(passed=len(quick))
    for c in quick:
        result.stdout.fnmatch_lines([f"*test_my_kernel.py::test_my_kernel[[]{c.name}[]] PASSED*"])
    got = junit_cases(pytester.path / "junit.xml")
    assert set(got) == set(quick.names) and {v[0] for v in got.values()} == {"passed"}


def test_a_broken_kernel_fails_exactly_where_verify_fails(standin):
    """Every case the planted bug changes fails with pmqa's report; the others pass."""
    ns = {}
    exec(compile(EXAMPLE.read_text(), str(EXAMPLE), "exec"), ns)
    kernel = ns["my_kernel"]
    expected = {}
    for c in pmqa.cases("quick"):
        logits = kernel(c.q, c.kv_cache_blocks, c.weights, c.context_lens, c.block_table, c.max_model_len,
                        fp8="e4m3fn", layout=c.layout)
        expected[c.name] = pmqa.verify(c, logits)
    failing = {n for n, r in expected.items() if not r.passed}
    assert failing and len(failing) < len(expected), "the bug must fail some cases (FNUZ ones) and pass others"

    standin.makepyfile(test_broken=BROKEN)
    result = standin.runpytest_subprocess(*PLUGIN, "--junitxml=junit.xml")
    result.assert_outcomes(passed=len(expected) - len(failing), failed=len(failing))
    got = junit_cases(standin.path / "junit.xml")
    assert {n for n, (o, _) in got.items() if o == "failed"} == failing
    for name in failing:
        message = got[name][1]
        report = str(expected[name])
        assert report.splitlines()[0] in message, name  # "FAIL <the case>"
        assert "first mismatches:" in message and "error map, rows x logical blocks" in message
        ending = message_ending(message)
        assert ending[0].startswith("reproduce: pmqa verify ") and ending[0].endswith(f"/{name}.safetensors"), ending
        assert ending[1].startswith(f"test: test_broken.py::test_kernel[{name}]"), ending
    # the terminal summary names the failing cases by their ids
    for name in sorted(failing)[:3]:
        result.stdout.fnmatch_lines([f"FAILED test_broken.py::test_kernel[[]{name}[]]*"])


SCALED = '''
import numpy as np
import pmqa
from standin import my_kernel


def test_kernel(pmqa_case):
    c = pmqa_case
    # the planted bug: a scale constant 1 % off, inside every cell's noise under bf16-output
    logits = my_kernel(c.q, c.kv_cache_blocks, c.weights, c.context_lens, c.block_table, c.max_model_len,
                       fp8=c.fp8, layout=c.layout) * np.float32(1.01)
    pmqa.assert_matches(c, logits, tolerance="bf16-output")
'''


def test_a_small_scale_fails_naming_the_bias_and_its_sign(standin):
    """The message of a case only the bias gate catches names that gate and which way it is off."""
    name = max(pmqa.cases("quick"), key=lambda x: int(x.valid_keys.clip(0).sum())).name
    standin.makepyfile(test_scaled=SCALED)
    result = standin.runpytest_subprocess(*PLUGIN, "--pmqa-case", name, "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    outcome, message = junit_cases(standin.path / "junit.xml")[name]
    assert outcome == "failed"
    assert "(broke: bias (magnitude too large))" in message, message[:2000]
    assert "bias gate: all valid cells" in message and "magnitude too large" in message


def test_options_and_marker_choose_the_cases(standin):
    standin.makepyfile(test_pick='''
import pytest

@pytest.mark.pmqa(cases=["edge-lengths-1d", "nan-codes-e4m3fn"])
def test_marked(pmqa_case):
    assert pmqa_case.name in ("edge-lengths-1d", "nan-codes-e4m3fn")

def test_any(pmqa_case):
    assert pmqa_case.device is None and pmqa_case.q.dtype.name == "uint8"
''')
    result = standin.runpytest_subprocess(*PLUGIN, "-v", "--pmqa-case", "edge-lengths-1d")
    result.assert_outcomes(passed=2)  # the command line wins over the marker: one case each
    result = standin.runpytest_subprocess(*PLUGIN, "-v", "-k", "marked")
    result.assert_outcomes(passed=2)
    result = standin.runpytest_subprocess(*PLUGIN, "--pmqa-case", "no-such-case")
    assert result.ret != 0 and "has no case(s) named no-such-case" in output(result), output(result)
    result = standin.runpytest_subprocess(*PLUGIN, "--pmqa-case", "edge-lenghts-1d")
    assert result.ret != 0 and "edge-lenghts-1d (close: edge-lengths-1d" in output(result), output(result)
    result = standin.runpytest_subprocess(*PLUGIN, "--pmqa-suite", "no-such-suite")
    assert result.ret != 0 and "no-such-suite" in output(result)


def test_bad_option_values_are_one_line_usage_errors(standin):
    """A value the plugin cannot use (--pmqa-shard, --pmqa-case, --pmqa-suite, --pmqa-fit, a marker's
    argument): pytest's usage error (exit 4), one line on stderr naming the option and the fix, no
    traceback of pytest's hooks."""
    standin.makepyfile(test_pick='''
def test_any(pmqa_case):
    pass
''')
    bad = [(["--pmqa-shard", "4/3"], "pmqa: --pmqa-shard 4/3: K must be 1 to N"),
           (["--pmqa-shard", "two"], "pmqa: --pmqa-shard two"),
           (["--pmqa-shard", "0/0"], "pmqa: --pmqa-shard 0/0"),
           (["--pmqa-case", "no-such-case"], "pmqa: suite quick has no case(s) named no-such-case"),
           (["--pmqa-case", "edge-lenghts-1d", "--pmqa-case", "nope"],
            "named edge-lenghts-1d (close: edge-lengths-1d"),
           (["--pmqa-suite", "no-such-suite"], "no-such-suite"),
           (["--pmqa-fit", "aiter-fused"], "aiter-fused:cuda")]
    for args, words in bad:
        result = standin.runpytest_subprocess(*PLUGIN, *args)
        text = output(result)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, (args, text)
        errors = [ln for ln in result.errlines if ln.strip()]
        assert len(errors) == 1 and errors[0].startswith("ERROR: pmqa: ") and words in errors[0], (args, text)
        for noise in ("Traceback", "pluggy/", "_hooks.py", "ERROR collecting", "UsageError"):
            assert noise not in text, (args, noise, text)



def test_bad_option_values_under_xdist_are_one_message(standin):
    """Under pytest-xdist the workers collect: a bad value fails the collection with the plugin's
    message alone, no traceback of pytest's hooks and no internal error."""
    pytest.importorskip("xdist")
    standin.makepyfile(test_pick='''
def test_any(pmqa_case):
    pass
''')
    for args, words in ((["--pmqa-shard", "4/3"], "pmqa: --pmqa-shard 4/3: K must be 1 to N"),
                        (["--pmqa-case", "no-such-case"], "pmqa: suite quick has no case(s) named no-such-case")):
        result = standin.runpytest_subprocess(*PLUGIN, "-n", "2", *args)
        text = output(result)
        assert result.ret not in (pytest.ExitCode.OK, pytest.ExitCode.INTERNAL_ERROR), (args, text)
        assert any(ln.startswith(words) for ln in result.outlines), (args, text)
        for noise in ("Traceback", "pluggy/", "_hooks.py", "INTERNALERROR", "UsageError"):
            assert noise not in text, (args, noise, text)


def test_large_cases_are_skipped_with_the_reason(standin):
    large = [c.name for c in pmqa.cases("nightly", include_large=True) if c.large]
    assert large
    standin.makepyfile(test_big='''
def test_big(pmqa_case):
    raise AssertionError("a large case ran without --pmqa-include-large")
''')
    result = standin.runpytest_subprocess(*PLUGIN, "-rs", "--pmqa-suite", "nightly", *sum((["--pmqa-case", n] for n in large), []))
    result.assert_outcomes(skipped=len(large))
    result.stdout.fnmatch_lines(["*pmqa: a large case (gigabytes of buffers)*"])


def test_fit_and_skip_outside(pytester):
    """--pmqa-fit runs the suite drawn inside an envelope; --pmqa-skip-outside runs the suite's own
    cases and skips those outside it with the limit they break."""
    pytester.makepyfile(test_my_kernel=EXAMPLE.read_text())
    fitted = pmqa.cases("quick", fit="deepgemm")
    result = pytester.runpytest_subprocess(*PLUGIN, "-v", "--pmqa-fit", "deepgemm")
    result.assert_outcomes(passed=len(fitted))
    result.stdout.fnmatch_lines([f"*test_my_kernel[[]{fitted[-1].name}[]] PASSED*"])

    marked = pmqa.cases("quick", envelope="deepgemm")
    outside = [c for c in marked if c.outside]
    assert outside
    result = pytester.runpytest_subprocess(*PLUGIN, "-rs", "--pmqa-skip-outside", "deepgemm",
                                           "--junitxml=junit.xml")
    result.assert_outcomes(passed=len(marked) - len(outside), skipped=len(outside))
    got = junit_cases(pytester.path / "junit.xml")
    for c in outside:
        assert got[c.name][0] == "skipped" and "outside deepgemm on cuda: limit " in got[c.name][1], got[c.name]
    result = pytester.runpytest_subprocess(*PLUGIN, "--pmqa-fit", "aiter-fused")
    assert result.ret != 0 and "aiter-fused:cuda" in output(result)


def test_buffers_are_freed_after_each_test(standin):
    standin.makepyfile(test_free='''
seen = []

def test_a(pmqa_case):
    pmqa_case.q
    seen.append(pmqa_case)

def test_after():
    assert seen and all(not c._h.loaded for c in seen), "a case's buffers outlived its test"
''')
    result = standin.runpytest_subprocess(*PLUGIN, "--pmqa-case", "edge-lengths-1d")
    result.assert_outcomes(passed=2)


def test_a_failure_leaves_artifacts_and_one_command(standin, tmp_path):
    """--pmqa-artifacts: the failing case's file (inputs, the kernel's logits, the judging settings)
    and its error map; the message ends with the command that judges that file, then the node id;
    run as printed (pmqa -> PMQA_BIN) it fails the same way."""
    import os
    import shlex
    import subprocess
    standin.makepyfile(test_broken=BROKEN)
    art = tmp_path / "artifacts"
    result = standin.runpytest_subprocess(*PLUGIN, "--pmqa-artifacts", str(art), "--junitxml=junit.xml")
    got = junit_cases(standin.path / "junit.xml")
    failing = sorted(n for n, (o, _) in got.items() if o == "failed")
    assert failing
    for name in failing:
        folder = art / f"test_kernel_{name}_"
        assert (folder / f"{name}.safetensors").is_file() and (folder / f"{name}.svg").is_file(), folder
        reproduce, test = message_ending(got[name][1])
        assert reproduce == f"reproduce: pmqa verify {shlex.quote(str(folder / (name + '.safetensors')))}"
        assert test.startswith(f"test: test_broken.py::test_kernel[{name}]; again: ")
        plugin = "".join(f"{w} " for w in PLUGIN)  # -p pmqa.pytest_plugin where it was given (not installed)
        assert f" -m pytest {plugin}'test_broken.py::test_kernel[{name}]'" in test, test
    bin_ = os.environ.get("PMQA_BIN")
    if bin_:
        argv = shlex.split(message_ending(got[failing[0]][1])[0][len("reproduce: "):])
        ran = subprocess.run([bin_, *argv[1:]], capture_output=True, text=True, timeout=300)
        assert ran.returncode == 1 and ran.stdout.startswith("FAIL"), ran.stdout + ran.stderr
    assert not any(p.name.startswith("test_kernel_") and "edge-lengths-1d" in p.name for p in art.iterdir()), \
        "a passing case leaves nothing"


def test_again_runs_as_printed_from_where_pytest_ran(pytester, monkeypatch):
    """The "again:" command after a failing case runs verbatim, in a shell, from the directory pytest
    was run in, also when that is not pytest's rootdir: here the rootdir is proj/ (it holds setup.py,
    as python/ does) and pytest runs from a sibling folder. It runs that one case with this session's
    pmqa options and -p plugins, fails the same way, and prints the same command again."""
    import shlex
    import subprocess
    proj, here = pytester.path / "proj", pytester.path / "here"
    (proj / "tests").mkdir(parents=True)
    here.mkdir()
    (proj / "setup.py").write_text("")
    (proj / "tests" / "standin.py").write_text(EXAMPLE.read_text())
    (proj / "tests" / "test_broken.py").write_text(BROKEN)
    failing, passing = "shuffle-bs16-e4m3fnuz", "edge-lengths-1d"
    monkeypatch.chdir(here)
    result = pytester.runpytest_subprocess(*PLUGIN, "../proj/tests/test_broken.py", "--pmqa-suite", "quick",
                                           "--pmqa-case", failing, "--pmqa-case", passing, "--junitxml=junit.xml")
    result.assert_outcomes(failed=1, passed=1)
    assert "rootdir: " + str(proj) in output(result), "the rootdir is proj/, not where pytest ran"
    got = junit_cases(here / "junit.xml")
    _, test = message_ending(got[failing][1])
    assert test.startswith(f"test: tests/test_broken.py::test_kernel[{failing}]; again: "), test  # the node id
    again = test.split("; again: ", 1)[1]
    argv = shlex.split(again)
    assert argv[1:3] == ["-m", "pytest"] and f"../proj/tests/test_broken.py::test_kernel[{failing}]" in argv, argv
    ran = subprocess.run(again, shell=True, cwd=here, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1, again + "\n" + ran.stdout + ran.stderr
    assert "1 failed in" in ran.stdout and "passed" not in ran.stdout.splitlines()[-1], ran.stdout[-2000:]
    assert f"test: tests/test_broken.py::test_kernel[{failing}]; again: {again}" in ran.stdout, ran.stdout[-3000:]


def test_junit_shape_is_producer_and_case(pytester):
    """classname the producer of the logits (the test, module.function), name the case: the shape
    pmqa-run's and pmqa verify's JUnit have."""
    pytester.makepyfile(test_my_kernel=EXAMPLE.read_text())
    result = pytester.runpytest_subprocess(*PLUGIN, "--pmqa-case", "edge-lengths-1d", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    (tc,) = list(ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"))
    assert (tc.get("classname"), tc.get("name")) == ("test_my_kernel.test_my_kernel", "edge-lengths-1d")
    props = {p.get("name"): p.get("value") for p in tc.iter("property")}
    assert props.get("pmqa_case") == "edge-lengths-1d"


def test_xdist_pins_each_worker_to_one_gpu(pytester, monkeypatch):
    """-n 2 with two visible GPUs: each worker sees one, the JUnit keeps its shape."""
    pytest.importorskip("xdist")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    pytester.makepyfile(standin=EXAMPLE.read_text())
    pytester.makepyfile(test_pinned='''
import os
import pmqa
from standin import my_kernel

def test_kernel(pmqa_case, worker_id):
    c = pmqa_case
    with open(f"seen-{worker_id}-{c.name}.txt", "w") as f:
        f.write(os.environ["CUDA_VISIBLE_DEVICES"] + " " + os.environ["HIP_VISIBLE_DEVICES"])
    pmqa.assert_matches(c, my_kernel(c.q, c.kv_cache_blocks, c.weights, c.context_lens, c.block_table,
                                     c.max_model_len, fp8=c.fp8, layout=c.layout))
''')
    quick = pmqa.cases("quick")
    result = pytester.runpytest_subprocess(*PLUGIN, "-n", "2", "--junitxml=junit.xml")
    result.assert_outcomes(passed=len(quick))
    seen = {}
    for f in pytester.path.glob("seen-*.txt"):
        worker = f.name.split("-")[1]
        seen.setdefault(worker, set()).add(f.read_text())
    assert seen == {"gw0": {"3 3"}, "gw1": {"5 5"}}, seen
    names = {tc.get("name") for tc in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")}
    assert names == set(quick.names)


def test_an_absent_device_skips_with_the_reason(standin):
    from pmqa.pytest_plugin import device_absent
    why = device_absent("cuda")
    if why is None:
        pytest.skip("a GPU is present here")
    standin.makepyfile(test_dev='''
def test_dev(pmqa_case):
    raise AssertionError("ran without the device")
''')
    result = standin.runpytest_subprocess(*PLUGIN, "-rs", "--pmqa-device", "cuda")
    result.assert_outcomes(skipped=len(pmqa.cases("quick")))
    result.stdout.fnmatch_lines([f"*pmqa: {why}*"])
    assert "torch is not installed" in why or "no CUDA/ROCm device" in why


def test_shards_cover_the_suite_once(pytester):
    """--pmqa-shard K/N for K = 1..N: every case of the suite in exactly one session, the same split
    pmqa.cases.shard makes from the cases' names and works (the C++ tools' split: test_shard)."""
    from pmqa.cases.shard import assign_shards
    pytester.makepyfile(test_my_kernel=EXAMPLE.read_text())
    quick = pmqa.cases("quick")
    split = dict(zip(quick.names, assign_shards([(c.name, c._h.shard_work) for c in quick], 3)))
    seen = {}
    for k in (1, 2, 3):
        result = pytester.runpytest_subprocess(*PLUGIN, "--pmqa-shard", f"{k}/3", f"--junitxml=j{k}.xml")
        got = junit_cases(pytester.path / f"j{k}.xml")
        assert {v[0] for v in got.values()} == {"passed"}, got
        assert set(got) == {n for n, s in split.items() if s == k}
        for name in got:
            seen[name] = seen.get(name, 0) + 1
    assert seen == {n: 1 for n in quick.names}
    result = pytester.runpytest_subprocess(*PLUGIN, "--pmqa-shard", "4/3")
    assert result.ret != 0 and "--pmqa-shard 4/3: K must be 1 to N" in output(result)


def test_shards_of_a_suite_with_a_large_case_are_gens(pytester):
    """nightly holds a gigabyte case, which pmqa gen writes only with --include-large: without
    --pmqa-include-large the split is over the other cases (gen --shard's split, so CI jobs that
    generate and those that test take the same cases), the large one reported, skipped, by shard 1."""
    import re
    from pmqa.cases.shard import assign_shards
    pytester.makepyfile(test_my_kernel=EXAMPLE.read_text())
    nightly = pmqa.cases("nightly", include_large=True)
    runs = [c for c in nightly if not c.large]
    large = {c.name for c in nightly if c.large}
    assert large, "nightly has a large case"
    split = dict(zip([c.name for c in runs], assign_shards([(c.name, c._h.shard_work) for c in runs], 3)))
    seen = {}
    for k in (1, 2, 3):
        result = pytester.runpytest_subprocess(*PLUGIN, "--pmqa-suite", "nightly", "--pmqa-shard", f"{k}/3",
                                               "--collect-only", "-q")
        got = set(re.findall(r"::test_\w+\[([^\]]+)\]", output(result)))
        assert got == {n for n, s in split.items() if s == k} | (large if k == 1 else set()), output(result)
        for name in got:
            seen[name] = seen.get(name, 0) + 1
    assert seen == {c.name: 1 for c in nightly}
