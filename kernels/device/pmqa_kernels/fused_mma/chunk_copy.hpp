// A chunk's copy (64 keys x 128 bytes and their 64 scales) into a shared-memory stage, by the
// threads of one pipeline (a warp in fused-mma, a warpgroup in its wgmma kernel), asynchronously
// where the GPU can (cp.async).
//
// Stage layout: key r's 128 bytes in row r (128 bytes, no padding), its eight 16-byte segments
// permuted within the row by a swizzle, so the threads reading or writing a segment column hit
// different bank groups:
// - PairSwizzle (fused-mma's mma.sync kernel): segment s at s ^ (r & 1). Lane (g, t) reads a row's
//   segments 2t and 2t+1 for rows g and g+8; each 128-bit load phase (rows g and g+1) then covers 8
//   different 16-byte bank groups.
// - Swizzle128 (the wgmma kernel; arch/nv_swizzle.hpp): segment s at s ^ (r & 7), the tensor cores'
//   128-byte swizzle for K-major operands, which reads the stage as the instruction's A operand directly.
#pragma once

#include "pmqa_kernels/arch/cp_async.hpp"
#include "pmqa_kernels/arch/nv_swizzle.hpp"
#include "pmqa_kernels/common/bytes.hpp"
#include "pmqa_kernels/schedule/chunk_work.hpp"

#include <type_traits>

PMQA_KDEV_BEGIN

inline constexpr int kChunkRowBytes = 128;  // D = 128

struct ChunkStage {
  Bytes16 keys[kChunkKeys * kChunkRowBytes / 16];
  float scales[kChunkKeys];
};

struct PairSwizzle {
  static PMQA_DEV int segment(int r, int s) { return r * kChunkRowBytes + 16 * (s ^ (r & 1)); }
};
static_assert(Swizzle128::kRowBytes == kChunkRowBytes, "the wgmma stage's rows are the swizzle's");
inline constexpr int kChunkKeyBytes = kChunkKeys * kChunkRowBytes;  // 8 KB of keys per chunk
inline constexpr int kChunkScaleBytes = kChunkKeys * 4;             // and 256 bytes of scales

// Byte offset of key r's segment s (16 bytes) in a fused-mma stage.
PMQA_DEV int stage_segment(int r, int s) { return PairSwizzle::segment(r, s); }

// The physical block holding chunk k's first key (every chunk copied has one: it is live). 32-bit,
// as the block table holds it: a caller reading it ahead keeps the load's latency hidden (widened
// at once, the sign extension would wait for the load right there).
template <class Hooks>
PMQA_DEV std::int32_t first_page(const LogitsParams& p, const ChunkCursor& k) {
  const KeySlot slot = key_slot(p, k.c * kChunkKeys);
  return p.block_table[k.b * p.max_blocks_per_seq + slot.logical];
}

// Issues the copies of chunk k by thread `lane` of the kThreads threads sharing the stage (key
// rows at `keys`, placed by Layout; scales at `scales`). `page` is first_page(k), read ahead by the
// caller so its latency does not stall the copies. When block_size is a multiple of 64 the chunk
// lies in that one block; otherwise every key looks up its own, and keys past the sequence's live
// keys (their blocks may not exist) read as zero.
template <class Hooks, int kThreads, class Layout>
PMQA_DEV void copy_chunk(const LogitsParams& p, const ChunkCursor& k, std::int64_t page, std::uint8_t* keys, float* scales,
                         int lane) {
  const std::int64_t j0 = k.c * kChunkKeys;
  const bool shuffle = p.shuffle != 0;
  if (p.block_size % kChunkKeys == 0 && p.block_stride % 16 == 0) {
    const std::uint8_t* block = p.kv + Hooks::block_offset(page, p.block_stride);
    const std::int64_t t0 = key_slot(p, j0).token;
    // The layout as a constant, so each lane's addresses fold to one base and fixed steps: its
    // rows are r0 + (kThreads/8) m with r0 < kThreads/8, t0 is a multiple of 64, so in both layouts
    // value_offset(t0 + r) = value_offset(t0 + r0) + value_offset((kThreads/8) m) (no carry out of
    // a 16-token tile row).
    auto copy = [&](auto layout) {
      constexpr bool kShuffle = decltype(layout)::value;
      const int s = lane & 7, r0 = lane >> 3;
      const std::uint8_t* src = block + Hooks::template value_offset<kChunkRowBytes>(kShuffle, t0 + r0, 16 * s);
      PMQA_UNROLL
      for (int m = 0; m < kChunkKeys * 8 / kThreads; ++m) {
        const int r = r0 + (kThreads / 8) * m;
        async_copy<16>(keys + Layout::segment(r, s),
                       src + Hooks::template value_offset<kChunkRowBytes>(kShuffle, (kThreads / 8) * m, 0), true);
      }
    };
    if (shuffle) copy(std::true_type{});
    else copy(std::false_type{});
    if constexpr (kThreads >= kChunkKeys) {
      if (lane < kChunkKeys)
        async_copy<4>(scales + lane, block + Hooks::template scale_offset<kChunkRowBytes>(p.block_size, t0 + lane), true);
    } else {
      PMQA_UNROLL
      for (int r = lane; r < kChunkKeys; r += kThreads)
        async_copy<4>(scales + r, block + Hooks::template scale_offset<kChunkRowBytes>(p.block_size, t0 + r), true);
    }
    return;
  }
  const bool wide = p.block_stride % 16 == 0;  // else 4-byte copies (the host API requires % 4)
  for (int m = 0; m < kChunkKeys * 8 / kThreads; ++m) {
    const int i = lane + kThreads * m, r = i >> 3, s = i & 7;
    const bool exists = j0 + r < k.keys;
    const std::uint8_t* src = p.kv;
    if (exists) {
      const KeySlot slot = key_slot(p, j0 + r);
      const std::int64_t blk = p.block_table[k.b * p.max_blocks_per_seq + slot.logical];
      src = p.kv + Hooks::block_offset(blk, p.block_stride) + Hooks::template value_offset<kChunkRowBytes>(shuffle, slot.token, 16 * s);
    }
    std::uint8_t* dst = keys + Layout::segment(r, s);
    if (wide) {
      async_copy<16>(dst, src, exists);
    } else {
      for (int e = 0; e < 16; e += 4) async_copy<4>(dst + e, exists ? src + e : src, exists);
    }
  }
  for (int r = lane; r < kChunkKeys; r += kThreads) {
    const bool exists = j0 + r < k.keys;
    const std::uint8_t* src = p.kv;
    if (exists) {
      const KeySlot slot = key_slot(p, j0 + r);
      const std::int64_t blk = p.block_table[k.b * p.max_blocks_per_seq + slot.logical];
      src = p.kv + Hooks::block_offset(blk, p.block_stride) + Hooks::template scale_offset<kChunkRowBytes>(p.block_size, slot.token);
    }
    async_copy<4>(scales + r, src, exists);
  }
}

// fused-mma's form: the calling warp fills a PairSwizzle stage.
template <class Hooks>
PMQA_DEV void issue_chunk_copy(const LogitsParams& p, const ChunkCursor& k, std::int64_t page, ChunkStage& st) {
  copy_chunk<Hooks, kChunkWarp, PairSwizzle>(p, k, page, st.keys[0].b, st.scales,
                                             static_cast<int>(threadIdx.x) % kChunkWarp);
}

PMQA_KDEV_END
