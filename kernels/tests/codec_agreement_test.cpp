// The kernels' device-side fp8 decode and KV indexing against the reference's, on every code and
// over whole blocks (design.md: a bug shared by both would pass every comparison).
#include <bit>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "pmqa/reference/fp8.hpp"
#include "pmqa/reference/kv_cache.hpp"
#include "pmqa_kernels/fnuz_to_ocp.hpp"
#include "pmqa_kernels/fp8.hpp"
#include "pmqa_kernels/kv_index.hpp"

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

// Tensor cores take OCP bytes: FNUZ enters as main + correction, both OCP, worth twice the FNUZ
// value (the kernel applies 1/2 per operand). Exact for all 256 codes, NaN stays NaN.
TEST(KernelCodec, FnuzToOcpIsExactOnAllCodes) {
  for (int i = 0; i < 256; ++i) {
    const auto code = static_cast<std::uint8_t>(i);
    const kdev::OcpPair pair = kdev::fnuz_to_ocp4(static_cast<std::uint32_t>(code) << 16);  // any byte lane
    const auto main = static_cast<std::uint8_t>(pair.main >> 16), corr = static_cast<std::uint8_t>(pair.corr >> 16);
    EXPECT_EQ(pair.main & 0xFF00FFFFu, 0u);
    EXPECT_EQ(pair.corr & 0xFF00FFFFu, 0u);
    const float want = decode_fp8(Fp8Format::e4m3fnuz, code);
    const float got = decode_fp8(Fp8Format::e4m3fn, main) + decode_fp8(Fp8Format::e4m3fn, corr);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "code " << i;
      continue;
    }
    EXPECT_EQ(got, 2.0f * want) << "FNUZ code " << i << " -> OCP " << int(main) << " + " << int(corr);
  }
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
