// EXPERIMENT (notes v13; the benchmark's tuning step only, through Hooks::kTryGroupsPerSm): the
// wgmma kernel's tensor-map path with an SM's co-resident CTAs merged into one CTA of
// kWgCtasPerSm warpgroups, which share the SM's chunks instead of each walking a fixed share.
//
// Why: grouped by SM, v11b's CTAs end p50 2.3 us apart within one SM, and as far apart without
// any key bytes (the warp schedulers favour some co-resident CTAs); the launch ends at the
// slowest (notes, "ends by SM"). Here each warpgroup keeps everything a v11b CTA has (its ring,
// q tile, sequence rows, 5 x 42 KB of dynamic shared memory for 64 rows), the CTA takes the
// union of its warpgroups' shares (one equal contiguous share per SM), and a warpgroup's thread 0
// takes its next chunk from a counter in shared memory: a favoured warpgroup takes more chunks.
// The first wave is static (chunks g, g + G, g + 2G of the share for warpgroup g of G), later
// chunks are claimed one ahead of their copies so the block number's load flies meanwhile. The
// chunk a stage holds goes to the consumers beside the stage (written before the copies' arrive,
// read after their wait); an end mark when the share is used up.
//
// GPU only: warpgroups synchronise by named barriers, which the host runtime does not emulate, so
// the host executor never instantiates it (Faithful hooks keep kTryGroupsPerSm false).
#pragma once

#include "pmqa_kernels/fused_wgmma.hpp"

PMQA_KDEV_BEGIN

template <int kRows>
inline constexpr int kWgGroups = kWgCtasPerSm<kRows>;  // warpgroups per CTA, one CTA per SM

template <int kRows>
struct WgGroupsSpace {
  WgSharedSpace<kRows> group[kWgGroups<kRows>];
  ChunkCursor stage_chunk[kWgGroups<kRows>][kWgStages];  // the chunk a stage holds; b < 0: the end
  std::uint32_t next;                                    // the next chunk of the share to claim
  ChunkShare share;                                      // the CTA's share, found by warp 0
};

// Moves cursor k forward by n live chunks (crossing sequences, skipping empty ones).
template <class Hooks>
PMQA_DEV void advance_chunks(const LogitsParams& p, ChunkCursor& k, std::int32_t n) {
  k.c += n;
  while (k.c >= k.chunks && k.b < p.batch) {
    k.c -= k.chunks;
    k.chunks = 0;
    while (k.chunks == 0 && ++k.b < p.batch) {
      k.keys = live_keys<Hooks>(p, k.b);
      k.chunks = chunks_of(k.keys);
    }
  }
}

// Warpgroup g's own barrier (named barrier 1 + g; barrier 0 is __syncthreads').
PMQA_DEV void group_barrier(int g) {
#if defined(PMQA_WGMMA)
  asm volatile("bar.sync %0, %1;\n" ::"r"(g + 1), "r"(kWgThreads) : "memory");
#else
  static_cast<void>(g);
  __trap();
#endif
}

