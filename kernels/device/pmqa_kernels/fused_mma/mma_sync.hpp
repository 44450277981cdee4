// The fused path on NVIDIA tensor cores (mma.sync m16n8k16 on fp8 decoded to f16, fp32
// accumulate): variant "fused-mma". Same output contract as the portable fused kernel; the host
// executor runs it with the instructions emulated (arch/nv_mma_sync.hpp) at wave size 32.
//
// Structure (since 6dd044f: 0.0662 ms at the decode shape on the H200 against 0.1006 for a CTA
// walking 8 chunks in series; bench/results/notes.md has the designs it replaced and why):
// - A persistent grid: every warp takes an equal contiguous share of the launch's live chunks
//   (schedule/chunk_work.hpp) and streams them through its own ring of shared-memory stages (cp.async, two
//   chunks in flight while it computes on a third). Warps never wait for each other: the only
//   barriers are __syncwarp.
// - f16 tensor cores (mma.sync m16n8k16, fp32 accumulate) on fp8 decoded to f16, which is exact
//   (arch/fp8_to_f16.hpp; on sm_90 the fp8 mma.sync is itself lowered to f16 HMMA plus conversions).
// - Keys are M: for 16 keys the warp computes S^T = K Q^T, A = the keys, B = q^T per n-tile of 8
//   query rows. The launch's q rows (64 per group) live in registers as f16 B fragments, decoded
//   once per sequence; a 16-key tile's A fragments are four 128-bit shared loads and 32 decodes.
// - The contraction runs over d in a permuted order: lane (g, t) holds bytes [32t, 32t+32) of its
//   rows, f16 step j taking bytes 32t + 4j + [0, 4). A and B use the same order, so every product
//   is the same, and each lane's operands are two contiguous 16-byte loads per row.
// - Heads are reduced along the accumulator's columns: each lane folds w[h] * relu(s * S) of its
//   2 heads per n-tile into running sums for keys g and g+8; 2 shuffles finish a row. When every
//   scale of a chunk is > 0 the scale moves out of the relu and is applied once per row.
//
// One launch scores the rows of next_n values [mma_n_begin, mma_n_begin + mma_n_count), kRows =
// 32, 64 or 128 query rows (128: two groups of 64, their q reloaded per chunk from L1). The host
// API requires D = 128, H in {32, 64, 128}, block_stride % 4 == 0.
#pragma once

#include "pmqa_kernels/fused_mma/chunk_copy.hpp"
#include "pmqa_kernels/arch/nv_mma_sync.hpp"
#include "pmqa_kernels/fused_mma/tuning.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kMmaWarps = 4;
inline constexpr int kMmaThreads = kMmaWarps * NvMmaF16::kWarp;  // 128
inline constexpr int kMmaRingStages = 3;  // per warp: 2 chunks in flight while it computes on 1
// The persistent grid: 2 CTAs (8 warps) per SM, each thread up to 255 registers (q as f16 takes 128).
inline constexpr int kMmaCtasPerSm = 2;

// One CTA's shared memory: each warp's ring (99 KB in all; dynamic shared memory on GPUs).
struct MmaShared {
  ChunkStage ring[kMmaWarps][kMmaRingStages];
};

// The B fragments (q as f16) and weights of one group of up to 64 query rows, for one sequence.
// f16 step j of lane (g, t) takes bytes 32t + 4j + [0, 4) of a row: [0, 2) in B register 0, [2, 4)
// in register 1 (A likewise), so every row's 128 bytes are used once and each lane's bytes are
// contiguous (two 16-byte loads per row).
template <int kTiles>
struct QGroup {
  std::uint32_t b[kTiles][8][2];
  float w[kTiles][2];  // weights of rows 2t and 2t+1 of each n-tile
};

