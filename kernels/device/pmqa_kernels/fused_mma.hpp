// The fused path on NVIDIA tensor cores (fp8 mma.sync m16n8k32, fp32 accumulate): variant
// "fused-mma". Same output contract as the portable fused kernel; the host executor runs it with
// the instructions emulated (mma_nv.hpp) at wave size 32.
//
// Structure (v4; bench/results/fused-mma-notes.md has the versions before it and why they were slow):
// - A persistent grid: every warp takes an equal contiguous share of the launch's live chunks
//   (chunk_work.hpp) and streams them through its own ring of shared-memory stages (cp.async, two
//   chunks in flight while it computes on a third). Warps never wait for each other: the only
//   barriers are __syncwarp.
// - Keys are M: for 16 keys the warp computes S^T = K Q^T, A = the keys' bytes [16 x 128],
//   B = q^T per n-tile of 8 query rows. The launch's q rows (64 per group) live in registers as
//   B fragments, loaded when the warp reaches a new sequence; the A fragments of a 16-key tile are
//   four 128-bit shared loads.
// - The contraction runs over d in a permuted order: lane (g, t) holds bytes [32t, 32t+32) of its
//   rows, k-step ks taking bytes 32t + 8ks + [0, 8). A and B use the same order, so every product
//   is the same, and each lane's operands are two contiguous 16-byte loads per row.
// - Heads are reduced along the accumulator's columns: each lane folds w[h] * relu(s * S) of its
//   2 heads per n-tile into running sums for keys g and g+8; 2 shuffles finish a row.
//
// One launch scores the rows of next_n values [mma_n_begin, mma_n_begin + mma_n_count), kRows =
// 32, 64 or 128 query rows (128: two groups of 64, their q reloaded per chunk from L1). The host
// API requires D = 128, H in {32, 64, 128}, block_stride % 4 == 0.
#pragma once

#include "pmqa_kernels/chunk_copy.hpp"
#include "pmqa_kernels/fnuz_to_ocp.hpp"
#include "pmqa_kernels/mma_nv.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kMmaWarps = 4;
inline constexpr int kMmaThreads = kMmaWarps * NvMma::kWarp;  // 128
inline constexpr int kMmaRingStages = 3;  // per warp: 2 chunks in flight, 1 computed on
inline constexpr int kMmaCtasPerSm = 2;                      // the persistent grid: this many CTAs per SM

// One CTA's shared memory: each warp's ring (99 KB in all; dynamic shared memory on GPUs).
struct MmaShared {
  ChunkStage ring[kMmaWarps][kMmaRingStages];
};

// The B fragments (q) and weights of one group of up to 64 query rows, for one sequence.
template <int kTiles, bool kFnuz>
struct QGroup {
  std::uint32_t b[kTiles][4][2];
  std::uint32_t bc[kFnuz ? kTiles : 1][4][2];  // FNUZ: the correction operand (fnuz_to_ocp.hpp)
  float w[kTiles][2];                           // weights of rows 2t and 2t+1 of each n-tile
};

