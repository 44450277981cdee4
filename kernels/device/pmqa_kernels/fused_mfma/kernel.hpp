// The fused path on AMD matrix cores (fp8 v_mfma_f32_16x16x32_fp8_fp8, fp32 accumulate): variant
// "fused-mfma", for gfx942 (FNUZ) and gfx950 (OCP) with data in the arch's own format. Same output
// contract as the portable fused kernel; the host executor runs it with the instruction emulated
// (arch/amd_mfma.hpp) at wave 64.
//
// The structure fused-mma had at d633326 (keys as M, a CTA walking 8 chunks;
// bench/results/notes.md), on a wave of 64: keys are M. For 16 keys a wave computes S^T = K q^T
// with A = the keys' bytes [16 keys x 32 d] and B = q^T [32 d x 16 rows] per k-step and n-tile of
// 16 query rows (m = n*H + h). Each lane holds 4 keys x 1 row of the result,
// folds w[h] * relu(s * S) into 4 running sums over the n-tiles of one n, and 4 shuffles across the
// 16 lanes of a row group finish a key. A CTA of 4 waves walks 8 chunks of 64 keys (wave w: keys
// 16w..16w+15 of each chunk) through the shared key stages of fused_mfma/key_chunks.hpp. (fused-mma has since
// moved to persistent warps and f16 tensor cores, 0.1006 -> 0.0662 ms at the decode shape on the
// H200; this kernel has not been run on AMD hardware, so it keeps the structure it was written
// with until it can be measured there.)
//
// Not yet run on AMD hardware (no ROCm GPU here): CI compiles it for gfx942 (the ISA check requires
// v_mfma_f32_16x16x32_fp8_fp8 in the FNUZ instances) and runs it on the host executor.
#pragma once

#include "pmqa_kernels/fused_mfma/key_chunks.hpp"
#include "pmqa_kernels/arch/amd_mfma.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kMfmaWaves = 4;
inline constexpr int kMfmaThreads = kMfmaWaves * AmdMfma::kWarp;  // 256

// Writes one row's logits for the lane group's 4 keys: the partial sums over the group's 16 rows
// (lanes), finished with shuffles inside the group.
template <class Hooks>
PMQA_DEV void flush_rows_mfma(const LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t key0, std::int64_t j_end,
                              float (&rows)[4]) {
  const int lane = static_cast<int>(threadIdx.x) % AmdMfma::kWarp;
  for (int i = 0; i < 4; ++i) {
    float v = Hooks::lane_partial(rows[i], threadIdx.x);
    for (int m = 1; m < 16; m <<= 1) v += __shfl_xor(v, m, AmdMfma::kWarp);
    const std::int64_t j = key0 + AmdMfma::c_row(lane, i);
    if (lane % 16 == 0 && j < j_end)
      p.out[Hooks::out_offset(b * p.next_n + n, p.out_row_stride, j)] = j < Hooks::valid_keys(p, b, n) ? v : minus_infinity();
    rows[i] = 0.0f;
  }
}

template <class Hooks, bool kFnuz, int kRows>
__global__ void __launch_bounds__(kMfmaThreads) fused_mfma_kernel(LogitsParams p) {
  static_assert(kRows == 32 || kRows == 64 || kRows == 128, "fused-mfma scores 32, 64 or 128 query rows per launch");
  constexpr int kNTiles = kRows / AmdMfma::kN;
  constexpr int kKSteps = kMmaD / AmdMfma::kK;  // 4
  PMQA_SHARED(Bytes16, key_storage, [kMmaStages][kMmaKeys * kMmaRowBytes / 16]);
  PMQA_SHARED(float, scale_storage, [kMmaStages][kMmaKeys]);
  PMQA_SHARED(Bytes16, q_storage, [kRows * kMmaRowBytes / 16]);
  PMQA_SHARED(float, w_storage, [kRows]);
  PMQA_SHARED(std::int32_t, page_storage, [kMmaPagesPerCta]);

  const KeyRangeStorage<kRows> st{key_storage, scale_storage, q_storage, w_storage, page_storage};
  const KeyRange range = begin_key_range<Hooks, kMfmaThreads>(p, st);
  if (range.chunks == 0) return;  // uniform per CTA
  const int tid = static_cast<int>(threadIdx.x);
  const int wave = tid / AmdMfma::kWarp, lane = tid % AmdMfma::kWarp;
  const std::int64_t b = range.b, j_begin = range.j_begin, j_end = range.j_end, n_begin = range.n_begin;
  const std::uint8_t* const qs = q_storage[0].b;
  const int tiles_per_n = static_cast<int>(p.heads) / AmdMfma::kN;

  for (int c = 0; c < range.chunks; ++c) {
    await_chunk<Hooks, kMfmaThreads>(p, range, st, c);

    // This wave's 16 keys: A operands for the 4 k-steps (8 bytes each), and the scales of the
    // lane's 4 result keys.
    const std::uint8_t* key_tile = key_storage[c % kMmaStages][0].b + wave * 16 * kMmaRowBytes;
    std::uint64_t ka[kKSteps];
    PMQA_UNROLL
    for (int ks = 0; ks < kKSteps; ++ks)
      ka[ks] = load_u64(key_tile + AmdMfma::a_row(lane) * kMmaRowBytes + ks * AmdMfma::kK + AmdMfma::a_col(lane));
    const float* scales = scale_storage[c % kMmaStages];
    float s[4];
    PMQA_UNROLL
    for (int i = 0; i < 4; ++i) s[i] = scales[wave * 16 + AmdMfma::c_row(lane, i)];
    const std::int64_t key0 = j_begin + static_cast<std::int64_t>(c) * kMmaKeys + wave * 16;

    float rows[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int nt = 0; nt < kNTiles; ++nt) {
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      const std::uint8_t* q_row = qs + (nt * AmdMfma::kN + AmdMfma::b_col(lane)) * kMmaRowBytes;
      PMQA_UNROLL
      for (int ks = 0; ks < kKSteps; ++ks)
        AmdMfma::mfma<Hooks, kFnuz>(acc, ka[ks], load_u64(q_row + ks * AmdMfma::kK + AmdMfma::b_row(lane)));
      const float w = w_storage[nt * AmdMfma::kN + AmdMfma::c_col(lane)];
      PMQA_UNROLL
      for (int i = 0; i < 4; ++i) rows[i] += w * Hooks::relu(s[i] * acc[i]);
      if ((nt + 1) % tiles_per_n == 0) flush_rows_mfma<Hooks>(p, b, n_begin + nt / tiles_per_n, key0, j_end, rows);
    }
    Hooks::barrier();  // the stage may be refilled only once every wave is done with it
  }
  async_wait<0>();
}

PMQA_KDEV_END
