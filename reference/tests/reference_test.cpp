// The reference on cases small enough to compute by hand, plus its -inf and NaN rules.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/reference/kv_cache.hpp"
#include "pmqa/reference/reference.hpp"

namespace pmqa {
namespace {

std::uint8_t fn(float v) { return encode_fp8(Fp8Format::e4m3fn, v, Fp8Overflow::saturate); }

// B=1, N=1, H=2, D=2, block_size 2, two physical blocks in swapped order, 3 valid keys.
Case hand_case() {
  Case c;
  c.name = "hand";
  c.batch = 1;
  c.next_n = 1;
  c.heads = 2;
  c.head_dim = 2;
  c.block_size = 2;
  c.num_blocks = 2;
  c.block_stride = c.block_size * (c.head_dim + 4);
  c.max_blocks_per_seq = 2;
  c.max_model_len = 5;
  c.q = {fn(1), fn(2), fn(-1), fn(0.5)};  // head 0: (1, 2); head 1: (-1, 0.5)
  c.weights = {0.5f, 2.0f};
  c.context_lens = {3};
  c.block_table = {1, 0};  // logical 0 -> physical 1
  c.kv_cache.assign(static_cast<std::size_t>(c.num_blocks * c.block_stride), 0);
  const std::uint8_t keys[3][2] = {{fn(1), fn(1)}, {fn(-2), fn(4)}, {fn(3), fn(-1)}};
  const float scales[3] = {0.5f, 2.0f, 0.25f};
  for (int j = 0; j < 3; ++j) write_token_codes(c, c.block_table[static_cast<std::size_t>(j / 2)], j % 2, keys[j], scales[j]);
  return c;
}

TEST(Reference, BothNanRules) {
  Case c = hand_case();
  // Key 2's first value becomes the NaN code: every head's dot with key 2 is NaN.
  c.kv_cache[static_cast<std::size_t>(c.block_table[1] * c.block_stride)] = 0x7F;
  // Head 1's q becomes NaN in its first element: head 1's term is NaN for every key.
  Case q_nan = hand_case();
  q_nan.q[2] = 0x7F;
  for (auto p : {Precision::fp32, Precision::fp64}) {
    const Reference ref = compute_reference(c, {.precision = p});
    ASSERT_TRUE(ref.has_nan_terms());
    EXPECT_TRUE(std::isnan(ref.at(0, 2)));                 // propagate: the cell is NaN
    EXPECT_EQ(ref.at(0, 2, NanRule::relu_clamp), 0.0);     // relu-clamp: every head counts 0
    EXPECT_EQ(ref.at(0, 1), 22.0);                         // other cells agree under both rules
    EXPECT_EQ(ref.at(0, 1, NanRule::relu_clamp), 22.0);
    EXPECT_EQ(ref.noise_at(0, 2).terms, 0.0f);

    const Reference one_head = compute_reference(q_nan, {.precision = p});
    EXPECT_TRUE(std::isnan(one_head.at(0, 1)));
    EXPECT_EQ(one_head.at(0, 1, NanRule::relu_clamp), 6.0);  // head 0 alone: 0.5 * relu(2 * 6)
    EXPECT_EQ(one_head.at(0, 0, NanRule::relu_clamp), 0.75);
  }
}

TEST(Reference, AsOutputIsTheCleanContractOutput) {
  const Reference ref = compute_reference(hand_case());
  const OutputBuffer out = as_output(ref);
  EXPECT_EQ(out.rows(), 1);
  EXPECT_EQ(out.at(0, 1), 22.0f);
  EXPECT_EQ(out.at(0, 4), -INFINITY);
  EXPECT_EQ(out.count_guard_violations(), 0);
}

TEST(Reference, HandComputedCase) {
  const Case c = hand_case();
  // key 0: dots (3, -0.5) * s 0.5 -> relu (1.5, 0) -> 0.5*1.5 = 0.75
  // key 1: dots (6, 4)    * s 2   -> (12, 8)      -> 6 + 16 = 22
  // key 2: dots (1, -3.5) * s .25 -> (0.25, 0)    -> 0.125
  for (auto p : {Precision::fp32, Precision::fp64}) {
    const Reference ref = compute_reference(c, {.precision = p});
    EXPECT_EQ(ref.valid(0), 3);
    EXPECT_EQ(ref.at(0, 0), 0.75);
    EXPECT_EQ(ref.at(0, 1), 22.0);
    EXPECT_EQ(ref.at(0, 2), 0.125);
    EXPECT_EQ(ref.at(0, 3), -INFINITY);
    EXPECT_EQ(ref.at(0, 4), -INFINITY);
    // Key 1's noise scales (tolerance.hpp): head 0 terms q o k = (-2, 8), dot 6; head 1 (2, 2), dot 4;
    // (w s) = (1, 4); the head terms t = w relu(s dot) = (6, 16), logit 22.
    const NoiseScales n = ref.noise_at(0, 1);
    EXPECT_NEAR(n.over_d, std::sqrt(1.0 * (68 / 2.0 + 36 / 3.0) + 16.0 * (8 / 2.0 + 16 / 3.0)), 1e-5);
    EXPECT_NEAR(n.terms, std::sqrt(36.0 + 256.0), 1e-5);
    EXPECT_NEAR(n.over_h, std::sqrt(292 / 2.0 + 22.0 * 22.0 / 3.0), 1e-5);
    EXPECT_FALSE(ref.has_nan_terms());
    EXPECT_EQ(ref.at(0, 1, NanRule::relu_clamp), 22.0);
  }
  const auto dense = dense_logits(compute_reference(c));
  ASSERT_EQ(dense.size(), 5u);
  EXPECT_EQ(dense[1], 22.0f);
  EXPECT_EQ(dense[4], -INFINITY);
}

TEST(Reference, NanInAKeyPoisonsThatKeyOnly) {
  Case c = hand_case();
  c.kv_cache[static_cast<std::size_t>(0 * c.block_stride + 0 * c.head_dim + 1)] = 0x7F;  // physical 0, token 0 = key 2
  const Reference ref = compute_reference(c);
  EXPECT_EQ(ref.at(0, 0), 0.75);
  EXPECT_EQ(ref.at(0, 1), 22.0);
  EXPECT_TRUE(std::isnan(ref.at(0, 2)));
  EXPECT_EQ(ref.at(0, 3), -INFINITY);
}

TEST(Reference, NanInAQueryPoisonsTheRow) {
  Case c = hand_case();
  c.q[3] = 0xFF;  // head 1, d 1: a negative-dot head; relu must not swallow the NaN
  const Reference ref = compute_reference(c);
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(ref.at(0, j))) << j;
  EXPECT_EQ(ref.at(0, 3), -INFINITY);
}

TEST(Reference, InvalidCaseIsRejected) {
  Case c = hand_case();
  c.block_table[1] = 2;
  EXPECT_THROW(compute_reference(c), CaseError);
}

TEST(Reference, ThreadCountDoesNotChangeBits) {
  fixtures::CaseSpec s;
  s.batch = 5;
  s.next_n = 2;
  s.heads = 16;
  s.head_dim = 64;
  s.block_size = 16;
  s.max_model_len = 1500;
  s.context_lens = {1500, 3, 700, 0, 1024};
  const Case c = fixtures::make_case(s);
  const auto one = compute_reference(c, {.threads = 1});
  const auto many = compute_reference(c, {.threads = 4});
  EXPECT_EQ(one.values.size(), many.values.size());
  EXPECT_EQ(0, std::memcmp(one.values.data(), many.values.data(), one.values.size() * sizeof(double)));
}

}  // namespace
}  // namespace pmqa