// Loads rows [64 * group, 64 * group + 8 * kTiles) of sequence b's launch rows.
template <class Hooks, int kTiles, bool kFnuz>
PMQA_DEV void load_q_group(const LogitsParams& p, std::int64_t b, int group, QGroup<kTiles>& q) {
  const int lane = static_cast<int>(threadIdx.x) % NvMmaF16::kWarp, g = lane >> 2, t = lane & 3;
  const int heads = static_cast<int>(p.heads);
  PMQA_UNROLL
  for (int nt = 0; nt < kTiles; ++nt) {
    const int m = 64 * group + NvMmaF16::kN * nt + g;  // B column g of the n-tile
    const std::int64_t n = p.mma_n_begin + m / heads;
    PMQA_UNROLL
    for (int half = 0; half < 2; ++half) {
      std::uint32_t w[4];
      load_words4(w, p.q + Hooks::q_offset(p, b, n, m % heads, 32 * t + 16 * half));
      PMQA_UNROLL
      for (int i = 0; i < 4; ++i) {
        q.b[nt][4 * half + i][0] = fp8x2_to_f16x2<kFnuz, 0>(w[i]);
        q.b[nt][4 * half + i][1] = fp8x2_to_f16x2<kFnuz, 1>(w[i]);
      }
    }
    PMQA_UNROLL
    for (int i = 0; i < 2; ++i) {
      const int r = 64 * group + NvMmaF16::kN * nt + 2 * t + i;  // C column 2t + i
      q.w[nt][i] = p.weights[(b * p.next_n + p.mma_n_begin + r / heads) * p.heads + r % heads];
    }
  }
}

// Writes one row's logits for keys g and g+8 of a 16-key tile: the lane's partial sums over its
// heads times `scale` (the keys' scales when they were left out of the sums), finished across the
// 4 lanes of the row group.
template <class Hooks>
PMQA_DEV void flush_rows(const LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t key0, float (&rows)[2],
                         const float (&scale)[2]) {
  const int lane = static_cast<int>(threadIdx.x) % NvMmaF16::kWarp;
  const std::int64_t valid = Hooks::valid_keys(p, b, n);
  PMQA_UNROLL
  for (int half = 0; half < 2; ++half) {
    float v = Hooks::lane_partial(rows[half], threadIdx.x);
    v += __shfl_xor(v, 1, NvMmaF16::kWarp);
    v += __shfl_xor(v, 2, NvMmaF16::kWarp);
    const std::int64_t j = key0 + (lane >> 2) + 8 * half;
    if ((lane & 3) == 0 && j < p.max_model_len)
      p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = j < valid ? v * scale[half] : minus_infinity();
    rows[half] = 0.0f;
  }
}

// Scores the 16 keys [16 * mt, 16 * mt + 16) of a stage against one group of q rows, folding each
// row's heads into `rows` (keys g and g+8) and writing a row once its last n-tile is in.
// kPositive: every key scale of the chunk is > 0, so relu(s * x) = s * relu(x) and the scale is
// applied once per row at the end (2 instructions per accumulator instead of 4).
template <class Hooks, bool kFnuz, int kTiles, bool kPositive>
PMQA_DEV void score_tile(const LogitsParams& p, const ChunkCursor& k, const ChunkStage& st, int mt, int group,
                         const QGroup<kTiles>& q, float (&rows)[2]) {
  const int lane = static_cast<int>(threadIdx.x) % NvMmaF16::kWarp, g = lane >> 2, t = lane & 3;
  // n-tiles per row n: H/8 = 4, 8 or 16 (the host API takes H in {32, 64, 128}), so a mask and a
  // shift (a runtime division here cost ~20 instructions per n-tile).
  const int row_shift = p.heads == 32 ? 2 : p.heads == 64 ? 3 : 4;
  const int row_mask = (1 << row_shift) - 1;
  // Keys g and g+8 of the tile, bytes [32t, 32t+32): eight words each.
  std::uint32_t lo[2][4], hi[2][4];
  const std::uint8_t* keys = st.keys[0].b;
  PMQA_UNROLL
  for (int half = 0; half < 2; ++half) {
    load_words4(lo[half], keys + stage_segment(16 * mt + g, 2 * t + half));
    load_words4(hi[half], keys + stage_segment(16 * mt + g + 8, 2 * t + half));
  }
  float acc[kTiles][4] = {};
  PMQA_UNROLL
  for (int j = 0; j < 8; ++j) {
    const std::uint32_t wl = lo[j >> 2][j & 3], wh = hi[j >> 2][j & 3];
    const std::uint32_t a[4] = {fp8x2_to_f16x2<kFnuz, 0>(wl), fp8x2_to_f16x2<kFnuz, 0>(wh), fp8x2_to_f16x2<kFnuz, 1>(wl),
                                fp8x2_to_f16x2<kFnuz, 1>(wh)};
    PMQA_UNROLL
    for (int nt = 0; nt < kTiles; ++nt) NvMmaF16::mma(acc[nt], a, q.b[nt][j]);
  }
  const float s_lo = st.scales[16 * mt + g], s_hi = st.scales[16 * mt + g + 8];
  const float scale[2] = {kPositive ? s_lo : 1.0f, kPositive ? s_hi : 1.0f};
  const float in_lo = kPositive ? 1.0f : s_lo, in_hi = kPositive ? 1.0f : s_hi;
  PMQA_UNROLL
  for (int nt = 0; nt < kTiles; ++nt) {
    if constexpr (kPositive) {
      // acc: keys (g | g+8) x rows (nt*8 + 2t, +1)
      rows[0] += q.w[nt][0] * Hooks::relu(acc[nt][0]) + q.w[nt][1] * Hooks::relu(acc[nt][1]);
      rows[1] += q.w[nt][0] * Hooks::relu(acc[nt][2]) + q.w[nt][1] * Hooks::relu(acc[nt][3]);
    } else {
      rows[0] += q.w[nt][0] * Hooks::relu(in_lo * acc[nt][0]) + q.w[nt][1] * Hooks::relu(in_lo * acc[nt][1]);
      rows[1] += q.w[nt][0] * Hooks::relu(in_hi * acc[nt][2]) + q.w[nt][1] * Hooks::relu(in_hi * acc[nt][3]);
    }
    const int tile = group * kTiles + nt;
    if (((tile + 1) & row_mask) == 0)  // row n done
      flush_rows<Hooks>(p, k.b, p.mma_n_begin + (tile >> row_shift), k.c * kChunkKeys + NvMmaF16::kM * mt, rows, scale);
  }
}

