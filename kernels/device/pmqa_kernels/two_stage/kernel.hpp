// The two-stage path (spec §1.4, AITER's stage1 + sum): a fill kernel sets the per-head buffer
// [H, B*N, max_model_len] to -inf, stage 1 writes w[h] * relu(s * q_h.k) into it for j < E_r, and
// stage 2 sums it over heads into [B*N, max_model_len] (a sum of -inf is -inf, so masked cells
// stay -inf). Correct, and H times the bytes of the fused path: the slow path dispatch must avoid.
#pragma once

#include "pmqa_kernels/common/scalar_heads.hpp"

PMQA_KDEV_BEGIN

inline constexpr int kFlatThreads = 256;

// Grid-stride fill of `count` floats with -inf.
template <class Hooks>
__global__ void __launch_bounds__(kFlatThreads) fill_minus_infinity_kernel(float* data, std::int64_t count) {
  const std::int64_t stride = Hooks::grid_stride();
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] = minus_infinity();
}

// The fused kernel's geometry and head loop (common/scalar_heads.hpp); each thread writes its
// heads' values instead of summing them. One body for either value format.
template <class Hooks, int kD, class Values>
PMQA_DEV void stage1(const LogitsParams& p) {
  PMQA_SHARED(float, qs, [kHeadChunk][kD + 4]);
  PMQA_SHARED(float, ws, [kHeadChunk]);
  constexpr int kGroups = kScaleGroups<Values, kD>;
  PMQA_SHARED(float, q_scales, [kHeadChunk][kGroups]);
  const StagedQueries<kD, Values> staged{qs, ws, q_scales};

  const unsigned tid = threadIdx.x;
  const std::int64_t b = blockIdx.y;
  const std::int64_t j = thread_key_index(tid);
  KeyRegisters<Hooks, kD, Values> key;
  const bool have_key = load_live_key<Hooks, kD, Values>(p, b, j, key);

  for (std::int64_t n = 0; n < p.next_n; ++n) {
    const std::int64_t r = b * p.next_n + n;
    const bool valid = have_key && j < Hooks::valid_keys(p, b, n);
    for_each_head_term<Hooks, kD, Values>(p, b, n, key, valid, staged, [&](std::int64_t h, float v) {
      p.per_head[Hooks::per_head_offset(p, h, r, j)] = Hooks::lane_partial(v, tid);
    });
  }
}

// fp8 values (FNUZ or OCP E4M3).
template <class Hooks, int kD, bool kFnuz>
__global__ void __launch_bounds__(kFusedThreads) stage1_kernel(LogitsParams p) {
  stage1<Hooks, kD, Fp8Values<kFnuz>>(p);
}

// e2m1 values with UE8M0 group scales (MXFP4).
template <class Hooks, int kD>
__global__ void __launch_bounds__(kFusedThreads) stage1_e2m1_kernel(LogitsParams p) {
  stage1<Hooks, kD, E2m1Values>(p);
}

// out[r][j] = sum over h of per_head[h][r][j], h in order; one thread per cell, grid-stride.
template <class Hooks>
__global__ void __launch_bounds__(kFlatThreads) head_sum_kernel(LogitsParams p) {
  const std::int64_t rows = p.batch * p.next_n;
  const std::int64_t cells = rows * p.max_model_len;
  const std::int64_t stride = Hooks::grid_stride();
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < cells; i += stride) {
    const std::int64_t r = i / p.max_model_len, j = i % p.max_model_len;
    float sum = 0.0f;
    for (std::int64_t h = 0; h < p.heads; ++h) sum += p.per_head[Hooks::per_head_offset(p, h, r, j)];
    p.out[Hooks::out_offset(r, p.out_row_stride, j)] = sum;
  }
}

PMQA_KDEV_END
