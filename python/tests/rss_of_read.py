"""Prints how much one read of a case file from Python adds to the process's peak RSS, in bytes:
the peak during pmqa.cases.read_case_file(FILE) minus the resident set just before it (pmqa and
numpy already imported). The peak is reset first (/proc/self/clear_refs, Linux >= 4.0), so a peak
of the interpreter's start-up cannot count. test_case_file.NoSecondCopy runs it in a fresh process.

    python3 rss_of_read.py FILE
"""
import sys

import pmqa.cases as pc


def status_kib(key: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))


with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
before = status_kib("VmRSS")
cf = pc.read_case_file(sys.argv[1])
print((status_kib("VmHWM") - before) * 1024)