template <class Hooks, int kRows>
__global__ void __launch_bounds__(kWgThreads * kWgGroups<kRows>, 1)
    fused_wgmma_groups_kernel(LogitsParams p, const PMQA_GRID_CONSTANT KeyMap key_map) {
  constexpr int kGroups = kWgGroups<kRows>;
  constexpr int kHalves = kRows == 128 ? 2 : 1;
  constexpr int kAhead = kWgStages - 1;
  constexpr bool kRefillAfterMma = kHalves == 2;  // as v11b
  PMQA_SHARED_OBJECT(WgGroupsSpace<kRows>, space);
  const int g = static_cast<int>(threadIdx.x) / kWgThreads;
  const int tid = wg_thread(), warp = tid / 32;
  WgShared<kRows>& sh = align_shared(space.group[g]);
  ChunkCursor* const staged = space.stage_chunk[g];
  const bool producer = tid == 0;
  const std::uint64_t policy = stream_once_policy();
  Hooks::mark(WgMark::kEntry);  // a timeline stamps per warpgroup (its thread 0)
  prefetch_small_inputs(p, static_cast<int>(threadIdx.x));
  if (producer) {
    PMQA_UNROLL
    for (int s = 0; s < kWgStages; ++s) mbar_init(sh.full[s], 1);
    prefetch_key_map(key_map);
  }
  mbar_init_fence();
  __syncthreads();
  if (threadIdx.x < 32) {
    const ChunkShare mine = find_share<Hooks>(p, blockIdx.x, gridDim.x);
    if (threadIdx.x == 0) {
      space.share = mine;
      space.next = kGroups * kAhead;  // the first wave's chunks are dealt statically
    }
  } else {
    fill_dead_tails<Hooks>(p, blockIdx.x, gridDim.x, static_cast<int>(threadIdx.x) - 32,
                           static_cast<int>(blockDim.x) - 32);
  }
  __syncthreads();
  Hooks::mark(WgMark::kShare);
  const ChunkShare share = space.share;
  const auto count = static_cast<std::int32_t>(share.count);
  ChunkCursor first = share.first;  // the warpgroup's first chunk: number g of the share
  if (g < count) advance_chunks<Hooks>(p, first, g);

  auto put_chunk = [&](int s, const ChunkCursor& k, std::int32_t page) {
    staged[s] = k;
    issue_stage<Hooks, kRows, true>(p, key_map, policy, k, page, sh, s, tid);
  };
  auto put_end = [&](int s) {
    staged[s].b = -1;
    mbar_arrive(sh.full[s]);
  };

  // The first wave (thread 0): chunks g, g + G, g + 2G, their blocks as independent loads; one
  // chunk first, the others once it has landed (v11).
  SequenceRows<kRows> seq{};
  std::int32_t q_b = -1;
  QRowPieces<kRows> first_q{};
  if (g < count) first_q = fetch_q_rows<Hooks, kRows>(p, first.b);
  ChunkCursor at = first;  // thread 0: the last chunk it moved to, number at_k of the share
  std::int32_t at_k = g;
  ChunkCursor ahead[kAhead];
  std::int32_t pages[kAhead] = {};
  bool done = false;  // thread 0: the end mark is staged
  if (producer) {
    PMQA_UNROLL
    for (int j = 0; j < kAhead; ++j) {
      const std::int32_t k = g + j * kGroups;
      if (k < count) {
        advance_chunks<Hooks>(p, at, k - at_k);
        at_k = k;
        ahead[j] = at;
        pages[j] = first_page<Hooks>(p, at);
      }
    }
    if (g < count) put_chunk(0, ahead[0], pages[0]);
    else {
      put_end(0);
      done = true;
    }
  }
  Hooks::mark(WgMark::kFirstIssue);
  if (g < count) {
    store_q_rows(first_q, sh);
    load_sequence_rows<Hooks, kRows>(p, first.b, seq);
    WgmmaFp8::fence_shared_for_tensor_cores();
    q_b = first.b;
  }
  // The next chunk, claimed one ahead of its copies (thread 0).
  ChunkCursor next{};
  std::int32_t next_page = 0;
  bool next_ok = false;
  auto claim = [&] {
    const auto k = static_cast<std::int32_t>(atomicAdd(&space.next, 1u));
    next_ok = k < count;
    if (!next_ok) return;
    advance_chunks<Hooks>(p, at, k - at_k);
    at_k = k;
    next = at;
    next_page = first_page<Hooks>(p, at);
  };
  if (producer && !done) {
    mbar_wait(sh.full[0], 0);
    PMQA_UNROLL
    for (int j = 1; j < kAhead; ++j) {
      if (done) break;
      if (g + j * kGroups < count) put_chunk(j, ahead[j], pages[j]);
      else {
        put_end(j);
        done = true;
      }
    }
    if (!done) claim();
  }
  // Stage j % kWgStages gets the claimed chunk, or the end mark.
  auto refill = [&](std::int32_t j) {
    if (!producer || done) return;
    const int s = static_cast<int>(j % kWgStages);
    if (next_ok) {
      put_chunk(s, next, next_page);
      claim();
    } else {
      put_end(s);
      done = true;
    }
  };
  group_barrier(g);
  const WgmmaFp8::Tile keys0 = WgmmaFp8::tile(sh.keys[0]), q0 = WgmmaFp8::tile(sh.q);
  float acc[kHalves][WgmmaFp8::kAcc] = {};
  Hooks::mark(WgMark::kLoop);
  for (std::int32_t i = 0;; ++i) {
    const int s = static_cast<int>(i % kWgStages);
    mbar_wait(sh.full[s], static_cast<int>((i / kWgStages) & 1));
    const ChunkCursor cur = staged[s];
    if (cur.b < 0) break;  // the same in every thread of the warpgroup
    if (i < WgMark::kChunks) Hooks::mark(WgMark::landed(i));
    group_barrier(g);      // every thread is past chunk i-1, its stage and its staged cursor
    if constexpr (!kRefillAfterMma) refill(i + kAhead);
    if (cur.b != q_b) {
      load_sequence<Hooks, kRows>(p, cur.b, sh, seq);
      WgmmaFp8::fence_shared_for_tensor_cores();
      group_barrier(g);
      q_b = cur.b;
    }
    WgmmaFp8::fence();
    PMQA_UNROLL
    for (int ks = 0; ks < kChunkRowBytes / WgmmaFp8::kK; ++ks) {
      PMQA_UNROLL
      for (int h = 0; h < kHalves; ++h)
        WgmmaFp8::mma(acc[h], WgmmaFp8::advance(keys0, s * kChunkKeys * kChunkRowBytes),
                      WgmmaFp8::advance(q0, h * 64 * kChunkRowBytes), ks, ks > 0);
    }
    WgmmaFp8::commit();
    if constexpr (kRefillAfterMma) refill(i + kAhead);
    WgmmaFp8::wait_all();
    PMQA_UNROLL
    for (int h = 0; h < kHalves; ++h) WgmmaFp8::settle(acc[h]);
    const int r = (tid % 32) >> 2;
    const float s_lo = sh.scales[s][16 * warp + r], s_hi = sh.scales[s][16 * warp + r + 8];
    if (warp32_all(s_lo > 0.0f && s_hi > 0.0f)) fold_chunk<Hooks, kRows, true>(p, cur, acc, seq, s_lo, s_hi);
    else fold_chunk<Hooks, kRows, false>(p, cur, acc, seq, s_lo, s_hi);
    if (i < WgMark::kChunks) Hooks::mark(WgMark::folded(i));
  }
  Hooks::mark(WgMark::kEnd);
  // Every copy issued was waited for: the loop ends at the stage after the last one.
}

PMQA_KDEV_END
