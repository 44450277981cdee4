// Metamorphic properties of the reference over generated cases (issue 2). Each holds exactly
// (bit for bit) or within the spec §5 bound; a failure shrinks to a minimal CaseSpec and prints
// the RC_PARAMS line that reproduces it.
#include <cmath>
#include <cstring>
#include <numeric>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rapidcheck.hpp"
#include "pmqa/fixtures/rng.hpp"
#include "pmqa/reference/compare.hpp"
#include "pmqa/reference/kv_cache.hpp"
#include "pmqa/reference/reference.hpp"

namespace pmqa {
namespace {

fixtures::SpecRanges ranges() {
  fixtures::SpecRanges r;
  r.max_model_len = 400;
  r.max_work = 8'000'000;
  return r;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

RC_GTEST_PROP(ReferenceProperties, Fp32WithinTheBoundOfFp64, ()) {
  const Case c = fixtures::make_case(*fixtures::gen_case_spec(ranges()));
  const Reference r32 = compute_reference(c, {.precision = Precision::fp32, .with_noise = false});
  const Reference r64 = compute_reference(c, {.precision = Precision::fp64});
  const Report rep = compare(c, r64, as_output(r32));
  RC_ASSERT(rep.passed());
  RC_TAG(rep.worst_bound_ratio < 0.01 ? "ratio<0.01" : "ratio>=0.01");
}

RC_GTEST_PROP(ReferenceProperties, RelocatingPhysicalBlocksChangesNoBit, ()) {
  const Case c = fixtures::make_case(*fixtures::gen_case_spec(ranges()));
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  // New position of each physical block: a random permutation; table entries follow it.
  std::vector<std::int32_t> where(static_cast<std::size_t>(c.num_blocks));
  std::iota(where.begin(), where.end(), 0);
  fixtures::Rng rng(seed);
  for (std::size_t i = where.size(); i > 1; --i) std::swap(where[i - 1], where[rng.below(i)]);
  Case moved = c;
  for (std::int64_t p = 0; p < c.num_blocks; ++p)
    std::memcpy(moved.kv_cache.data() + where[static_cast<std::size_t>(p)] * c.block_stride,
                c.kv_cache.data() + p * c.block_stride, static_cast<std::size_t>(c.block_stride));
  for (auto& e : moved.block_table)
    if (e >= 0 && e < c.num_blocks) e = where[static_cast<std::size_t>(e)];
  RC_ASSERT(same_bits(compute_reference(c).values, compute_reference(moved).values));
}

RC_GTEST_PROP(ReferenceProperties, NormalAndShuffleGiveTheSameBits, ()) {
  auto spec = *fixtures::gen_case_spec(ranges());
  RC_PRE(spec.block_size % 16 == 0 && spec.head_dim % 16 == 0);
  spec.layout = KvLayout::normal;
  const Case normal = fixtures::make_case(spec);
  const Case shuffled = with_layout(normal, KvLayout::shuffle);
  RC_ASSERT(normal.kv_cache != shuffled.kv_cache || normal.num_blocks == 0 || normal.block_size * normal.head_dim <= 16);
  RC_ASSERT(same_bits(compute_reference(normal).values, compute_reference(shuffled).values));
}

RC_GTEST_PROP(ReferenceProperties, PowerOfTwoWeightsScaleEveryLogitExactly, ()) {
  const Case c = fixtures::make_case(*fixtures::gen_case_spec(ranges()));
  const int k = *rc::gen::inRange(-6, 7);
  Case scaled = c;
  for (auto& w : scaled.weights) w = std::ldexp(w, k);
  const Reference a = compute_reference(c, {.with_noise = false});
  const Reference b = compute_reference(scaled, {.with_noise = false});
  RC_ASSERT(a.values.size() == b.values.size());
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    if (std::isnan(a.values[i])) {
      RC_ASSERT(std::isnan(b.values[i]));
      continue;
    }
    // fp32 results: exact unless the scaled value leaves the normal range.
    const float fa = static_cast<float>(a.values[i]);
    if (fa != 0 && std::fabs(std::ldexp(fa, k)) < 0x1p-120f) continue;
    RC_ASSERT(static_cast<float>(b.values[i]) == std::ldexp(fa, k));
  }
}

RC_GTEST_PROP(ReferenceProperties, OneDimensionalLengthsEqualTheirTwoDimensionalForm, ()) {
  auto spec = *fixtures::gen_case_spec(ranges());
  RC_PRE(!spec.context_lens_2d);
  const Case one_d = fixtures::make_case(spec);
  Case two_d = one_d;
  two_d.context_lens_2d = true;
  two_d.context_lens.clear();
  for (std::int64_t r = 0; r < one_d.rows(); ++r)
    two_d.context_lens.push_back(static_cast<std::int32_t>(std::max<std::int64_t>(0, one_d.valid_keys(r))));
  RC_ASSERT(same_bits(compute_reference(one_d).values, compute_reference(two_d).values));
  RC_ASSERT(dense_logits(compute_reference(one_d)) == dense_logits(compute_reference(two_d)) ||
            std::any_of(one_d.q.begin(), one_d.q.end(), [&](std::uint8_t b) { return is_fp8_nan(*fp8_of(one_d.format), b); }));
}

RC_GTEST_PROP(ReferenceProperties, MinusInfinityPatternIsTheValidKeyRule, ()) {
  const Case c = fixtures::make_case(*fixtures::gen_case_spec(ranges()));
  const auto dense = dense_logits(compute_reference(c, {.with_noise = false}));
  RC_ASSERT(static_cast<std::int64_t>(dense.size()) == c.rows() * c.max_model_len);
  for (std::int64_t r = 0; r < c.rows(); ++r) {
    // Independent of Case::valid_keys: spec §1.2 written out again.
    const std::int64_t b = r / c.next_n, n = r % c.next_n;
    const std::int64_t e = c.context_lens_2d ? c.context_lens[static_cast<std::size_t>(r)]
                                             : c.context_lens[static_cast<std::size_t>(b)] - c.next_n + n + 1;
    for (std::int64_t j = 0; j < c.max_model_len; ++j) {
      const float v = dense[static_cast<std::size_t>(r * c.max_model_len + j)];
      if (j < e) RC_ASSERT(v != -INFINITY);
      else RC_ASSERT(v == -INFINITY);
    }
  }
  RC_TAG(c.batch == 0 ? "B=0" : "B>0");
}

}  // namespace
}  // namespace pmqa
