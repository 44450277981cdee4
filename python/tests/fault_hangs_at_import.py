"""An op module whose import never ends (a module-level wait on a device, a lock, a download):
pmqa-run's start-up timeout must name it (test_pmqa_run_faults.Item08StartupTimeout)."""

import time

time.sleep(3600)


def op(*args):  # never reached
    raise AssertionError("imported")
