// The kernels' own KV-cache indexing (spec §2), written with shifts and masks rather than the
// reference's division form; a test compares the two over whole blocks. All offsets are 64-bit:
// a cache or an output past 2^31 bytes must not wrap (bug class 5).
#pragma once

#include "pmqa_kernels/common/hip_compat.hpp"
#include "pmqa_kernels/common/params.hpp"

PMQA_KDEV_BEGIN

// Byte offset of value (t, d) within a block's value region.
template <int kD>
PMQA_DEV std::int64_t value_offset(bool shuffle, std::int64_t t, int d) {
  if (!shuffle) return t * kD + d;
  // 16-token x 16-byte tiles: a tile row of 16 tokens spans 16*kD bytes, a tile 256.
  return ((t >> 4) * (16 * kD)) + ((d >> 4) << 8) + ((t & 15) << 4) + (d & 15);
}

// Byte offset of token t's fp32 scale within a block.
template <int kD>
PMQA_DEV std::int64_t scale_offset(std::int64_t block_size, std::int64_t t) {
  return block_size * kD + 4 * t;
}

// Key j of a sequence -> (logical block, token in block). A 64-bit division costs ~100 GPU
// instructions, which dominated fused-mma's inner loop; block sizes are powers of two in
// practice, so that case is a shift and a mask.
struct KeySlot {
  std::int64_t logical;
  std::int64_t token;
};
PMQA_DEV KeySlot key_slot(const LogitsParams& p, std::int64_t j) {
  if (p.block_shift >= 0) return {j >> p.block_shift, j & (p.block_size - 1)};
  return {j / p.block_size, j % p.block_size};
}

// A little-endian fp32 from 4 bytes at any alignment (padded block strides need not keep the
// scales 4-byte aligned).
PMQA_DEV float load_f32_unaligned(const std::uint8_t* p) {
  const std::uint32_t u = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                          (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
  return bits_to_float(u);
}

PMQA_KDEV_END
