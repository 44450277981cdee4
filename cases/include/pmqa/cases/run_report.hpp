// What a pmqa-run says about its cases: the line printed as each case finishes, and about its record
// at the end and in its JUnit: the summary lines (counts and
// exit status, the limits that refused cases, the worker processes it took, how to finish a stopped
// run) and the JUnit report of the record as it stands (rewritten after every case, so a killed run
// leaves one). Here rather than in the Python runner so the record's reading is one code: pmqa
// verify and pmqa-run count a record's cases alike.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "pmqa/cases/run_record.hpp"

namespace pmqa::cases {

// A finished case as its line shows it (pmqa.run.case_run.CaseResult's fields, and the run's).
struct CaseOutcome {
  std::string status;  // ok, failed, unsupported, invalid, not-written
  std::string name, path, message, shape, out_path;
  std::string bench_ms, kernel_ms, floor_ratio, kernel_path;  // "" when not measured
  bool floor_gated = false;                                   // the ratio was judged, not only printed
  std::string device;                                         // --devices: the device that ran it ("" without)
  std::string convention, platform;                           // the workers' header
  bool skip_unsupported = false;
};

// The line printed when a case finishes. Not made printable here: the runner's console cleans every
// line it prints; a message's later lines are indented, so none can read as a line of the runner's
// (e.g. a forged "pmqa-run: ... (exit 0)" summary).
std::string case_line(const CaseOutcome& c);

// What the summary needs beyond the record: the command line's and the runner's facts.
struct RunSummaryFacts {
  std::vector<std::string> case_filter;  // --case patterns (named when no case matched)
  bool skip_unsupported = false;         // --skip-unsupported: unsupported cases were skipped, not refused
  int status = 0;                        // the run's exit status
  int workers_started = 0;               // worker processes started (0 when the cases ran in process)
  std::size_t devices = 0;               // how many --devices the run spread over (0: none given)
};

// The run's last lines, in order, with the record's folder as the run's --out.
std::vector<std::string> run_summary_lines(const RunRecord& record, const RunSummaryFacts& facts);

// The JUnit text of the record as it stands (results.hpp's writer, the one pmqa check and pmqa verify
// use): a case not run (yet, or ever: the run stopped) is an error saying so, so a JUnit left by a
// killed run reads as failed, never as a shorter green run; a case not written (the system refused its
// file) is an error with its message; each of `faults` (answers out of turn after the last case) is an
// error of a testcase "pmqa-run worker answers".
std::string run_record_junit_text(const RunRecord& record, const std::vector<std::string>& faults);

// run_record_junit_text written atomically to `path`; std::system_error carrying errno when it cannot be.
void write_run_record_junit(const std::filesystem::path& path, const RunRecord& record,
                            const std::vector<std::string>& faults);

}  // namespace pmqa::cases
