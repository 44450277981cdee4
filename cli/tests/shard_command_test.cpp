// --shard K/N of pmqa gen, check and verify, and verify -j N, run as a CI matrix runs them: the N
// shards of a suite cover it exactly once for every N (no case lost, none twice), verify splits a
// folder of gen's files as gen split the suite, bad K/N is a usage error (exit 2), and verify -j 2
// prints the same report with the same exit status as -j 1.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "pmqa/cases/envelope.hpp"
#include "pmqa/fixtures/fit.hpp"

namespace pmqa::clitest {
namespace {
namespace fs = std::filesystem;

std::multiset<std::string> safetensors_in(const fs::path& dir) {
  std::multiset<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") names.insert(e.path().stem().string());
  return names;
}

// The case names a --json report lists (check: "CASE [subject]", one per subject: each case once).
std::multiset<std::string> json_cases(const fs::path& json_file) {
  std::ifstream in(json_file);
  const auto j = nlohmann::json::parse(in);
  std::set<std::string> seen;
  std::multiset<std::string> names;
  for (const auto& r : j.at("results")) {
    std::string name = r.at("name").get<std::string>();
    if (const auto at = name.find(" ["); at != std::string::npos) name.resize(at);
    if (seen.insert(name).second) names.insert(name);
  }
  return names;
}

std::set<std::string> quick_names() {
  std::set<std::string> names;
  for (const auto& sc : fixtures::suite("quick")) names.insert(sc.name);
  return names;
}

template <class Set>
std::set<std::string> as_set(const Set& s) {
  return {s.begin(), s.end()};
}

TEST(Shards, GenShardsCoverTheSuiteOnceForEveryN) {
  TempDir tmp;
  ASSERT_EQ(run_pmqa("gen --suite quick --out " + q(tmp / "all")).status, 0);
  const auto all = safetensors_in(tmp / "all");
  ASSERT_EQ(as_set(all), quick_names());
  for (int n = 1; n <= 8; ++n) {
    std::multiset<std::string> together;
    for (int k = 1; k <= n; ++k) {
      const fs::path dir = tmp / (std::to_string(n) + "-" + std::to_string(k));
      const auto r = run_pmqa("gen --suite quick --shard " + std::to_string(k) + "/" + std::to_string(n) + " --out " + q(dir));
      ASSERT_EQ(r.status, 0) << r.output;
      const auto mine = safetensors_in(dir);
      EXPECT_NE(r.output.find("(shard " + std::to_string(k) + "/" + std::to_string(n) + ": " + std::to_string(mine.size()) +
                              " of " + std::to_string(all.size()) + " case(s))"),
                std::string::npos)
          << r.output;
      for (const auto& name : mine) {
        together.insert(name);
        EXPECT_EQ(read_bytes(dir / (name + ".safetensors")), read_bytes(tmp / "all" / (name + ".safetensors"))) << name;
      }
      fs::remove_all(dir);
    }
    EXPECT_EQ(together, all) << "N " << n << ": every case in exactly one shard";
  }
}

// The case names a `pmqa gen --list` table lists (the first column of the rows under each header).
std::multiset<std::string> listed_cases(const std::string& output) {
  std::multiset<std::string> names;
  bool rows = false;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("---", 0) == 0) {
      rows = true;
    } else if (line.empty() || line.rfind("suite ", 0) == 0) {
      rows = false;
    } else if (rows) {
      names.insert(line.substr(0, line.find(' ')));
    }
  }
  return names;
}

