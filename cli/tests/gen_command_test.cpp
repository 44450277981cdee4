// pmqa gen, run as a user runs it: files written, deterministic across runs, the listing, and
// usage errors with exit status 2.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "cli_test_support.hpp"

namespace pmqa::clitest {
namespace {
namespace fs = std::filesystem;

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

TEST(GenCommand, WritesEveryQuickCaseWithItsProvenance) {
  TempDir tmp;
  const auto r = run_pmqa("gen --suite quick --out " + q(tmp.path()));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto cases = fixtures::suite("quick");
  EXPECT_EQ(names_in(tmp.path()).size(), cases.size());
  for (const auto& sc : cases) {
    const fs::path file = tmp / (sc.name + ".safetensors");
    ASSERT_TRUE(fs::exists(file)) << sc.name;
    EXPECT_NE(r.output.find("wrote " + file.string()), std::string::npos) << "one line per file:\n" << r.output;
    const cases::CaseFile f = cases::read_case_file(file);
    EXPECT_EQ(f.producer, "pmqa gen");
    EXPECT_EQ(f.contract, Contract::clean);
    EXPECT_FALSE(f.logits.has_value()) << "gen without --with-reference stores no logits";
    EXPECT_EQ(f.c.suite, "quick");
    EXPECT_EQ(f.c.seed, sc.spec.seed);
    // The file holds exactly the generator's case.
    cases::CaseFile expected;
    expected.c = fixtures::make_case(sc.spec);
    expected.producer = "pmqa gen";
    EXPECT_EQ(read_bytes(file), cases::serialize_case_file(expected)) << sc.name;
  }
}

TEST(GenCommand, SameSuiteTwiceGivesByteIdenticalFiles) {
  TempDir a, b;
  ASSERT_EQ(run_pmqa("gen --suite quick --out " + q(a.path())).status, 0);
  ASSERT_EQ(run_pmqa("gen --suite quick --out " + q(b.path())).status, 0);
  const auto names = names_in(a.path());
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names, names_in(b.path()));
  for (const auto& n : names) EXPECT_EQ(read_bytes(a / n), read_bytes(b / n)) << n;
}

// The reference runs on threads; its stored output must not depend on their timing.
TEST(GenCommand, WithReferenceIsDeterministicToo) {
  TempDir a, b;
  const std::string pick = " --with-reference --case deepseek-small --case edge-lengths-1d --case nan-codes-e4m3fnuz";
  ASSERT_EQ(run_pmqa("gen --suite quick --out " + q(a.path()) + pick).status, 0);
  ASSERT_EQ(run_pmqa("gen --suite quick --out " + q(b.path()) + pick).status, 0);
  EXPECT_EQ(names_in(a.path()).size(), 3u);
  for (const auto& n : names_in(a.path())) {
    EXPECT_EQ(read_bytes(a / n), read_bytes(b / n)) << n;
    EXPECT_TRUE(cases::read_case_file(a / n).logits.has_value()) << n;
  }
}

TEST(GenCommand, WithReferenceFilesPassVerify) {
  TempDir tmp;
  ASSERT_EQ(run_pmqa("gen --suite quick --with-reference --out " + q(tmp.path())).status, 0);
  const auto r = run_pmqa("verify " + q(tmp.path()));
  EXPECT_EQ(r.status, 0) << r.output;
  const auto n = fixtures::suite("quick").size();
  EXPECT_NE(r.output.find(std::to_string(n) + " file(s): " + std::to_string(n) + " passed, 0 failed, 0 invalid"),
            std::string::npos)
      << r.output;
}

TEST(GenCommand, FilesWithoutLogitsAreInvalidForVerify) {
  TempDir tmp;
  ASSERT_EQ(run_pmqa("gen --suite quick --case one-head --out " + q(tmp.path())).status, 0);
  const auto r = run_pmqa("verify " + q(tmp / "one-head.safetensors"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find((tmp / "one-head.safetensors").string() + ": tensor logits: missing"), std::string::npos)
      << r.output;
}

TEST(GenCommand, LargeCasesAreSkippedSayingSo) {
  TempDir tmp;
  const auto r = run_pmqa("gen --suite nightly --case offset-past-2g --out " + q(tmp.path()));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("skipped offset-past-2g"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--include-large"), std::string::npos) << r.output;
  EXPECT_TRUE(names_in(tmp.path()).empty());
}

TEST(GenCommand, ListShowsEverySuiteOrOne) {
  const auto all = run_pmqa("gen --list");
  ASSERT_EQ(all.status, 0) << all.output;
  for (const auto& s : fixtures::suite_names()) EXPECT_NE(all.output.find("suite " + s), std::string::npos) << s;
  EXPECT_NE(all.output.find("offset-past-2g"), std::string::npos);
  EXPECT_NE(all.output.find("[large"), std::string::npos) << "large cases are marked";

  const auto quick = run_pmqa("gen --list --suite quick");
  ASSERT_EQ(quick.status, 0) << quick.output;
  EXPECT_EQ(quick.output.find("suite standard"), std::string::npos);
  for (const auto& sc : fixtures::suite("quick")) {
    EXPECT_NE(quick.output.find(sc.name), std::string::npos) << sc.name;
    EXPECT_NE(quick.output.find(sc.description), std::string::npos) << sc.name;
  }
  EXPECT_NE(quick.output.find("B8 N2 H4 D32 bs16 fn normal"), std::string::npos) << "shape of edge-lengths-1d";
}

TEST(GenCommand, UsageErrorsExitTwo) {
  TempDir tmp;
  const auto bogus = run_pmqa("gen --suite bogus --out " + q(tmp.path()));
  EXPECT_EQ(bogus.status, 2) << bogus.output;
  EXPECT_NE(bogus.output.find("bogus"), std::string::npos) << bogus.output;
  const auto no_case = run_pmqa("gen --suite quick --case no-such-case --out " + q(tmp.path()));
  EXPECT_EQ(no_case.status, 2) << no_case.output;
  EXPECT_NE(no_case.output.find("no-such-case"), std::string::npos) << no_case.output;
  const auto no_out = run_pmqa("gen --suite quick");
  EXPECT_EQ(no_out.status, 2) << no_out.output;
  EXPECT_NE(no_out.output.find("--out"), std::string::npos) << no_out.output;
  const auto no_suite = run_pmqa("gen --out " + q(tmp.path()));
  EXPECT_EQ(no_suite.status, 2) << no_suite.output;
  EXPECT_TRUE(names_in(tmp.path()).empty()) << "nothing written on a usage error";
}

}  // namespace
}  // namespace pmqa::clitest
