#include "cli_test_support.hpp"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace pmqa::clitest {
namespace fs = std::filesystem;

// Always single-quoted (the test's own quoting, independent of the command's).
std::string q(const fs::path& p) {
  std::string out = "'";
  for (char ch : p.string()) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

RunResult run_pmqa(const std::string& args) {
  const std::string command = q(PMQA_EXE) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed for: " + command);
  RunResult r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.output.append(buf, n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "pmqa_cli_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  if (info != nullptr) name += std::string("_") + info->name();
  path_ = fs::temp_directory_path() / name;
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

fixtures::SuiteCase quick_case(const std::string& name) {
  for (auto& sc : fixtures::suite("quick"))
    if (sc.name == name) return sc;
  throw std::invalid_argument("no quick case " + name);
}

cases::CaseFile reference_case_file(const std::string& quick_case_name) {
  cases::CaseFile f;
  f.c = fixtures::make_case(quick_case(quick_case_name).spec);
  f.logits = dense_logits(compute_reference(f.c, {.precision = Precision::fp32, .with_noise = false}));
  f.contract = Contract::clean;
  f.producer = "cli test";
  return f;
}

}  // namespace pmqa::clitest
