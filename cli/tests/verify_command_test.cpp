// pmqa verify on files holding good and bad kernel output: pass (0), mismatch (1), the contract
// and tolerance overrides, unwritten cells, the kernel time, and the worst status over many files.
#include <cmath>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <regex>

#include <gtest/gtest.h>

#include "cli_test_support.hpp"
#include "pmqa/model/output.hpp"
#include "pmqa/model/tolerance.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa::clitest {
namespace {
namespace fs = std::filesystem;

// edge-lengths-1d: B8 N2 H4 D32 bs16, max_model_len 48, contexts 0, 1, 1, 2, 15, 16, 17, 48, so
// rows are empty, partial and full.
constexpr const char* kCase = "edge-lengths-1d";

// A valid cell (row 15 = b 7, n 1 sees all 48 keys).
constexpr std::int64_t kRow = 15, kCol = 37;

// A cell's fp64 value and its bounds under the fp32 and bf16-output profiles.
struct CellBounds {
  double want = 0, tight = 0, loose = 0;
};

CellBounds bounds_at(const Case& c, const Reference& oracle, std::int64_t r, std::int64_t j) {
  return {oracle.at(r, j), element_limit(c, oracle, Tolerance::fp32(), r, j),
          element_limit(c, oracle, Tolerance::bf16_output(), r, j)};
}

Reference oracle_of(const Case& c) { return compute_reference(c, {.precision = Precision::fp64, .with_noise = true}); }

TEST(VerifyCommand, PassesTheReferencesOwnOutput) {
  TempDir tmp;
  const auto file = tmp / "good.safetensors";
  cases::write_case_file(file, reference_case_file(kCase));
  const auto r = run_pmqa("verify " + q(file));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("PASS +edge-lengths-1d +B8 N2 H4 D32 bs16 fn normal +err/bound")))
      << r.output;
  EXPECT_NE(r.output.find("calc_diff"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 file(s): 1 passed, 0 failed, 0 invalid"), std::string::npos) << r.output;
}

TEST(VerifyCommand, OneLogitBeyondTheBoundFailsNamingTheCell) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  const CellBounds b = bounds_at(f.c, oracle_of(f.c), kRow, kCol);
  ASSERT_TRUE(std::isfinite(b.want) && b.tight > 0);
  // Just past the bound (8x; the float rounding is below one bound), not a gross change.
  (*f.logits)[cell(f.c, kRow, kCol)] = static_cast<float>(b.want + 8 * b.tight);
  const auto file = tmp / "one-off.safetensors";
  cases::write_case_file(file, f);
  const auto r = run_pmqa("verify " + q(file));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("FAIL"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("row 15 \\(b=7, n=1, E_r=48\\) col 37: value")))
      << "the failing cell is named:\n" << r.output;
  EXPECT_NE(r.output.find("value mismatches 1,"), std::string::npos) << r.output;

  // The report carries a command that reproduces the failure; running it fails the same way.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("reproduce: pmqa (verify [^\n]*)"))) << r.output;
  EXPECT_NE(m[1].str().find("--contract clean"), std::string::npos) << m[1];
  const auto again = run_pmqa(m[1].str());
  EXPECT_EQ(again.status, 1) << again.output;
  EXPECT_NE(again.output.find("row 15 (b=7, n=1, E_r=48) col 37"), std::string::npos) << again.output;
}

// The reproduce line is pasted into a shell as it is: a path with a space and a quote must survive.
TEST(VerifyCommand, ReproduceLineQuotesOddPaths) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  (*f.logits)[cell(f.c, kRow, kCol)] *= 2.0f;
  fs::create_directories(tmp / "kernel's output dir");
  const auto file = tmp / "kernel's output dir" / "bad case.safetensors";
  cases::write_case_file(file, f);
  const auto r = run_pmqa("verify --tolerance matrix-unit " + q(file));
  ASSERT_EQ(r.status, 1) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("reproduce: pmqa (verify [^\n]*)"))) << r.output;
  EXPECT_NE(m[1].str().find("--tolerance matrix-unit"), std::string::npos) << m[1];
  const auto again = run_pmqa(m[1].str());
  EXPECT_EQ(again.status, 1) << again.output;
  EXPECT_NE(again.output.find("tolerance matrix-unit, NaN rule propagate: 1 failing cell(s)"), std::string::npos)
      << again.output;
}

