// The oracle's MXFP4 codec against the format's table and the producers' documented behaviour
// (fp4-indexer-facts.md §1): every nibble, the nibble order, UE8M0, each quantizer's ties and floors.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "pmqa/reference/fp4.hpp"

namespace pmqa {
namespace {

TEST(Fp4Decode, EveryNibbleIsTheTablesValue) {
  const double table[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (std::uint8_t n = 0; n < 16; ++n) {
    const double want = (n & 8) ? -table[n & 7] : table[n & 7];
    EXPECT_EQ(static_cast<double>(decode_e2m1(n)), want) << int(n);
  }
  EXPECT_EQ(decode_e2m1(0x8), 0.0f) << "the negative zero decodes to zero";
  EXPECT_EQ(decode_e2m1(0xF0 | 0x3), 1.5f) << "only the low nibble counts";
}

TEST(Fp4Decode, ElementTwoIIsTheLowNibble) {
  const std::vector<std::uint8_t> packed = {0x21, 0x7F};  // elements 1, 2, 0xF, 7
  EXPECT_EQ(e2m1_nibble(packed, 0), 0x1);
  EXPECT_EQ(e2m1_nibble(packed, 1), 0x2);
  EXPECT_EQ(e2m1_nibble(packed, 2), 0xF);
  EXPECT_EQ(e2m1_nibble(packed, 3), 0x7);
}

TEST(Fp4Decode, Ue8m0IsAPowerOfTwoAndFfIsNan) {
  EXPECT_EQ(decode_ue8m0(127), 1.0);
  EXPECT_EQ(decode_ue8m0(128), 2.0);
  EXPECT_EQ(decode_ue8m0(112), 1.0 / 32768);
  EXPECT_EQ(decode_ue8m0(0), std::ldexp(1.0, -127));
  EXPECT_EQ(decode_ue8m0(254), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(decode_ue8m0(255)));
}

// fp4-indexer-facts.md §1.3: toward zero 0.75->0.5, 2.5->2, 5->4; toward -inf +0.25->0 and
// -0.25->-0.5; to even (codes 0, 2, 4, 6 are even): 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2,
// 3.5->4, 5->4. Past 6 every producer saturates.
TEST(Fp4Encode, EachProducerBreaksTiesItsOwnWay) {
  struct Tie {
    float x;
    float zero, minus_inf, even;
  };
  const Tie ties[] = {{0.25f, 0, 0, 0},       {0.75f, 0.5f, 0.5f, 1},   {1.25f, 1, 1, 1},
                      {1.75f, 1.5f, 1.5f, 2}, {2.5f, 2, 2, 2},          {3.5f, 3, 3, 4},
                      {5.0f, 4, 4, 4},        {-0.25f, 0, -0.5f, 0},    {-2.5f, -2, -3, -2},
                      {-5.0f, -4, -6, -4},    {7.0f, 6, 6, 6},          {-100.0f, -6, -6, -6}};
  for (const Tie& t : ties) {
    EXPECT_EQ(decode_e2m1(encode_e2m1(t.x, E2m1Rounding::toward_zero)), t.zero) << t.x;
    EXPECT_EQ(decode_e2m1(encode_e2m1(t.x, E2m1Rounding::toward_minus_inf)), t.minus_inf) << t.x;
    EXPECT_EQ(decode_e2m1(encode_e2m1(t.x, E2m1Rounding::to_even)), t.even) << t.x;
  }
  for (const auto r : {E2m1Rounding::toward_zero, E2m1Rounding::toward_minus_inf, E2m1Rounding::to_even}) {
    EXPECT_EQ(encode_e2m1(-0.1f, r) == 0x8, false) << "no producer writes the negative zero";
    EXPECT_EQ(decode_e2m1(encode_e2m1(1.1f, r)), 1.0f) << "not a tie: the nearest";
    EXPECT_EQ(decode_e2m1(encode_e2m1(-4.9f, r)), -4.0f);
  }
}

TEST(Fp4Quantize, ScalesFollowAmaxAndAllZeroGroupsTakeTheFloor) {
  std::vector<float> x(64, 0.0f);
  x[3] = 6.0f;      // group 0: amax 6 -> scale 1 (byte 127)
  x[40] = -12.5f;   // group 1: amax 12.5 -> 12.5/6 rounds up to 4 (byte 129)
  std::vector<std::uint8_t> packed(32), scales(2);
  quantize_fp4_row(x, packed, scales, fp4_quantizer("deepgemm"));
  EXPECT_EQ(scales[0], 127);
  EXPECT_EQ(scales[1], 129);
  EXPECT_EQ(decode_e2m1(e2m1_nibble(packed, 3)), 6.0f);
  EXPECT_EQ(decode_e2m1(e2m1_nibble(packed, 40)) * 4, -12.0f) << "-12.5/4 = -3.125 rounds to -3";
  // An all-zero group's byte is each producer's floor: 112 (DeepGEMM), 98 (AITER), 1 (vLLM).
  std::vector<float> zeros(32, 0.0f);
  std::vector<std::uint8_t> p(16), s(1);
  const std::pair<const char*, int> floors[] = {{"deepgemm", 112}, {"aiter", 98}, {"vllm", 1}};
  for (const auto& [name, byte] : floors) {
    quantize_fp4_row(zeros, p, s, fp4_quantizer(name));
    EXPECT_EQ(s[0], byte) << name;
  }
  EXPECT_THROW((void)fp4_quantizer("flashinfer-rne"), std::invalid_argument);
}

}  // namespace
}  // namespace pmqa