// gen --list --shard K/N lists shard K's cases, the ones gen --shard K/N writes: for every suite
// (and a fitted one) the N lists together hold each case gen would write exactly once; a large
// case left out without --include-large is in none of them, and each heading says so.
TEST(Shards, GenListShardsPartitionTheSuite) {
  struct Listing {
    std::string args;
    std::vector<fixtures::SuiteCase> cases;
  };
  std::vector<Listing> listings;
  for (const auto& s : fixtures::suite_names()) listings.push_back({"--suite " + s, fixtures::suite(s)});
  listings.push_back({"--suite standard --fit deepgemm",
                      fixtures::fit_suite("standard", cases::make_envelope("deepgemm", "", {}))});
  for (const auto& l : listings) {
    for (const bool include_large : {false, true}) {
      std::multiset<std::string> expected;
      std::size_t large_left_out = 0;
      for (const auto& sc : l.cases) {
        if (sc.large && !include_large) ++large_left_out;
        else expected.insert(sc.name);
      }
      const std::string large = include_large ? " --include-large" : "";
      for (const int n : {1, 2, 3, 5}) {
        std::multiset<std::string> together;
        for (int k = 1; k <= n; ++k) {
          const std::string shard = std::to_string(k) + "/" + std::to_string(n);
          const auto r = run_pmqa("gen --list " + l.args + large + " --shard " + shard);
          ASSERT_EQ(r.status, 0) << l.args << large << " " << shard << "\n" << r.output;
          const auto mine = listed_cases(r.output);
          EXPECT_NE(r.output.find("shard " + shard + ": " + std::to_string(mine.size()) + " of " +
                                  std::to_string(expected.size()) + " case(s)"),
                    std::string::npos)
              << l.args << large << "\n" << r.output;
          EXPECT_EQ(r.output.find("in no shard") != std::string::npos, large_left_out > 0) << r.output;
          together.insert(mine.begin(), mine.end());
        }
        EXPECT_EQ(together, expected) << l.args << large << " N " << n << ": every case in exactly one shard's list";
      }
    }
  }
  // The list is the split gen --shard writes.
  TempDir tmp;
  for (int k = 1; k <= 3; ++k) {
    const std::string shard = std::to_string(k) + "/3";
    const auto listed = run_pmqa("gen --list --suite quick --shard " + shard);
    ASSERT_EQ(run_pmqa("gen --suite quick --shard " + shard + " --out " + q(tmp / shard.substr(0, 1))).status, 0);
    EXPECT_EQ(listed_cases(listed.output), safetensors_in(tmp / shard.substr(0, 1))) << shard;
  }
}

TEST(Shards, CheckShardsCoverTheSuiteOnceForEveryN) {
  TempDir tmp;
  const auto names = quick_names();
  for (int n = 1; n <= 8; ++n) {
    std::multiset<std::string> together;
    for (int k = 1; k <= n; ++k) {
      const fs::path json = tmp / "check.json";
      const std::string shard = std::to_string(k) + "/" + std::to_string(n);
      const auto r = run_pmqa("check --suite quick --path fused --shard " + shard + " --json " + q(json));
      ASSERT_EQ(r.status, 0) << r.output;
      const auto mine = json_cases(json);
      EXPECT_NE(r.output.find("pmqa check --suite quick (shard " + shard + ": " + std::to_string(mine.size()) + " of " +
                              std::to_string(names.size()) + " case(s)):"),
                std::string::npos)
          << r.output;
      together.insert(mine.begin(), mine.end());
    }
    EXPECT_EQ(together, std::multiset<std::string>(names.begin(), names.end())) << "N " << n;
  }
}

TEST(Shards, VerifySplitsAFolderAsGenSplitTheSuite) {
  TempDir tmp;
  ASSERT_EQ(run_pmqa("gen --suite quick --with-reference --out " + q(tmp / "all")).status, 0);
  const auto all = safetensors_in(tmp / "all");
  for (int n = 1; n <= 8; ++n) {
    std::multiset<std::string> together;
    for (int k = 1; k <= n; ++k) {
      const std::string shard = std::to_string(k) + "/" + std::to_string(n);
      const fs::path json = tmp / "verify.json", gen = tmp / "gen";
      const auto r = run_pmqa("verify -j 2 --shard " + shard + " " + q(tmp / "all") + " --json " + q(json));
      ASSERT_EQ(r.status, 0) << r.output;
      const auto mine = json_cases(json);
      EXPECT_NE(r.output.find("pmqa verify: shard " + shard + ": " + std::to_string(mine.size()) + " of " +
                              std::to_string(all.size()) + " file(s): " + std::to_string(mine.size()) + " passed"),
                std::string::npos)
          << r.output;
      ASSERT_EQ(run_pmqa("gen --suite quick --shard " + shard + " --out " + q(gen)).status, 0);
      EXPECT_EQ(mine, safetensors_in(gen)) << "verify --shard " << shard << " takes gen --shard " << shard << "'s cases";
      fs::remove_all(gen);
      together.insert(mine.begin(), mine.end());
    }
    EXPECT_EQ(together, all) << "N " << n;
  }
}

