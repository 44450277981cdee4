"""pytest plugin: a test that takes ``pmqa_case`` runs once per case of a pmqa suite.

Installed pmqa registers this module under pytest's ``pytest11`` entry point, so pytest loads it by
itself; from a source tree, ``-p pmqa.pytest_plugin``. Options:

  --pmqa-suite NAME          quick (default), standard, nightly
  --pmqa-fit CONVENTION[:PLATFORM]
                             the suite drawn inside the envelope of the library behind a calling
                             convention (aiter-fused, aiter-stage1, deepgemm, eager; platform cuda,
                             rocm or none where the envelope lists several), as `pmqa gen --fit`
  --pmqa-skip-outside CONVENTION[:PLATFORM]
                             the suite's own cases, those outside that envelope skipped with the
                             limit they break
  --pmqa-overlay FILE        an envelope overlay (`pmqa gen --envelope FILE`), repeatable
  --pmqa-case NAME           only these cases (repeatable)
  --pmqa-device DEVICE       inputs as torch tensors on DEVICE (cuda, cuda:1, cpu); default numpy
  --pmqa-include-large       also the gigabyte cases (skipped otherwise, with the reason)

A test module or function may carry ``@pytest.mark.pmqa(suite=..., fit=..., skip_outside=...,
cases=[...], device=...)`` for the defaults it needs; a command-line option wins. Test ids are the case names, e.g.
``test_kernel[edge-lengths-1d]``. ``pmqa.assert_matches(case, logits)`` fails with pmqa's report
and its text map as the message (and so in pytest's --junitxml).
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("pmqa", "pmqa: FP8 paged MQA logits cases")
    group.addoption("--pmqa-suite", default=None, metavar="NAME",
                    help="the pmqa suite the pmqa_case fixture runs over: quick (default), standard, nightly")
    group.addoption("--pmqa-fit", default=None, metavar="CONVENTION[:PLATFORM]",
                    help="the suite drawn inside this calling convention's envelope (as pmqa gen --fit)")
    group.addoption("--pmqa-skip-outside", default=None, metavar="CONVENTION[:PLATFORM]",
                    help="the suite's own cases; those outside this convention's envelope are skipped with the reason")
    group.addoption("--pmqa-overlay", action="append", default=[], metavar="FILE",
                    help="an envelope overlay file adding, replacing or dropping limits (repeatable)")
    group.addoption("--pmqa-case", action="append", default=[], metavar="NAME",
                    help="only this case of the suite (repeatable)")
    group.addoption("--pmqa-device", default=None, metavar="DEVICE",
                    help="hand the inputs as torch tensors on DEVICE (default: numpy arrays)")
    group.addoption("--pmqa-include-large", action="store_true", default=False,
                    help="also run the gigabyte cases")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "pmqa(suite=None, fit=None, skip_outside=None, cases=None, device=None): the "
                                       "pmqa cases a test that takes pmqa_case runs over")


def _choice(metafunc: Any) -> Dict[str, Any]:
    opt = metafunc.config.getoption
    marker = metafunc.definition.get_closest_marker("pmqa")
    kw = dict(marker.kwargs) if marker else {}
    unknown = set(kw) - {"suite", "fit", "skip_outside", "cases", "device"}
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.pmqa: unknown argument(s) {sorted(unknown)}")
    return {"suite": opt("--pmqa-suite") or kw.get("suite") or "quick",
            "fit": opt("--pmqa-fit") or kw.get("fit"),
            "skip_outside": opt("--pmqa-skip-outside") or kw.get("skip_outside"),
            "overlays": tuple(opt("--pmqa-overlay")),
            "cases": list(opt("--pmqa-case")) or list(kw.get("cases") or []),
            "device": opt("--pmqa-device") or kw.get("device"),
            "include_large": bool(opt("--pmqa-include-large"))}


_SUITES: Dict[Tuple[Any, ...], List[Any]] = {}


def _suite(choice: Dict[str, Any]) -> List[Any]:
    import pmqa  # the extension is loaded when a test asks for a case, not when pytest starts

    key = tuple(choice[k] for k in ("suite", "fit", "skip_outside", "overlays", "device"))
    if key not in _SUITES:
        _SUITES[key] = list(pmqa.cases(choice["suite"], fit=choice["fit"], device=choice["device"], include_large=True,
                                       envelope=choice["skip_outside"], overlays=choice["overlays"]))
    return _SUITES[key]


def pytest_generate_tests(metafunc: Any) -> None:
    if "pmqa_case" not in metafunc.fixturenames:
        return
    choice = _choice(metafunc)
    try:
        found = _suite(choice)
    except (ValueError, OSError) as exc:
        raise pytest.UsageError(f"pmqa: {exc}") from None
    if choice["cases"]:
        names = {c.name for c in found}
        missing = [n for n in choice["cases"] if n not in names]
        if missing:
            raise pytest.UsageError(f"pmqa: suite {choice['suite']} has no case(s) {', '.join(missing)}")
        found = [c for c in found if c.name in choice["cases"]]
    params = []
    for case in found:
        reason = case.outside or (case.skip_reason if not choice["include_large"] else None)
        marks = [pytest.mark.skip(reason=f"pmqa: {reason}")] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    metafunc.parametrize("pmqa_case", params, indirect=True)


@pytest.fixture
def pmqa_case(request: Any) -> Any:
    """One case of the chosen suite (a pmqa.Case), its buffers freed after the test."""
    case = getattr(request, "param", None)
    if case is None:
        raise pytest.UsageError("pmqa_case is parametrized by the pmqa plugin: load it (-p pmqa.pytest_plugin)")
    yield case
    case.release()
