// The oracle's KV indexing and quantising writer (spec §2).
#include <cmath>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/reference/kv_cache.hpp"

namespace pmqa {
namespace {

TEST(KvLayoutIndexing, ShuffleMatchesTheSpecFormulaAtAnchors) {
  // offset(t, d) = (t/16)*16*D + (d/16)*256 + (t%16)*16 + (d%16), D = 128
  EXPECT_EQ(kv_value_offset(KvLayout::shuffle, 0, 0, 128), 0);
  EXPECT_EQ(kv_value_offset(KvLayout::shuffle, 0, 15, 128), 15);
  EXPECT_EQ(kv_value_offset(KvLayout::shuffle, 0, 16, 128), 256);
  EXPECT_EQ(kv_value_offset(KvLayout::shuffle, 1, 0, 128), 16);
  EXPECT_EQ(kv_value_offset(KvLayout::shuffle, 16, 0, 128), 2048);
  EXPECT_EQ(kv_value_offset(KvLayout::shuffle, 17, 33, 128), 2048 + 512 + 16 + 1);
  EXPECT_EQ(kv_value_offset(KvLayout::normal, 17, 33, 128), 17 * 128 + 33);
}

TEST(KvLayoutIndexing, BothLayoutsAreBijectionsOnTheValueRegion) {
  for (auto layout : {KvLayout::normal, KvLayout::shuffle})
    for (std::int64_t bs : {16, 64})
      for (std::int64_t D : {32, 128}) {
        std::set<std::int64_t> seen;
        for (std::int64_t t = 0; t < bs; ++t)
          for (std::int64_t d = 0; d < D; ++d) {
            const auto o = kv_value_offset(layout, t, d, D);
            EXPECT_GE(o, 0);
            EXPECT_LT(o, bs * D);
            seen.insert(o);
          }
        EXPECT_EQ(static_cast<std::int64_t>(seen.size()), bs * D) << to_string(layout);
      }
}

TEST(KvLayoutIndexing, WithLayoutMovesBytesNotValues) {
  fixtures::CaseSpec s;
  s.batch = 2;
  s.head_dim = 64;
  s.block_size = 32;
  s.max_model_len = 100;
  s.block_stride_pad = 12;
  s.context_lens = {100, 45};
  const Case normal = fixtures::make_case(s);
  const Case shuffled = with_layout(normal, KvLayout::shuffle);
  const Case back = with_layout(shuffled, KvLayout::normal);
  EXPECT_NE(normal.kv_cache, shuffled.kv_cache);
  const KvReader a(normal), b(shuffled);
  for (std::int64_t p = 0; p < normal.num_blocks; ++p)
    for (std::int64_t t = 0; t < normal.block_size; ++t) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(a.scale(p, t)), std::bit_cast<std::uint32_t>(b.scale(p, t)));
      for (std::int64_t d = 0; d < normal.head_dim; ++d) ASSERT_EQ(a.value_code(p, t, d), b.value_code(p, t, d));
    }
  // Value regions round-trip; pads and scales are untouched.
  EXPECT_EQ(back.kv_cache, normal.kv_cache);
}

TEST(Quantize, ScaleIsAmaxOverFp8Max) {
  std::vector<float> x{0.5f, -3.0f, 1.25f, 0.0f};
  std::vector<std::uint8_t> codes(x.size());
  QuantConfig cfg;
  cfg.fp8_max = 448.0f;
  EXPECT_EQ(quantize_row(x, codes, cfg), 3.0f / 448.0f);
  EXPECT_EQ(codes[1], encode_fp8(Fp8Format::e4m3fn, -448.0f, Fp8Overflow::saturate));
  cfg.format = Fp8Format::e4m3fnuz;
  cfg.fp8_max = 224.0f;  // vLLM on FNUZ
  EXPECT_EQ(quantize_row(x, codes, cfg), 3.0f / 224.0f);
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fnuz, codes[1]), -224.0f);
}

TEST(Quantize, PowerOfTwoScalesRoundUp) {
  std::vector<float> x{1.0f, 2.0f, 3.0f};
  std::vector<std::uint8_t> codes(x.size());
  QuantConfig cfg;
  cfg.power_of_two_scale = true;
  const float s = quantize_row(x, codes, cfg);
  EXPECT_EQ(s, 0x1p-7f);  // 3/448 = 0.0067 -> 2^-7 = 0.0078
  x = {448.0f * 0x1p-7f};  // exactly a power of two: kept
  EXPECT_EQ(quantize_row(x, std::span(codes).first(1), cfg), 0x1p-7f);
}

TEST(Quantize, ZeroRowUsesTheFloor) {
  std::vector<float> x(8, 0.0f);
  std::vector<std::uint8_t> codes(x.size());
  EXPECT_EQ(quantize_row(x, codes, QuantConfig{}), 1e-4f / 448.0f);
  for (auto c : codes) EXPECT_EQ(c, 0);
}

TEST(Quantize, RelativeErrorWithinHalfAnUlp) {
  std::vector<float> x;
  for (int i = 1; i <= 128; ++i) x.push_back(std::sin(static_cast<float>(i)) * 10.0f);
  std::vector<std::uint8_t> codes(x.size());
  for (auto f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz}) {
    QuantConfig cfg;
    cfg.format = f;
    cfg.fp8_max = fp8_max_finite(f);
    const float s = quantize_row(x, codes, cfg);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float back = decode_fp8(f, codes[i]) * s;
      // 3 mantissa bits: half an ulp is 2^-4 relative for normals; subnormals by absolute step.
      EXPECT_LE(std::fabs(back - x[i]), std::max(std::fabs(x[i]) * 0x1p-4f, s * 0x1p-9f)) << i;
    }
  }
}

}  // namespace
}  // namespace pmqa
