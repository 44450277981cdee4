// Results of a pmqa run, one per (case, subject), and the files a CI system reads: JUnit XML (one
// testcase per result, failures with the report text) and JSON, both written atomically. One writer
// serves pmqa check, pmqa verify and pmqa-run (python/src/pmqa/run/junit.py binds it), so a case
// reads the same way in each tool's JUnit.
//
// The shape: <testsuites> holding one <testsuite name="PRODUCER"> ("pmqa verify", "pmqa check",
// "pmqa-run eager"), optionally its <properties>, then each <testcase classname="SUITE" name="CASE"
// time= file=>; every text made printable (printable.hpp) and XML-escaped.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pmqa::cases {

struct Result {
  std::string suite;     // JUnit classname: the case's suite (e.g. "quick"; "pmqa" for a case file without one)
  std::string name;      // JUnit testcase name: the case's, e.g. "edge-lengths-1d" or "edge-lengths-1d [fused/host-w64]"
  bool passed = false;
  bool skipped = false;  // with a reason in message; never counted as passed
  bool error = false;    // invalid input (exit 2), not a mismatch
  double seconds = 0;
  std::string message;   // one line
  std::string details;   // the full report on failure
  nlohmann::json json;   // structured report
  std::string file;      // the file judged, when there is one (JUnit's file attribute)
};

// A pmqa-run case as a Result: status "ok" passes, "failed" is a <failure>, "invalid" and "not-run"
// are <error>s (a run that never reached a case reads as failed, never as a shorter green one),
// "unsupported" is <skipped>; message's first line is the element's message (the status when it
// is empty), the whole message its text. Any other status is a std::invalid_argument.
Result run_case_result(std::string_view status, std::string suite, std::string name, std::string file,
                       const std::string& message, double seconds);

using Properties = std::vector<std::pair<std::string, std::string>>;  // <properties> of the testsuite, in order

void write_junit(const std::filesystem::path& path, const std::string& producer, const std::vector<Result>& results,
                 const Properties& properties = {});
std::string junit_text(const std::string& producer, const std::vector<Result>& results, const Properties& properties = {});
void write_json(const std::filesystem::path& path, const std::string& command, const std::vector<Result>& results);

}  // namespace pmqa::cases
