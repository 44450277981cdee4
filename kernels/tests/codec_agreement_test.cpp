// The kernels' device-side fp8 decode and KV indexing against the reference's, on every code and
// over whole blocks (design.md: a bug shared by both would pass every comparison).
#include <bit>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "pmqa/reference/fp8.hpp"
#include "pmqa/reference/kv_cache.hpp"
#include "pmqa_kernels/arch/fp8_to_f16.hpp"
#include "pmqa_kernels/common/fp8.hpp"
#include "pmqa_kernels/common/kv_index.hpp"

namespace pmqa {
namespace {

template <bool kFnuz>
void expect_codec_agrees() {
  const Fp8Format f = kFnuz ? Fp8Format::e4m3fnuz : Fp8Format::e4m3fn;
  for (int i = 0; i < 256; ++i) {
    const auto code = static_cast<std::uint8_t>(i);
    const float kernel = kdev::fp8_to_float<kFnuz>(code);
    const float reference = decode_fp8(f, code);
    if (std::isnan(reference)) {
      EXPECT_TRUE(std::isnan(kernel)) << to_string(f) << " code " << i;
      continue;
    }
    // Bitwise: -0 must stay -0 (FN 0x80).
    EXPECT_EQ(std::bit_cast<std::uint32_t>(kernel), std::bit_cast<std::uint32_t>(reference)) << to_string(f) << " code " << i;
  }
}

TEST(KernelCodec, AgreesWithReferenceOnAllCodesFn) { expect_codec_agrees<false>(); }
TEST(KernelCodec, AgreesWithReferenceOnAllCodesFnuz) { expect_codec_agrees<true>(); }

// fused-mma decodes fp8 to f16 for the tensor cores: exact for every code of both formats, in
// either byte of either half of a word, -0 kept, NaN kept.
template <bool kFnuz>
void expect_f16_decode_exact() {
  const Fp8Format f = kFnuz ? Fp8Format::e4m3fnuz : Fp8Format::e4m3fn;
  for (int i = 0; i < 256; ++i) {
    const float want = decode_fp8(f, static_cast<std::uint8_t>(i));
    const auto code = static_cast<std::uint32_t>(i);
    const std::uint32_t pairs[4] = {kdev::fp8x2_to_f16x2<kFnuz, 0>(code), kdev::fp8x2_to_f16x2<kFnuz, 0>(code << 8),
                                    kdev::fp8x2_to_f16x2<kFnuz, 1>(code << 16), kdev::fp8x2_to_f16x2<kFnuz, 1>(code << 24)};
    const float got[4] = {kdev::f16_bits_to_float(pairs[0] & 0xFFFFu), kdev::f16_bits_to_float(pairs[1] >> 16),
                          kdev::f16_bits_to_float(pairs[2] & 0xFFFFu), kdev::f16_bits_to_float(pairs[3] >> 16)};
    for (int lane = 0; lane < 4; ++lane) {
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[lane])) << to_string(f) << " code " << i << " byte " << lane;
        continue;
      }
      EXPECT_EQ(std::bit_cast<std::uint32_t>(got[lane]), std::bit_cast<std::uint32_t>(want))
          << to_string(f) << " code " << i << " byte " << lane << ": " << got[lane] << " != " << want;
    }
  }
}

TEST(KernelCodec, Fp8ToF16IsExactOnAllCodesFn) { expect_f16_decode_exact<false>(); }
TEST(KernelCodec, Fp8ToF16IsExactOnAllCodesFnuz) { expect_f16_decode_exact<true>(); }

// The f16 decode the host's tensor-core emulation uses, on IEEE binary16 patterns from the standard.
TEST(KernelCodec, F16BitsDecodeKnownPatterns) {
  EXPECT_EQ(kdev::f16_bits_to_float(0x3C00u), 1.0f);
  EXPECT_EQ(kdev::f16_bits_to_float(0xC000u), -2.0f);
  EXPECT_EQ(kdev::f16_bits_to_float(0x7BFFu), 65504.0f);
  EXPECT_EQ(kdev::f16_bits_to_float(0x0001u), 0x1p-24f);
  EXPECT_EQ(kdev::f16_bits_to_float(0x0400u), 0x1p-14f);
  EXPECT_EQ(kdev::f16_bits_to_float(0x3555u), 0x1.554p-2f);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(kdev::f16_bits_to_float(0x8000u)), 0x80000000u);
  EXPECT_TRUE(std::isinf(kdev::f16_bits_to_float(0x7C00u)));
  EXPECT_TRUE(std::isnan(kdev::f16_bits_to_float(0x7E00u)));
}

template <int kD>
void expect_indexing_agrees(std::int64_t block_size) {
  for (bool shuffle : {false, true}) {
    if (shuffle && block_size % 16 != 0) continue;
    const KvLayout layout = shuffle ? KvLayout::shuffle : KvLayout::normal;
    for (std::int64_t t = 0; t < block_size; ++t)
      for (int d = 0; d < kD; ++d)
        ASSERT_EQ(kdev::value_offset<kD>(shuffle, t, d), kv_value_offset(layout, t, d, kD))
            << to_string(layout) << " block_size " << block_size << " D " << kD << " t " << t << " d " << d;
    for (std::int64_t t = 0; t < block_size; ++t)
      ASSERT_EQ(kdev::scale_offset<kD>(block_size, t), kv_scale_offset(block_size, kD, t));
  }
}

TEST(KernelIndexing, AgreesWithReferenceOverWholeBlocks) {
  for (std::int64_t bs : {1, 16, 64, 256}) {
    expect_indexing_agrees<32>(bs);
    expect_indexing_agrees<64>(bs);
    expect_indexing_agrees<128>(bs);
  }
}

TEST(KernelIndexing, UnalignedScaleLoad) {
  const std::uint8_t bytes[] = {0xAA, 0x00, 0x00, 0xC0, 0x3F};  // 1.5f at offset 1
  EXPECT_EQ(kdev::load_f32_unaligned(bytes + 1), 1.5f);
}

}  // namespace
}  // namespace pmqa
