#include <cmath>

#include <gtest/gtest.h>

#include "pmqa/checks/checks.hpp"
#include "pmqa/fixtures/generate.hpp"

namespace pmqa::checks {
namespace {

Case small_case() {
  fixtures::CaseSpec s;
  s.batch = 2;
  s.heads = 4;
  s.head_dim = 32;
  s.context_lens = {40, 17};
  s.max_model_len = 48;
  return fixtures::make_case(s);
}

// An external kernel plugged in as a Subject is judged like pmqa's own: the reference's output
// passes, the same output with one valid cell dropped fails with compare()'s report.
TEST(JudgeCase, AnExternalSubjectIsJudgedByCompare) {
  const Case c = small_case();
  const Reference oracle = compute_reference(c, {.precision = Precision::fp64});
  const Subject good{"external", false, [](const Case& k) {
                       SubjectOutput o;
                       o.out = reference_output(k);
                       o.kernel = "external";
                       return o;
                     }};
  const CaseJudgement pass = judge_case(good, c, oracle);
  EXPECT_TRUE(pass.verdict.pass) << pass.verdict.text;
  ASSERT_TRUE(pass.verdict.report.has_value());
  EXPECT_EQ(pass.produced.kernel, "external");

  const Subject dropped{"external-dropped", false, [](const Case& k) {
                          SubjectOutput o;
                          o.out = reference_output(k);
                          o.out.at(1, 3) = -INFINITY;
                          return o;
                        }};
  const CaseJudgement fail = judge_case(dropped, c, oracle);
  EXPECT_FALSE(fail.verdict.pass);
  ASSERT_TRUE(fail.verdict.report.has_value());
  EXPECT_EQ(fail.verdict.report->inf_pattern_errors, 1) << fail.verdict.text;
  // A checker passed in replaces compare(); the subject's judging reaches it.
  const Checker lenient = [](const Case&, const Reference&, const OutputBuffer&, const CompareOptions& o) {
    return Verdict{o.judging == Judging{}, "lenient", std::nullopt};
  };
  EXPECT_TRUE(judge_case(dropped, c, oracle, {.tolerance = {}, .checker = lenient}).verdict.pass);
}

// A subject says its NaN rule in its Judging, and judge_case judges it under that rule: a relu-clamp
// kernel (a NaN head term counts 0) passes as relu-clamp and fails when it claims propagate, and a
// propagating one the other way round. Before the Judging, every subject was judged as propagate.
TEST(JudgeCase, EachSubjectIsJudgedUnderItsOwnNanRule) {
  Case c = small_case();
  c.kv_cache[static_cast<std::size_t>(c.block_table[0] * c.block_stride + 5 * c.head_dim)] = 0x7F;  // key 5: NaN
  const Reference oracle = compute_reference(c, {.precision = Precision::fp64});
  ASSERT_TRUE(oracle.has_nan_terms());
  auto subject = [](NanRule computes, NanRule claims) {
    return Subject{"nan-" + std::string(to_string(computes)), false, [computes, claims](const Case& k) {
                     SubjectOutput o;
                     o.out = reference_output(k, computes);
                     o.judging.nan = claims;
                     return o;
                   }};
  };
  const CaseJudgement clamp = judge_case(subject(NanRule::relu_clamp, NanRule::relu_clamp), c, oracle);
  EXPECT_TRUE(clamp.verdict.pass) << clamp.verdict.text;
  EXPECT_EQ(clamp.produced.judging.nan, NanRule::relu_clamp);
  ASSERT_TRUE(clamp.verdict.report.has_value());
  EXPECT_EQ(clamp.verdict.report->judging.nan, NanRule::relu_clamp) << "the report records the rule judged under";
  EXPECT_EQ(clamp.verdict.report->nan_seen.describe(), "relu-clamp");

  const CaseJudgement clamp_as_propagate = judge_case(subject(NanRule::relu_clamp, NanRule::propagate), c, oracle);
  EXPECT_FALSE(clamp_as_propagate.verdict.pass) << "0 where propagate wants NaN";
  ASSERT_TRUE(clamp_as_propagate.verdict.report.has_value());
  EXPECT_EQ(clamp_as_propagate.verdict.report->broken(), "NaN") << clamp_as_propagate.verdict.text;

  const CaseJudgement propagate = judge_case(subject(NanRule::propagate, NanRule::propagate), c, oracle);
  EXPECT_TRUE(propagate.verdict.pass) << propagate.verdict.text;
  const CaseJudgement propagate_as_clamp = judge_case(subject(NanRule::propagate, NanRule::relu_clamp), c, oracle);
  EXPECT_FALSE(propagate_as_clamp.verdict.pass) << "NaN where relu-clamp wants a number";

  // A forced profile (the gauntlet's --profile) replaces the tolerance only: the NaN rule stays.
  const CaseJudgement forced =
      judge_case(subject(NanRule::relu_clamp, NanRule::relu_clamp), c, oracle, {.tolerance = Tolerance::matrix_unit(), .checker = {}});
  EXPECT_TRUE(forced.verdict.pass) << forced.verdict.text;
  EXPECT_EQ(forced.verdict.report->judging.tolerance.name, "matrix-unit");
}

// pmqa's own kernels keep NaN (their relu is NaN-propagating): kernel_subject says propagate.
TEST(JudgeCase, KernelSubjectsSayTheirJudging) {
  const Case c = small_case();
  const CaseJudgement j = judge_case(kernel_subject(kernels::make_host_executor({.warp_size = 32}), Path::fused),
                                     c, compute_reference(c, {.precision = Precision::fp64}));
  EXPECT_EQ(j.produced.judging.nan, NanRule::propagate);
  EXPECT_EQ(j.produced.judging.contract, Contract::clean);
  EXPECT_FALSE(j.produced.judging.tolerance.name.empty());
}

TEST(JudgeCase, KernelSubjectsPassUnderTheirOwnProfile) {
  const Case c = small_case();
  const Reference oracle = compute_reference(c, {.precision = Precision::fp64});
  for (const auto path : {Path::fused, Path::two_stage}) {
    const CaseJudgement j = judge_case(kernel_subject(kernels::make_host_executor({.warp_size = 32}), path), c, oracle);
    EXPECT_TRUE(j.verdict.pass) << j.verdict.text;
  }
  EXPECT_TRUE(judge_case(reference_subject(), c, oracle).verdict.pass);
}

TEST(DeviceArch, AnHonestJobPassesAndAJobOnTheWrongDeviceIsCaught) {
  const Finding honest = device_arch(CiJob{"gfx950", Path::fused, "gfx950:sramecc+:xnack-"});
  EXPECT_FALSE(honest.caught) << honest.evidence;
  const Finding wrong = device_arch(CiJob{"gfx950", Path::fused, "gfx942:sramecc+:xnack-"});
  EXPECT_TRUE(wrong.caught);
  EXPECT_NE(wrong.evidence.find("exit 1"), std::string::npos) << wrong.evidence;
}

}  // namespace
}  // namespace pmqa::checks
