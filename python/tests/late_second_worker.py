"""run_standins.eager_ok behind an import that holds back the second worker to import it (for
test_pmqa_run_scale.Devices): the first worker goes on at once; the second waits until the run's
record (PMQA_TEST_OUT/pmqa-run.json) has no pending case, so with --devices 0,1 one device runs
every case and the other none -- the schedule a loaded machine may give, made certain."""

import json
import os
import time

from run_standins import eager_ok  # noqa: F401  (the op: late_second_worker:eager_ok)

_first = os.path.join(os.environ["PMQA_FAULT_DIR"], "first-import")
try:
    os.close(os.open(_first, os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # the first importer wins, atomically
except FileExistsError:
    _record = os.path.join(os.environ["PMQA_TEST_OUT"], "pmqa-run.json")
    _deadline = time.monotonic() + 300
    while time.monotonic() < _deadline:
        try:
            with open(_record) as _f:
                if all(c["status"] != "pending" for c in json.load(_f)["cases"]):
                    break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
