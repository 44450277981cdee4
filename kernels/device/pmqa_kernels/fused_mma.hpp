// The fused path on NVIDIA tensor cores (fp8 mma.sync m16n8k32, fp32 accumulate): variant
// "fused-mma". Same output contract as the portable fused kernel; the host executor runs it with
// the instructions emulated (mma_nv.hpp) at wave size 32.
//
// Keys are the M dimension: for 16 keys a warp computes S^T = K Q^T, A = the keys' bytes
// [16 keys x 128 d], B = q^T [128 d x 8 rows] per n-tile of 8 query rows (m = n*H + h). The
// reduction over heads is then along the accumulator's columns: each lane folds w[h] * relu(s*S)
// of its 2 heads per n-tile into 2 running sums (keys g and g+8), and 2 shuffles finish a row.
// Per mma that is ~3 epilogue instructions and half an ldmatrix, instead of a shuffle tree per
// 8 keys (the first version, heads as M, issued ~40 instructions per mma; measured with ncu).
//
// A CTA of 4 warps takes a range of 8 chunks of 64 keys of one sequence (warp w: keys 16w..16w+15
// of each chunk), streams the chunks through a 3-stage cp.async pipeline (two in flight while it
// computes on one), and keeps q (all N*H rows) and the weights in shared memory for the whole
// range. One launch scores the rows of next_n values [mma_n_begin, mma_n_begin + mma_n_count),
// kRows = 32, 64 or 128 query rows: larger N*H takes several launches, each reading the keys
// again. The host API requires D = 128, H in {32, 64, 128}, block_stride % 4 == 0.
#pragma once

#include "pmqa_kernels/fnuz_to_ocp.hpp"
#include "pmqa_kernels/key_chunks.hpp"
#include "pmqa_kernels/mma_nv.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kMmaWarps = 4;
inline constexpr int kMmaThreads = kMmaWarps * NvMma::kWarp;  // 128
// Register cap for ptxas per launch's query rows: resident CTAs are what hides the memory latency.
template <int kRows>
inline constexpr int kMmaMinCtasPerSm = kRows <= 64 ? 6 : 4;

PMQA_DEV float __uint_as_float_portable(std::uint32_t u) { return bits_to_float(u & 0x3F7FFFFFu); }

// Writes one row's logit for keys g and g+8 of the warp's 16: the lane's partial sums over its
// heads, finished across the 4 lanes of the row group.
template <class Hooks>
PMQA_DEV void flush_rows(const LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t key0, std::int64_t j_end,
                         float (&rows)[2]) {
  const int lane = static_cast<int>(threadIdx.x) % NvMma::kWarp;
  for (int half = 0; half < 2; ++half) {
    float v = Hooks::lane_partial(rows[half], threadIdx.x);
    v += __shfl_xor(v, 1, NvMma::kWarp);
    v += __shfl_xor(v, 2, NvMma::kWarp);
    const std::int64_t j = key0 + (lane >> 2) + 8 * half;
    if ((lane & 3) == 0 && j < j_end)
      p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = j < Hooks::valid_keys(p, b, n) ? v : minus_infinity();
    rows[half] = 0.0f;
  }
}

