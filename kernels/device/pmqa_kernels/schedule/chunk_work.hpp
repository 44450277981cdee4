// fused-mma's work split: every unit of a persistent grid (a warp of the mma.sync kernel, a
// warpgroup of the wgmma kernel) takes an equal share of the launch's live chunks (64 keys of one sequence holding at least one key some row reads), numbered
// sequence by sequence. A warp's share is contiguous, so it usually stays on one sequence (its q
// stays in registers) and crosses into the next at most a few times; a sequence's chunks spread
// over as many warps as the grid has, so one long sequence does not leave the GPU idle and many
// short ones do not pay a per-sequence launch tail. Warp-level only: no CTA barrier anywhere.
#pragma once

#include "pmqa_kernels/common/faults.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kChunkKeys = 64;
inline constexpr int kChunkWarp = 32;  // fused-mma's warps (NVIDIA)

// The live keys of a sequence whose longest E_r over the launch's rows is `longest` (negative:
// none): at most max_model_len, below 2^31 (context lengths are 32-bit).
PMQA_DEV std::int32_t live_from_longest(const LogitsParams& p, std::int64_t longest) {
  return static_cast<std::int32_t>(longest < 0 ? 0 : longest < p.max_model_len ? longest : p.max_model_len);
}
// Keys of sequence b that exist for the launch's rows.
template <class Hooks>
PMQA_DEV std::int32_t live_keys(const LogitsParams& p, std::int64_t b) {
  return live_from_longest(p, longest_row<Hooks>(p, b, p.mma_n_begin, p.mma_n_begin + p.mma_n_count));
}

PMQA_DEV std::int32_t chunks_of(std::int32_t keys) { return keys > 0 ? (keys + kChunkKeys - 1) / kChunkKeys : 0; }

// Chunk c of sequence b, which has `chunks` live chunks (`keys` live keys). 32-bit throughout:
// the host API bounds a launch's output cells below 2^36 (run_path.hpp), so its live chunks, and
// every chunk number below, stay under 2^31 (64-bit cursors cost fused-mma's prologue and loop
// twice the instructions: the 64-bit share and seek were 525 of the wgmma kernel's 1,240 prologue
// instructions a warp).
struct ChunkCursor {
  std::int32_t b = 0, c = 0, chunks = 0, keys = 0;
};

// A unit's share of the launch's live chunks (numbered sequence by sequence): `count` chunks
// from `first`.
struct ChunkShare {
  ChunkCursor first;
  std::uint32_t count = 0;
};

// floor(total * unit / units) in 32 bits: total = q * units + r, and r * unit < units^2 <= 2^32
// (the host keeps units <= kMaxShareUnits).
inline constexpr std::uint32_t kMaxShareUnits = 65536;
PMQA_DEV std::uint32_t share_bound(std::uint32_t total, std::uint32_t unit, std::uint32_t units) {
  const std::uint32_t q = total / units, r = total % units;
  return q * unit + r * unit / units;
}

// Sequences per lane in a group of find_share: their context-length loads are in flight together.
inline constexpr int kSharePerLane = 4;
inline constexpr int kShareGroup = kChunkWarp * kSharePerLane;

// The live chunks of a group of 128 sequences, g + 32u + lane in lane `lane`'s c[u]: each load
// instruction of the warp reads one 128-byte line of context lengths (every CTA of the grid reads
// the same lines at once, so requests count more than bytes: with 4 contiguous sequences per lane,
// 8 line requests per warp and pass, the share was known at 3.07 us after entry instead of 2.56 on
// the H200), and scanned over the lanes per u (incl[u]; tot[u] the 32 sequences' sum).
// With a switch weight kW > 0 (fused_mma/tuning.hpp says why the wgmma kernel uses 3) the counts are
// weighted: a live sequence counts kW chunks more (its switch), and live_* count the live sequences
// (for the real offsets).
struct ShareGroup {
  std::uint32_t c[kSharePerLane], incl[kSharePerLane], tot[kSharePerLane];
  std::uint32_t sum = 0;
  std::uint32_t live_incl[kSharePerLane], live_tot[kSharePerLane];
  std::uint32_t live_sum = 0;
};
// Inclusive scan of x over the warp's lanes.
PMQA_DEV std::uint32_t lane_scan(std::uint32_t x, int lane) {
  for (int d = 1; d < kChunkWarp; d *= 2) {
    const std::uint32_t v = __shfl_up(x, static_cast<unsigned>(d), kChunkWarp);
    if (lane >= d) x += v;
  }
  return x;
}
// The 4 context-length loads are independent and unconditional (sequences past the batch read
// the last one and count 0), so they are in flight together: behind a branch or a loop over the
// launch's rows each, they went out one after another, a DRAM round trip each (the share was
// known 0.5 us later on the H200).
template <class Hooks, std::uint32_t kW>
PMQA_DEV ShareGroup load_share_group(const LogitsParams& p, std::int64_t g, int lane) {
  ShareGroup s{};
  std::int64_t keys[kSharePerLane];
  const std::int64_t last = p.mma_n_begin + p.mma_n_count - 1;  // the launch's last row
  PMQA_UNROLL
  for (int u = 0; u < kSharePerLane; ++u) {
    const std::int64_t b = g + kChunkWarp * u + lane;
    keys[u] = Hooks::valid_keys(p, b < p.batch ? b : p.batch - 1, last);
  }
  for (std::int64_t n = p.mma_n_begin; n < last; ++n) {  // the longest E_r over the launch's rows
    PMQA_UNROLL
    for (int u = 0; u < kSharePerLane; ++u) {
      const std::int64_t b = g + kChunkWarp * u + lane;
      const std::int64_t e = Hooks::valid_keys(p, b < p.batch ? b : p.batch - 1, n);
      keys[u] = e > keys[u] ? e : keys[u];
    }
  }
  PMQA_UNROLL
  for (int u = 0; u < kSharePerLane; ++u)
    s.c[u] = g + kChunkWarp * u + lane < p.batch ? static_cast<std::uint32_t>(chunks_of(live_from_longest(p, keys[u]))) : 0u;
  PMQA_UNROLL
  for (int u = 0; u < kSharePerLane; ++u) {
    if constexpr (kW > 0) {
      const std::uint32_t live = s.c[u] > 0 ? 1u : 0u;
      s.c[u] += kW * live;
      s.live_incl[u] = lane_scan(live, lane);
      s.live_tot[u] = __shfl(s.live_incl[u], kChunkWarp - 1, kChunkWarp);
      s.live_sum += s.live_tot[u];
    }
    s.incl[u] = lane_scan(s.c[u], lane);
    s.tot[u] = __shfl(s.incl[u], kChunkWarp - 1, kChunkWarp);
    s.sum += s.tot[u];
  }
  return s;
}

