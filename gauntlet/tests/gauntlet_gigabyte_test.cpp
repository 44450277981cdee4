// The mutants only a case past 2^31 bytes of output shows (label slow, ~4.2 GiB each, run one at a
// time: RESOURCE_LOCK pmqa_host_gigabytes): pmqa's ordinary checks must report them, and the
// unmutated kernels must pass the same gigabyte case. Skipped, with a message, on a machine with
// less than 5 GiB available.
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "pmqa/checks/checks.hpp"
#include "pmqa/gauntlet/gauntlet.hpp"

namespace pmqa::gauntlet {
namespace {

// MemAvailable from /proc/meminfo in GiB (0 when unreadable).
double available_gib() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib / (1024.0 * 1024.0);
  return 0;
}

#define PMQA_NEED_GIGABYTES()                                                                        \
  if (available_gib() < 5.0)                                                                        \
  GTEST_SKIP() << "needs ~4.2 GiB of host memory for an output past 2^31 bytes; " << available_gib() \
               << " GiB available"

std::vector<std::string> gigabyte_mutants() {
  std::vector<std::string> names;
  for (const auto& m : mutants())
    if (m.needs_gigabytes) names.push_back(m.name);
  return names;
}

class GigabyteMutants : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(GigabyteMutants, OrdinaryChecksReportIt) {
  PMQA_NEED_GIGABYTES();
  const auto& [name, profile] = GetParam();
  const Mutant* m = find_mutant(name);
  ASSERT_NE(m, nullptr);
  GauntletOptions o;
  o.tolerance = Tolerance::named(profile);  // as gauntlet_test.cpp: caught under every profile
  const MutantResult r = run_mutant(*m, o);
  std::string text;
  const Finding* big = nullptr;  // the gigabyte host check (output_past_2g)
  for (const auto& f : r.findings) {
    text += (f.caught ? "  CAUGHT " : "  passed ") + std::string(f.ordinary ? "" : "(proposed) ") + f.check + " [" +
            f.config + "]: " + std::to_string(f.cases_run) + " " + f.unit + "\n";
    if (f.check.rfind("output rows past 2^31 bytes", 0) == 0) big = &f;
  }
  // The gigabyte check sees the bug.
  ASSERT_NE(big, nullptr) << text;
  EXPECT_TRUE(big->caught) << text;
  EXPECT_FALSE(r.survived()) << m->name << " (class " << m->bug_class << ": " << m->bug
                             << ") SURVIVED every ordinary check. Only a case past 2^31 bytes shows it: checks::output_past_2g "
                                "(kernels/tests/large_output_test.cpp, label slow) should catch it.\n"
                             << text << "  evidence: " << big->evidence;
}

INSTANTIATE_TEST_SUITE_P(Gauntlet, GigabyteMutants,
                         ::testing::Combine(::testing::ValuesIn(gigabyte_mutants()), ::testing::ValuesIn(Tolerance::names())),
                         [](const auto& p) {
                           std::string s = std::get<0>(p.param) + "__" + std::get<1>(p.param);
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

TEST(NoFalseAlarm, UnmutatedKernelsPassPastTwoGigabytesOfOutput) {
  PMQA_NEED_GIGABYTES();
  const Finding f = checks::output_past_2g(checks::host_factory());
  EXPECT_EQ(f.cases_run, 2);
  EXPECT_FALSE(f.caught) << f.evidence;
  std::printf("both paths, rows past 2^31 bytes of output: %s (%.1f s)\n", f.caught ? "FAIL" : "pass", f.seconds);
}

}  // namespace
}  // namespace pmqa::gauntlet
