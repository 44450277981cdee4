// Support for tests that run the built pmqa binary (PMQA_EXE, set by CMake) and check its exit
// status and output: the exit-code contract a CI job gates on is tested end to end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pmqa/cases/case_file.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/reference/reference.hpp"

namespace pmqa::clitest {

struct RunResult {
  int status = -1;     // the exit status; -1 if pmqa did not exit normally (a crash)
  std::string output;  // stdout and stderr together
};

// Runs `pmqa <args>` (args are given to the shell as they are: quote paths with q()).
RunResult run_pmqa(const std::string& args);

// A path as one shell word.
std::string q(const std::filesystem::path& p);

// A fresh directory for one test, removed when the test ends.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& p);
void write_bytes(const std::filesystem::path& p, const std::vector<std::uint8_t>& bytes);

// A quick-suite case as a file holding the fp32 reference's own output (a file verify passes).
fixtures::SuiteCase quick_case(const std::string& name);
cases::CaseFile reference_case_file(const std::string& quick_case_name);

// Index of a cell (r, j) of a file's dense [rows, max_model_len] logits.
inline std::size_t cell(const Case& c, std::int64_t r, std::int64_t j) {
  return static_cast<std::size_t>(r * c.max_model_len + j);
}

}  // namespace pmqa::clitest
