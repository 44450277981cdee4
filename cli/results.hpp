// Results of a pmqa run, one per (case, subject), and the files a CI system reads: JUnit XML
// (one testcase per result, failures with the report text) and JSON, both written atomically.
//
// The JUnit shape is the one pmqa-run writes too (python/src/pmqa/run/junit.py): <testsuites> holding
// one <testsuite name="PRODUCER"> ("pmqa verify", "pmqa check"), each <testcase classname="SUITE"
// name="CASE">; every text made printable and XML-escaped.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pmqa::cli {

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

void write_junit(const std::filesystem::path& path, const std::string& producer, const std::vector<Result>& results);
std::string junit_text(const std::string& producer, const std::vector<Result>& results);
void write_json(const std::filesystem::path& path, const std::string& command, const std::vector<Result>& results);

}  // namespace pmqa::cli