// True on every lane when every key of the stage has a scale > 0 (NaN and -0 are not).
PMQA_DEV bool all_scales_positive(const ChunkStage& st) {
  const int lane = static_cast<int>(threadIdx.x) % NvMmaF16::kWarp;
  return warp32_all(st.scales[lane] > 0.0f && st.scales[lane + 32] > 0.0f);
}

// Scores one chunk held in a stage: all launch rows x its 64 keys, a 16-key tile at a time (one
// tile's A fragments and accumulators live at once). One group (up to 64 rows): q stays in
// registers across the chunks of a sequence. Two groups (128 rows): q is reloaded from L1 per
// group, or per tile and group when H = 128 (a row's heads span both groups).
template <class Hooks, bool kFnuz, int kRows, bool kPositive>
PMQA_DEV void score_chunk_as(const LogitsParams& p, const ChunkCursor& k, const ChunkStage& st,
                             QGroup<(kRows < 64 ? kRows : 64) / 8>& q, std::int64_t& q_b) {
  constexpr int kGroups = kRows <= 64 ? 1 : kRows / 64;
  constexpr int kTiles = (kRows < 64 ? kRows : 64) / NvMmaF16::kN;
  constexpr int kKeyTiles = kChunkKeys / NvMmaF16::kM;
  if constexpr (kGroups == 1) {
    if (q_b != k.b) {
      load_q_group<Hooks, kTiles, kFnuz>(p, k.b, 0, q);
      q_b = k.b;
    }
#if defined(PMQA_DEVICE_BUILD)
#pragma unroll 1
#endif
    for (int mt = 0; mt < kKeyTiles; ++mt) {
      float rows[2] = {0.0f, 0.0f};
      score_tile<Hooks, kFnuz, kTiles, kPositive>(p, k, st, mt, 0, q, rows);
    }
  } else if (p.heads <= 64) {  // a row's heads lie in one group: group by group
    PMQA_UNROLL
    for (int group = 0; group < kGroups; ++group) {
      load_q_group<Hooks, kTiles, kFnuz>(p, k.b, group, q);
#if defined(PMQA_DEVICE_BUILD)
#pragma unroll 1
#endif
      for (int mt = 0; mt < kKeyTiles; ++mt) {
        float rows[2] = {0.0f, 0.0f};
        score_tile<Hooks, kFnuz, kTiles, kPositive>(p, k, st, mt, group, q, rows);
      }
    }
    q_b = -1;  // q holds the last group only
  } else {  // H = 128: every row spans both groups, so a tile takes both (q reloaded per tile, L1)
#if defined(PMQA_DEVICE_BUILD)
#pragma unroll 1
#endif
    for (int mt = 0; mt < kKeyTiles; ++mt) {
      float rows[2] = {0.0f, 0.0f};
      PMQA_UNROLL
      for (int group = 0; group < kGroups; ++group) {
        load_q_group<Hooks, kTiles, kFnuz>(p, k.b, group, q);
        score_tile<Hooks, kFnuz, kTiles, kPositive>(p, k, st, mt, group, q, rows);
      }
    }
    q_b = -1;
  }
}