// Where positions of the launch's (weighted) chunks fall: the live chunk there (the sequence's
// first when the position is on its switch weight; b = batch past the end) and the live chunks
// before it.
struct SharePoint {
  ChunkCursor at;
  std::uint32_t before = 0;
};
// Position v in group g, which holds it; before / before_live count the (weighted) chunks and the
// live sequences before g. cursor = false finds the count before v alone (a part's end): no
// context length to read.
template <class Hooks, std::uint32_t kW>
PMQA_DEV SharePoint locate_in_group(const LogitsParams& p, const ShareGroup& grp, std::int64_t g, std::uint32_t v,
                                    std::uint32_t before, std::uint32_t before_live, bool cursor) {
  // The row u of the group holding v (selected without indexing the arrays at run time, which
  // would put them in local memory), then its first lane past v.
  int row = kSharePerLane;
  std::uint32_t c = 0, incl = 0, live_incl = 0;
  PMQA_UNROLL
  for (int u = 0; u < kSharePerLane; ++u) {
    if (row == kSharePerLane && before + grp.tot[u] > v) {
      row = u;
      c = grp.c[u];
      incl = grp.incl[u];
      live_incl = grp.live_incl[u];
    } else if (row == kSharePerLane) {
      before += grp.tot[u];
      before_live += grp.live_tot[u];
    }
  }
  const int holder = warp32_first(before + incl > v);
  const std::uint32_t hc = __shfl(c, holder, kChunkWarp);                      // > 0: the holder is live
  const std::uint32_t start = before + __shfl(incl, holder, kChunkWarp) - hc;  // its first position
  std::uint32_t into = v - start;  // its chunk at v (the first while v is on its switch weight)
  if constexpr (kW > 0) into = into < kW ? 0u : into - kW;
  SharePoint pt;
  pt.at.b = static_cast<std::int32_t>(g + kChunkWarp * row + holder);
  pt.at.chunks = static_cast<std::int32_t>(hc - kW);
  pt.at.c = static_cast<std::int32_t>(into);
  if (cursor) pt.at.keys = live_keys<Hooks>(p, pt.at.b);
  // Live chunks before it: positions before the sequence less the switches they hold.
  pt.before = start - kW * (before_live + __shfl(live_incl, holder, kChunkWarp) - (kW > 0 ? 1u : 0u)) + into;
  return pt;
}
// Positions v[0..kN) in one pass over the groups (a batch of up to 128 sequences is one group,
// still loaded in grp): pt[0] gets its cursor (a part's first chunk), the others only their count.
// One pass, not a search per position: the prologue's code runs cold, its instructions fetched
// behind the first key copies, and a second search for a part's end cost ~0.5 us before the first
// copies (the share known 2.96 us after entry against 2.71 with one pass, on the H200).
template <class Hooks, std::uint32_t kW, int kN>
PMQA_DEV void find_points(const LogitsParams& p, ShareGroup& grp, const std::uint32_t (&v)[kN], SharePoint (&pt)[kN],
                          int lane) {
  std::uint32_t before[kN], before_live[kN];
  bool found[kN];
  PMQA_UNROLL
  for (int i = 0; i < kN; ++i) {
    before[i] = before_live[i] = 0;
    found[i] = false;
    pt[i].at.b = static_cast<std::int32_t>(p.batch);
  }
  for (std::int64_t g = 0; g < p.batch; g += kShareGroup) {
    if (p.batch > kShareGroup) grp = load_share_group<Hooks, kW>(p, g, lane);  // else still loaded
    bool all = true;
    PMQA_UNROLL
    for (int i = 0; i < kN; ++i) {
      if (found[i]) continue;
      if (before[i] + grp.sum <= v[i]) {
        before[i] += grp.sum;
        before_live[i] += grp.live_sum;
        all = false;
      } else {
        pt[i] = locate_in_group<Hooks, kW>(p, grp, g, v[i], before[i], before_live[i], i == 0);
        found[i] = true;
      }
    }
    if (all) return;
  }
  PMQA_UNROLL
  for (int i = 0; i < kN; ++i)
    if (!found[i]) pt[i].before = before[i] - kW * before_live[i];
}

