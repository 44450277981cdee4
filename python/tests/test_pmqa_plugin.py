"""The pytest plugin, run as a kernel author runs it: pytest sessions over stand-in kernels (pytester).

The passing stand-in is the example a kernel author copies (python/examples/test_my_kernel.py); the
failing one is the same kernel with a planted bug. Each session's verdicts must be pmqa.verify's,
case by case, with the report (and its text map) as the failure message, in pytest's JUnit too.
Run with ``-p pytester``.
"""
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import pmqa

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "test_my_kernel.py"
PLUGIN = ("-p", "pmqa.pytest_plugin")

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


def output(result):
    return "\n".join(result.outlines + result.errlines)


def junit_cases(path):
    """{case id: (outcome, message)} from pytest's JUnit file."""
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        name = tc.get("name")
        case = name[name.index("[") + 1:-1]
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
        assert f"reproduce: the inputs: pmqa gen --suite quick --case {name}" in message
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
    assert result.ret != 0 and "has no case(s) no-such-case" in output(result)
    result = standin.runpytest_subprocess(*PLUGIN, "--pmqa-suite", "no-such-suite")
    assert result.ret != 0 and "no-such-suite" in output(result)


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
