// What the matrix-unit variants of the fused path (fused-mma on NVIDIA, fused-mfma on AMD) share:
// a CTA walks a range of 8 chunks of 64 keys of one sequence, each chunk's key bytes and scales
// copied into a shared-memory stage (asynchronously where the GPU can), the page numbers of the
// range read once. D = 128; rows padded to 144 bytes so fragment loads of consecutive keys hit
// different banks.
#pragma once

#include "pmqa_kernels/async_copy.hpp"
#include "pmqa_kernels/hooks.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kMmaKeys = 64;                            // keys per chunk
inline constexpr int kMmaD = 128;                              // head_dim the matrix-unit variants take
inline constexpr int kMmaRowBytes = kMmaD + 16;                // padded: fragment loads of consecutive keys hit different banks
inline constexpr int kMmaChunksPerCta = 8;                     // a CTA streams 8 chunks of one sequence ...
inline constexpr int kMmaKeysPerCta = kMmaKeys * kMmaChunksPerCta;
inline constexpr int kMmaStages = 3;                           // ... with 2 chunks in flight while it computes on one
inline constexpr int kMmaPagesPerCta = 64;                     // page numbers a CTA keeps in shared memory

// Shared memory in 16-byte aligned units (alignas on a __shared__ declaration is not portable).
struct alignas(16) Bytes16 {
  std::uint8_t b[16];
};

// Aligned 4- and 8-byte loads (any alignment on the host, where memcpy is the portable form).
PMQA_DEV std::uint32_t load_u32(const std::uint8_t* p) {
#if defined(PMQA_DEVICE_BUILD)
  return *reinterpret_cast<const std::uint32_t*>(p);
#else
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}

PMQA_DEV std::uint64_t load_u64(const std::uint8_t* p) {
#if defined(PMQA_DEVICE_BUILD)
  return *reinterpret_cast<const std::uint64_t*>(p);
#else
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
#endif
}

// Physical pages of the logical blocks a CTA's key range spans, read once into shared memory: a
// table lookup inside the copy loop put one dependent global load (~1 us under load) in front of
// every chunk's copies. Ranges spanning more than kMmaPagesPerCta blocks (block_size < 16) read
// the table directly.
struct PageWindow {
  const std::int32_t* pages;  // nullptr: read p.block_table
  std::int64_t first_logical;
};

template <class Hooks>
PMQA_DEV std::int64_t page_of(const LogitsParams& p, std::int64_t b, const PageWindow& w, std::int64_t logical) {
  if (w.pages) return w.pages[logical - w.first_logical];
  return p.block_table[b * p.max_blocks_per_seq + logical];
}

// Issues the asynchronous copies of the chunk starting at key j into one stage, by the CTA's
// kThreads threads: each key's 128 value bytes as 8 x 16 bytes, its scale as 4 bytes; keys that do
// not exist read as zero (their pages may not exist either: block_table entries past a sequence
// are never read).
template <class Hooks, int kThreads>
PMQA_DEV void issue_chunk(const LogitsParams& p, std::int64_t b, const PageWindow& window, std::int64_t j,
                          std::int64_t seq_keys, std::uint8_t* stage_keys, float* stage_scales) {
  if constexpr (Hooks::kSkipKeyLoads) return;
  const int tid = static_cast<int>(threadIdx.x);
  // 16-byte copies when the block stride keeps them aligned, else 4-byte ones (block_size 1:
  // 132-byte blocks); the host API requires block_stride % 4 == 0.
  const bool wide = p.block_stride % 16 == 0;
  const int seg_bytes = wide ? 16 : 4;
  const int segs = kMmaD / seg_bytes;
  for (int i = tid; i < kMmaKeys * segs; i += kThreads) {
    const int key = i / segs, seg = i % segs;
    const std::int64_t jk = j + key;
    const bool exists = jk < seq_keys;
    const std::uint8_t* src = p.kv;
    if (exists) {
      const KeySlot slot = key_slot(p, jk);
      const std::int64_t page = page_of<Hooks>(p, b, window, slot.logical);
      src = p.kv + Hooks::block_offset(page, p.block_stride) +
            Hooks::template value_offset<kMmaD>(p.shuffle != 0, slot.token, seg * seg_bytes);
    }
    std::uint8_t* dst = stage_keys + key * kMmaRowBytes + seg * seg_bytes;
    if (wide) async_copy<16>(dst, src, exists);
    else async_copy<4>(dst, src, exists);
  }
  for (int key = tid; key < kMmaKeys; key += kThreads) {
    const std::int64_t jk = j + key;
    const bool exists = jk < seq_keys;
    const std::uint8_t* src = p.kv;
    if (exists) {
      const KeySlot slot = key_slot(p, jk);
      const std::int64_t page = page_of<Hooks>(p, b, window, slot.logical);
      src = p.kv + Hooks::block_offset(page, p.block_stride) + Hooks::template scale_offset<kMmaD>(p.block_size, slot.token);
    }
    async_copy<4>(stage_scales + key, src, exists);
  }
}

PMQA_KDEV_END