// Loads rows [64 * group, 64 * group + 8 * kTiles) of sequence b's launch rows.
template <class Hooks, int kTiles, bool kFnuz>
PMQA_DEV void load_q_group(const LogitsParams& p, std::int64_t b, int group, QGroup<kTiles, kFnuz>& q) {
  const int lane = static_cast<int>(threadIdx.x) % NvMma::kWarp, g = lane >> 2, t = lane & 3;
  const int heads = static_cast<int>(p.heads);
  PMQA_UNROLL
  for (int nt = 0; nt < kTiles; ++nt) {
    const int m = 64 * group + NvMma::kN * nt + g;  // B column g of the n-tile
    const std::int64_t n = p.mma_n_begin + m / heads;
    PMQA_UNROLL
    for (int half = 0; half < 2; ++half) {
      std::uint32_t w[4];
      load_words4(w, p.q + Hooks::q_offset(p, b, n, m % heads, 32 * t + 16 * half));
      PMQA_UNROLL
      for (int i = 0; i < 4; ++i) {
        std::uint32_t main = w[i], corr = 0;
        if constexpr (kFnuz) {
          const OcpPair pair = fnuz_to_ocp4(w[i]);
          main = pair.main;
          corr = pair.corr;
          q.bc[nt][2 * half + (i >> 1)][i & 1] = corr;
        }
        q.b[nt][2 * half + (i >> 1)][i & 1] = main;  // k-step 2*half + i/2, register i%2
      }
    }
    PMQA_UNROLL
    for (int i = 0; i < 2; ++i) {
      const int r = 64 * group + NvMma::kN * nt + 2 * t + i;  // C column 2t + i
      q.w[nt][i] = p.weights[(b * p.next_n + p.mma_n_begin + r / heads) * p.heads + r % heads];
    }
  }
}

// A fragments of the 16 keys [16 * mt, 16 * mt + 16) of a stage: rows g and g+8, bytes [32t, 32t+32).
template <bool kFnuz>
PMQA_DEV void load_key_tile(const ChunkStage& st, int mt, std::uint32_t (&a)[4][4], std::uint32_t (&ac)[4][4]) {
  const int lane = static_cast<int>(threadIdx.x) % NvMma::kWarp, g = lane >> 2, t = lane & 3;
  PMQA_UNROLL
  for (int hi = 0; hi < 2; ++hi) {
    const int r = 16 * mt + g + 8 * hi;
    PMQA_UNROLL
    for (int half = 0; half < 2; ++half) {
      std::uint32_t w[4];
      load_words4(w, st.keys[0].b + stage_segment(r, 2 * t + half));
      PMQA_UNROLL
      for (int i = 0; i < 4; ++i) {
        // word i: k-step 2*half + i/2; A register hi + 2*(i%2) (rows g | g+8, k-halves 0 | 1)
        std::uint32_t main = w[i], corr = 0;
        if constexpr (kFnuz) {
          const OcpPair pair = fnuz_to_ocp4(w[i]);
          main = pair.main;
          corr = pair.corr;
        }
        a[2 * half + (i >> 1)][hi + 2 * (i & 1)] = main;
        ac[2 * half + (i >> 1)][hi + 2 * (i & 1)] = corr;
      }
    }
  }
}

// Writes one row's logits for keys g and g+8 of a 16-key tile: the lane's partial sums over its
// heads, finished across the 4 lanes of the row group.
template <class Hooks>
PMQA_DEV void flush_rows(const LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t key0, float (&rows)[2]) {
  const int lane = static_cast<int>(threadIdx.x) % NvMma::kWarp;
  const std::int64_t valid = Hooks::valid_keys(p, b, n);
  PMQA_UNROLL
  for (int half = 0; half < 2; ++half) {
    float v = Hooks::lane_partial(rows[half], threadIdx.x);
    v += __shfl_xor(v, 1, NvMma::kWarp);
    v += __shfl_xor(v, 2, NvMma::kWarp);
    const std::int64_t j = key0 + (lane >> 2) + 8 * half;
    if ((lane & 3) == 0 && j < p.max_model_len)
      p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = j < valid ? v : minus_infinity();
    rows[half] = 0.0f;
  }
}

PMQA_DEV float __uint_as_float_portable(std::uint32_t u) { return bits_to_float(u & 0x3F7FFFFFu); }

