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
  // A checker passed in replaces compare(); the subject's tolerance reaches it.
  const Checker lenient = [](const Case&, const Reference&, const OutputBuffer&, const CompareOptions& o) {
    return Verdict{o.tolerance.name == Tolerance::fp32().name, "lenient", std::nullopt};
  };
  EXPECT_TRUE(judge_case(dropped, c, oracle, {.tolerance = {}, .checker = lenient}).verdict.pass);
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
