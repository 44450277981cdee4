// The one judging resolution: an override beats the file's metadata, which beats the default; a
// bad name names its field; a name an override replaces is never parsed. Then the profile that judges
// logits nobody named one for (pmqa.judging_tolerance).
#include <gtest/gtest.h>

#include "pmqa/model/judging.hpp"
#include "pmqa/model/tolerance.hpp"

namespace pmqa {
namespace {

TEST(Judging, DefaultsAreTheSpecs) {
  const Judging j = resolve_judging({});
  EXPECT_EQ(j.contract, Contract::clean);
  EXPECT_EQ(j.tolerance.name, "fp32");
  EXPECT_EQ(j.nan, NanRule::propagate);
  EXPECT_EQ(j, Judging{});
  EXPECT_EQ(j.describe(), "contract clean, tolerance fp32, NaN rule propagate");
}

TEST(Judging, MetadataBeatsTheDefault) {
  const Judging j = resolve_judging({}, {.contract = Contract::valid_only, .tolerance = "matrix-unit", .nan = "relu-clamp"});
  EXPECT_EQ(j.contract, Contract::valid_only);
  EXPECT_EQ(j.tolerance.name, "matrix-unit");
  EXPECT_EQ(j.tolerance.unit_d, Tolerance::matrix_unit().unit_d) << "the profile's values, not only its name";
  EXPECT_EQ(j.nan, NanRule::relu_clamp);
}

TEST(Judging, AnOverrideBeatsTheMetadata) {
  const JudgingMetadata file{.contract = Contract::valid_only, .tolerance = "matrix-unit", .nan = "relu-clamp"};
  const Judging j = resolve_judging(
      {.contract = Contract::clean, .tolerance = Tolerance::bf16_output(), .nan = NanRule::propagate}, file);
  EXPECT_EQ(j, (Judging{Contract::clean, Tolerance::bf16_output(), NanRule::propagate}));
  // Each part on its own: the others still come from the file.
  EXPECT_EQ(resolve_judging({.tolerance = Tolerance::fp32()}, file),
            (Judging{Contract::valid_only, Tolerance::fp32(), NanRule::relu_clamp}));
  EXPECT_EQ(resolve_judging({.nan = NanRule::propagate}, file),
            (Judging{Contract::valid_only, Tolerance::matrix_unit(), NanRule::propagate}));
}

TEST(Judging, ABadNameNamesItsField) {
  try {
    (void)resolve_judging({}, {.tolerance = "fp16"});
    FAIL() << "fp16 is no profile";
  } catch (const JudgingError& e) {
    EXPECT_EQ(e.field(), "tolerance");
    EXPECT_NE(std::string(e.what()).find("unknown tolerance profile 'fp16'"), std::string::npos) << e.what();
  }
  try {
    (void)resolve_judging({}, {.nan = "clamp"});
    FAIL() << "clamp is no NaN rule";
  } catch (const JudgingError& e) {
    EXPECT_EQ(e.field(), "nan");
    EXPECT_NE(std::string(e.what()).find("'clamp'"), std::string::npos) << e.what();
  }
}

TEST(Judging, AnOverriddenNameIsNeverParsed) {
  // Were the file's names parsed before the overrides were looked at, these would throw.
  const Judging j = resolve_judging({.tolerance = Tolerance::matrix_unit(), .nan = NanRule::relu_clamp},
                                    {.tolerance = "no-such-profile", .nan = "no-such-rule"});
  EXPECT_EQ(j.tolerance.name, "matrix-unit");
  EXPECT_EQ(j.nan, NanRule::relu_clamp);
}

TEST(Judging, EqualityComparesEveryPart) {
  const Judging base;
  EXPECT_NE(base, (Judging{Contract::valid_only, Tolerance::fp32(), NanRule::propagate}));
  EXPECT_NE(base, (Judging{Contract::clean, Tolerance::matrix_unit(), NanRule::propagate}));
  EXPECT_NE(base, (Judging{Contract::clean, Tolerance::fp32(), NanRule::relu_clamp}));
}

TEST(ProfileForLogits, TheDtypeAndTensorCoresMoveTheRecordedProfile) {
  const auto is = [](const JudgingProfile& p, const char* profile, const char* why) {
    EXPECT_EQ(p.profile, profile);
    EXPECT_EQ(p.why, why);
  };
  is(profile_for_logits("fp32", "float32", std::nullopt), "fp32", "the default");
  is(profile_for_logits("fp32", "bfloat16", std::nullopt), "bf16-output", "the logits are bfloat16");
  is(profile_for_logits("fp32", "float16", true), "matrix-unit-bf16", "the logits are float16, tensor_cores=True");
  is(profile_for_logits("fp32", "float32", false), "fp32", "tensor_cores=False");
  is(profile_for_logits("matrix-unit", "float32", std::nullopt), "matrix-unit", "the case file records matrix-unit");
  // tensor_cores is the caller's word on the sums; the recorded bf16 output stays.
  is(profile_for_logits("matrix-unit-bf16", "float32", false), "bf16-output", "tensor_cores=False");
}

}  // namespace
}  // namespace pmqa