TEST(Shards, BadShardsAndJobsAreUsageErrors) {
  TempDir tmp;
  for (const std::string bad : {"0/4", "5/4", "1/0", "a/b", "3", "1/2/3", "-1/4", "1/5000"}) {
    const auto g = run_pmqa("gen --suite quick --shard " + bad + " --out " + q(tmp / "g"));
    EXPECT_EQ(g.status, 2) << bad << "\n" << g.output;
    EXPECT_NE(g.output.find("gen: --shard " + bad + ": "), std::string::npos) << g.output;
    const auto c = run_pmqa("check --suite quick --shard " + bad);
    EXPECT_EQ(c.status, 2) << bad << "\n" << c.output;
    EXPECT_NE(c.output.find("check: --shard " + bad + ": "), std::string::npos) << c.output;
    const auto v = run_pmqa("verify --shard " + bad + " " + q(tmp.path()));
    EXPECT_EQ(v.status, 2) << bad << "\n" << v.output;
    EXPECT_NE(v.output.find("verify: --shard " + bad + ": "), std::string::npos) << v.output;
  }
  EXPECT_FALSE(fs::exists(tmp / "g")) << "nothing is written on a usage error";
  const auto j = run_pmqa("verify -j -1 " + q(tmp.path()));
  EXPECT_EQ(j.status, 2) << j.output;
  EXPECT_NE(j.output.find("verify: -j -1"), std::string::npos) << j.output;
}

TEST(VerifyJobs, TwoAtOnceReportAsOneAtATime) {
  ::setenv("PMQA_PROGRESS_SECONDS", "-1", 1);  // no progress lines in the compared output
  TempDir tmp;
  const std::vector<std::string> names{"deepseek-small", "edge-lengths-1d", "nan-codes-e4m3fnuz", "one-head"};
  int i = 0;
  for (const auto& name : names) {
    cases::CaseFile f = reference_case_file(name);
    cases::write_case_file(tmp / (std::to_string(i++) + "-pass-" + name + ".safetensors"), f);
    for (auto& v : *f.logits)  // every valid cell off: a failure with a long report
      if (std::isfinite(v)) v = v * 1.5f + 1.0f;
    cases::write_case_file(tmp / (std::to_string(i++) + "-fail-" + name + ".safetensors"), f);
  }
  auto bytes = read_bytes(tmp / "0-pass-deepseek-small.safetensors");
  bytes.resize(bytes.size() / 3);
  write_bytes(tmp / "3a-truncated.safetensors", bytes);
  write_bytes(tmp / "5a-not-safetensors.safetensors", {'h', 'e', 'l', 'l', 'o'});
  const auto one = run_pmqa("verify -j 1 " + q(tmp.path()));
  EXPECT_EQ(one.status, 2) << one.output;
  EXPECT_NE(one.output.find("10 file(s): 4 passed, 4 failed, 2 invalid"), std::string::npos) << one.output;
  for (const char* jobs : {"2", "3", "16"}) {
    const auto many = run_pmqa(std::string("verify -j ") + jobs + " " + q(tmp.path()));
    EXPECT_EQ(many.status, one.status) << "-j " << jobs;
    EXPECT_EQ(many.output, one.output) << "-j " << jobs;
  }
  const auto some = run_pmqa("verify -j 2 " + q(tmp / "0-pass-deepseek-small.safetensors") + " " +
                             q(tmp / "1-fail-deepseek-small.safetensors"));
  EXPECT_EQ(some.status, 1) << some.output;
  const auto one_file = run_pmqa("verify -j 4 " + q(tmp / "0-pass-deepseek-small.safetensors"));
  EXPECT_EQ(one_file.status, 0) << one_file.output;
}

}  // namespace
}  // namespace pmqa::clitest
