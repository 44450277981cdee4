"""JUnit XML for a pmqa-run, in the shape `pmqa verify --junit` writes too:

    <testsuites name="pmqa-run eager" ...>
      <testsuite name="pmqa-run eager" tests= failures= errors= skipped= time=>
        <properties><property name="run_id" value="..."/> ...</properties>
        <testcase classname="SUITE" name="CASE" time= file="...">

classname is the case file's suite ("pmqa" when it has none), name the case's name. An op failure
is a <failure>, an invalid case file an <error>, a case outside the envelope <skipped> with the
limit's reason, and a case the run has not reached (yet, or ever: it stopped early) an <error>
saying so, so a JUnit left by a killed run reads as failed, never as a shorter green run.

Built with ElementTree (which escapes markup) from text passed through pmqa.run.text.clean (which
escapes what XML 1.0 cannot hold: NUL and other controls, lone surrogates), written atomically.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Iterable, Sequence, Tuple

from pmqa.cases.atomic_file import write_atomically

from .text import clean, clean_line

DEFAULT_CLASSNAME = "pmqa"  # a case file without a suite


def classname_of(suite: str) -> str:
    return clean_line(suite) if suite else DEFAULT_CLASSNAME


def junit_bytes(suite: str, results: Iterable, properties: Sequence[Tuple[str, str]] = ()) -> bytes:
    """results: objects with name, suite, path, status ("ok", "failed", "invalid", "unsupported",
    "not-run"), message and seconds (pmqa.run.case_run.CaseResult)."""
    results = list(results)
    failures = sum(r.status == "failed" for r in results)
    errors = sum(r.status in ("invalid", "not-run") for r in results)
    skipped = sum(r.status == "unsupported" for r in results)
    counts = {"tests": str(len(results)), "failures": str(failures), "errors": str(errors), "skipped": str(skipped),
              "time": f"{sum(r.seconds for r in results):.3f}"}
    root = ET.Element("testsuites", {"name": clean_line(suite), **counts})
    ts = ET.SubElement(root, "testsuite", {"name": clean_line(suite), **counts})
    if properties:
        props = ET.SubElement(ts, "properties")
        for key, value in properties:
            ET.SubElement(props, "property", {"name": clean_line(key), "value": clean_line(value)})
    for r in results:
        tc = ET.SubElement(ts, "testcase", {"classname": classname_of(r.suite), "name": clean_line(r.name),
                                            "time": f"{r.seconds:.3f}", "file": clean_line(r.path)})
        if r.status == "ok":
            continue
        message = clean_line(r.message.splitlines()[0] if r.message else r.status)
        if r.status == "unsupported":
            ET.SubElement(tc, "skipped", {"message": message})
        else:
            tag = "failure" if r.status == "failed" else "error"
            ET.SubElement(tc, tag, {"message": message}).text = clean(r.message)
    if hasattr(ET, "indent"):  # Python 3.9+; the file is as valid without it
        ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode").encode("utf-8") + b"\n"


def write_junit(path: str, suite: str, results: Iterable, properties: Sequence[Tuple[str, str]] = ()) -> None:
    """Written atomically (pmqa.cases.atomic_file); OSError when it cannot be (nothing left behind)."""
    write_atomically(path, [junit_bytes(suite, results, properties)])


__all__ = ["DEFAULT_CLASSNAME", "classname_of", "junit_bytes", "write_junit"]
