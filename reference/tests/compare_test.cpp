// The comparison must pass a correct output and flag each planted defect (issue 2's list).
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/reference/compare.hpp"
#include "pmqa/reference/kv_cache.hpp"

namespace pmqa {
namespace {

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixtures::CaseSpec s;
    s.name = "compare";
    s.seed = 11;
    s.batch = 3;
    s.next_n = 2;
    s.heads = 8;
    s.head_dim = 64;
    s.block_size = 16;
    s.max_model_len = 120;
    s.context_lens = {120, 50, 1};  // row 4 has E = 0
    c_ = fixtures::make_case(s);
    ref_ = compute_reference(c_, {.precision = Precision::fp64});
  }

  // The output a correct kernel writes: the reference rounded to fp32, -inf past E_r.
  OutputBuffer correct_output(const Case& c) const {
    return as_output(compute_reference(c, {.precision = Precision::fp32, .with_noise = false}));
  }

  Report check(const OutputBuffer& out, Contract contract = Contract::clean) const {
    return compare(c_, ref_, out, {.contract = contract});
  }

  Case c_;
  Reference ref_;
};

TEST_F(CompareTest, CorrectOutputPasses) {
  const Report r = check(correct_output(c_));
  EXPECT_TRUE(r.passed()) << r.to_text();
  EXPECT_EQ(r.cells_checked, c_.rows() * c_.max_model_len);
  ASSERT_TRUE(r.calc_diff.has_value());
  EXPECT_LT(*r.calc_diff, 1e-12);
  EXPECT_LT(r.worst_bound_ratio, 1.0);
}

TEST_F(CompareTest, OneWrongPageIsFlaggedAndDecoded) {
  Case wrong = c_;
  // Sequence 0, logical block 3 read from another (valid) physical block.
  auto& entry = wrong.block_table[3];
  entry = wrong.block_table[1];
  const Report r = check(correct_output(wrong));
  EXPECT_FALSE(r.passed());
  EXPECT_GT(r.value_mismatches, 0);
  ASSERT_FALSE(r.first.empty());
  EXPECT_EQ(r.first[0].logical_block, 3);
  EXPECT_EQ(r.first[0].physical_block, c_.block_table[3]);
  EXPECT_GE(r.first[0].col, 48);
  EXPECT_LT(r.first[0].col, 64);
  EXPECT_NE(r.to_text().find("logical block 3"), std::string::npos) << r.to_text();
}

TEST_F(CompareTest, QueryDecodedWithTheOtherFormat) {
  Case wrong = c_;  // what a kernel decoding FN bytes as FNUZ sees: each q value halved
  for (auto& b : wrong.q) b = encode_fp8(Fp8Format::e4m3fn, decode_fp8(Fp8Format::e4m3fnuz, b), Fp8Overflow::saturate);
  const Report r = check(correct_output(wrong));
  EXPECT_FALSE(r.passed());
  EXPECT_GT(r.value_mismatches, 0);
}

TEST_F(CompareTest, OffByOneMask) {
  OutputBuffer extra = correct_output(c_);
  extra.at(2, c_.valid_keys(2)) = 0.5f;  // one key too many
  Report r = check(extra);
  EXPECT_EQ(r.inf_pattern_errors, 1) << r.to_text();
  EXPECT_FALSE(r.passed());

  OutputBuffer short_row = correct_output(c_);
  short_row.at(2, c_.valid_keys(2) - 1) = -INFINITY;  // one key too few
  r = check(short_row);
  EXPECT_EQ(r.inf_pattern_errors, 1) << r.to_text();
  // Under valid-only the extra key past E_r is not compared, the missing one still is.
  EXPECT_TRUE(check(extra, Contract::valid_only).passed());
  EXPECT_FALSE(check(short_row, Contract::valid_only).passed());
}

TEST_F(CompareTest, UnwrittenRow) {
  OutputBuffer out = correct_output(c_);
  for (std::int64_t j = 0; j < c_.max_model_len; ++j) out.at(1, j) = sentinel();
  const Report r = check(out);
  EXPECT_EQ(r.unwritten, c_.max_model_len);
  EXPECT_FALSE(r.passed());
  // valid-only still demands every valid cell be written.
  EXPECT_EQ(check(out, Contract::valid_only).unwritten, c_.valid_keys(1));
}

