// EXPERIMENT (notes v14; the benchmark's tuning step and the timeline only, through
// Hooks::kTrySmFeed): the wgmma kernel's tensor-map path as one CTA per SM, whose consumer
// warpgroups (5 of 64 rows, 3 of 128) are fed by one producer warp.
//
// Why: v11b's five CTAs of one SM end p50 2.3 us apart (the warp schedulers favour some
// co-resident CTAs), and the launch ends at the slowest. v13 let an SM's warpgroups share its
// chunks through a counter and did balance them (p50 1.02 us apart), but lost 14 %: its CTA
// barrier waited for ~8 dependent -inf tail pieces per CTA before the share was known, and the
// claim (a shared atomic, a cursor's move, a block-number load) sat in thread 0 before every
// chunk's wgmma, which the whole warpgroup waits for (a chunk 1.13 us against 0.73). Here:
// - the tails are spread over every warp of the grid but the share's finder (one piece a warp
//   at the decode shape: one context-length load and 32 stores a lane);
// - no consumer claims: a producer warp owns every copy (lane g serves warpgroup g). Each warpgroup has its own
//   contiguous part of the SM's share (v11b's split, so its sequence switches stay v11b's), and
//   the producer fills a warpgroup's ring from its own part, then from the front of whichever
//   part has most chunks left: a favoured warpgroup takes over the chunks of a slow one. It reads
//   each part's next block number ahead, and learns that a stage is free from an `empty`
//   mbarrier the consumer warps arrive at after the chunk's wgmma; it polls, and sleeps briefly
//   when a pass over the warpgroups found nothing to do, so its issue slots stay the consumers'.
// - As v11b: one chunk per warpgroup first, its other stages once it has landed.
//
// GPU only: warpgroups synchronise by named barriers, which the host runtime does not emulate, so
// the host executor never instantiates it (Faithful hooks keep kTrySmFeed false).
#pragma once

#include "pmqa_kernels/fused_wgmma.hpp"

PMQA_KDEV_BEGIN

template <int kRows>
inline constexpr int kSmGroups = kWgCtasPerSm<kRows>;  // consumer warpgroups per CTA, one CTA per SM
template <int kRows>
inline constexpr int kSmThreads = kWgThreads * kSmGroups<kRows> + 32;  // and the producer warp

// Block numbers of an SM's first kSmPages chunks, read once into shared memory by the producer
// (later chunks are read when issued).
inline constexpr int kSmPages = 1024;