// Garbage past E_r, as DeepGEMM leaves without clean_logits: wrong under clean, fine under valid-only.
TEST(VerifyCommand, ValidOnlyOverrideIgnoresCellsPastValidKeys) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  std::int64_t planted = 0;
  for (std::int64_t r = 0; r < f.c.rows(); ++r)
    for (std::int64_t j = std::max<std::int64_t>(f.c.valid_keys(r), 0); j < f.c.max_model_len; ++j, ++planted)
      (*f.logits)[cell(f.c, r, j)] = 12345.0f + static_cast<float>(j);
  ASSERT_GT(planted, 0);
  const auto file = tmp / "garbage-tail.safetensors";
  cases::write_case_file(file, f);  // the file's own contract: clean

  const auto clean = run_pmqa("verify " + q(file));
  EXPECT_EQ(clean.status, 1) << clean.output;
  EXPECT_NE(clean.output.find("-inf pattern errors " + std::to_string(planted)), std::string::npos) << clean.output;
  const auto valid_only = run_pmqa("verify --contract valid-only " + q(file));
  EXPECT_EQ(valid_only.status, 0) << valid_only.output;

  // The same file declaring valid-only passes as it is, and --contract clean overrides that.
  f.contract = Contract::valid_only;
  cases::write_case_file(file, f);
  EXPECT_EQ(run_pmqa("verify " + q(file)).status, 0);
  EXPECT_EQ(run_pmqa("verify --contract clean " + q(file)).status, 1);
}

// A runner that pre-fills its buffer with the sentinel and stores it: a valid cell still holding
// it was never written.
TEST(VerifyCommand, SentinelInAValidCellIsUnwritten) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  (*f.logits)[cell(f.c, kRow, kCol)] = sentinel();
  const auto file = tmp / "unwritten.safetensors";
  cases::write_case_file(file, f);
  const auto r = run_pmqa("verify --contract valid-only " + q(file));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("unwritten 1,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("col 37: unwritten"), std::string::npos) << r.output;
}

TEST(VerifyCommand, ShowsTheKernelTimeBesideTheVerdict) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  f.extra["bench_ms"] = "0.42";
  const auto file = tmp / "timed.safetensors";
  cases::write_case_file(file, f);
  const auto r = run_pmqa("verify " + q(file));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("PASS 0.42 ms"), std::string::npos) << r.output;
  // pmqa-run's kernel time (what its speed gate judges) beside the wall time, and the gated ratio
  f.extra["kernel_ms"] = "0.31";
  f.extra["floor_ratio"] = "3.7";
  f.extra["floor_ratio_wall"] = "5.1";
  cases::write_case_file(file, f);
  const auto both = run_pmqa("verify " + q(file) + " --json " + q(tmp / "v.json"));
  EXPECT_EQ(both.status, 0) << both.output;
  EXPECT_NE(both.output.find("PASS 0.31 ms kernels, 0.42 ms wall x3.7 floor"), std::string::npos) << both.output;
  std::ifstream json(tmp / "v.json");
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"kernel_ms\": \"0.31\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"floor_ratio_wall\": \"5.1\""), std::string::npos) << text;
}

