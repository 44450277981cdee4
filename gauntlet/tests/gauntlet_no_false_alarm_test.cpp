// No false alarm (label slow): the unmutated kernels pass the ordinary kernel property over 10,000
// generated cases (8 shards of 1,250, so ctest -j spreads them), each case on every executor and
// path the property runs (host at wave 64 and 32, fused and two-stage).
#include <cstdio>

#include <gtest/gtest.h>

#include "pmqa/checks/property.hpp"
#include "pmqa/gauntlet/gauntlet.hpp"

namespace pmqa::gauntlet {
namespace {

constexpr int kShards = 8;
constexpr int kCasesPerShard = 1250;  // 8 x 1,250 = 10,000 generated cases

class NoFalseAlarm : public ::testing::TestWithParam<int> {};

TEST_P(NoFalseAlarm, UnmutatedKernelsPassTheKernelPropertyOverGeneratedCases) {
  const int shard = GetParam();
  checks::PropertyOptions o;
  o.seed = GauntletOptions{}.seed + 1000 + static_cast<std::uint64_t>(shard);
  o.cases = kCasesPerShard;
  o.every_config_per_case = true;
  o.per_case.reuse_cases = false;
  const auto findings = checks::kernel_property(checks::host_factory(), o);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_FALSE(f.caught) << "false alarm after " << f.first_detection << " cases (RapidCheck seed " << o.seed << ")\n"
                         << f.evidence;
  EXPECT_EQ(f.cases_run, kCasesPerShard);
  std::printf("shard %d: %lld generated cases, each on %s: %s (%.1f s)\n", shard, static_cast<long long>(f.cases_run),
              f.config.c_str(), f.caught ? "FALSE ALARM" : "pass", f.seconds);
}

INSTANTIATE_TEST_SUITE_P(TenThousandCases, NoFalseAlarm, ::testing::Range(0, kShards),
                         [](const auto& p) { return "shard" + std::to_string(p.param); });

}  // namespace
}  // namespace pmqa::gauntlet
