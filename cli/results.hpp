// Results of a pmqa run, one per (case, subject), and the files a CI system reads: JUnit XML
// (one testcase per result, failures with the report text) and JSON.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pmqa::cli {

struct Result {
  std::string suite;     // JUnit testsuite: e.g. "quick" or the file's folder
  std::string name;      // JUnit testcase: e.g. "edge-lengths-1d [fused/host-w64]"
  bool passed = false;
  bool skipped = false;  // with a reason in message; never counted as passed
  bool error = false;    // invalid input (exit 2), not a mismatch
  double seconds = 0;
  std::string message;   // one line
  std::string details;   // the full report on failure
  nlohmann::json json;   // structured report
};

void write_junit(const std::filesystem::path& path, const std::string& name, const std::vector<Result>& results);
void write_json(const std::filesystem::path& path, const std::string& command, const std::vector<Result>& results);

}  // namespace pmqa::cli