TEST_F(CompareTest, WriteOnePastTheRowEnd) {
  OutputBuffer out = correct_output(c_);
  out.at(0, c_.max_model_len) = 1.0f;  // the first pad cell after row 0
  const Report r = check(out);
  EXPECT_EQ(r.guard_violations, 1);
  EXPECT_FALSE(r.passed());
  OutputBuffer before = correct_output(c_);
  before.storage()[0] = 0.0f;  // before the buffer
  EXPECT_EQ(check(before, Contract::valid_only).guard_violations, 1);
}

TEST_F(CompareTest, SingleNan) {
  OutputBuffer out = correct_output(c_);
  out.at(1, 7) = NAN;
  Report r = check(out);
  EXPECT_EQ(r.nan_mismatches, 1);
  EXPECT_FALSE(r.passed());
  // and the other way: the reference is NaN (planted NaN code), the kernel wrote a number
  Case nan_case = c_;
  nan_case.q[0] = 0x7F;  // row 0, head 0: row 0 is NaN everywhere valid
  const Reference nan_ref = compute_reference(nan_case);
  OutputBuffer zeros_for_nan = correct_output(c_);
  r = compare(nan_case, nan_ref, zeros_for_nan);
  EXPECT_EQ(r.nan_mismatches, c_.valid_keys(0));
  EXPECT_TRUE(compare(nan_case, nan_ref, correct_output(nan_case)).passed());
}

TEST_F(CompareTest, AllZeroOutputFails) {
  OutputBuffer out(c_.rows(), c_.max_model_len);
  for (std::int64_t r = 0; r < c_.rows(); ++r)
    for (std::int64_t j = 0; j < c_.max_model_len; ++j) out.at(r, j) = 0.0f;
  const Report clean = check(out);
  EXPECT_FALSE(clean.passed());
  EXPECT_GT(clean.value_mismatches, 0);
  EXPECT_GT(clean.inf_pattern_errors, 0);
  EXPECT_FALSE(check(out, Contract::valid_only).passed());
}

TEST_F(CompareTest, AllMaskedCaseHasNoMetricButPassesOnlyIfAllMinusInf) {
  fixtures::CaseSpec s;
  s.batch = 2;
  s.next_n = 2;
  s.context_lens = {0, 0};  // every row has E_r <= 0
  const Case masked = fixtures::make_case(s);
  const Reference ref = compute_reference(masked);
  OutputBuffer out(masked.rows(), masked.max_model_len);
  for (std::int64_t r = 0; r < masked.rows(); ++r)
    for (std::int64_t j = 0; j < masked.max_model_len; ++j) out.at(r, j) = -INFINITY;
  Report r = compare(masked, ref, out);
  EXPECT_TRUE(r.passed()) << r.to_text();
  EXPECT_FALSE(r.calc_diff.has_value());  // no valid cell: no metric, never a vacuous 0
  out.at(0, 0) = 0.0f;
  EXPECT_FALSE(compare(masked, ref, out).passed());
}

TEST_F(CompareTest, CalcDiff) {
  EXPECT_FALSE(calc_diff({}, {}).has_value());
  EXPECT_EQ(*calc_diff({0, 0}, {0, 0}), 0.0);
  EXPECT_EQ(*calc_diff({1, 2}, {1, 2}), 0.0);
  EXPECT_NEAR(*calc_diff({1, 0}, {0, 1}), 1.0, 1e-15);
  EXPECT_NEAR(*calc_diff({1}, {-1}), 2.0, 1e-15);
}

TEST_F(CompareTest, ReportJson) {
  OutputBuffer out = correct_output(c_);
  out.at(1, 7) = NAN;
  const auto j = check(out).to_json();
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["nan_mismatches"], 1);
  EXPECT_EQ(j["first_mismatches"][0]["row"], 1);
  EXPECT_EQ(j["first_mismatches"][0]["kind"], "nan");
}

TEST_F(CompareTest, ShapeMismatchIsAnError) {
  OutputBuffer out(c_.rows() + 1, c_.max_model_len);
  EXPECT_THROW(check(out), std::invalid_argument);
}

}  // namespace
}  // namespace pmqa
