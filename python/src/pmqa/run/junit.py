"""JUnit XML for a pmqa-run, written by the one writer pmqa check and pmqa verify use
(cases/include/pmqa/cases/results.hpp, through pmqa._core), so the three read alike:

    <testsuites name="pmqa-run eager" ...>
      <testsuite name="pmqa-run eager" tests= failures= errors= skipped= time=>
        <properties><property name="run_id" value="..."/> ...</properties>
        <testcase classname="SUITE" name="CASE" time= file="...">

classname is the case file's suite ("pmqa" when it has none), name the case's name. An op failure
is a <failure>, an invalid case file an <error>, a case outside the envelope <skipped> with the
limit's reason, and a case the run has not reached (yet, or ever: it stopped early) an <error>
saying so, so a JUnit left by a killed run reads as failed, never as a shorter green run. Every
text is made printable and XML-escaped there; the file is written atomically.
"""

from __future__ import annotations

from typing import Iterable, Sequence, Tuple

from .._native import core
from ..cases.atomic_file import write_atomically


def junit_bytes(suite: str, results: Iterable, properties: Sequence[Tuple[str, str]] = ()) -> bytes:
    """results: objects with name, suite, path, status ("ok", "failed", "invalid", "unsupported",
    "not-run"), message and seconds (pmqa.run.case_run.CaseResult)."""
    return core.run_junit_text(suite, list(results), list(properties)).encode("utf-8", "surrogateescape")


def write_junit(path: str, suite: str, results: Iterable, properties: Sequence[Tuple[str, str]] = ()) -> None:
    """Written atomically (pmqa.cases.atomic_file); OSError when it cannot be (nothing left behind)."""
    write_atomically(path, [junit_bytes(suite, results, properties)])


__all__ = ["junit_bytes", "write_junit"]
