// The fused path (spec §1.4): one kernel writes [B*N, max_model_len], reducing over heads inside.
//
// The portable geometry (common/scalar_heads.hpp): a thread decodes its key once into registers,
// then for every row n of the sequence sums w[h] * relu(s * q_h.k) over its heads, with q and w
// staged in shared memory kHeadChunk heads at a time. The kHeadGroups partial sums of a key
// (adjacent lanes) are combined with __shfl_xor of width kHeadGroups, which divides every wave size
// (32 and 64): nothing here assumes warpSize. Columns at or past E_r get -inf (clean contract);
// nothing is written at or past max_model_len. fp8 and e2m1 values are two kernels of one body.
#pragma once

#include "pmqa_kernels/common/scalar_heads.hpp"

PMQA_KDEV_BEGIN

// The body, for either value format (common/scalar_heads.hpp's Values).
template <class Hooks, int kD, class Values>
PMQA_DEV void fused_logits(const LogitsParams& p) {
  PMQA_SHARED(float, qs, [kHeadChunk][kD + 4]);
  PMQA_SHARED(float, ws, [kHeadChunk]);
  constexpr int kGroups = kScaleGroups<Values, kD>;
  PMQA_SHARED(float, q_scales, [kHeadChunk][kGroups]);
  const StagedQueries<kD, Values> staged{qs, ws, q_scales};

  const unsigned tid = threadIdx.x;
  const int group = static_cast<int>(tid % kHeadGroups);
  const std::int64_t b = blockIdx.y;
  const std::int64_t j = thread_key_index(tid);
  KeyRegisters<Hooks, kD, Values> key;
  const bool have_key = load_live_key<Hooks, kD, Values>(p, b, j, key);

  for (std::int64_t n = 0; n < p.next_n; ++n) {
    float acc = 0.0f;
    for_each_head_term<Hooks, kD, Values>(p, b, n, key, have_key, staged, [&](std::int64_t, float v) { acc += v; });
    acc = Hooks::lane_partial(acc, tid);
    for (int m = 1; m < kHeadGroups; m <<= 1) acc += __shfl_xor(acc, m, kHeadGroups);
    if (group == 0 && j < p.max_model_len) {
      const std::int64_t r = b * p.next_n + n;
      p.out[Hooks::out_offset(r, p.out_row_stride, j)] = j < Hooks::valid_keys(p, b, n) ? acc : minus_infinity();
    }
  }
}

// fp8 values (FNUZ or OCP E4M3).
template <class Hooks, int kD, bool kFnuz>
__global__ void __launch_bounds__(kFusedThreads) fused_logits_kernel(LogitsParams p) {
  fused_logits<Hooks, kD, Fp8Values<kFnuz>>(p);
}

// e2m1 values with UE8M0 group scales (MXFP4).
template <class Hooks, int kD>
__global__ void __launch_bounds__(kFusedThreads) fused_logits_e2m1_kernel(LogitsParams p) {
  fused_logits<Hooks, kD, E2m1Values>(p);
}

PMQA_KDEV_END