// Scores the 16 keys [16 * mt, 16 * mt + 16) of a stage against one group of q rows, folding each
// row's heads into `rows` (keys g and g+8) and writing a row once its last n-tile is in.
template <class Hooks, bool kFnuz, int kTiles>
PMQA_DEV void score_tile(const LogitsParams& p, const ChunkCursor& k, const ChunkStage& st, int mt, int group,
                         const QGroup<kTiles, kFnuz>& q, float (&rows)[2]) {
  const int lane = static_cast<int>(threadIdx.x) % NvMma::kWarp, g = lane >> 2;
  const int tiles_per_n = static_cast<int>(p.heads) / NvMma::kN;
  // FNUZ bytes enter the tensor cores doubled (fnuz_to_ocp.hpp): 1/2 per operand.
  const float scale_factor = kFnuz ? 0.25f : 1.0f;
  std::uint32_t a[4][4], ac[4][4];
  load_key_tile<kFnuz>(st, mt, a, ac);
  float acc[kTiles][4] = {};
  PMQA_UNROLL
  for (int ks = 0; ks < 4; ++ks) {
    PMQA_UNROLL
    for (int nt = 0; nt < kTiles; ++nt) {
      if constexpr (Hooks::kSkipMma) {
        acc[nt][0] += __uint_as_float_portable(q.b[nt][ks][0] ^ a[ks][0]);  // keep the loads live
        continue;
      }
      NvMma::mma(acc[nt], a[ks], q.b[nt][ks]);
      if constexpr (kFnuz) {  // the exact remainder of the +-240 codes
        NvMma::mma(acc[nt], ac[ks], q.b[nt][ks]);
        NvMma::mma(acc[nt], a[ks], q.bc[nt][ks]);
        NvMma::mma(acc[nt], ac[ks], q.bc[nt][ks]);
      }
    }
  }
  const float s_lo = st.scales[16 * mt + g] * scale_factor, s_hi = st.scales[16 * mt + g + 8] * scale_factor;
  PMQA_UNROLL
  for (int nt = 0; nt < kTiles; ++nt) {
    if constexpr (Hooks::kSkipEpilogue) {
      rows[0] += acc[nt][0] + acc[nt][1] + acc[nt][2] + acc[nt][3];  // keep the mma live
    } else {
      // acc: keys (g | g+8) x rows (nt*8 + 2t, +1)
      rows[0] += q.w[nt][0] * Hooks::relu(s_lo * acc[nt][0]) + q.w[nt][1] * Hooks::relu(s_lo * acc[nt][1]);
      rows[1] += q.w[nt][0] * Hooks::relu(s_hi * acc[nt][2]) + q.w[nt][1] * Hooks::relu(s_hi * acc[nt][3]);
    }
    const int tile = group * kTiles + nt;
    if ((tile + 1) % tiles_per_n == 0)  // row n done
      flush_rows<Hooks>(p, k.b, p.mma_n_begin + tile / tiles_per_n, k.c * kChunkKeys + NvMma::kM * mt, rows);
  }
}

// Scores one chunk held in a stage: all launch rows x its 64 keys, a 16-key tile at a time (one
// tile's A fragments and accumulators live at once). One group (up to 64 rows): q stays in
// registers across the chunks of a sequence. Two groups (128 rows): q is reloaded from L1 per
// group, or per tile and group when H = 128 (a row's heads span both groups).
template <class Hooks, bool kFnuz, int kRows>
PMQA_DEV void score_chunk(const LogitsParams& p, const ChunkCursor& k, const ChunkStage& st,
                          QGroup<(kRows < 64 ? kRows : 64) / 8, kFnuz>& q, std::int64_t& q_b) {
  constexpr int kGroups = kRows <= 64 ? 1 : kRows / 64;
  constexpr int kTiles = (kRows < 64 ? kRows : 64) / NvMma::kN;
  constexpr int kKeyTiles = kChunkKeys / NvMma::kM;
  if constexpr (kGroups == 1) {
    if (q_b != k.b) {
      load_q_group<Hooks>(p, k.b, 0, q);
      q_b = k.b;
    }
#if defined(PMQA_DEVICE_BUILD)
#pragma unroll 1
#endif
    for (int mt = 0; mt < kKeyTiles; ++mt) {
      float rows[2] = {0.0f, 0.0f};
      score_tile<Hooks, kFnuz, kTiles>(p, k, st, mt, 0, q, rows);
    }
  } else if (p.heads <= 64) {  // a row's heads lie in one group: group by group, a tile at a time
    PMQA_UNROLL
    for (int group = 0; group < kGroups; ++group) {
      load_q_group<Hooks>(p, k.b, group, q);
#if defined(PMQA_DEVICE_BUILD)
#pragma unroll 1
#endif
      for (int mt = 0; mt < kKeyTiles; ++mt) {
        float rows[2] = {0.0f, 0.0f};
        score_tile<Hooks, kFnuz, kTiles>(p, k, st, mt, group, q, rows);
      }
    }
  } else {  // H = 128: every row spans both groups, so a tile takes both (q reloaded per tile, L1)
#if defined(PMQA_DEVICE_BUILD)
#pragma unroll 1
#endif
    for (int mt = 0; mt < kKeyTiles; ++mt) {
      float rows[2] = {0.0f, 0.0f};
      PMQA_UNROLL
      for (int group = 0; group < kGroups; ++group) {
        load_q_group<Hooks>(p, k.b, group, q);
        score_tile<Hooks, kFnuz, kTiles>(p, k, st, mt, group, q, rows);
      }
    }
    q_b = k.b;
  }
}

