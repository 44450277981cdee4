// The comparison must pass a correct output and flag each planted defect (issue 2's list): the
// corpus as one check (checks::planted_corpus, which the gauntlet also runs on lying checkers), and
// each defect with what the report must say about it.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pmqa/checks/checks.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/reference/compare.hpp"
#include "pmqa/reference/kv_cache.hpp"

namespace pmqa {
namespace {

class CompareTest : public ::testing::Test {
 protected:
  // The planted corpus's case (checks::planted_corpus_spec: 3 sequences, next_n 2, row 4 has E = 0).
  void SetUp() override {
    c_ = fixtures::make_case(checks::planted_corpus_spec());
    ref_ = compute_reference(c_, {.precision = Precision::fp64});
  }

  // The output a correct kernel writes: the reference rounded to fp32, -inf past E_r.
  OutputBuffer correct_output(const Case& c) const { return reference_output(c); }

  Report check(const OutputBuffer& out, Contract contract = Contract::clean) const {
    return compare(c_, ref_, out, {.judging = {.contract = contract}});
  }

  Case c_;
  Reference ref_;
};

TEST(PlantedCorpus, CompareJudgesEveryPlantedOutputRight) {
  const checks::Finding f = checks::planted_corpus(checks::pmqa_checker());
  EXPECT_FALSE(f.caught) << f.evidence;
  EXPECT_EQ(f.cases_run, checks::planted_corpus_size());
  EXPECT_GE(f.cases_run, 12);
}

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

// Sets every valid cell of row r in [from, to) to ref + z * sigma: an error of z noise units,
// inside the element gate for z < z_element.
void offset_cells(OutputBuffer& out, const Case& c, const Reference& ref, const Tolerance& t, std::int64_t r,
                  std::int64_t from, std::int64_t to, double z) {
  for (std::int64_t j = from; j < std::min(to, ref.valid(r)); ++j)
    out.at(r, j) = static_cast<float>(ref.at(r, j) + z * element_limit(c, ref, t, r, j) / t.z_element);
}

// One page whose every cell errs by half its element limit, the same way (a scale slightly off):
// no cell breaks the element gate, the page's block does.
TEST_F(CompareTest, BlockGateCatchesOnePageSlightlyOff) {
  const Tolerance t = Tolerance::matrix_unit();
  OutputBuffer out = as_output(ref_);
  offset_cells(out, c_, ref_, t, 0, 32, 48, 0.5 * t.z_element);
  const Report r = compare(c_, ref_, out, {.judging = {.tolerance = t}});
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.broken(), "block, bias (above the reference)") << r.to_text();
  EXPECT_EQ(r.block.failing, 1);
  ASSERT_GE(r.regions.size(), 2u);
  EXPECT_EQ(r.regions[0].gate, Gate::block);
  EXPECT_EQ(r.regions[1].gate, Gate::bias);
  EXPECT_EQ(r.regions[1].over, Gate::block);
  EXPECT_EQ(r.regions[1].logical_block, 2);
  EXPECT_EQ(r.regions[0].logical_block, 2);
  EXPECT_EQ(r.regions[0].physical_block, c_.block_table[2]);
  EXPECT_NE(r.to_text().find("block gate: row 0 (b=0, n=0) logical block 2"), std::string::npos) << r.to_text();
  // Half as far off, with signs that alternate from cell to cell, is within the noise a page may
  // show; the same size with one sign is not (the bias gate).
  OutputBuffer near = as_output(ref_);
  for (std::int64_t j = 32; j < 48; ++j)
    offset_cells(near, c_, ref_, t, 0, j, j + 1, (j % 2 ? 0.2 : -0.2) * t.z_element);
  const Report mixed = compare(c_, ref_, near, {.judging = {.tolerance = t}});
  EXPECT_TRUE(mixed.passed()) << mixed.to_text();
  offset_cells(near, c_, ref_, t, 0, 32, 48, 0.2 * t.z_element);
  const Report one_sign = compare(c_, ref_, near, {.judging = {.tolerance = t}});
  EXPECT_EQ(one_sign.broken(), "bias (above the reference)") << one_sign.to_text();
}

// With one key per block the block gate is the element gate; a row that errs the same way in every
// cell is the row gate's.
TEST(CompareGates, RowGateCatchesARowSlightlyOffWhenBlocksHoldOneKey) {
  fixtures::CaseSpec s;
  s.seed = 5;
  s.batch = 2;
  s.next_n = 1;
  s.heads = 8;
  s.head_dim = 32;
  s.block_size = 1;
  s.max_model_len = 64;
  s.context_lens = {64, 40};
  const Case c = fixtures::make_case(s);
  const Reference ref = compute_reference(c, {.precision = Precision::fp64});
  const Tolerance t = Tolerance::fp32();
  OutputBuffer out = as_output(ref);
  offset_cells(out, c, ref, t, 0, 0, 64, 0.6 * t.z_element);
  const Report r = compare(c, ref, out, {.judging = {.tolerance = t}});
  EXPECT_EQ(r.broken(), "row, global, bias (above the reference)") << r.to_text();
  EXPECT_EQ(r.row.failing, 1);
}

// A scale error inside every cell's noise: each cell errs by at most 0.3 of its element limit, so
// no cell and no rms gate can see it, and only its sign gives it away. Under every profile the
// bias gate fails it, names the sign, and is the only gate that does: with the gate switched off
// (bias_allowed infinite: the judge before the bias gate) the same output passes.
TEST_F(CompareTest, BiasGateCatchesAScaleInsideEveryCellsNoise) {
  const OutputBuffer exact = as_output(ref_);
  for (const auto& name : Tolerance::names()) {
    const Tolerance t = Tolerance::named(name);
    double most = 0;  // max |ref| / element limit over the valid cells
    for (std::int64_t r = 0; r < c_.rows(); ++r)
      for (std::int64_t j = 0; j < ref_.valid(r); ++j)
        most = std::max(most, std::fabs(ref_.at(r, j)) / element_limit(c_, ref_, t, r, j));
    ASSERT_GT(most, 0) << name;
    for (const double sign : {1.0, -1.0}) {
      OutputBuffer out = exact;
      for (std::int64_t r = 0; r < c_.rows(); ++r)
        for (std::int64_t j = 0; j < ref_.valid(r); ++j)
          out.at(r, j) = static_cast<float>(ref_.at(r, j) * (1.0 + sign * 0.3 / most));
      const Report rep = compare(c_, ref_, out, {.judging = {.tolerance = t}});
      EXPECT_LT(rep.worst_bound_ratio, 0.31) << name;
      EXPECT_LE(std::max({rep.block.worst, rep.row.worst, rep.global.worst}), 1.0) << name;
      EXPECT_EQ(rep.broken(), sign > 0 ? "bias (magnitude too large)" : "bias (magnitude too small)")
          << name << "\n" << rep.to_text();
      EXPECT_EQ(rep.means.scale > 0, sign > 0) << name;
      ASSERT_FALSE(rep.regions.empty());
      EXPECT_EQ(rep.regions.back().gate, Gate::bias);
      EXPECT_EQ(rep.regions.back().over, Gate::global) << "the whole output's mean is listed last";
      EXPECT_EQ(rep.regions.back().bias_kind, BiasKind::scale);
      EXPECT_NE(rep.to_text().find("bias gate: all valid cells"), std::string::npos) << rep.to_text();
      const auto j = rep.to_json();
      EXPECT_EQ(j["gates"]["bias"]["failing"], rep.bias.failing);
      EXPECT_EQ(j["bias"]["signs"], sign > 0 ? "magnitude too large" : "magnitude too small");
      Tolerance off = t;
      off.bias_allowed = INFINITY;
      EXPECT_TRUE(compare(c_, ref_, out, {.judging = {.tolerance = off}}).passed()) << name << ": the rms gates alone pass it";
    }
  }
}

// The other kind of bias: every cell of one row above the reference by a quarter of its element
// limit is an offset (its signed mean), and the map marks the row.
TEST_F(CompareTest, BiasGateNamesAnOffsetAndMarksItsRow) {
  const Tolerance t = Tolerance::fp32();
  OutputBuffer out = as_output(ref_);
  offset_cells(out, c_, ref_, t, 0, 0, c_.max_model_len, 2.5);
  const Report rep = compare(c_, ref_, out, {.judging = {.tolerance = t}, .with_map = true});
  EXPECT_EQ(rep.broken(), "bias (above the reference)") << rep.to_text();
  // Its blocks fail too; a block whose logits share a sign cannot tell an offset from a scale, the
  // row can.
  const auto row = std::find_if(rep.regions.begin(), rep.regions.end(), [](const RegionMismatch& g) { return g.over == Gate::row; });
  ASSERT_NE(row, rep.regions.end()) << rep.to_text();
  EXPECT_EQ(row->gate, Gate::bias);
  EXPECT_EQ(row->row, 0);
  EXPECT_EQ(row->bias_kind, BiasKind::offset);
  EXPECT_GT(row->bias, 0);
  EXPECT_EQ(rep.row.failing, 0) << "no rms gate sees it";
  ASSERT_TRUE(rep.map.has_value());
  EXPECT_TRUE(rep.map->row_flags[0] & ErrorMap::row_bias);
  EXPECT_NE(rep.map->text().find("| B"), std::string::npos) << rep.map->text();
}

// One cell at its own limit never fails a region's mean: the limit is at least z_element / cells.
TEST(CompareGates, BiasLimitNeverLetsOneCellFailARegion) {
  for (const auto& name : Tolerance::names()) {
    const Tolerance t = Tolerance::named(name);
    for (std::int64_t n : {1, 2, 3, 6, 7, 64, 1 << 20}) {
      EXPECT_GE(bias_limit(t, n) * static_cast<double>(n), t.z_element) << name << " n " << n;
      EXPECT_GE(bias_limit(t, n), t.bias_allowed) << name;
    }
  }
}

TEST_F(CompareTest, WholeOutputHalvedBreaksEveryGate) {
  OutputBuffer out = correct_output(c_);
  for (std::int64_t r = 0; r < c_.rows(); ++r)
    for (std::int64_t j = 0; j < c_.valid_keys(r); ++j) out.at(r, j) *= 0.5f;
  for (const auto& name : Tolerance::names()) {
    const Report r = compare(c_, ref_, out, {.judging = {.tolerance = Tolerance::named(name)}});
    EXPECT_EQ(r.broken(), "element, block, row, global, bias (magnitude too small)") << name << "\n" << r.to_text();
  }
}

// The two NaN behaviours of spec §1.1 on a case with a NaN key code and a NaN in one head's q.
class CompareNanRules : public CompareTest {
 protected:
  void SetUp() override {
    CompareTest::SetUp();
    nan_ = c_;
    nan_.kv_cache[static_cast<std::size_t>(nan_.block_table[0] * nan_.block_stride + 5 * nan_.head_dim)] = 0x7F;  // key 5
    nan_.q[static_cast<std::size_t>((1 * nan_.next_n) * nan_.heads * nan_.head_dim)] = 0x7F;  // b 1, n 0 (row 2), head 0
    oracle_ = compute_reference(nan_, {.precision = Precision::fp64});
  }
  Report judge(const OutputBuffer& out, NanRule rule) const { return compare(nan_, oracle_, out, {.judging = {.nan = rule}}); }
  Case nan_;
  Reference oracle_;
};

TEST_F(CompareNanRules, EachBehaviourPassesUnderItsRuleOnly) {
  ASSERT_TRUE(oracle_.has_nan_terms());
  const OutputBuffer propagated = as_output(compute_reference(nan_, {.precision = Precision::fp32, .with_noise = false}));
  const OutputBuffer clamped =
      as_output(compute_reference(nan_, {.precision = Precision::fp32, .with_noise = false}), NanRule::relu_clamp);
  EXPECT_EQ(clamped.at(0, 5), 0.0f) << "a NaN key code gives an exact 0 cell under relu-clamp";
  EXPECT_TRUE(std::isfinite(clamped.at(2, 0))) << "a NaN in one head's q leaves the row finite";

  const Report p = judge(propagated, NanRule::propagate);
  EXPECT_TRUE(p.passed()) << p.to_text();
  EXPECT_EQ(p.nan_seen.describe(), "propagate");
  const Report c = judge(clamped, NanRule::relu_clamp);
  EXPECT_TRUE(c.passed()) << c.to_text();
  EXPECT_EQ(c.nan_seen.describe(), "relu-clamp");

  const Report p_under_c = judge(propagated, NanRule::relu_clamp);
  EXPECT_EQ(p_under_c.broken(), "NaN");
  EXPECT_EQ(p_under_c.nan_seen.describe(), "propagate") << "the verdict names what the output did";
  const Report c_under_p = judge(clamped, NanRule::propagate);
  EXPECT_EQ(c_under_p.broken(), "NaN");
  EXPECT_EQ(c_under_p.nan_seen.describe(), "relu-clamp");
  EXPECT_NE(c_under_p.to_text().find("the output showed relu-clamp"), std::string::npos) << c_under_p.to_text();
}

TEST_F(CompareNanRules, AnyOtherBehaviourFailsUnderBoth) {
  const OutputBuffer clamped =
      as_output(compute_reference(nan_, {.precision = Precision::fp32, .with_noise = false}), NanRule::relu_clamp);
  OutputBuffer as_number = clamped;  // the NaN key decoded as a number: the cell is neither NaN nor 0
  as_number.at(0, 5) = 1.5f;
  as_number.at(1, 5) = 1.5f;
  OutputBuffer leaked = clamped;  // a NaN in a cell with no NaN term
  leaked.at(0, 6) = NAN;
  for (const NanRule rule : {NanRule::propagate, NanRule::relu_clamp}) {
    const Report a = judge(as_number, rule);
    EXPECT_FALSE(a.passed()) << to_string(rule);
    EXPECT_EQ(a.nan_seen.other, 2) << a.to_text();
    EXPECT_NE(a.nan_seen.describe().find("mixed"), std::string::npos);
    const Report b = judge(leaked, rule);
    EXPECT_FALSE(b.passed()) << to_string(rule);
    EXPECT_GE(b.nan_mismatches, 1);
  }
}

TEST_F(CompareTest, ErrorMapShowsWhereTheErrorsSit) {
  Case wrong = c_;
  wrong.block_table[3] = wrong.block_table[1];  // sequence 0, logical block 3 read from another page
  OutputBuffer out = correct_output(wrong);
  out.at(2, 5) = sentinel();                    // one unwritten cell in row 2, block 0
  out.at(1, c_.max_model_len) = 1.0f;           // a guard cell after row 1
  const Report r = compare(c_, ref_, out, {.with_map = true});
  ASSERT_TRUE(r.map.has_value());
  const ErrorMap& m = *r.map;
  EXPECT_EQ(m.rows, c_.rows());
  EXPECT_EQ(m.blocks, (c_.max_model_len + c_.block_size - 1) / c_.block_size);
  EXPECT_TRUE(m.flags[m.at(0, 3)] & ErrorMap::element) << m.text();
  EXPECT_TRUE(m.flags[m.at(1, 3)] & ErrorMap::element);
  EXPECT_EQ(m.flags[m.at(0, 2)], 0) << "the pages around the wrong one are right";
  EXPECT_TRUE(m.flags[m.at(2, 0)] & ErrorMap::unwritten);
  EXPECT_TRUE(m.row_flags[1] & ErrorMap::guard);
  EXPECT_FALSE(m.guard_outside_rows);
  const std::string text = m.text();
  EXPECT_NE(text.find("  0\t|...X"), std::string::npos) << text;
  EXPECT_NE(text.find("  2\t|U"), std::string::npos) << text;
  EXPECT_FALSE(compare(c_, ref_, out).map.has_value()) << "no map unless asked";
}

TEST_F(CompareTest, ShapeMismatchIsAnError) {
  OutputBuffer out(c_.rows() + 1, c_.max_model_len);
  EXPECT_THROW(check(out), std::invalid_argument);
}

}  // namespace
}  // namespace pmqa
