"""JUnit XML for a pmqa-run: one testcase per case; a failure or an invalid file is a <failure> or
an <error>, a case outside the envelope is <skipped> with the limit's reason (so CI counts it apart
from failures)."""

from __future__ import annotations

import os
from typing import Iterable
from xml.sax.saxutils import quoteattr, escape


def write_junit(path: str, suite: str, results: Iterable) -> None:
    """results: pmqa.run.case_run.CaseResult. Written through a temporary file renamed into place."""
    results = list(results)
    failures = sum(r.status == "failed" for r in results)
    errors = sum(r.status == "invalid" for r in results)
    skipped = sum(r.status == "unsupported" for r in results)
    total = sum(r.seconds for r in results)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites tests="{len(results)}" failures="{failures}" errors="{errors}" skipped="{skipped}">',
             f'  <testsuite name={quoteattr(suite)} tests="{len(results)}" failures="{failures}" errors="{errors}" '
             f'skipped="{skipped}" time="{total:.3f}">']
    for r in results:
        head = (f'    <testcase classname={quoteattr(suite)} name={quoteattr(r.name)} time="{r.seconds:.3f}"')
        if r.status == "ok":
            lines.append(head + " />")
            continue
        lines.append(head + ">")
        message = r.message.splitlines()[0] if r.message else r.status
        if r.status == "unsupported":
            lines.append(f"      <skipped message={quoteattr(message)} />")
        else:
            tag = "failure" if r.status == "failed" else "error"
            lines.append(f"      <{tag} message={quoteattr(message)}>{escape(r.message)}</{tag}>")
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>", ""]
    tmp = path + ".partial"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(tmp, path)
