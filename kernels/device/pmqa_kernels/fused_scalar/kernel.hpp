// The fused path (spec §1.4): one kernel writes [B*N, max_model_len], reducing over heads inside.
//
// The portable geometry (common/scalar_heads.hpp): a thread decodes its key once into registers,
// then for every row n of the sequence sums w[h] * relu(s * q_h.k) over its heads, with q and w
// staged in shared memory kHeadChunk heads at a time. The kHeadGroups partial sums of a key
// (adjacent lanes) are combined with __shfl_xor of width kHeadGroups, which divides every wave size
// (32 and 64): nothing here assumes warpSize. Columns at or past E_r get -inf (clean contract);
// nothing is written at or past max_model_len.
#pragma once

#include "pmqa_kernels/common/scalar_heads.hpp"

PMQA_KDEV_BEGIN

template <class Hooks, int kD, bool kFnuz>
__global__ void __launch_bounds__(kFusedThreads) fused_logits_kernel(LogitsParams p) {
  PMQA_SHARED(float, qs, [kHeadChunk][kD + 4]);
  PMQA_SHARED(float, ws, [kHeadChunk]);

  const unsigned tid = threadIdx.x;
  const int group = static_cast<int>(tid % kHeadGroups);
  const std::int64_t b = blockIdx.y;
  const std::int64_t j = thread_key_index(tid);
  KeyRegisters<Hooks, kD> key;
  const bool have_key = load_live_key<Hooks, kD, kFnuz>(p, b, j, key);

  for (std::int64_t n = 0; n < p.next_n; ++n) {
    float acc = 0.0f;
    for_each_head_term<Hooks, kD, kFnuz>(p, b, n, key, have_key, qs, ws, [&](std::int64_t, float v) { acc += v; });
    acc = Hooks::lane_partial(acc, tid);
    for (int m = 1; m < kHeadGroups; m <<= 1) acc += __shfl_xor(acc, m, kHeadGroups);
    if (group == 0 && j < p.max_model_len) {
      const std::int64_t r = b * p.next_n + n;
      p.out[Hooks::out_offset(r, p.out_row_stride, j)] = j < Hooks::valid_keys(p, b, n) ? acc : minus_infinity();
    }
  }
}

PMQA_KDEV_END
