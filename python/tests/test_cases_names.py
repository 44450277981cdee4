"""Every Python list of the model's names against the C++ model (pytest).

The C++ model owns the spellings of the tolerance profiles, output contracts and NaN rules, and the
builtin envelopes say which calling conventions exist; every Python list takes them from pmqa._core.
Here each list, each argparse choice and each help text that lists conventions is compared with
what pmqa._core reports, so a list that stops asking the model, or a text that misses a name,
fails here.

Needs the built extension (PMQA_CORE_DIR) and, for the command's help, the pmqa binary (PMQA_BIN);
CTest sets both.
"""
import argparse
import os
import subprocess

import pytest

import pmqa
import pmqa.run
from pmqa import _api, pytest_plugin
from pmqa._native import core
from pmqa.cases import case_file, envelope, names
from pmqa.run import options as run_options
from pmqa.run.conventions import CONVENTIONS

PMQA_BIN = os.environ.get("PMQA_BIN")
needs_cli = pytest.mark.skipif(not PMQA_BIN, reason="PMQA_BIN (the pmqa command) is not set")

MODEL = {
    "tolerance": lambda: list(core.tolerance_names()),
    "contract": lambda: list(core.contract_names()),
    "nan": lambda: list(core.nan_rule_names()),
}


def test_the_extension_reports_the_models_names():
    # The C++ side's answers themselves (a binding that lost a name would make every comparison
    # below vacuous): the values the spec defines, in the model's order.
    assert MODEL["contract"]() == ["clean", "valid-only"]
    assert MODEL["nan"]() == ["propagate", "relu-clamp"]
    assert "fp32" in MODEL["tolerance"]() and "matrix-unit" in MODEL["tolerance"]()
    assert "vllm-rocm" in core.envelope_conventions()


@pytest.mark.parametrize("listed, kind", [
    (names.TOLERANCES, "tolerance"),
    (names.CONTRACTS, "contract"),
    (names.NAN_RULES, "nan"),
    (case_file.CONTRACTS, "contract"),
    (_api.TOLERANCES, "tolerance"),
    (_api.CONTRACTS, "contract"),
    (_api.NAN_RULES, "nan"),
    (pmqa.TOLERANCES, "tolerance"),
    (pmqa.CONTRACTS, "contract"),
    (pmqa.NAN_RULES, "nan"),
])
def test_each_python_list_is_the_models(listed, kind):
    assert list(listed) == MODEL[kind]()


def _choices(parser: argparse.ArgumentParser, option: str):
    for action in parser._actions:
        if option in action.option_strings:
            return list(action.choices)
    raise AssertionError(f"pmqa-run has no {option}")


def test_pmqa_run_offers_the_models_names():
    parser = run_options.make_parser()
    assert _choices(parser, "--tolerance") == MODEL["tolerance"]()
    assert _choices(parser, "--contract") == MODEL["contract"]()
    assert _choices(parser, "--nan") == MODEL["nan"]()
    assert _choices(parser, "--convention") == list(core.envelope_conventions())


def test_every_convention_has_an_envelope_and_judges_under_the_models_names():
    assert sorted(CONVENTIONS) == list(core.envelope_conventions())
    assert envelope.envelope_conventions() == list(core.envelope_conventions())
    for name, convention in CONVENTIONS.items():
        assert convention.tolerance in MODEL["tolerance"](), name
        assert convention.contract in MODEL["contract"](), name
        assert convention.nan in MODEL["nan"](), name


class _Group:
    def __init__(self):
        self.help = {}

    def addoption(self, name, **kwargs):
        self.help[name] = kwargs.get("help", "")


class _Parser:
    def __init__(self):
        self.group = _Group()

    def getgroup(self, *args, **kwargs):
        return self.group

    def addini(self, *args, **kwargs):
        pass


@pytest.mark.parametrize("where, text", [
    ("the pytest plugin's docstring", pytest_plugin.__doc__),
    ("pmqa.cases()'s docstring", _api.cases.__doc__),
    ("pmqa.run's docstring", pmqa.run.__doc__),
    ("pmqa-run's epilog", run_options.EPILOG),
])
def test_texts_that_list_the_conventions_list_them_all(where, text):
    missing = [c for c in core.envelope_conventions() if c not in text]
    assert not missing, f"{where} lacks {missing}"


def test_the_plugins_help_lists_every_convention():
    parser = _Parser()
    pytest_plugin.pytest_addoption(parser)
    for option in ("--pmqa-fit", "--pmqa-skip-outside"):
        missing = [c for c in core.envelope_conventions() if c not in parser.group.help[option]]
        assert not missing, f"{option}'s help lacks {missing}"


@needs_cli
@pytest.mark.parametrize("command, kinds", [
    ("gen", ("convention",)),
    ("verify", ("tolerance", "contract", "nan")),
])
def test_the_commands_help_lists_the_models_names(command, kinds):
    out = subprocess.run([PMQA_BIN, command, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    expected = {"convention": lambda: list(core.envelope_conventions()), **MODEL}
    for kind in kinds:
        missing = [n for n in expected[kind]() if n not in out.stdout]
        assert not missing, f"pmqa {command} --help lacks the {kind} names {missing}"
