// The kernels' own KV-cache indexing (spec §2), written with shifts and masks rather than the
// reference's division form; a test compares the two over whole blocks. All offsets are 64-bit:
// a cache or an output past 2^31 bytes must not wrap (bug class 5).
#pragma once

#include "pmqa_kernels/hip_compat.hpp"

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

// A little-endian fp32 from 4 bytes at any alignment (padded block strides need not keep the
// scales 4-byte aligned).
PMQA_DEV float load_f32_unaligned(const std::uint8_t* p) {
  const std::uint32_t u = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                          (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
  return bits_to_float(u);
}

PMQA_KDEV_END