template <int kRows>
struct WgSmSpace {
  WgSharedSpace<kRows> group[kSmGroups<kRows>];
  Mbarrier empty[kSmGroups<kRows>][kWgStages];      // the stage's chunk is consumed: 4 warp arrivals
  ChunkCursor staged[kSmGroups<kRows>][kWgStages];  // the chunk a stage holds; b < 0: the end
  ChunkShare share;                                 // the CTA's share, found by warp 0
  std::int32_t pages[kSmPages];                     // the first block of the share's chunk i
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

PMQA_DEV void producer_nap() {
#if defined(PMQA_WGMMA)
  __nanosleep(32);
#endif
}

// The lanes of the warp whose `pred` holds, as a mask.
PMQA_DEV unsigned warp32_ballot(bool pred) {
#if defined(__CUDACC__) && defined(PMQA_DEVICE_BUILD)
  return __ballot_sync(0xFFFFFFFFu, pred);
#else
  unsigned m = pred ? 1u << (threadIdx.x % 32) : 0u;
  for (int d = 16; d > 0; d /= 2) m |= static_cast<unsigned>(__shfl_xor(static_cast<int>(m), d, 32));
  return m;
#endif
}

// The lowest lane of a non-empty mask.
PMQA_DEV int lowest_lane(unsigned mask) {
#if defined(__CUDACC__) && defined(PMQA_DEVICE_BUILD)
  return __ffs(static_cast<int>(mask)) - 1;
#else
  return __builtin_ctz(mask);
#endif
}

// The producer warp: lane g < kGroups owns warpgroup g's ring and part g of the SM's share (its
// front cursor and number, what is left), all lanes in step; the share's block numbers are read
// into shared memory at the start (kSmPages). A first
// version kept every part in one thread: its arrays spilled, each spill store waited for a
// read-ahead block number, and an SM's chunks went out one per ~2 us (0.074 ms).
template <class Hooks, int kRows>
PMQA_DEV void feed_groups(const LogitsParams& p, const KeyMap& key_map, WgSmSpace<kRows>& space, const ChunkShare& share) {
  constexpr int kGroups = kSmGroups<kRows>;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const bool owner = lane < kGroups;
  const int g = owner ? lane : 0;
  const std::uint64_t policy = stream_once_policy();
  const auto count = static_cast<std::uint32_t>(share.count);
  const std::uint32_t lo = share_bound(count, g, kGroups);
  ChunkCursor front = share.first;
  advance_chunks<Hooks>(p, front, static_cast<std::int32_t>(lo));
  std::int32_t left = owner ? static_cast<std::int32_t>(share_bound(count, g + 1, kGroups) - lo) : 0;
  auto at = static_cast<std::int32_t>(lo);  // the front's number in the share
  std::int32_t filled = 0, freed = 0;
  bool open = false, ended = !owner;
  WgShared<kRows>& sh = align_shared(space.group[g]);

  // Stage filled % kWgStages of this lane's warpgroup gets chunk k (block `pg`) or the end mark.
  auto put = [&](const ChunkCursor& k, std::int32_t pg) {
    const int s = filled % kWgStages;
    ++filled;
    space.staged[g][s] = k;
    issue_stage<Hooks, kRows, true>(p, key_map, policy, k, pg, sh, s, 0);
  };
  auto put_end = [&] {
    const int s = filled % kWgStages;
    ++filled;
    space.staged[g][s].b = -1;
    mbar_arrive(sh.full[s]);
    ended = true;
  };
  auto pop_front = [&] {  // the owner's front chunk was handed out
    ++at;
    if (--left > 0) next_chunk<Hooks>(p, front);
  };
  // Chunk number i of the share, at cursor k: its first block.
  auto page_of = [&](std::int32_t i, const ChunkCursor& k) {
    return i < kSmPages ? space.pages[i] : first_page<Hooks>(p, k);
  };

  if (owner) {  // the first wave: one chunk each, its block read here
    if (left > 0) {
      put(front, first_page<Hooks>(p, front));
      pop_front();
    } else {
      put_end();
    }
  }
  // The share's block numbers into shared memory while the first wave flies, 64 chunks a round
  // trip at 64 (v14b read each part's next block after every copy: a later copy of any lane, all
  // lanes' in one instruction, waited for the last of those loads).
  {
    const std::int32_t n = count < static_cast<std::uint32_t>(kSmPages) ? static_cast<std::int32_t>(count) : kSmPages;
    ChunkCursor k = share.first;
    advance_chunks<Hooks>(p, k, lane);
    for (std::int32_t base = 0; base < n; base += 64) {
      std::int32_t pg[2];
      PMQA_UNROLL
      for (int u = 0; u < 2; ++u) {
        pg[u] = base + 32 * u + lane < n ? first_page<Hooks>(p, k) : 0;
        advance_chunks<Hooks>(p, k, 32);
      }
      PMQA_UNROLL
      for (int u = 0; u < 2; ++u)
        if (base + 32 * u + lane < n) space.pages[base + 32 * u + lane] = pg[u];
    }
    __syncwarp();
  }
  for (;;) {
    // Ready: a stage of the lane's ring can take a chunk (its other stages wait for the first
    // chunk to land, v11).
    bool ready = false;
    if (!ended) {
      if (!open) open = mbar_test(sh.full[0], 0);
      if (open && filled - freed >= kWgStages && mbar_test(space.empty[g][freed % kWgStages], (freed / kWgStages) & 1)) ++freed;
      ready = open && filled - freed < kWgStages;
    }
    const bool own = ready && left > 0;
    if (own) {
      put(front, page_of(at, front));
      pop_front();
    }
    // Lanes ready with their part used up take the front chunk of the part with most left, one
    // at a time (the same steps in every lane), or end.
    unsigned needy = warp32_ballot(ready && !own);
    bool stole = needy != 0;
    while (needy != 0) {
      const int t = lowest_lane(needy);
      needy &= needy - 1;
      int best = (left << 5) | lane;  // the most left, the highest lane on ties
      for (int d = 16; d > 0; d /= 2) {
        const int o = __shfl_xor(best, d, 32);
        best = o > best ? o : best;
      }
      const int v = best & 31;
      const bool none = (best >> 5) == 0 || Hooks::kTrySmFeedNoSteal;
      ChunkCursor k;
      k.b = __shfl(front.b, v, 32);
      k.c = __shfl(front.c, v, 32);
      k.chunks = __shfl(front.chunks, v, 32);
      k.keys = __shfl(front.keys, v, 32);
      const std::int32_t i = __shfl(at, v, 32);
      if (lane == t) {
        if (none) put_end();
        else put(k, page_of(i, k));
      }
      if (lane == v && !none) pop_front();
    }
    if (warp32_ballot(!ended) == 0) break;
    if (warp32_ballot(own) == 0 && !stole) producer_nap();
  }
}

template <class Hooks, int kRows>
__global__ void __launch_bounds__(kSmThreads<kRows>, 1)
    fused_wgmma_sm_kernel(LogitsParams p, const PMQA_GRID_CONSTANT KeyMap key_map) {
  constexpr int kGroups = kSmGroups<kRows>;
  constexpr int kHalves = kRows == 128 ? 2 : 1;
  constexpr int kWarps = kSmThreads<kRows> / 32;
  PMQA_SHARED_OBJECT(WgSmSpace<kRows>, space);
  const int g = static_cast<int>(threadIdx.x) / kWgThreads;  // kGroups: the producer warp
  const int tid = wg_thread(), warp = tid / 32, lane = tid % 32;
  const int cta_warp = static_cast<int>(threadIdx.x) / 32;
  Hooks::mark(WgMark::kEntry);
  prefetch_small_inputs(p, static_cast<int>(threadIdx.x));
  if (g == kGroups && lane == 0) {
    PMQA_UNROLL
    for (int j = 0; j < kGroups; ++j) {
      WgShared<kRows>& sh = align_shared(space.group[j]);
      PMQA_UNROLL
      for (int s = 0; s < kWgStages; ++s) {
        mbar_init(sh.full[s], 1);
        mbar_init(space.empty[j][s], kWgThreads / 32);
      }
    }
    prefetch_key_map(key_map);
  }
  mbar_init_fence();
  __syncthreads();
  // Warp 0 finds the SM's share; every other warp writes at most a few -inf tail pieces (with 132
  // CTAs, one unit per CTA left ~8 dependent pieces in each CTA's way: notes v13).
  if (cta_warp == 0) {
    const ChunkShare mine = find_share<Hooks>(p, blockIdx.x, gridDim.x);
    if (lane == 0) space.share = mine;
  } else {
    fill_dead_tails<Hooks>(p, blockIdx.x * (kWarps - 1) + (cta_warp - 1), gridDim.x * (kWarps - 1), lane, 32);
  }
  __syncthreads();
  const ChunkShare share = space.share;
  if (g == kGroups) {
    feed_groups<Hooks, kRows>(p, key_map, space, share);
    return;  // no barrier of the CTA follows
  }
  Hooks::mark(WgMark::kShare);

  // Warpgroup g's first chunk is the front of its part (the producer's first wave): its q rows
  // and sequence rows are read while that chunk flies.
  WgShared<kRows>& sh = align_shared(space.group[g]);
  const auto count = static_cast<std::uint32_t>(share.count);
  SequenceRows<kRows> seq{};
  std::int32_t q_b = -1;  // the sequence the q tile and seq hold
  if (share_bound(count, g + 1, kGroups) > share_bound(count, g, kGroups)) {
    ChunkCursor first = share.first;
    advance_chunks<Hooks>(p, first, static_cast<std::int32_t>(share_bound(count, g, kGroups)));
    load_sequence<Hooks, kRows>(p, first.b, sh, seq);
    WgmmaFp8::fence_shared_for_tensor_cores();
    q_b = first.b;
  }
  group_barrier(g);
  const WgmmaFp8::Tile keys0 = WgmmaFp8::tile(sh.keys[0]), q0 = WgmmaFp8::tile(sh.q);
  float acc[kHalves][WgmmaFp8::kAcc] = {};
  Hooks::mark(WgMark::kLoop);
  for (std::int32_t i = 0;; ++i) {
    const int s = static_cast<int>(i % kWgStages);
    mbar_wait(sh.full[s], static_cast<int>((i / kWgStages) & 1));
    const ChunkCursor cur = space.staged[g][s];
    if (cur.b < 0) break;  // the same in every thread of the warpgroup
    if (i < WgMark::kChunks) Hooks::mark(WgMark::landed(i));
    if (cur.b != q_b) {   // a new sequence: every warp is past the last chunk's wgmma first
      group_barrier(g);
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
    WgmmaFp8::wait_all();
    PMQA_UNROLL
    for (int h = 0; h < kHalves; ++h) WgmmaFp8::settle(acc[h]);
    const int r = lane >> 2;
    const float s_lo = sh.scales[s][16 * warp + r], s_hi = sh.scales[s][16 * warp + r + 8];
    __syncwarp();
    if (lane == 0) mbar_arrive(space.empty[g][s]);  // the warp is done with the stage
    if (warp32_all(s_lo > 0.0f && s_hi > 0.0f)) fold_chunk<Hooks, kRows, true>(p, cur, acc, seq, s_lo, s_hi);
    else fold_chunk<Hooks, kRows, false>(p, cur, acc, seq, s_lo, s_hi);
    if (i < WgMark::kChunks) Hooks::mark(WgMark::folded(i));
  }
  Hooks::mark(WgMark::kEnd);
  // Every copy the producer issued was waited for: the loop ends at the stage after the last one.
}

PMQA_KDEV_END