// Unit `unit` of `units`' share: a contiguous part of the launch's live chunks, computed alike by
// every lane of the calling warp. Up to 128 sequences take one memory round trip and no 64-bit
// arithmetic; longer batches read their context lengths twice (the count, then the seek).
// kW = 0: the parts are equal in chunks. kW > 0 (fused_mma/tuning.hpp): equal in chunks plus kW per
// sequence switch, so a unit whose part starts a new sequence (its q tile reloaded, ~2 us on the
// H200) gets kW chunks fewer; the part's end is then located too, in the same pass.
template <class Hooks, std::uint32_t kW>
PMQA_DEV ChunkShare find_share(const LogitsParams& p, std::uint32_t unit, std::uint32_t units) {
  const int lane = static_cast<int>(threadIdx.x) % kChunkWarp;
  ShareGroup grp{};
  std::uint32_t total = 0;
  for (std::int64_t g = 0; g < p.batch; g += kShareGroup) {
    grp = load_share_group<Hooks, kW>(p, g, lane);
    total += grp.sum;
  }
  ChunkShare share;
  const std::uint32_t begin = share_bound(total, unit, units), end = share_bound(total, unit + 1, units);
  share.first.b = static_cast<std::int32_t>(p.batch);  // past the last sequence: nothing to do
  if (end == begin) return share;
  if constexpr (kW == 0) {
    SharePoint first[1];
    find_points<Hooks, kW, 1>(p, grp, {begin}, first, lane);
    share.first = first[0].at;
    share.count = end - begin;
  } else {
    SharePoint ends[2];
    find_points<Hooks, kW, 2>(p, grp, {begin, end}, ends, lane);
    share.count = ends[1].before - ends[0].before;
    if (share.count > 0) share.first = ends[0].at;
  }
  return share;
}

// The next live chunk (sequences without live keys are skipped).
template <class Hooks>
PMQA_DEV void next_chunk(const LogitsParams& p, ChunkCursor& k) {
  if (++k.c < k.chunks) return;
  k.c = 0;
  k.chunks = 0;
  while (k.chunks == 0 && ++k.b < p.batch) {
    k.keys = live_keys<Hooks>(p, k.b);
    k.chunks = chunks_of(k.keys);
  }
}

// The -inf part of the output no live chunk covers, as contiguous row tails: each launch row's
// cells from its sequence's last live chunk to max_model_len, cut into pieces of kTailPiece
// cells, piece i going to unit i % units (a warp of fused-mma's mma.sync kernel, a warpgroup of
// its wgmma kernel), `threads` threads of a unit storing consecutive cells. The wgmma kernel runs
// it before its main loop, where the stores overlap the first copies. 32-bit, like the cursors
// (rows * pieces < 2^36 / 1024); short code matters as much as few instructions here: it runs
// once, cold, with its instructions fetched behind the first key copies (the prologue drew 40 %
// of the wgmma kernel's stall samples on the H200, half of them waiting for instructions).
inline constexpr int kTailPiece = 1024;
template <class Hooks>
PMQA_DEV void fill_dead_tails(const LogitsParams& p, std::uint32_t unit, std::uint32_t units, int thread, int threads) {
  const auto pieces = static_cast<std::uint32_t>((p.max_model_len + kTailPiece - 1) / kTailPiece);
  const auto count = static_cast<std::uint32_t>(p.mma_n_count);
  const std::uint32_t items = static_cast<std::uint32_t>(p.batch) * count * pieces;
  for (std::uint32_t item = unit; item < items; item += units) {
    const std::uint32_t row = item / pieces, piece = item - row * pieces;
    const std::uint32_t b = row / count, n = static_cast<std::uint32_t>(p.mma_n_begin) + (row - b * count);
    const std::int32_t dead = chunks_of(live_keys<Hooks>(p, b)) * kChunkKeys;
    const std::int64_t first = static_cast<std::int64_t>(piece) * kTailPiece;
    const std::int64_t end = first + kTailPiece < p.max_model_len ? first + kTailPiece : p.max_model_len;
    const std::int64_t r = static_cast<std::int64_t>(b) * p.next_n + n;
    for (std::int64_t j = (first > dead ? first : dead) + thread; j < end; j += threads)
      p.out[Hooks::out_offset(r, p.out_row_stride, j)] = minus_infinity();
  }
}

PMQA_KDEV_END
