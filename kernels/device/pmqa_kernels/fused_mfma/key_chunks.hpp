// fused-mfma's chunk pipeline (fused-mma's too until its persistent grid replaced it with
// schedule/chunk_work.hpp and fused_mma/chunk_copy.hpp: 8 chunks in series per CTA set a floor of 0.033 ms for one 1K
// sequence on the H200): a CTA walks a range of 8 chunks of 64 keys of one sequence, each chunk's
// key bytes and scales copied into a shared-memory stage (asynchronously where the GPU can), the
// page numbers of the range read once. D = 128; rows padded to 144 bytes so fragment loads of
// consecutive keys hit different banks.
#pragma once

#include "pmqa_kernels/arch/cp_async.hpp"
#include "pmqa_kernels/common/bytes.hpp"
#include "pmqa_kernels/common/faults.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kMmaKeys = 64;                            // keys per chunk
inline constexpr int kMmaD = 128;                              // head_dim the matrix-unit variants take
inline constexpr int kMmaRowBytes = kMmaD + 16;                // padded: fragment loads of consecutive keys hit different banks
inline constexpr int kMmaChunksPerCta = 8;                     // a CTA streams 8 chunks of one sequence ...
inline constexpr int kMmaKeysPerCta = kMmaKeys * kMmaChunksPerCta;
inline constexpr int kMmaStages = 3;                           // ... with 2 chunks in flight while it computes on one
inline constexpr int kMmaPagesPerCta = 64;                     // page numbers a CTA keeps in shared memory

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

// The shared memory of one CTA of a matrix-unit variant, declared by the kernel (PMQA_SHARED)
// and handed to the helpers below.
template <int kRows>
struct KeyRangeStorage {
  Bytes16 (&keys)[kMmaStages][kMmaKeys * kMmaRowBytes / 16];
  float (&scales)[kMmaStages][kMmaKeys];
  Bytes16 (&q)[kRows * kMmaRowBytes / 16];  // the launch's q rows as given, 144-byte rows
  float (&w)[kRows];
  std::int32_t (&pages)[kMmaPagesPerCta];
};

// A CTA's range of keys and the rows it scores.
struct KeyRange {
  std::int64_t b = 0, j_begin = 0, j_end = 0, n_begin = 0, n_count = 0;
  std::int64_t seq_keys = 0;  // the longest of the launch's rows: keys at or past it do not exist
  int chunks = 0;             // chunks of 64 keys holding at least one existing key
  PageWindow window{nullptr, 0};
};

// Everything before the chunk loop: the range's -inf tail written, the page numbers read, the
// first kMmaStages-1 chunks' copies issued, q and the weights staged. chunks == 0: nothing more to
// do (uniform per CTA, the caller returns).
template <class Hooks, int kThreads, int kRows>
PMQA_DEV KeyRange begin_key_range(const LogitsParams& p, const KeyRangeStorage<kRows>& st) {
  const int tid = static_cast<int>(threadIdx.x);
  KeyRange r;
  r.b = blockIdx.y;
  r.j_begin = static_cast<std::int64_t>(blockIdx.x) * kMmaKeysPerCta;
  r.j_end = r.j_begin + kMmaKeysPerCta < p.max_model_len ? r.j_begin + kMmaKeysPerCta : p.max_model_len;
  r.n_begin = p.mma_n_begin;
  r.n_count = p.mma_n_count;
  r.seq_keys = longest_row<Hooks>(p, r.b, r.n_begin, r.n_begin + r.n_count);
  const std::int64_t live_end = r.seq_keys < r.j_end ? r.seq_keys : r.j_end;
  r.chunks = live_end > r.j_begin ? static_cast<int>((live_end - r.j_begin + kMmaKeys - 1) / kMmaKeys) : 0;
  for (std::int64_t i = tid; i < r.n_count * kMmaKeysPerCta; i += kThreads) {
    const std::int64_t n = r.n_begin + i / kMmaKeysPerCta;
    const std::int64_t j = r.j_begin + static_cast<std::int64_t>(r.chunks) * kMmaKeys + i % kMmaKeysPerCta;
    if (j < r.j_end) p.out[Hooks::out_offset(r.b * p.next_n + n, p.out_row_stride, j)] = minus_infinity();
  }
  if (r.chunks == 0) return r;

  r.window.first_logical = key_slot(p, r.j_begin).logical;
  const std::int64_t window_pages = key_slot(p, live_end - 1).logical - r.window.first_logical + 1;
  if (window_pages <= kMmaPagesPerCta) {
    for (std::int64_t i = tid; i < window_pages; i += kThreads)
      st.pages[i] = p.block_table[r.b * p.max_blocks_per_seq + r.window.first_logical + i];
    r.window.pages = st.pages;
    Hooks::barrier();
  }
  // Start fetching the first chunks, then stage q and the weights while they fly.
  for (int c = 0; c < kMmaStages - 1; ++c) {
    if (c < r.chunks)
      issue_chunk<Hooks, kThreads>(p, r.b, r.window, r.j_begin + c * kMmaKeys, r.seq_keys, st.keys[c][0].b, st.scales[c]);
    async_commit();
  }
  std::uint8_t* const qs = st.q[0].b;
  const int heads = static_cast<int>(p.heads);  // 32-bit: a 64-bit division is ~100 instructions
  for (int i = tid; i < kRows * (kMmaD / 4); i += kThreads) {
    const int m = i / (kMmaD / 4), d = 4 * (i % (kMmaD / 4));
    const std::int64_t n = r.n_begin + m / heads, h = m % heads;
    // D = 128: the 4 bytes at d are 4-byte aligned.
    *reinterpret_cast<std::uint32_t*>(qs + m * kMmaRowBytes + d) = load_u32(p.q + Hooks::q_offset(p, r.b, n, h, d));
  }
  for (int m = tid; m < kRows; m += kThreads)
    st.w[m] = p.weights[(r.b * p.next_n + r.n_begin + m / heads) * p.heads + m % heads];
  return r;
}

// The top of chunk c: refill the stage chunk c-1 used (every thread passed the barrier after
// computing on it), then wait until chunk c has landed for every thread.
template <class Hooks, int kThreads, int kRows>
PMQA_DEV void await_chunk(const LogitsParams& p, const KeyRange& r, const KeyRangeStorage<kRows>& st, int c) {
  const int ahead = c + kMmaStages - 1;
  if (ahead < r.chunks)
    issue_chunk<Hooks, kThreads>(p, r.b, r.window, r.j_begin + ahead * kMmaKeys, r.seq_keys,
                                 st.keys[ahead % kMmaStages][0].b, st.scales[ahead % kMmaStages]);
  async_commit();
  async_wait<kMmaStages - 1>();  // this thread's part ...
  Hooks::barrier();               // ... and every thread's (q, the weights and the pages too, first pass)
}

PMQA_KDEV_END