template <class Hooks, bool kFnuz, int kRows>
__global__ void __launch_bounds__(kMmaThreads, kMmaCtasPerSm) fused_mma_kernel(LogitsParams p) {
  static_assert(kRows == 32 || kRows == 64 || kRows == 128, "fused-mma scores 32, 64 or 128 query rows per launch");
  constexpr int kTiles = (kRows < 64 ? kRows : 64) / NvMma::kN;
  PMQA_SHARED_OBJECT(MmaShared, shared);
  const int warp = static_cast<int>(threadIdx.x) / NvMma::kWarp;
  ChunkStage(&ring)[kMmaRingStages] = shared.ring[warp];
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kMmaWarps;
  const std::int64_t me = static_cast<std::int64_t>(blockIdx.x) * kMmaWarps + warp;

  // This warp's share of the live chunks: [begin, end).
  const std::int64_t total = total_live_chunks<Hooks>(p);
  const std::int64_t begin = total * me / warps, count = total * (me + 1) / warps - begin;
  ChunkCursor issue = seek_chunk<Hooks>(p, begin);
  ChunkCursor compute = issue;
  std::int64_t page = count > 0 ? first_page<Hooks>(p, issue) : 0;  // read one chunk ahead of its copies
  // Copies of chunk i go to stage i % kMmaRingStages; one commit group per chunk (empty past the end).
  auto issue_next = [&](std::int64_t i) {
    if (i < count) {
      issue_chunk_copy<Hooks>(p, issue, page, ring[i % kMmaRingStages]);
      next_chunk<Hooks>(p, issue);
      if (i + 1 < count) page = first_page<Hooks>(p, issue);
    }
    async_commit();
  };
  for (int i = 0; i < kMmaRingStages - 1; ++i) issue_next(i);

  QGroup<kTiles, kFnuz> q;
  std::int64_t q_b = -1;  // the sequence q holds
  for (std::int64_t i = 0; i < count; ++i) {
    issue_next(i + kMmaRingStages - 1);  // into the stage chunk i-1 used (every lane is past it)
    async_wait<kMmaRingStages - 1>();    // this lane's copies of chunk i ...
    Hooks::warp_barrier();           // ... and every lane's
    score_chunk<Hooks, kFnuz, kRows>(p, compute, ring[i % kMmaRingStages], q, q_b);
    Hooks::warp_barrier();  // the stage may be refilled only once every lane is done with it
    next_chunk<Hooks>(p, compute);
  }
  async_wait<0>();  // no copy may outlive the CTA's shared memory
  fill_dead_chunks<Hooks>(p, me, warps);
}

PMQA_KDEV_END