template <class Hooks, bool kFnuz, int kRows>
PMQA_DEV void score_chunk(const LogitsParams& p, const ChunkCursor& k, const ChunkStage& st,
                          QGroup<(kRows < 64 ? kRows : 64) / 8>& q, std::int64_t& q_b) {
  if (all_scales_positive(st)) score_chunk_as<Hooks, kFnuz, kRows, true>(p, k, st, q, q_b);
  else score_chunk_as<Hooks, kFnuz, kRows, false>(p, k, st, q, q_b);
}

// Config: the tunables (fused_mma/tuning.hpp; MmaSyncShipped in production).
template <class Hooks, class Config, bool kFnuz, int kRows>
__global__ void __launch_bounds__(kMmaThreads, kMmaCtasPerSm) fused_mma_kernel(LogitsParams p) {
  static_assert(kRows == 32 || kRows == 64 || kRows == 128, "fused-mma scores 32, 64 or 128 query rows per launch");
  constexpr int kTiles = (kRows < 64 ? kRows : 64) / NvMmaF16::kN;
  PMQA_SHARED_OBJECT(MmaShared, shared);
  const int warp = static_cast<int>(threadIdx.x) / NvMmaF16::kWarp;
  ChunkStage(&ring)[kMmaRingStages] = shared.ring[warp];
  const std::uint32_t warps = gridDim.x * kMmaWarps;
  const std::uint32_t me = blockIdx.x * kMmaWarps + static_cast<std::uint32_t>(warp);

  // This warp's share of the live chunks (MmaSyncShipped: equal in chunks).
  const ChunkShare share = find_share<Hooks, Config::kSwitchWeight>(p, me, warps);
  const auto count = static_cast<std::int32_t>(share.count);  // < 2^31 (schedule/chunk_work.hpp)
  ChunkCursor issue = share.first;
  ChunkCursor compute = issue;
  std::int64_t page = count > 0 ? first_page<Hooks>(p, issue) : 0;  // read one chunk ahead of its copies
  // Copies of chunk i go to stage i % kMmaRingStages; one commit group per chunk (empty past the end).
  auto issue_next = [&](std::int32_t i) {
    if (i < count) {
      issue_chunk_copy<Hooks>(p, issue, page, ring[i % kMmaRingStages]);
      next_chunk<Hooks>(p, issue);
      if (i + 1 < count) page = first_page<Hooks>(p, issue);
    }
    async_commit();
  };
  for (int i = 0; i < kMmaRingStages - 1; ++i) issue_next(i);

  QGroup<kTiles> q;
  std::int64_t q_b = -1;  // the sequence q holds
  for (std::int32_t i = 0; i < count; ++i) {
    issue_next(i + kMmaRingStages - 1);  // into the stage chunk i-1 used (every lane is past it)
    async_wait<kMmaRingStages - 1>();    // this lane's copies of chunk i ...
    Hooks::warp_barrier();           // ... and every lane's
    score_chunk<Hooks, kFnuz, kRows>(p, compute, ring[i % kMmaRingStages], q, q_b);
    Hooks::warp_barrier();  // the stage may be refilled only once every lane is done with it
    next_chunk<Hooks>(p, compute);
  }
  async_wait<0>();  // no copy may outlive the CTA's shared memory
  fill_dead_tails<Hooks>(p, me, warps, static_cast<int>(threadIdx.x) % NvMmaF16::kWarp, NvMmaF16::kWarp);
}

PMQA_KDEV_END
