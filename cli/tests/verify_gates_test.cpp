// pmqa verify re-applies the gates the run that wrote a file recorded (issue 43 item 1): a file with
// correct numbers whose run failed its speed or path gate is FAIL (exit 1), the gate named in the
// text, the JUnit and the JSON, and counted apart from the judge's failures in the summary. A verify
// that ignored the gates would pass these files: each test asserts the exit status first.
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace pmqa::clitest {
namespace {

constexpr const char* kCase = "edge-lengths-1d";

// What pmqa-run records with --max-floor-ratio R (the floor is recomputed from the case by verify).
void record_speed_gate(cases::CaseFile& f, const std::string& max_ratio) {
  f.extra.insert({{"floor_max_ratio", max_ratio}, {"floor_min_mb", "0.0"}, {"copy_gbps", "100"}, {"bench_ms", "0.3"},
                  {"kernel_ms", "0.02"}, {"kernel_unseen_calls", "0 of 3"}, {"floor_ratio", "1"}, {"floor_gate", "at most 1e+09"}});
}

std::string text_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(VerifyGates, AFailedSpeedGateFailsTheFileNamingTheGate) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);  // numbers the judge passes
  record_speed_gate(f, "0.001");
  const auto file = tmp / "slow.safetensors";
  cases::write_case_file(file, f);
  const auto r = run_pmqa("verify " + q(file) + " --junit " + q(tmp / "v.xml") + " --json " + q(tmp / "v.json"));
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("[speed gate failed]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("speed gate (--max-floor-ratio): fail: kernel time 0.02 ms is"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("above --max-floor-ratio 0.001: a slow path"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 file(s): 0 passed, 1 failed, 0 invalid; of 1 written: 0 failed by the judge, 1 failed by a gate"),
            std::string::npos)
      << r.output;
  EXPECT_NE(text_of(tmp / "v.xml").find("<failure message=\"speed gate failed: kernel time"), std::string::npos);
  const auto j = nlohmann::json::parse(text_of(tmp / "v.json"));
  EXPECT_EQ(j["results"][0]["passed"], false);
  EXPECT_EQ(j["results"][0]["report"]["failed_gates"], nlohmann::json::array({"speed"}));
  EXPECT_EQ(j["results"][0]["report"]["run_gates"][0]["outcome"], "fail");
  EXPECT_EQ(j["summary"]["failed"], 1);
}

TEST(VerifyGates, APassedGateKeepsThePass) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  record_speed_gate(f, "1e9");
  const auto file = tmp / "fast.safetensors";
  cases::write_case_file(file, f);
  const auto r = run_pmqa("verify " + q(file));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("gate failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("of 1 written: 0 failed by the judge, 0 failed by a gate"), std::string::npos) << r.output;
}

TEST(VerifyGates, AFailedPathGateAndBadNumbersAreCountedApart) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  f.extra.insert({{"expected_path", "fused"}, {"path", "two-stage"}, {"kernels_unknown", "[]"},
                  {"kernels_seen", "_deepgemm_fp8_paged_mqa_logits_stage1 (aiter two-stage) x1"}});
  cases::write_case_file(tmp / "slow-path.safetensors", f);
  for (auto& x : *f.logits) x *= 2;  // and this one's numbers are wrong too
  cases::write_case_file(tmp / "both.safetensors", f);
  const auto r = run_pmqa("verify " + q(tmp.path()) + " --junit " + q(tmp / "v.xml"));
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("[path gate failed]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expected the fused path, the op took the two-stage path: it launched "
                          "_deepgemm_fp8_paged_mqa_logits_stage1 (aiter two-stage) x1"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("2 file(s): 0 passed, 2 failed, 0 invalid; of 2 written: 1 failed by the judge, 2 failed by a gate"),
            std::string::npos)
      << r.output;
  EXPECT_NE(text_of(tmp / "v.xml").find("region(s) over their limit"), std::string::npos);
  EXPECT_NE(text_of(tmp / "v.xml").find("; path gate failed: expected the fused path"), std::string::npos);
}

TEST(VerifyGates, MalformedGateMetadataIsInvalidInput) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  record_speed_gate(f, "7");
  f.extra["copy_gbps"] = "fast";
  cases::write_case_file(tmp / "bad.safetensors", f);
  const auto r = run_pmqa("verify " + q(tmp / "bad.safetensors"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("__metadata__.copy_gbps"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace pmqa::clitest
