# The byte floor and the run's gates; the run record, its lock and report, and the result files (included from
# cases/tests/CMakeLists.txt).
pmqa_add_test(NAME pmqa_run_gates_test
  SOURCES run_gates_test.cpp
  LIBS pmqa_cases
  LABELS unit)
pmqa_add_test(NAME pmqa_run_record_test
  SOURCES run_record_test.cpp
  LIBS pmqa_cases
  LABELS unit)
pmqa_add_test(NAME pmqa_run_lock_report_test
  SOURCES run_lock_report_test.cpp
  LIBS pmqa_cases
  LABELS unit)