template <class Hooks, bool kFnuz, int kRows>
__global__ void __launch_bounds__(kMmaThreads, kMmaMinCtasPerSm<kRows>) fused_mma_kernel(LogitsParams p) {
  static_assert(kRows == 32 || kRows == 64 || kRows == 128, "fused-mma scores 32, 64 or 128 query rows per launch");
  constexpr int kNTiles = kRows / NvMma::kN;     // query rows in tiles of 8
  constexpr int kKSteps = kMmaD / NvMma::kK;     // 4
  // 3 x 9.25 KB of keys + 18 KB of q at 128 rows: under the 48 KB of static shared memory.
  PMQA_SHARED(Bytes16, key_storage, [kMmaStages][kMmaKeys * kMmaRowBytes / 16]);
  PMQA_SHARED(float, scale_storage, [kMmaStages][kMmaKeys]);
  PMQA_SHARED(Bytes16, q_storage, [kRows * kMmaRowBytes / 16]);  // the q bytes as given (FNUZ converted per fragment)
  PMQA_SHARED(float, w_storage, [kRows]);
  PMQA_SHARED(std::int32_t, page_storage, [kMmaPagesPerCta]);

  const KeyRangeStorage<kRows> st{key_storage, scale_storage, q_storage, w_storage, page_storage};
  const KeyRange range = begin_key_range<Hooks, kMmaThreads>(p, st);
  if (range.chunks == 0) return;  // uniform per CTA
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / NvMma::kWarp, lane = tid % NvMma::kWarp;
  const std::int64_t b = range.b, j_begin = range.j_begin, j_end = range.j_end, n_begin = range.n_begin;
  const std::uint8_t* const qs = q_storage[0].b;
  // FNUZ bytes enter the tensor cores doubled (fnuz_to_ocp.hpp): 1/2 per operand.
  const float scale_factor = kFnuz ? 0.25f : 1.0f;
  const int tiles_per_n = static_cast<int>(p.heads) / NvMma::kN;

  for (int c = 0; c < range.chunks; ++c) {
    await_chunk<Hooks, kMmaThreads>(p, range, st, c);

    // This warp's 16 keys: A fragments for the 4 k-steps, and their scales.
    const std::uint8_t* key_tile = key_storage[c % kMmaStages][0].b + warp * 16 * kMmaRowBytes;
    std::uint32_t ka[kKSteps][4], kc[kKSteps][4];
    PMQA_UNROLL
    for (int ks = 0; ks < kKSteps; ++ks) {
      load_a_fragment(ka[ks], key_tile + ks * NvMma::kK, kMmaRowBytes);
      PMQA_UNROLL
      for (int r = 0; r < 4; ++r) {
        if constexpr (kFnuz) {
          const OcpPair pair = fnuz_to_ocp4(ka[ks][r]);
          ka[ks][r] = pair.main;
          kc[ks][r] = pair.corr;
        } else {
          kc[ks][r] = 0;
        }
      }
    }
    const float* scales = scale_storage[c % kMmaStages];
    const float s_lo = scales[warp * 16 + (lane >> 2)] * scale_factor;
    const float s_hi = scales[warp * 16 + (lane >> 2) + 8] * scale_factor;
    const std::int64_t key0 = j_begin + static_cast<std::int64_t>(c) * kMmaKeys + warp * 16;

    float rows[2] = {0.0f, 0.0f};
    // Two n-tiles at a time: their mma chains are independent, so they overlap in the pipe.
#if defined(PMQA_DEVICE_BUILD)
#pragma unroll 2
#endif
    for (int nt = 0; nt < kNTiles; ++nt) {
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      const std::uint8_t* q_tile = qs + nt * NvMma::kN * kMmaRowBytes;
      PMQA_UNROLL
      for (int ks = 0; ks < kKSteps; ks += 2) {
        std::uint32_t qb[4], qcb[4] = {0, 0, 0, 0};
        load_b_fragments_x2(qb, q_tile + ks * NvMma::kK, kMmaRowBytes);
        if constexpr (kFnuz) {
          PMQA_UNROLL
          for (int r = 0; r < 4; ++r) {
            const OcpPair pair = fnuz_to_ocp4(qb[r]);
            qb[r] = pair.main;
            qcb[r] = pair.corr;
          }
        }
        const std::uint32_t b0[2] = {qb[0], qb[1]}, b1[2] = {qb[2], qb[3]};
        if constexpr (Hooks::kSkipMma) {
          acc[0] += __uint_as_float_portable(qb[0] ^ ka[ks][0]);  // keep the loads live
          continue;
        }
        NvMma::mma(acc, ka[ks], b0);
        NvMma::mma(acc, ka[ks + 1], b1);
        if constexpr (kFnuz) {  // the exact remainder of the +-240 codes
          const std::uint32_t c0[2] = {qcb[0], qcb[1]}, c1[2] = {qcb[2], qcb[3]};
          NvMma::mma(acc, kc[ks], b0);
          NvMma::mma(acc, kc[ks + 1], b1);
          NvMma::mma(acc, ka[ks], c0);
          NvMma::mma(acc, ka[ks + 1], c1);
          NvMma::mma(acc, kc[ks], c0);
          NvMma::mma(acc, kc[ks + 1], c1);
        }
      }
      if constexpr (Hooks::kSkipEpilogue) {
        rows[0] += acc[0] + acc[1] + acc[2] + acc[3];  // keep the mma live
        if (nt + 1 == kNTiles) flush_rows<Hooks>(p, b, n_begin, key0, j_end, rows);
        continue;
      }
      // acc: keys (g | g+8) x rows (nt*8 + 2t, +1)
      const int m = nt * NvMma::kN + 2 * (lane & 3);
      const float w0 = w_storage[m], w1 = w_storage[m + 1];
      rows[0] += w0 * Hooks::relu(s_lo * acc[0]) + w1 * Hooks::relu(s_lo * acc[1]);
      rows[1] += w0 * Hooks::relu(s_hi * acc[2]) + w1 * Hooks::relu(s_hi * acc[3]);
      if ((nt + 1) % tiles_per_n == 0) flush_rows<Hooks>(p, b, n_begin + nt / tiles_per_n, key0, j_end, rows);  // row n done
    }
    Hooks::barrier();  // the stage may be refilled only once every warp is done with it
  }
  async_wait<0>();  // no copy may outlive the CTA's shared memory
}

PMQA_KDEV_END
