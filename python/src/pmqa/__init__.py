"""pmqa in process: judge an FP8 paged MQA logits kernel's output with pmqa's C++ oracle.

    import pmqa
    for case in pmqa.cases("quick"):                  # or pmqa.read_case("case.safetensors")
        logits = my_kernel(case.q, case.kv_cache_blocks, case.weights, case.context_lens,
                           case.block_table, case.max_model_len)
        pmqa.assert_matches(case, logits)             # or: report = pmqa.verify(case, logits)

``pmqa.cases(suite, device="cuda")`` hands the inputs as torch tensors on that device. In pytest,
the ``pmqa_case`` fixture (``pmqa.pytest_plugin``, loaded by the entry point of an installed pmqa)
runs a test once per case of ``--pmqa-suite``. ``pmqa.verify`` judges as ``pmqa verify`` judges a
case file: the same oracle, tolerance profiles, gates and NaN rules, the same defaults and text.

Inside the one distribution: ``pmqa.cases`` reads and writes case files and result files,
``pmqa.run`` (``pmqa-run``) runs a Python-callable kernel on case files, ``pmqa.probe``
(``pmqa-probe``) runs an engine's own dispatch for every arch of the expected matrix. All of it
stands on the C++ core (``pmqa._core``): without the extension for this interpreter, ``import
pmqa`` fails with one line saying why and what to do, never half-works. The names load on first
use (PEP 562), which keeps ``import pmqa`` (and the pytest plugin, imported in every session of an
environment pmqa is installed in) quick.
"""
from typing import Any, List

from . import _native  # noqa: F401  (the C++ extension, or the one-line ImportError)

__version__: str = _native.core.__version__  # CMakeLists.txt's project version, as `pmqa --version` prints it

_API = ("CONTRACTS", "NAN_RULES", "SENTINEL_BITS", "TOLERANCES", "Case", "CaseError", "CaseFileError", "CaseList",
        "Fp8CodesWarning", "Report", "assert_matches", "describe_envelope", "envelopes", "judging_tolerance",
        "read_case", "reference", "suites", "verify")
# pmqa.cases (case files; called, the suite's cases), pmqa.run (the runner), pmqa.probe (the probe).
_SUBPACKAGES = ("cases", "run", "probe")
_CORE = ("ErrorMap", "Mismatch", "RegionMismatch")

__all__ = list(_API + _CORE + _SUBPACKAGES)


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    if name in _API:
        from . import _api
        return getattr(_api, name)
    if name in _CORE:
        from ._native import core
        return getattr(core, name)
    raise AttributeError(f"module 'pmqa' has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(list(globals()) + __all__)
