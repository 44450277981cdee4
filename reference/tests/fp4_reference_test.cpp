// The oracle on e2m1 (MXFP4) cases against the operation written out from fp4-indexer-facts.md §3,
// term by term in long double: s[r,h,t] = sum_g 2^(Eq-127) 2^(Ek-127) sum_i v(q) v(k), logit =
// sum_h w relu(s). Also: every layout reads the same keys, and the fp32 reference stays within
// the noise the fp64 oracle gives it.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/reference/fp4.hpp"
#include "pmqa/reference/kv_cache.hpp"
#include "pmqa/reference/reference.hpp"

namespace pmqa {
namespace {

fixtures::CaseSpec fp4_spec(std::uint64_t seed, KvLayout layout = KvLayout::normal, std::int64_t block_size = 64,
                            std::int64_t head_dim = 128) {
  fixtures::CaseSpec s;
  s.seed = seed;
  s.format = ValueFormat::e2m1;
  s.layout = layout;
  s.batch = 2;
  s.next_n = 2;
  s.heads = 8;
  s.head_dim = head_dim;
  s.block_size = block_size;
  s.max_model_len = 3 * block_size;
  s.context_lens = {static_cast<std::int32_t>(2 * block_size + 17), static_cast<std::int32_t>(block_size / 2 + 3)};
  return s;
}

// The table's nibble values and 2^(e-127), by hand (no codec call): what the spec says a byte means.
long double nibble_value(std::uint8_t n) {
  static const long double m[8] = {0, 0.5L, 1, 1.5L, 2, 3, 4, 6};
  return (n & 8) ? -m[n & 7] : m[n & 7];
}
long double two_to(int e) {
  long double v = 1;
  for (; e > 0; --e) v *= 2;
  for (; e < 0; ++e) v /= 2;
  return v;
}

// Token t's layout-independent view, through the oracle's KV reader (its offsets are tested below
// against each other: every layout must give the same keys).
long double logit(const Case& c, std::int64_t r, std::int64_t j) {
  const KvReader kv(c);
  const std::int64_t b = r / c.next_n, D = c.head_dim, H = c.heads;
  const std::int64_t p = c.physical_block(b, j / c.block_size), t = j % c.block_size;
  long double sum = 0;
  for (std::int64_t h = 0; h < H; ++h) {
    const std::int64_t qi = r * H + h;
    long double s = 0;
    for (std::int64_t g = 0; g < D / 32; ++g) {
      long double part = 0;
      for (std::int64_t d = 32 * g; d < 32 * g + 32; ++d) {
        const std::uint8_t byte = c.q[static_cast<std::size_t>(qi * D / 2 + d / 2)];
        const std::uint8_t qn = d % 2 ? byte >> 4 : byte & 15;
        part += nibble_value(qn) * nibble_value(kv.fp4_nibble(p, t, d));
      }
      s += part * two_to(c.q_scales[static_cast<std::size_t>(qi * 4 + g)] - 127) * two_to(kv.fp4_scale_byte(p, t, g) - 127);
    }
    sum += static_cast<long double>(c.weights[static_cast<std::size_t>(qi)]) * (s > 0 ? s : 0);
  }
  return sum;
}

TEST(Fp4Reference, TheOracleIsTheDefinitionTermByTerm) {
  for (const auto layout : {KvLayout::normal, KvLayout::shuffle}) {
    const Case c = fixtures::make_case(fp4_spec(11, layout));
    const Reference ref = compute_reference(c, {.precision = Precision::fp64, .with_noise = true});
    for (std::int64_t r = 0; r < c.rows(); ++r)
      for (std::int64_t j = 0; j < ref.valid(r); ++j) {
        const long double want = logit(c, r, j);
        EXPECT_NEAR(static_cast<double>(want), ref.at(r, j), 1e-12 * (1 + std::fabs(static_cast<double>(want))))
            << to_string(layout) << " r " << r << " j " << j;
      }
  }
}

TEST(Fp4Reference, EveryLayoutHoldsTheSameKeys) {
  const Case normal = fixtures::make_case(fp4_spec(12, KvLayout::normal));
  const Reference want = compute_reference(normal, {.precision = Precision::fp64, .with_noise = false});
  for (const auto layout : {KvLayout::shuffle}) {
    const Case moved = with_layout(normal, layout);
    EXPECT_NE(moved.kv_cache, normal.kv_cache) << "the bytes move";
    EXPECT_EQ(compute_reference(moved, {.precision = Precision::fp64, .with_noise = false}).values, want.values);
    EXPECT_EQ(with_layout(moved, KvLayout::normal).kv_cache, normal.kv_cache) << "and move back";
  }
  const Case wide = fixtures::make_case(fp4_spec(13, KvLayout::normal, 128));
  const Case interleaved = with_layout(wide, KvLayout::interleaved);
  EXPECT_EQ(compute_reference(interleaved, {.precision = Precision::fp64, .with_noise = false}).values,
            compute_reference(wide, {.precision = Precision::fp64, .with_noise = false}).values);
}

TEST(Fp4Reference, Fp32ReferenceStaysInsideTheOraclesNoise) {
  for (const std::int64_t d : {64, 128}) {
    const Case c = fixtures::make_case(fp4_spec(14, KvLayout::normal, 64, d));
    const Reference oracle = compute_reference(c, {.precision = Precision::fp64, .with_noise = true});
    const Reference fp32 = compute_reference(c, {.precision = Precision::fp32, .with_noise = false});
    for (std::int64_t r = 0; r < c.rows(); ++r)
      for (std::int64_t j = 0; j < oracle.valid(r); ++j) {
        const NoiseScales n = oracle.noise_at(r, j);
        const double sigma = std::ldexp(1.0, -24) * (std::sqrt(double(d)) * n.over_d + std::sqrt(double(c.heads + 2)) * n.over_h +
                                                     std::fabs(oracle.at(r, j)));
        EXPECT_LE(std::fabs(fp32.at(r, j) - oracle.at(r, j)), 10 * sigma) << "D " << d << " r " << r << " j " << j;
      }
  }
}

TEST(Fp4Reference, ExtremeScaleBytesKeepTheLogits) {
  // Keys' scale bytes moved down by 120 and q's up by 120: every byte near an end, the same logits.
  fixtures::CaseSpec s = fp4_spec(15);
  const Reference plain = compute_reference(fixtures::make_case(s), {.precision = Precision::fp64, .with_noise = false});
  s.fp4_scale_shift = 120;
  const Case shifted = fixtures::make_case(s);
  const KvReader kv(shifted);
  EXPECT_LE(kv.fp4_scale_byte(shifted.physical_block(0, 0), 0, 0), 12);
  EXPECT_GE(shifted.q_scales[0], 240);
  const Reference moved = compute_reference(shifted, {.precision = Precision::fp64, .with_noise = false});
  ASSERT_EQ(moved.values.size(), plain.values.size());
  for (std::size_t i = 0; i < moved.values.size(); ++i) EXPECT_EQ(moved.values[i], plain.values[i]) << i;
  const Reference fp32 = compute_reference(shifted, {.precision = Precision::fp32, .with_noise = false});
  for (std::size_t i = 0; i < fp32.values.size(); ++i)
    EXPECT_NEAR(fp32.values[i], plain.values[i], 1e-5 * (1 + std::fabs(plain.values[i]))) << i;
}

TEST(Fp4Reference, ValidationRefusesTheNanScaleByte) {
  Case c = fixtures::make_case(fp4_spec(16));
  c.q_scales[5] = 0xFF;
  EXPECT_THROW(validate(c), CaseError);
  c = fixtures::make_case(fp4_spec(16));
  c.kv_cache[static_cast<std::size_t>(c.physical_block(0, 0) * c.block_stride +
                                      kv_fp4_scale_offset(c.layout, c.block_size, c.head_dim, 3, 1))] = 0xFF;
  EXPECT_THROW(validate(c), CaseError);
}

}  // namespace
}  // namespace pmqa