// An error the fp32 profile rejects and the bf16-output profile accepts: the file's "tolerance"
// metadata picks the profile, and --tolerance wins over it.
TEST(VerifyCommand, ToleranceFromMetadataAndFlag) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  // The valid cell where the two profiles are furthest apart.
  const Reference oracle = oracle_of(f.c);
  std::int64_t best_r = -1, best_j = -1;
  double best = 0;
  for (std::int64_t r = 0; r < f.c.rows(); ++r)
    for (std::int64_t j = 0; j < oracle.valid(r); ++j) {
      const CellBounds cb = bounds_at(f.c, oracle, r, j);
      if (std::isfinite(cb.want) && cb.tight > 0 && cb.loose / cb.tight > best) best = cb.loose / cb.tight, best_r = r, best_j = j;
    }
  ASSERT_GT(best, 16) << "no cell tells the profiles apart";
  const CellBounds b = bounds_at(f.c, oracle, best_r, best_j);
  (*f.logits)[cell(f.c, best_r, best_j)] = static_cast<float>(b.want + std::sqrt(b.tight * b.loose));
  const auto file = tmp / "bf16ish.safetensors";

  cases::write_case_file(file, f);
  EXPECT_EQ(run_pmqa("verify " + q(file)).status, 1) << "default fp32";
  EXPECT_EQ(run_pmqa("verify --tolerance bf16-output " + q(file)).status, 0);

  f.extra["tolerance"] = "bf16-output";
  cases::write_case_file(file, f);
  const auto from_file = run_pmqa("verify " + q(file));
  EXPECT_EQ(from_file.status, 0) << from_file.output;
  const auto flag_wins = run_pmqa("verify --tolerance fp32 " + q(file));
  EXPECT_EQ(flag_wins.status, 1) << flag_wins.output;
  EXPECT_NE(flag_wins.output.find("--tolerance fp32"), std::string::npos) << "the reproduce line keeps the profile";

  // A name the model does not know: the writer refuses it, and a file that holds one anyway (edited
  // here byte for byte, "fp32" -> "fp16") is invalid input for verify, as for every reader.
  f.extra["tolerance"] = "fp16";
  EXPECT_THROW(cases::write_case_file(file, f), cases::CaseFileError);
  f.extra["tolerance"] = "fp32";
  cases::write_case_file(file, f);
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = bytes.find("\"tolerance\":\"fp32\"");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 18, "\"tolerance\":\"fp16\"");
  std::ofstream(file, std::ios::binary) << bytes;
  const auto bad = run_pmqa("verify " + q(file));
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find(file.string() + ": __metadata__.tolerance: \"fp16\" is not one of fp32 or matrix-unit"),
            std::string::npos)
      << bad.output;
  const auto forced = run_pmqa("verify --tolerance fp32 " + q(file));
  EXPECT_EQ(forced.status, 2) << "a file no reader accepts stays invalid under a flag: " << forced.output;
}

// The whole output 1 % too large: inside every cell's noise under bf16-output, so only the bias
// gate fails it; the verdict line and the report name the gate and the sign.
TEST(VerifyCommand, AScaleInsideTheNoiseFailsTheBiasGateNamingItsSign) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  for (float& x : *f.logits)
    if (std::isfinite(x)) x *= 1.01f;
  f.extra["tolerance"] = "bf16-output";
  const auto file = tmp / "scaled.safetensors";
  cases::write_case_file(file, f);
  const auto r = run_pmqa("verify " + q(file) + " --json " + q(tmp / "v.json"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("FAIL +edge-lengths-1d .* bias [0-9.]+ .*\\[bias \\(magnitude too large\\)\\]")))
      << r.output;
  EXPECT_NE(r.output.find("value mismatches 0,"), std::string::npos) << "no cell is over its limit\n" << r.output;
  EXPECT_NE(r.output.find("bias gate: all valid cells"), std::string::npos) << r.output;
}

// Every file is reported; the exit status is the worst one (2 over 1 over 0).
TEST(VerifyCommand, KeepsGoingAndExitsWithTheWorstStatus) {
  TempDir tmp;
  cases::CaseFile f = reference_case_file(kCase);
  cases::write_case_file(tmp / "a-good.safetensors", f);
  (*f.logits)[cell(f.c, kRow, kCol)] *= 2.0f;
  cases::write_case_file(tmp / "b-bad-value.safetensors", f);

  const auto mismatch = run_pmqa("verify " + q(tmp.path()));
  EXPECT_EQ(mismatch.status, 1) << mismatch.output;
  EXPECT_NE(mismatch.output.find("2 file(s): 1 passed, 1 failed, 0 invalid"), std::string::npos) << mismatch.output;

  auto bytes = read_bytes(tmp / "a-good.safetensors");
  bytes.resize(bytes.size() / 2);
  write_bytes(tmp / "c-truncated.safetensors", bytes);
  const auto all = run_pmqa("verify " + q(tmp.path()));
  EXPECT_EQ(all.status, 2) << all.output;
  EXPECT_TRUE(std::regex_search(all.output, std::regex("PASS [^\n]*a-good[.]safetensors"))) << all.output;
  EXPECT_TRUE(std::regex_search(all.output, std::regex("FAIL [^\n]*b-bad-value[.]safetensors"))) << all.output;
  EXPECT_TRUE(std::regex_search(all.output, std::regex("ERROR [^\n]*c-truncated[.]safetensors: "))) << all.output;
  EXPECT_NE(all.output.find("3 file(s): 1 passed, 1 failed, 1 invalid"), std::string::npos) << all.output;

  // Files are taken in sorted order whatever the directory lists first; explicit files in the given order.
  const auto a = all.output.find("a-good"), b = all.output.find("b-bad-value"), c = all.output.find("c-truncated");
  EXPECT_TRUE(a < b && b < c) << all.output;
}

}  // namespace
}  // namespace pmqa::clitest
